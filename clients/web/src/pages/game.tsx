// One game: its lobby (seats, invite link, bots, start) and its table for all four rulesets
// (rows with bullheads, hand, selections, the step-by-step resolution, take_row, X rows and
// keep_card, the open card with pot and chips), scores, winners and the fairness proof.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import {
  botStrategyValues,
  listEvents,
  type BotStrategy,
  type Command,
  type GameBody,
  type RulesetInfo,
  type SeatView,
} from "../../../typescript/src/index.ts";
import { api, unwrap } from "../api";
import { verify, type Check } from "../fairness";
import { dateTime, duration, has, joinNames, lang, rulesetName, t, type Key } from "../i18n";
import { bulls, deadlineText, GameSession, logText, seatName, speed, type GameState, type Speed } from "../live";
import { cancel, dismiss, dropped, pending } from "../offline";
import { go, href, inviteLink, rematchLink } from "../router";
import { useStore } from "../store";
import { Bull, Card, CopyButton, Icon, ErrorMessage, NosCard, NosRuns, runPoints, runsOf, Select, useAction } from "../ui";
import { NEW_GAME_FLAG } from "./lobby";
import { PlayerLink } from "./players";
import { presetOf, rulesRef } from "../rules";
import { RulesLink } from "./rules";
import { tournamentOf } from "../tournaments";
import {
  clockFace,
  clockOf,
  clocksAtOf,
  clockWords,
  isLow,
  pauseOf,
  remainingAt,
  serverNow,
  timeControlLabel,
  timeControlOf,
  timeControlText,
  useTick,
  type ClockCommand,
} from "../clocks";

type Act = (cmd: Command) => void;

const legalOf = (v: GameBody, type: string): Command[] => v.legal.filter((c) => c.type === type);

function title(v: GameBody): string {
  return v.name ? `${v.name} · ${rulesetName(v.ruleset)}` : rulesetName(v.ruleset);
}

export function GamePage(props: { id: string }) {
  const session = useMemo(() => new GameSession(props.id), [props.id]);
  useEffect(() => {
    void session.start();
    return () => session.stop();
  }, [session]);
  const st = useStore(session.state);
  const [run, busy, error, clear] = useAction();
  const act: Act = (cmd) => void run(() => session.act(cmd));

  if (st.error) {
    return (
      <div>
        <h1 tabIndex={-1}>{t("game")}</h1>
        <ErrorMessage error={st.error} />
        <p>
          <a href="#/">{t("toLobby")}</a>
        </p>
      </div>
    );
  }
  const v = st.shown;
  if (!v) return <p role="status">{t("loading")}</p>;
  return (
    <div class="game" data-status={v.status} data-ruleset={v.ruleset}>
      <h1 tabIndex={-1}>
        {title(v)}
        {v.status !== "lobby" && v.round > 0 ? (
          <span class="sub"> · {t(v.ruleset === "nimm-oder-schieb" ? "matchGame" : "round", { n: v.round })}</span>
        ) : null}
      </h1>
      <ConnectionBadge st={st} />
      <p class="rules-line">
        <RulesLink to={rulesRef(v.ruleset, v.ruleset === "6-nimmt" ? presetOf(v.options) : null)} />
      </p>
      <TimeControlLine v={v} />
      <TournamentLine v={v} />
      <OfflineMoves id={props.id} st={st} />
      <div class="action-error" aria-live="assertive">
        {error ? (
          <div>
            <ErrorMessage error={error} />
            <button type="button" class="link" onClick={clear}>
              {t("close")}
            </button>
          </div>
        ) : null}
      </div>
      {v.status === "lobby" ? (
        <GameLobby v={v} act={act} busy={busy} session={session} />
      ) : (
        <Table st={st} v={v} act={act} busy={busy} session={session} />
      )}
    </div>
  );
}

/**
 * A tournament table links back to its tournament ("Round 2, table 1 of Friday Cup"); once
 * finished, prominently: "Back to the tournament".
 */
function TournamentLine(props: { v: GameBody }) {
  const link = tournamentOf(props.v);
  if (!link) return null;
  const to = href("tournaments", link.tournament);
  return (
    <p class="tournament-line" data-tournament-link={link.tournament}>
      {props.v.status === "finished" ? (
        <a class="button primary" href={to} data-back-to-tournament>
          {t("tBackToTournament")}
        </a>
      ) : (
        <a href={to}>{t("tTableOfTournament", { round: link.round, table: link.table })}</a>
      )}
    </p>
  );
}

/** The game's time control under its title: "Live · 3 min + 2 s". */
function TimeControlLine(props: { v: GameBody }) {
  const tc = timeControlOf(props.v);
  if (!tc) return null;
  return (
    <p class="tc-line" data-time-control={tc.kind}>
      <span aria-hidden="true">
        <Icon name="clock" /> {t(tc.kind === "live" ? "tcLive" : "tcCorr")} · {timeControlText(tc)}
      </span>
      <span class="visually-hidden">{timeControlLabel(tc)}</span>
    </p>
  );
}

/** A move's words ("play 34", "take row 2"). */
function moveWords(c: Command): string {
  const key = `mv_${c.type}`;
  return has(key) ? t(key, c as unknown as Record<string, number>) : c.type;
}

/** Offline: that the table is as last seen, the move waiting for the connection (which the
 *  person may take back), and a waiting move that could not be made after all. */
function OfflineMoves(props: { id: string; st: GameState }) {
  const waiting = useStore(pending).filter((p) => p.game === props.id);
  const failed = useStore(dropped).filter((d) => d.game === props.id);
  const at = props.st.seenAt;
  return (
    <div class="offline-moves" aria-live="polite">
      {at !== null ? (
        <p class="notice" data-offline-seen={at}>
          {t("offlineSeen", { time: new Date(at).toLocaleTimeString(lang.get(), { hour: "2-digit", minute: "2-digit" }) })}
        </p>
      ) : null}
      {waiting.map((m) => (
        <p key={m.key} class="notice" data-pending-move={m.command.type}>
          {t("pendingMove", { move: moveWords(m.command) })}{" "}
          <button type="button" class="small" onClick={() => cancel(m)}>
            {t("cancelMove")}
          </button>
        </p>
      ))}
      {failed.map((d, i) => (
        <div key={i} class="error" data-dropped-move={d.command.type}>
          <p>{t("droppedMove", { move: moveWords(d.command), reason: d.reason })}</p>
          <button type="button" class="link" onClick={() => dismiss(d)}>
            {t("close")}
          </button>
        </div>
      ))}
    </div>
  );
}

