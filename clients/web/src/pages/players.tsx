// The player platform's pages: the leaderboard of a ruleset (`#/leaderboard/<ruleset>`) and
// a player's profile with figures per ruleset and their finished games (`#/players/<id>`).
import { useEffect, useState } from "preact/hooks";
import { rulesetValues, type components } from "../../../typescript/src/index.ts";
import { api, unwrap } from "../api";
import { dateTime, rulesetName, t } from "../i18n";
import { href } from "../router";
import { ErrorMessage, Select } from "../ui";

type S = components["schemas"];
type BoardLine = S["BoardLine"];
type PlayerProfile = S["PlayerProfile"];
type PlayedGame = S["PlayedGame"];
type RatingBody = S["RatingBody"];

/** A link to a player's profile. */
export function PlayerLink(props: { id: string | null | undefined; name: string }) {
  if (!props.id) return <>{props.name}</>;
  return (
    <a href={href("players", props.id)} class="player-link" title={t("profileOf", { name: props.name })}>
      {props.name}
    </a>
  );
}

const num = (n: number, digits = 1) =>
  new Intl.NumberFormat(document.documentElement.lang || "en", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(n);

/** A rating as people read it: one decimal, "provisional" while it still moves a lot. */
function RatingText(props: { r: RatingBody }) {
  return (
    <span class="rating" data-rating={props.r.rating}>
      {num(props.r.rating)}
      {props.r.provisional ? (
        <span class="provisional" title={t("provisionalHint")}>
          {" "}
          ({t("provisional")})
        </span>
      ) : null}
    </span>
  );
}

/** A list that reads pages by `next_cursor` and appends them. */
function usePaged<T>(
  load: (cursor: string | null) => Promise<{ items: T[]; next_cursor?: string | null }>,
  deps: unknown[],
) {
  const [items, setItems] = useState<T[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const fetchPage = async (from: string | null, reset: boolean) => {
    setBusy(true);
    try {
      const page = await load(from);
      setItems((old) => (reset || !old ? page.items : [...old, ...page.items]));
      setCursor(page.next_cursor ?? null);
      setError(null);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    setItems(null);
    setCursor(null);
    void fetchPage(null, true);
  }, deps);
  return {
    items,
    error,
    busy,
    more: cursor ? () => void fetchPage(cursor, false) : null,
    reload: () => void fetchPage(null, true),
  };
}

const known = (r: string | null): string => (r && (rulesetValues as readonly string[]).includes(r) ? r : "6-nimmt");

export function LeaderboardPage(props: { ruleset: string | null }) {
  // The choice stays on the page (the address follows without a new route, so the focus
  // stays on the list box while someone steps through it with the arrow keys).
  const [ruleset, setRuleset] = useState(known(props.ruleset));
  useEffect(() => setRuleset(known(props.ruleset)), [props.ruleset]);
  const board = usePaged<BoardLine>(
    (cursor) =>
      unwrap(
        api.GET("/v1/rulesets/{name}/leaderboard", {
          params: { path: { name: ruleset }, query: cursor ? { cursor, limit: 50 } : { limit: 50 } },
        }),
      ),
    [ruleset],
  );
  return (
    <div class="leaderboard">
      <h1 tabIndex={-1}>
        {t("leaderboardTitle")} · {rulesetName(ruleset)}
      </h1>
      <p class="filter">
        <label for="lb-ruleset">{t("game")}</label>{" "}
        <Select
          id="lb-ruleset"
          value={ruleset}
          onChange={(r) => {
            setRuleset(r);
            history.replaceState(null, "", href("leaderboard", r));
          }}
          options={rulesetValues.map((r) => ({ value: r, label: rulesetName(r) }))}
        />
      </p>
      <p class="hint">{t("leaderboardExplain")}</p>
      <ErrorMessage error={board.error} onRetry={board.reload} />
      {board.items === null ? (
        board.error ? null : <p role="status">{t("loading")}</p>
      ) : board.items.length === 0 ? (
        <p class="empty">{t("leaderboardEmpty")}</p>
      ) : (
        <div class="scroll">
          <table class="board">
            <caption class="visually-hidden">
              {t("leaderboardTitle")} · {rulesetName(ruleset)}
            </caption>
            <thead>
              <tr>
                <th scope="col">{t("rank")}</th>
                <th scope="col">{t("player")}</th>
                <th scope="col">{t("rating")}</th>
                <th scope="col">{t("ratedGames")}</th>
              </tr>
            </thead>
            <tbody>
              {board.items.map((l) => (
                <tr key={l.player.id} data-player={l.player.id}>
                  <td>{l.rank}</td>
                  <th scope="row">
                    <PlayerLink id={l.player.id} name={l.player.name} />
                  </th>
                  <td>
                    <RatingText r={l} />
                  </td>
                  <td>{l.games}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {board.more ? (
        <p>
          <button type="button" onClick={board.more} disabled={board.busy}>
            {t("showMore")}
          </button>
        </p>
      ) : null}
    </div>
  );
}

export function PlayerPage(props: { id: string }) {
  const [profile, setProfile] = useState<PlayerProfile | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    unwrap(api.GET("/v1/players/{id}", { params: { path: { id: props.id } } })).then(
      (p) => {
        setProfile(p);
        setError(null);
      },
      (e: unknown) => setError(e),
    );
  useEffect(() => {
    void load();
  }, [props.id]);
  const games = usePaged<PlayedGame>(
    (cursor) =>
      unwrap(
        api.GET("/v1/players/{id}/games", {
          params: { path: { id: props.id }, query: cursor ? { cursor, limit: 20 } : { limit: 20 } },
        }),
      ),
    [props.id],
  );

  if (error) {
    return (
      <div>
        <h1 tabIndex={-1}>{t("profileTitle")}</h1>
        <ErrorMessage error={error} onRetry={() => void load()} />
        <p>
          <a href="#/">{t("toLobby")}</a>
        </p>
      </div>
    );
  }
  if (!profile) return <p role="status">{t("loading")}</p>;
  return (
    <div class="profile" data-player={profile.id}>
      <h1 tabIndex={-1}>{profile.name}</h1>
      <p class="meta">
        {t("memberSince", { date: dateTime(profile.member_since) })}
        {profile.guest ? ` · ${t("guestUnrated")}` : ""}
      </p>
      <section class="panel" aria-labelledby="stats-h">
        <h2 id="stats-h">{t("statsTitle")}</h2>
        {profile.rulesets.length === 0 ? (
          <p class="empty">{t("statsEmpty")}</p>
        ) : (
          <ul class="stats">
            {profile.rulesets.map((r) => (
              <li key={r.ruleset} data-ruleset={r.ruleset}>
                <h3>
                  <a href={href("leaderboard", r.ruleset)} title={t("leaderboardOf", { game: rulesetName(r.ruleset) })}>
                    {rulesetName(r.ruleset)}
                  </a>
                </h3>
                <dl>
                  <div>
                    <dt>{t("gamesPlayed")}</dt>
                    <dd data-stat="games">{r.games}</dd>
                  </div>
                  <div>
                    <dt>{t("wins")}</dt>
                    <dd data-stat="wins">{r.wins}</dd>
                  </div>
                  <div>
                    <dt>{t("penaltyPerRound")}</dt>
                    <dd data-stat="penalty">{r.average_penalty_per_round == null ? "–" : num(r.average_penalty_per_round)}</dd>
                  </div>
                  <div>
                    <dt>{t("finishedShare")}</dt>
                    <dd data-stat="finished">{r.finished_share == null ? "–" : `${num(r.finished_share * 100, 0)} %`}</dd>
                  </div>
                  <div>
                    <dt>{t("rating")}</dt>
                    <dd data-stat="rating" data-rated={r.rating ? "true" : "false"}>
                      {r.rating ? <RatingText r={r.rating} /> : t("unrated")}
                    </dd>
                  </div>
                </dl>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section class="panel" aria-labelledby="history-h">
        <h2 id="history-h">{t("historyTitle")}</h2>
        <ErrorMessage error={games.error} onRetry={games.reload} />
        {games.items === null ? (
          games.error ? null : <p role="status">{t("loading")}</p>
        ) : games.items.length === 0 ? (
          <p class="empty">{t("historyEmpty")}</p>
        ) : (
          <ul class="games history">
            {games.items.map((g) => (
              <li key={g.game_id} class="game-item" data-game={g.game_id} data-rated={g.rated ? "true" : "false"}>
                <a href={href("games", g.game_id)} class="game-link">
                  <strong>{rulesetName(g.ruleset)}</strong>
                </a>
                <span class="meta">{dateTime(g.finished_at)}</span>
                <span class="meta">
                  {g.won ? (
                    <>
                      <span aria-hidden="true">★ </span>
                      {t("wonGame")} ·{" "}
                    </>
                  ) : null}
                  {t("placeOf", { place: g.place, players: g.players })} · {t("totalPoints", { n: g.total })}
                  {g.resigned ? ` · ${t("resigned")}` : ""}
                </span>
                <span class="meta">
                  {g.rated && g.rating_after != null ? t("ratedAfter", { rating: num(g.rating_after) }) : t("notRated")}
                  {g.public ? "" : ` · ${t("privateGame")}`}
                </span>
              </li>
            ))}
          </ul>
        )}
        {games.more ? (
          <p>
            <button type="button" onClick={games.more} disabled={games.busy}>
              {t("showMore")}
            </button>
          </p>
        ) : null}
      </section>
      <p>
        <a href={href("leaderboard")}>{t("toLeaderboard")}</a>
      </p>
    </div>
  );
}