function ConnectionBadge(props: { st: GameState }) {
  const c = props.st.connection;
  if (c === "closed") return null;
  const key: Key = c === "live" ? "live" : c === "polling" ? "polling" : c === "reconnecting" ? "reconnecting" : "connecting";
  return (
    <p class={`conn conn-${c}`} role="status" data-connection={c}>
      <span class="dot" aria-hidden="true" /> {t(key)}
    </p>
  );
}

// --- the game's lobby -----------------------------------------------------------------

function optionsText(v: GameBody): string {
  const o = v.options;
  const parts: string[] = [];
  if (v.ruleset === "6-nimmt") {
    parts.push(t(`deck_${o.deck}` as Key), t(`deal_${o.deal}` as Key), t(`placement_${o.placement}` as Key));
  }
  const end = o.end as { points?: number; rounds?: number } | undefined;
  if (v.ruleset === "6-nimmt" || v.ruleset === "11-nimmt") {
    if (end?.points) parts.push(t("endAtPoints", { n: end.points }));
    if (end?.rounds) parts.push(t("endAfterRounds", { n: end.rounds }));
  }
  if (v.ruleset === "x-nimmt" && o.deals) parts.push(t("dealsCount", { n: o.deals }));
  if (v.ruleset === "nimm-oder-schieb") {
    if (o.chips) parts.push(t(`chips_${o.chips}` as Key));
    if (o.games) parts.push(t("gamesCount", { n: o.games }));
  }
  if (v.move_deadline_seconds) parts.push(`${t("moveDeadline")}: ${duration(v.move_deadline_seconds * 1000)}`);
  const tc = timeControlOf(v);
  if (tc) parts.push(`${t("timeControl")}: ${timeControlText(tc)}`);
  return parts.join(" · ");
}

function GameLobby(props: { v: GameBody; act: Act; busy: boolean; session: GameSession }) {
  const { v, act, busy } = props;
  const [strategy, setStrategy] = useState<BotStrategy>("heuristic");
  const [run, pubBusy, pubError] = useAction();
  const me = v.you?.seat;
  const isHost = me === v.host_seat;
  const canAddBot = legalOf(v, "add_bot").length > 0;
  const removable = new Set(legalOf(v, "remove_seat").map((c) => (c as { seat: number }).seat));
  return (
    <div class="game-lobby">
      <p class="options">{optionsText(v)}</p>
      {v.rematch_of ? (
        <p class="rematch-of">
          {t("rematchOf")} <a href={href("games", v.rematch_of)}>{t("previousGame")}</a>
        </p>
      ) : null}
      <section class="panel" aria-labelledby="seats-h">
        <h2 id="seats-h">{t("waitingForPlayers")}</h2>
        <ol class="seats-list">
          {v.seats.map((s) => (
            <li key={s.seat} data-seat={s.seat}>
              <span class="seat-no">{t("seat", { seat: s.seat })}</span>{" "}
              <span class="seat-name">
                {s.name ? (
                  <PlayerLink id={s.bot ? null : s.account_id} name={s.name} />
                ) : s.reserved ? (
                  <em data-reserved="true">{t("keptSeat")}</em>
                ) : (
                  <em>{t("free")}</em>
                )}
              </span>
              {s.seat === me ? <span class="tag">{t("you")}</span> : null}
              {s.seat === v.host_seat ? <span class="tag">{t("host")}</span> : null}
              {s.bot ? (
                <span class="tag">
                  {t("bot")}
                  {s.strategy ? `: ${t(`strategy_${s.strategy}` as Key)}` : ""}
                </span>
              ) : null}
              {removable.has(s.seat) ? (
                <button
                  type="button"
                  class="small"
                  disabled={busy}
                  aria-label={t("removeSeat", { name: s.name ?? "", seat: s.seat + 1 })}
                  onClick={() => act({ type: "remove_seat", seat: s.seat })}
                >
                  {t("remove")}
                </button>
              ) : null}
            </li>
          ))}
        </ol>
        {canAddBot ? (
          <div class="add-bot">
            <label for="bot-strategy">{t("strategy")}</label>
            <Select
              id="bot-strategy"
              value={strategy}
              onChange={setStrategy}
              options={botStrategyValues.map((s) => ({
                value: s,
                label: has(`strategy_${s}`) ? t(`strategy_${s}` as Key) : s,
              }))}
            />
            <button type="button" disabled={busy} onClick={() => act({ type: "add_bot", strategy })}>
              {t("addBot")}
            </button>
          </div>
        ) : null}
        <div class="lobby-actions">
          {legalOf(v, "join").length > 0 ? (
            <button type="button" class="primary" disabled={busy} onClick={() => act({ type: "join" })}>
              {t("join")}
            </button>
          ) : null}
          {legalOf(v, "start").length > 0 ? (
            <button type="button" class="primary" disabled={busy} onClick={() => act({ type: "start" })}>
              {t("start")}
            </button>
          ) : v.auto_start ? (
            <p class="hint">{t("autoStart")}</p>
          ) : isHost ? (
            <p class="hint">{t("needAllSeats")}</p>
          ) : null}
          {legalOf(v, "leave").length > 0 ? (
            <button type="button" disabled={busy} onClick={() => act({ type: "leave" })}>
              {t("leave")}
            </button>
          ) : null}
        </div>
      </section>
      {v.invite_code ? (
        <section class="panel" aria-labelledby="invite-h">
          <h2 id="invite-h">{t("invite")}</h2>
          <p>{t("inviteExplain")}</p>
          <p class="invite">
            <input
              readOnly
              id="invite-link"
              aria-label={t("invite")}
              value={inviteLink(v.id, v.invite_code)}
              onFocus={(e) => e.currentTarget.select()}
            />
            <CopyButton text={inviteLink(v.id, v.invite_code)} />
          </p>
          <p>
            {t("inviteCode")}: <code data-invite-code>{v.invite_code}</code>
          </p>
        </section>
      ) : null}
      {isHost ? (
        <p>
          <label class="check">
            <input
              type="checkbox"
              checked={v.public}
              disabled={pubBusy}
              onChange={(e) => {
                const on = e.currentTarget.checked;
                void run(() => props.session.setPublic(on));
              }}
            />{" "}
            {t("makePublic")}
          </label>
        </p>
      ) : null}
      <ErrorMessage error={pubError} />
    </div>
  );
}

// --- the table ------------------------------------------------------------------------

function Table(props: { st: GameState; v: GameBody; act: Act; busy: boolean; session: GameSession }) {
  const { st, v, act, busy } = props;
  const nos = v.ruleset === "nimm-oder-schieb";
  return (
    <>
      {/* Outside the two columns, so that on a phone it stays on screen down to the log. */}
      <SeatStrip v={v} />
      <div class="table-layout">
        <div class="table-main">
          <Status st={st} v={v} />
          <ClockControls v={v} act={act} busy={busy} />
          <RoundSummary v={v} />
          <KeepFocus />
          {st.replaying ? (
            <button type="button" class="link skip" onClick={() => props.session.skipReplay()}>
              {t("skip")}
            </button>
          ) : null}
          {nos ? (
            <NosCenter v={v} info={st.info} act={act} busy={busy || st.replaying} />
          ) : (
            <>
              <DraftPool v={v} info={st.info} act={act} busy={busy || st.replaying} />
              <Rows v={v} info={st.info} act={act} busy={busy || st.replaying} highlight={st.highlight} />
              <Revealed v={v} info={st.info} />
              <PendingKeep v={v} info={st.info} act={act} busy={busy || st.replaying} />
              {v.status === "finished" ? null : <Hand v={v} info={st.info} act={act} busy={busy || st.replaying} />}
            </>
          )}
          {v.status === "finished" ? (tournamentOf(v) ? null : <Rematch v={v} />) : <Resign v={v} act={act} busy={busy} />}
        </div>
        <div class="table-side">
          <Seats v={v} info={st.info} />
          <Log st={st} />
          <Scores v={v} />
          <Fairness v={v} info={st.info} />
        </div>
      </div>
    </>
  );
}

/** A round's result, shown when it ends: what each seat took, the round's points and the
 *  totals. It stays until dismissed, or for a few seconds while the game goes on (never
 *  holding up play: it is a panel, not a dialog); at the end of the game it stays. Rounds
 *  that ended before the page was opened are not shown again. */
function RoundSummary(props: { v: GameBody }) {
  const { v } = props;
  const nos = v.ruleset === "nimm-oder-schieb";
  const rounds = v.scores.length;
  const [seen, setSeen] = useState(rounds);
  const [shown, setShown] = useState<{ round: number; scores: number[]; totals: number[]; taken: number[][] } | null>(null);
  useEffect(() => {
    if (rounds > seen) {
      setSeen(rounds);
      setShown({
        round: rounds,
        scores: v.scores[rounds - 1] ?? [],
        totals: [...v.totals],
        taken: v.seats.map((s) => [...(s.taken ?? [])]),
      });
    }
  }, [rounds]);
  const finished = v.status === "finished";
  useEffect(() => {
    if (!shown || finished) return;
    const timer = setTimeout(() => setShown(null), 8000);
    return () => clearTimeout(timer);
  }, [shown, finished]);
  if (!shown) return null;
  return (
    <section class="panel round-summary" aria-labelledby="summary-h" data-round={shown.round}>
      <h2 id="summary-h">{t(nos ? "summaryGameTitle" : "summaryRoundTitle", { n: shown.round })}</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">{t("player")}</th>
            {nos ? null : <th scope="col">{t("cardsTaken")}</th>}
            <th scope="col">{t(nos ? "summaryPoints" : "summaryBullheads")}</th>
            <th scope="col">{t("total")}</th>
          </tr>
        </thead>
        <tbody>
          {v.seats.map((s, i) => (
            <tr key={s.seat} class={v.you?.seat === s.seat ? "me" : ""}>
              <th scope="row">{seatName(v, s.seat)}</th>
              {nos ? null : <td>{(shown.taken[i] ?? []).join(", ") || "–"}</td>}
              <td>{shown.scores[i] ?? 0}</td>
              <td>
                <strong>{shown.totals[i] ?? 0}</strong>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" class="dismiss" onClick={() => setShown(null)}>
        {t("summaryDismiss")}
      </button>
    </section>
  );
}

/** The places at the end (lowest total first; equal totals share a place unless the
 *  game's tie-break made some of them the winners), the person's own place and, for a
 *  rated game, their rating afterwards and how it moved. */
function Places(props: { v: GameBody }) {
  const { v } = props;
  const winners = new Set(v.winners ?? []);
  const total = (s: number) => v.totals[s] ?? 0;
  const better = (s: number, o: number) =>
    total(o) < total(s) || (total(o) === total(s) && winners.has(o) && !winners.has(s));
  const place = (s: number) => 1 + v.seats.filter((o) => better(s, o.seat)).length;
  const order = [...v.seats].sort((a, b) => place(a.seat) - place(b.seat) || a.seat - b.seat);
  const me = v.you?.seat;
  const rating = useRating(v, me);
  return (
    <>
      <ol class="places" aria-label={t("placesTitle")}>
        {order.map((s) => (
          <li key={s.seat} class={s.seat === me ? "me" : ""} data-place={place(s.seat)}>
            <span class="place">{place(s.seat)}.</span> {seatName(v, s.seat)} <span class="total">{total(s.seat)}</span>
          </li>
        ))}
      </ol>
      {me !== undefined ? (
        <p class="my-place" data-my-place={place(me)}>
          {t("yourPlace", { place: place(me), players: v.seats.length })}
          {rating ? (
            <>
              {" · "}
              <span class="rating-change" data-rating-delta={rating.delta ?? ""}>
                {rating.delta === null
                  ? t("ratingNow", { rating: rating.after.toFixed(1) })
                  : t("ratingMoved", { rating: rating.after.toFixed(1), delta: `${rating.delta >= 0 ? "+" : "−"}${Math.abs(rating.delta).toFixed(1)}` })}
              </span>
            </>
          ) : null}
        </p>
      ) : null}
    </>
  );
}

/** The person's rating after this game and its change since their rated game before in
 *  the same ruleset (`delta` null for the first), once the server has rated the game; it
 *  asks again for a few seconds, as ratings follow the game's end. Null when unrated. */
function useRating(v: GameBody, me: number | undefined): { after: number; delta: number | null } | null {
  const [rating, setRating] = useState<{ after: number; delta: number | null } | null>(null);
  const account = me !== undefined ? v.seats[me]?.account_id : undefined;
  useEffect(() => {
    if (!account) return;
    let stop = false;
    const ask = async (tries: number) => {
      const page = await unwrap(api.GET("/v1/players/{id}/games", { params: { path: { id: account }, query: { limit: 50 } } })).catch(() => null);
      if (stop || !page) return;
      const i = page.items.findIndex((g) => g.game_id === v.id);
      const mine = page.items[i];
      if (mine && mine.rated && mine.rating_after != null) {
        const before = page.items.slice(i + 1).find((g) => g.ruleset === mine.ruleset && g.rated && g.rating_after != null);
        setRating({ after: mine.rating_after, delta: before?.rating_after != null ? mine.rating_after - before.rating_after : null });
      } else if (!mine || mine.rated) {
        if (tries > 0) setTimeout(() => void ask(tries - 1), 1000);
      }
    };
    void ask(10);
    return () => {
      stop = true;
    };
  }, [v.id, account]);
  return rating;
}

/** When the control that had the focus goes away (a played card leaves the hand, a taken
 *  row's button disappears), the focus moves to what the table asks next: the cheapest row
 *  to take, the first card that may be played, or the status line, instead of dropping to
 *  the page's body. */
function KeepFocus() {
  const last = useRef<Element | null>(null);
  useEffect(() => {
    const table = document.querySelector(".table-main");
    const track = (e: FocusEvent) => {
      last.current = table && e.target instanceof Element && table.contains(e.target) ? e.target : null;
    };
    document.addEventListener("focusin", track);
    return () => document.removeEventListener("focusin", track);
  }, []);
  useEffect(() => {
    const lost = last.current !== null && !last.current.isConnected;
    if (!lost || (document.activeElement && document.activeElement !== document.body)) return;
    const next =
      document.querySelector<HTMLElement>(".take-row[data-cheapest]:not(:disabled)") ??
      document.querySelector<HTMLElement>(".hand-cards .card-button:not(:disabled)") ??
      document.querySelector<HTMLElement>(".table-main .status");
    next?.focus({ preventScroll: true });
  });
  return null;
}

function Status(props: { st: GameState; v: GameBody }) {
  const { v, st } = props;
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const h = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(h);
  }, []);
  if (v.status === "finished") {
    const w = v.winners ?? [];
    const names = joinNames(w.map((s) => seatName(v, s)));
    const iWon = v.you && w.includes(v.you.seat);
    return (
      <div class="status finished" role="status" tabIndex={-1}>
        <h2>{t("finishedTitle")}</h2>
        <p class="winners">
          <span aria-hidden="true">★ </span>
          {t(w.length > 1 ? "winnersMany" : "winners", { names })}
        </p>
        {iWon ? <p class="you-won">{t("youWon")}</p> : null}
        <Places v={v} />
        <p class="end-actions">
          <a class="button" href={href()} data-end="new-game" onClick={() => sessionStorage.setItem(NEW_GAME_FLAG, "1")}>
            {t("newGame")}
          </a>{" "}
          <a class="button" href={href()} data-end="lobby">
            {t("backToLobby")}
          </a>
        </p>
      </div>
    );
  }
  const me = v.you?.seat;
  const mine = v.awaiting.filter((a) => a.seat === me).map((a) => a.action);
  const others = [...new Set(v.awaiting.filter((a) => a.seat !== me).map((a) => a.seat))];
  let text: string;
  if (st.replaying && mine.length === 0) text = t("resolving");
  else if (mine.includes("take_row")) {
    const card = v.table.revealed.find((r) => r.seat === me)?.card ?? "";
    text = t("doTakeRow", { card });
  } else if (mine.includes("keep_card")) text = t("doKeep");
  else if (mine.includes("draft_card")) text = t("doDraft");
  else if (mine.includes("take") && !mine.includes("pass")) text = t("doTakeOnly");
  else if (mine.includes("take")) text = t("doTakeOrPass");
  else if (mine.includes("play_card")) text = v.you?.selected ? t("doChange", { card: v.you.selected }) : t("doPlay");
  else if (others.length > 0) text = t("waitingFor", { names: joinNames(others.map((s) => seatName(v, s))) });
  else text = st.replaying ? t("resolving") : "";
  if (!v.you) text = `${t("spectating")} ${text}`;
  const why = whyOf(v, mine);
  const myDeadline = me !== undefined ? v.seats[me]?.deadline_at : null;
  // A game with clocks shows the time left on the seats' clocks instead.
  const left = mine.length > 0 && !timeControlOf(v) ? deadlineText(myDeadline, now) : null;
  return (
    <div class={`status${mine.length > 0 ? " your-turn" : ""}`} role="status" tabIndex={-1} data-your-turn={mine.length > 0}>
      <p>{text}</p>
      {why.map((k) => (
        <p key={k} class="why" data-why={k}>
          {t(k)}
        </p>
      ))}
      {left ? <p class="deadline">{left}</p> : null}
    </div>
  );
}

/** What the rules make of the choice the table asks of this person, in a sentence or two
 *  under the prompt (the rules page has the rest). */
function whyOf(v: GameBody, mine: string[]): Key[] {
  const o = v.options as { placement?: string | null; deal?: string | null };
  if (mine.includes("take_row")) return v.ruleset === "x-nimmt" ? ["whyTakeRow", "whyTakeRowX"] : ["whyTakeRow"];
  if (mine.includes("keep_card")) return ["whyKeep"];
  if (mine.includes("draft_card")) return ["whyPlayDraft"];
  if (mine.includes("take")) return ["whyTakeOrPass"];
  if (mine.includes("play_card")) {
    if (v.ruleset === "x-nimmt") return ["whyPlayX"];
    return o.placement === "both_ends" ? ["whyPlay", "whyPlayProfi"] : ["whyPlay"];
  }
  return [];
}

function rowBulls(info: RulesetInfo | null, cards: number[]): number {
  return cards.reduce((a, c) => a + bulls(info, c), 0);
}

function Rows(props: { v: GameBody; info: RulesetInfo | null; act: Act; busy: boolean; highlight: number | null }) {
  const { v, info, act, busy } = props;
  const takeable = new Set(legalOf(v, "take_row").map((c) => (c as { row: number }).row));
  // The cheapest row to take (the first of equals), where the prompt puts the focus.
  let cheapest: number | null = null;
  for (const i of [...takeable].sort((a, b) => a - b)) {
    const cards = v.table.rows[i]?.cards ?? [];
    if (cheapest === null || rowBulls(info, cards) < rowBulls(info, v.table.rows[cheapest]?.cards ?? [])) cheapest = i;
  }
  const cheapestButton = useRef<HTMLButtonElement>(null);
  const prompt = [...takeable].join(",");
  useEffect(() => {
    if (prompt !== "" && !busy) cheapestButton.current?.focus();
  }, [prompt, busy]);
  return (
    <section class="rows" aria-labelledby="rows-h">
      <h2 id="rows-h" class="visually-hidden">
        {t("rows")}
      </h2>
      <ol class="row-list">
        {v.table.rows.map((r, i) => {
          const b = rowBulls(info, r.cards);
          const label = t("rowSummary", { n: i, count: r.cards.length, max: r.max_cards, bulls: b });
          return (
            <li key={i} class={`row${takeable.has(i) ? " takeable" : ""}`} data-row={i}>
              <span class="row-label" aria-hidden="true">
                {i + 1}
              </span>
              <ol class="row-cards" aria-label={label}>
                {r.cards.map((c) => (
                  <li key={c} class={props.highlight === c ? "moved" : ""}>
                    <Card n={c} bulls={bulls(info, c)} />
                  </li>
                ))}
                {Array.from({ length: Math.max(0, r.max_cards - r.cards.length) }, (_, k) => (
                  <li key={`e${k}`} class="slot" aria-hidden="true" />
                ))}
                <li class="slot takes" aria-hidden="true" title={t("takesAt", { n: r.max_cards + 1 })}>
                  {r.max_cards + 1}
                </li>
              </ol>
              <span class="row-bulls" aria-hidden="true">
                {b}
                <Bull />
              </span>
              {takeable.has(i) ? (
                <button
                  type="button"
                  class="primary take-row"
                  ref={i === cheapest ? cheapestButton : undefined}
                  data-cheapest={i === cheapest ? "true" : undefined}
                  disabled={busy}
                  onClick={() => act({ type: "take_row", row: i })}
                >
                  <span class="take-long">
                    {t("takeRow", { n: i })} ({t("bullheads", { n: b })})
                  </span>
                  {/* On a phone the row's button sits in the row: "Take 5🐂" (the full
                      sentence stays the button's name for screen readers). */}
                  <span class="take-short" aria-hidden="true">
                    {t("takeShort")} {b}
                    <Bull />
                  </span>
                </button>
              ) : null}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

function Revealed(props: { v: GameBody; info: RulesetInfo | null }) {
  const { v, info } = props;
  if (v.table.revealed.length === 0) return null;
  return (
    <section class="revealed" aria-labelledby="revealed-h">
      <h2 id="revealed-h">{t("revealed")}</h2>
      <ul class="card-list">
        {v.table.revealed.map((r) => (
          <li key={r.card}>
            <Card n={r.card} bulls={bulls(info, r.card)} />
            <span class="who">{seatName(v, r.seat)}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

function PendingKeep(props: { v: GameBody; info: RulesetInfo | null; act: Act; busy: boolean }) {
  const { v, info, act, busy } = props;
  const pk = v.table.pending_keep;
  if (!pk) return null;
  const mine = pk.seat === v.you?.seat && legalOf(v, "keep_card").length > 0;
  return (
    <section class="pending-keep panel" aria-labelledby="keep-h">
      <h2 id="keep-h">{t("pendingKeep", { name: seatName(v, pk.seat) })}</h2>
      <ul class="card-list">
        {pk.cards.map((c) => (
          <li key={c}>
            {mine ? (
              <button
                type="button"
                class="card-button"
                disabled={busy}
                data-keep={c}
                onClick={() => act({ type: "keep_card", card: c })}
              >
                <Card n={c} bulls={bulls(info, c)} />
              </button>
            ) : (
              <Card n={c} bulls={bulls(info, c)} />
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

function DraftPool(props: { v: GameBody; info: RulesetInfo | null; act: Act; busy: boolean }) {
  const { v, info, act, busy } = props;
  const pool = v.table.draft_pool;
  if (!pool || pool.length === 0) return null;
  const can = new Set(legalOf(v, "draft_card").map((c) => (c as { card: number }).card));
  return (
    <section class="draft panel" aria-labelledby="draft-h">
      <h2 id="draft-h">{t("draftPool")}</h2>
      <ul class="card-list">
        {pool.map((c) => (
          <li key={c}>
            {can.has(c) ? (
              <button type="button" class="card-button" disabled={busy} onClick={() => act({ type: "draft_card", card: c })}>
                <Card n={c} bulls={bulls(info, c)} />
              </button>
            ) : (
              <Card n={c} bulls={bulls(info, c)} />
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Hand(props: { v: GameBody; info: RulesetInfo | null; act: Act; busy: boolean }) {
  const { v, info, act, busy } = props;
  // Where the hand is docked at the bottom (a phone), the page keeps room below its end
  // and the focus clear of it by the dock's height, which the number of cards decides.
  const dock = useRef<HTMLElement>(null);
  useEffect(() => {
    const el = dock.current;
    if (!el) return;
    const root = document.documentElement;
    const watch = new ResizeObserver(() => root.style.setProperty("--dock-h", `${Math.ceil(el.offsetHeight)}px`));
    watch.observe(el);
    return () => {
      watch.disconnect();
      root.style.removeProperty("--dock-h");
    };
  }, []);
  if (!v.you) return null;
  const playable = new Set(legalOf(v, "play_card").map((c) => (c as { card: number }).card));
  const sel = v.you.selected;
  const stack = v.you.x_stack ?? [];
  return (
    <section class="hand panel" aria-labelledby="hand-h" ref={dock}>
      <h2 id="hand-h">{t("yourHand")}</h2>
      {v.you.hand.length === 0 ? <p class="empty">{t("emptyHand")}</p> : null}
      <ul class="card-list hand-cards">
        {v.you.hand.map((c) => {
          const isSel = sel === c;
          return (
            <li key={c} class={isSel ? "selected" : ""}>
              {playable.has(c) ? (
                <button
                  type="button"
                  class="card-button"
                  aria-pressed={isSel}
                  disabled={busy}
                  data-card={c}
                  onClick={() => act({ type: "play_card", card: c })}
                >
                  <Card n={c} bulls={bulls(info, c)} mark={isSel ? t("selected") : undefined} />
                </button>
              ) : (
                <Card n={c} bulls={bulls(info, c)} mark={isSel ? t("selected") : undefined} />
              )}
            </li>
          );
        })}
      </ul>
      {v.ruleset === "x-nimmt" && stack.length > 0 ? (
        <div class="x-stack-own">
          <h3>{t("yourXStack")}</h3>
          <ul class="card-list small">
            {stack.map((c) => (
              <li key={c}>
                <Card n={c} bulls={bulls(info, c)} />
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}

function NosCenter(props: { v: GameBody; info: RulesetInfo | null; act: Act; busy: boolean }) {
  const { v, act, busy } = props;
  const tb = v.table;
  const canTake = legalOf(v, "take").length > 0;
  const canPass = legalOf(v, "pass").length > 0;
  return (
    <section class="nos-center panel" aria-labelledby="open-h">
      <h2 id="open-h">{t("openCard")}</h2>
      <div class="open-card">
        {tb.open_card ? (
          <>
            <NosCard c={tb.open_card} big />
            <div class="pot" data-pot={tb.pot ?? 0}>
              <span class="chips-icon" aria-hidden="true">
                {"●".repeat(Math.min(tb.pot ?? 0, 12))}
              </span>{" "}
              {t("pot", { n: tb.pot ?? 0 })}
            </div>
          </>
        ) : (
          <p class="empty">{t("noOpenCard")}</p>
        )}
        {v.status === "active" ? <p class="pile">{t("drawPile", { n: tb.draw_pile_size ?? 0 })}</p> : null}
      </div>
      {v.you ? (
        <p class="my-chips" data-chips={v.you.chips ?? 0}>
          {t("chipsLeft")}: <strong>{v.you.chips ?? 0}</strong>
        </p>
      ) : null}
      {canTake || canPass ? (
        <div class="nos-actions">
          <button type="button" class="primary" disabled={busy || !canTake} onClick={() => act({ type: "take" })}>
            {t("take")}
          </button>
          <button type="button" disabled={busy || !canPass} onClick={() => act({ type: "pass" })}>
            {t("pass")}
          </button>
        </div>
      ) : null}
      {tb.removed && tb.removed.length > 0 ? (
        <div class="removed">
          <h3>{t("removedCards")}</h3>
          <ul class="card-list small">
            {tb.removed.map((c) => (
              <li key={c.value}>
                <NosCard c={c} />
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}

/** What a seat is asked to do, in words ("take a row", "take or pass"). */
function actionWords(actions: string[]): string {
  const names = [...new Set(actions.map((a) => (a === "pass" || a === "take" ? "take_or_pass" : a)))];
  return names.map((a) => (has(`act_${a}`) ? t(`act_${a}` as Key) : a)).join(", ");
}

/** Where a seat stands in the current turn: it has chosen its card (a row game's hidden
 *  choice), is still choosing, must act otherwise (take a row, keep a card, take or pass),
 *  or waits. The player panels and the strip show the same. */
type SeatState = "chosen" | "choosing" | "acting" | "idle";
function seatState(v: GameBody, s: SeatView): SeatState {
  const rowGame = v.ruleset !== "nimm-oder-schieb";
  const asked = v.awaiting.filter((a) => a.seat === s.seat);
  if (rowGame && s.selected) return "chosen";
  if (rowGame && v.status === "active" && asked.some((a) => a.action === "play_card")) return "choosing";
  return asked.length > 0 ? "acting" : "idle";
}

/** What a seat must do, in words ("take a row"). */
function askedWords(v: GameBody, s: SeatView): string {
  return actionWords(v.awaiting.filter((a) => a.seat === s.seat).map((a) => a.action));
}

function SeatPanel(props: { v: GameBody; s: SeatView; info: RulesetInfo | null }) {
  const { v, s, info } = props;
  const me = v.you?.seat === s.seat;
  const acting = v.awaiting.some((a) => a.seat === s.seat);
  const rowGame = v.ruleset !== "nimm-oder-schieb";
  const state = seatState(v, s);
  const cards = s.cards ?? [];
  return (
    <li class={`seat${me ? " me" : ""}${acting ? " acting" : ""}`} data-seat={s.seat}>
      <div class="seat-head">
        <strong class="seat-name">{s.name ? <PlayerLink id={s.bot ? null : s.account_id} name={s.name} /> : t("free")}</strong>
        {me ? <span class="tag">{t("you")}</span> : null}
        {s.bot ? <span class="tag">{s.resigned ? t("resigned") : t("bot")}</span> : null}
        <SeatClock v={v} seat={s.seat} />
        {state === "chosen" ? (
          <span class="tag selected-mark" data-selected="true">
            ✓ {t("hasSelected")}
          </span>
        ) : state === "choosing" ? (
          <span class="tag thinking">{t("thinking")}</span>
        ) : state === "acting" ? (
          <span class="tag turn-mark" data-acting="true">
            ▶ {askedWords(v, s)}
          </span>
        ) : null}
      </div>
      <div class="seat-stats">
        {rowGame ? (
          <>
            <span>{t("handSize", { n: s.hand_size })}</span>
            {v.ruleset === "x-nimmt" ? null : <span>{t("roundBulls", { n: s.round_bullheads ?? 0 })}</span>}
          </>
        ) : (
          <>
            <span data-seat-chips={s.chips ?? ""}>
              {typeof s.chips === "number" ? t("chipsOf", { n: s.chips }) : t("chipsHidden")}
            </span>
            <span>
              {t("cardPoints")}: {runPoints(runsOf(cards))}
            </span>
          </>
        )}
        <span>
          {t("total")}: <strong>{v.totals[s.seat] ?? s.total}</strong>
        </span>
      </div>
      {v.ruleset === "x-nimmt" ? (
        <div class="x-row">
          <span class="label">{t("xRow")}:</span>
          <ul class="card-list small">
            {(s.x_row ?? []).map((c) => (
              <li key={c}>
                <Card n={c} bulls={bulls(info, c)} />
              </li>
            ))}
          </ul>
          <span class="label">{t("xStack", { n: s.x_stack_size ?? 0 })}</span>
        </div>
      ) : null}
      {rowGame && (s.taken ?? []).length > 0 ? (
        <details class="taken">
          <summary>
            {t("cardsTaken")}: {(s.taken ?? []).length}
          </summary>
          <ul class="card-list small">
            {(s.taken ?? []).map((c) => (
              <li key={c}>
                <Card n={c} bulls={bulls(info, c)} />
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      {!rowGame && cards.length > 0 ? (
        <div class="nos-taken">
          <span class="label" aria-hidden="true">
            {t("cardsTaken")}:
          </span>
          <NosRuns runs={runsOf(cards)} title={t("cardsTaken")} />
        </div>
      ) : null}
    </li>
  );
}

/** A seat's clock, when the game has clocks: ticking every second from the server's bank
 *  (the view's or the last `clocks_set`'s), red when low, "out of time" when flagged, "away
 *  until …" on vacation. A timer a screen reader reads when asked, never announced by itself. */
function SeatClock(props: { v: GameBody; seat: number; strip?: boolean }) {
  const { v, seat } = props;
  const c = clockOf(v, seat);
  const at = clocksAtOf(v);
  if (!c || !at || v.status !== "active") return null;
  return <Ticking v={v} seat={seat} strip={props.strip ?? false} />;
}

function Ticking(props: { v: GameBody; seat: number; strip: boolean }) {
  const { v, seat } = props;
  useTick();
  const c = clockOf(v, seat);
  const at = clocksAtOf(v);
  if (!c || !at) return null;
  const name = seatName(v, seat);
  const paused = pauseOf(v)?.paused ?? false;
  const ms = remainingAt(c, at, serverNow());
  let state: string;
  let face: string;
  let label: string;
  if (c.away_until) {
    state = "away";
    const long = t("clockAway", { time: dateTime(c.away_until) });
    face = props.strip ? t("clockAwayShort") : long;
    label = `${name}: ${long}`;
  } else if (c.flagged || (c.running && ms <= 0)) {
    state = "out";
    // The strip is narrow: its red 0:00 says what the panel's words say.
    face = props.strip ? clockFace(0) : t("clockOut");
    label = t("clockOutLabel", { name });
  } else {
    state = c.running && !paused ? "running" : "stopped";
    face = clockFace(ms);
    label = t("clockLabel", { name, time: clockWords(ms) }) + (paused ? `, ${t("clockPausedWord")}` : c.running ? `, ${t("clockRunningWord")}` : "");
  }
  const low = (state === "running" || state === "stopped") && isLow(timeControlOf(v), ms);
  return (
    <span
      class={`clock ${state}${low ? " low" : ""}${props.strip ? " strip-clock" : " tag"}`}
      role="timer"
      aria-live="off"
      aria-label={label}
      data-clock-seat={seat}
      data-clock-state={state}
      data-clock-ms={Math.ceil(ms / 1000) * 1000}
    >
      <span aria-hidden="true">
        {state === "running" ? <Icon name="clock" /> : paused && state === "stopped" ? <Icon name="pause" /> : null}
        {face}
      </span>
    </span>
  );
}

/** The clocks' decisions: a pause proposed, accepted, declined or resumed (correspondence),
 *  and letting a bot play a seat whose clock ran out (when the others decide). */
function ClockControls(props: { v: GameBody; act: Act; busy: boolean }) {
  const { v, busy } = props;
  const act = (c: ClockCommand) => props.act(c);
  const pause = pauseOf(v);
  const can = (type: ClockCommand["type"]) => legalOf(v, type).length > 0;
  const handTo = legalOf(v, "hand_to_bot").map((c) => (c as Extract<Command, { type: "hand_to_bot" }>).seat);
  const flagged = v.seats.filter((s) => clockOf(v, s.seat)?.flagged).map((s) => seatName(v, s.seat));
  const proposed = pause && !pause.paused && pause.proposed_by != null ? pause.proposed_by : null;
  const any = pause?.paused || proposed !== null || handTo.length > 0 || can("propose_pause") || can("resume");
  if (!any || v.status !== "active") return null;
  const accepted = (pause?.accepted ?? []).filter((s) => s !== proposed).map((s) => seatName(v, s));
  return (
    <section class="clock-controls" aria-label={t("clocksHeading")}>
      <div aria-live="polite">
        {pause?.paused ? (
          <p data-pause="paused">{t("clocksPaused")}</p>
        ) : proposed !== null ? (
          <p data-pause="proposed">
            {t("pauseProposedBy", { name: seatName(v, proposed) })}
            {accepted.length > 0 ? ` ${t("pauseAcceptedBy", { names: joinNames(accepted) })}` : ""}
          </p>
        ) : null}
        {handTo.length > 0 && flagged.length > 0 ? <p data-flagged="true">{t("flaggedWait", { names: joinNames(flagged) })}</p> : null}
      </div>
      <div class="clock-actions">
        {handTo.map((seat) => (
          <button key={seat} type="button" class="danger" disabled={busy} data-hand-to-bot={seat} onClick={() => act({ type: "hand_to_bot", seat })}>
            {t("handToBot", { name: seatName(v, seat) })}
          </button>
        ))}
        {can("propose_pause") ? (
          <button type="button" disabled={busy} data-clock-cmd="propose_pause" onClick={() => act({ type: "propose_pause" })}>
            {t("pausePropose")}
          </button>
        ) : null}
        {can("accept_pause") ? (
          <button type="button" class="primary" disabled={busy} data-clock-cmd="accept_pause" onClick={() => act({ type: "accept_pause" })}>
            {t("pauseAccept")}
          </button>
        ) : null}
        {can("decline_pause") ? (
          <button type="button" disabled={busy} data-clock-cmd="decline_pause" onClick={() => act({ type: "decline_pause" })}>
            {t("pauseDecline")}
          </button>
        ) : null}
        {can("resume") ? (
          <button type="button" disabled={busy} data-clock-cmd="resume" onClick={() => act({ type: "resume" })}>
            {t("pauseResume")}
          </button>
        ) : null}
      </div>
    </section>
  );
}

/** The players in one line above the table: name, whether they have chosen or must act, and
 *  their total. On a phone it stays at the top of the screen while the page scrolls (the
 *  full player panels are further down there); on a wide screen the panels beside the
 *  table show the same, and the strip is not shown. */
function SeatStrip(props: { v: GameBody }) {
  const { v } = props;
  if (v.status === "finished") return null;
  const marks: Record<SeatState, string> = { chosen: "✓", choosing: "…", acting: "▶", idle: "" };
  return (
    <ul class="seat-strip" aria-label={t("playerStrip")}>
      {v.seats.map((s) => {
        const state = seatState(v, s);
        const mark = marks[state];
        const word =
          state === "chosen" ? t("hasSelected") : state === "choosing" ? t("thinking") : state === "acting" ? askedWords(v, s) : "";
        return (
          <li
            key={s.seat}
            class={`strip-seat ${state}${v.you?.seat === s.seat ? " me" : ""}`}
            data-strip-seat={s.seat}
            data-strip-state={state}
          >
            <span class="strip-mark" aria-hidden="true">
              {mark}
            </span>
            <span class="strip-name">{s.name ?? t("free")}</span>
            {word ? <span class="visually-hidden"> ({word})</span> : null}
            <strong class="strip-total">
              <span class="visually-hidden">{t("total")}: </span>
              {v.totals[s.seat] ?? s.total}
            </strong>
            <SeatClock v={v} seat={s.seat} strip />
          </li>
        );
      })}
    </ul>
  );
}

function Seats(props: { v: GameBody; info: RulesetInfo | null }) {
  return (
    <section class="panel" aria-labelledby="players-h">
      <h2 id="players-h">{t("players")}</h2>
      <ul class="seat-panels">
        {props.v.seats.map((s) => (
          <SeatPanel key={s.seat} v={props.v} s={s} info={props.info} />
        ))}
      </ul>
    </section>
  );
}

function Log(props: { st: GameState }) {
  const log = props.st.log;
  const sp = useStore(speed);
  const list = useRef<HTMLOListElement>(null);
  // Keep the newest line in view.
  useEffect(() => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [log.length]);
  return (
    <section class="panel log" aria-labelledby="log-h">
      <h2 id="log-h">{t("log")}</h2>
      <ol class="log-list" ref={list} tabIndex={0} aria-labelledby="log-h" aria-live="polite" aria-relevant="additions">
        {log.length === 0 ? <li class="empty">{t("logEmpty")}</li> : null}
        {log.slice(-12).map((l) => (
          <li key={l.seq} data-event={l.event.type}>
            {logText(l, props.st.info)}
          </li>
        ))}
      </ol>
      <p class="speed">
        <label for="speed">{t("speed")}</label>{" "}
        <Select<Speed>
          id="speed"
          value={sp}
          onChange={(s) => speed.set(s)}
          options={(["normal", "fast", "off"] as const).map((s) => ({ value: s, label: t(`speed_${s}`) }))}
        />
      </p>
    </section>
  );
}

function Scores(props: { v: GameBody }) {
  const { v } = props;
  const nos = v.ruleset === "nimm-oder-schieb";
  const winners = new Set(v.winners ?? []);
  return (
    <section class="panel scores" aria-labelledby="scores-h">
      <h2 id="scores-h">{t("scoresTitle")}</h2>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">
                <span class="visually-hidden">{nos ? t("game") : t("rounds")}</span>
              </th>
              {v.seats.map((s) => (
                <th scope="col" key={s.seat}>
                  {s.name ?? t("seat", { seat: s.seat })}
                  {winners.has(s.seat) ? <span class="winner-mark"> ★ </span> : null}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {v.scores.map((r, i) => (
              <tr key={i}>
                <th scope="row">{t(nos ? "scoresGame" : "scoresRound", { n: i + 1 })}</th>
                {r.map((n, s) => (
                  <td key={s}>{n}</td>
                ))}
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row">{t("total")}</th>
              {v.totals.map((n, s) => (
                <td key={s} class={winners.has(s) ? "winner" : ""}>
                  <strong>{n}</strong>
                  {winners.has(s) ? <span class="visually-hidden"> ({t("winnerMark")})</span> : null}
                </td>
              ))}
            </tr>
          </tfoot>
        </table>
      </div>
      {v.scores.length === 0 ? <p class="empty">{t("noScores")}</p> : null}
    </section>
  );
}

function Fairness(props: { v: GameBody; info: RulesetInfo | null }) {
  const { v, info } = props;
  const [checks, setChecks] = useState<Check[] | null>(null);
  const [run, busy, error] = useAction();
  const seed = v.fairness.seed;
  const doVerify = () =>
    void run(async () => {
      const events = await listEvents(api, v.id);
      if (!info) throw new Error("rulesets");
      setChecks(verify(v, info, events));
    });
  const allOk = checks?.every((c) => c.ok) ?? false;
  return (
    <section class="panel fairness" aria-labelledby="fair-h">
      <h2 id="fair-h">{t("fairnessTitle")}</h2>
      <dl>
        <dt>{t("commitment")}</dt>
        <dd>
          <code class="hex" data-commitment>
            {v.fairness.commitment}
          </code>
        </dd>
        <dt>{t("algorithm")}</dt>
        <dd>
          <code>{v.fairness.algorithm}</code>
        </dd>
        {seed ? (
          <>
            <dt>{t("seed")}</dt>
            <dd>
              <code class="hex" data-seed>
                {seed}
              </code>
            </dd>
          </>
        ) : null}
      </dl>
      {seed ? (
        <>
          <p>{t("fairnessExplain")}</p>
          <button type="button" onClick={doVerify} disabled={busy}>
            {busy ? t("verifying") : t("verify")}
          </button>
          <ErrorMessage error={error} />
          {checks ? (
            <div class="checks" role="status">
              <p class={allOk ? "ok" : "bad"} data-verified={allOk}>
                <strong>{allOk ? `✓ ${t("verifyOk")}` : `✗ ${t("verifyFail")}`}</strong>
              </p>
              <ul>
                {checks.map((c, i) => (
                  <li key={i} class={c.ok ? "ok" : "bad"}>
                    <span aria-hidden="true">{c.ok ? "✓ " : "✗ "}</span>
                    {checkText(v, c)} <span class="visually-hidden">({c.ok ? t("passed") : t("failed")})</span>
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
        </>
      ) : (
        <p class="hint">{t("fairnessPending")}</p>
      )}
    </section>
  );
}

function checkText(v: GameBody, c: Check): string {
  switch (c.kind) {
    case "commitment":
      return t("chkCommitment");
    case "rows":
      return t("chkRows", { round: c.round });
    case "hand":
      return t("chkHand", { round: c.round });
    case "played":
      return t("chkPlayed", { round: c.round, name: seatName(v, c.seat) });
    case "pile":
      return t("chkPile", { round: c.round });
    case "removed":
      return t("chkRemoved", { round: c.round });
    case "prepared":
      return t("chkPrepared", { round: c.round });
    case "draft":
      return t("chkDraft");
  }
}

/**
 * The end of a game: "Play again" starts the rematch (same people, options and visibility,
 * a fresh deal); once started, everyone sees its link and takes their kept seat with "Join
 * the rematch".
 */
function Rematch(props: { v: GameBody }) {
  const { v } = props;
  const [run, busy, error] = useAction();
  const seated = v.you !== null && v.you !== undefined;
  if (!v.rematch) {
    if (!seated) return null;
    const start = () =>
      void run(async () => {
        const g = await unwrap(api.POST("/v1/games/{id}/rematch", { params: { path: { id: v.id } } }));
        // Someone else started it a moment before: my seat there is kept, take it.
        go(g.you ? href("games", g.id) : href("join", g.id));
      });
    return (
      <section class="panel rematch" aria-labelledby="rematch-h">
        <h2 id="rematch-h">{t("rematchTitle")}</h2>
        <p>{t("rematchExplain")}</p>
        <button type="button" class="primary" data-rematch="start" disabled={busy} onClick={start}>
          {t("playAgain")}
        </button>
        <ErrorMessage error={error} />
      </section>
    );
  }
  const link = rematchLink(v.rematch);
  return (
    <section class="panel rematch" aria-labelledby="rematch-h" data-rematch-id={v.rematch}>
      <h2 id="rematch-h">{t("rematchTitle")}</h2>
      <p role="status">{t("rematchStarted")}</p>
      <p class="lobby-actions">
        {seated ? (
          <a class="button primary" data-rematch="join" href={href("join", v.rematch)}>
            {t("joinRematch")}
          </a>
        ) : null}
        <a class="button" href={href("games", v.rematch)}>
          {t("openRematch")}
        </a>
      </p>
      {seated ? (
        <p class="invite">
          <input readOnly id="rematch-link" aria-label={t("rematchLink")} value={link} onFocus={(e) => e.currentTarget.select()} />
          <CopyButton text={link} />
        </p>
      ) : null}
    </section>
  );
}

function Resign(props: { v: GameBody; act: Act; busy: boolean }) {
  const [asking, setAsking] = useState(false);
  if (legalOf(props.v, "resign").length === 0) return null;
  return (
    <div class="resign">
      {asking ? (
        <div role="group" aria-labelledby="resign-q">
          <p id="resign-q">{t("resignConfirm")}</p>
          <button type="button" class="danger" disabled={props.busy} onClick={() => props.act({ type: "resign" })}>
            {t("resign")}
          </button>{" "}
          <button type="button" onClick={() => setAsking(false)}>
            {t("cancel")}
          </button>
        </div>
      ) : (
        <button type="button" class="link" onClick={() => setAsking(true)}>
          {t("resign")}
        </button>
      )}
    </div>
  );
}

export { href };
