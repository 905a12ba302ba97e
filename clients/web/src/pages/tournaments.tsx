// Tournaments (issue 29): the list (upcoming, running, finished, mine), the create form, and
// a tournament's page: its facts, people, joining and leaving (with the invite code of a
// private one), the host's "Start now", the person's next table, the rounds with their tables,
// the rounds' seed commitments and seeds, and the standings after any round with, for
// duplicate, each deal compared with the other holders of the same hand. The page polls the
// tournament every few seconds while it is open or running.
import { useEffect, useRef, useState } from "preact/hooks";
import { presetValues, type RulesetInfo } from "../../../typescript/src/index.ts";
import { ApiError, rulesets, session } from "../api";
import { TC_PRESETS, timeControlLabel, timeControlText } from "../clocks";
import { dateTime, rulesetName, t, type Key } from "../i18n";
import { go, href } from "../router";
import { useStore } from "../store";
import {
  createTournament,
  getStandings,
  getTournament,
  joinTournament,
  leaveTournament,
  listTournaments,
  startTournament,
  tournamentInviteLink,
  type DealComparison,
  type Format,
  type ListFilter,
  type Round,
  type Standings,
  type StandingRow,
  type Tournament,
  type TournamentInput,
  type TournamentSummary,
} from "../tournaments";
import { CopyButton, ErrorMessage, Field, InputHint, Select, useAction } from "../ui";

const POLL_MS = 4_000;

const statusWord = (s: string): string => t(`tStatus_${s}` as Key);
const formatWord = (f: string): string => t(`tFormat_${f}` as Key);
/** A number of points as people write it: 2, 1.5. */
const num = (n: number): string => new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 }).format(n);

// --- the list ------------------------------------------------------------------------------

const FILTERS: ListFilter[] = ["upcoming", "running", "finished", "mine"];

export function TournamentsPage() {
  const [filter, setFilter] = useState<ListFilter>("upcoming");
  const [items, setItems] = useState<TournamentSummary[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const current = useRef(filter);

  const load = async () => {
    const f = current.current;
    try {
      const r = await listTournaments(f);
      if (current.current === f) {
        setItems(r.items);
        setError(null);
      }
    } catch (e) {
      setError(e);
    }
  };
  useEffect(() => {
    void load();
    const h = setInterval(() => void load(), 15_000);
    return () => clearInterval(h);
  }, []);
  const choose = (f: ListFilter) => {
    current.current = f;
    setFilter(f);
    setItems(null);
    void load();
  };

  return (
    <div class="tournaments">
      <h1 tabIndex={-1}>{t("tournamentsTitle")}</h1>
      <p>
        <a class="button primary" href="#/tournaments/new" data-new-tournament>
          {t("tNew")}
        </a>
      </p>
      <nav class="tournament-filters" aria-label={t("tFilters")}>
        {FILTERS.map((f) => (
          <button
            type="button"
            key={f}
            class="filter-chip"
            aria-pressed={filter === f}
            data-filter={f}
            onClick={() => choose(f)}
          >
            {t(`tFilter_${f}` as Key)}
          </button>
        ))}
      </nav>
      <ErrorMessage error={error} onRetry={() => void load()} />
      <section class="panel" aria-labelledby="tlist-h">
        <h2 id="tlist-h">{t(`tFilter_${filter}` as Key)}</h2>
        {items === null ? (
          <p>{t("loading")}</p>
        ) : items.length === 0 ? (
          <p class="empty">{t("tNone")}</p>
        ) : (
          <ul class="games tournament-list">
            {items.map((s) => (
              <li class="game-item" key={s.id} data-tournament={s.id}>
                <a href={href("tournaments", s.id)} class="game-link">
                  <strong>{s.name}</strong>
                </a>
                <span class="meta">
                  {rulesetName(s.ruleset)} · {formatWord(s.format)} · {t("tRoundsN", { n: s.rounds })} ·{" "}
                  {t("tTableSizeN", { n: s.table_size })}
                </span>
                <span class="meta">
                  {t("tPlayersOf", { n: s.players, max: s.max_players })} · {statusWord(s.status)}
                  {s.status === "running" ? ` (${t("tRoundOf", { n: s.current_round, of: s.rounds })})` : ""}
                  {s.public ? "" : ` · ${t("tPrivate")}`}
                  {s.joined ? ` · ${t("tJoinedMark")}` : ""}
                </span>
                <span class="meta">{s.starts_at ? t("tStartsAt", { at: dateTime(s.starts_at) }) : t("tWhenFull")}</span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

// --- the create form -------------------------------------------------------------------------

type EndChoice = "" | "1" | "2" | "3";

export function NewTournamentPage() {
  const [infos, setInfos] = useState<RulesetInfo[] | null>(null);
  const [name, setName] = useState("");
  const [ruleset, setRuleset] = useState("6-nimmt");
  const [preset, setPreset] = useState<string>("standard");
  const [format, setFormat] = useState<Format>("swiss");
  const [rounds, setRounds] = useState(3);
  const [tableSize, setTableSize] = useState(4);
  const [deals, setDeals] = useState(1);
  const [end, setEnd] = useState<EndChoice>("");
  const [tc, setTc] = useState(TC_PRESETS[0]?.id ?? "");
  const [startKind, setStartKind] = useState<"full" | "at">("full");
  const [startsAt, setStartsAt] = useState("");
  const [maxPlayers, setMaxPlayers] = useState(8);
  const [isPublic, setPublic] = useState(true);
  const [hint, setHint] = useState<string | null>(null);
  const [run, busy, error] = useAction();

  useEffect(() => {
    rulesets().then(setInfos, () => setInfos([]));
  }, []);
  const info = infos?.find((i) => i.name === ruleset);
  const rows = ruleset === "6-nimmt" || ruleset === "11-nimmt";

  const chooseRuleset = (r: string) => {
    setRuleset(r);
    if (r !== "6-nimmt") setFormat("swiss");
    const i = infos?.find((x) => x.name === r);
    if (i) setTableSize((n) => Math.max(i.players.min, Math.min(i.players.max, n)));
  };

  const submit = (e: Event) => {
    e.preventDefault();
    setHint(null);
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 64) return setHint(t("tBadName"));
    if (!Number.isInteger(rounds) || rounds < 1 || rounds > 12) return setHint(t("tBadRounds"));
    if (info && (tableSize < info.players.min || tableSize > info.players.max)) {
      return setHint(t("tBadTableSize", { min: info.players.min, max: info.players.max }));
    }
    if (!Number.isInteger(maxPlayers) || maxPlayers < 2 || maxPlayers > 256) return setHint(t("tBadMaxPlayers"));
    let starts: string | undefined;
    if (startKind === "at") {
      const ms = Date.parse(startsAt);
      if (!startsAt || Number.isNaN(ms) || ms <= Date.now()) return setHint(t("tBadStart"));
      starts = new Date(ms).toISOString();
    }
    const clock = TC_PRESETS.find((p) => p.id === tc)?.tc;
    if (!clock) return setHint(t("tBadStart"));
    const input: TournamentInput = {
      name: trimmed,
      ruleset,
      format,
      rounds,
      table_size: tableSize,
      time_control: { ...clock, at_zero: "bot_moves", ...(clock.kind === "correspondence" ? { vacation: false } : {}) },
      max_players: maxPlayers,
      public: isPublic,
    };
    if (ruleset === "6-nimmt" && preset) input.preset = preset;
    if (format === "duplicate") input.deals_per_round = deals;
    else if (rows && end) input.options = { end: { rounds: Number(end) } };
    if (starts) input.starts_at = starts;
    void run(async () => {
      const created = await createTournament(input);
      // The creator plays too: joining right away (the code of a private one is theirs).
      await joinTournament(created.id, created.invite_code);
      go(href("tournaments", created.id));
    });
  };

  return (
    <div class="tournament-new">
      <h1 tabIndex={-1}>{t("tNew")}</h1>
      <p>
        <a href="#/tournaments">{t("tBack")}</a>
      </p>
      <section class="panel" aria-labelledby="tnew-h">
        <h2 id="tnew-h" class="visually-hidden">
          {t("tNew")}
        </h2>
        {infos === null ? <p>{t("loading")}</p> : null}
        <form class="create" onSubmit={submit}>
          <Field id="t-name" label={t("tName")} hint={t("tNameHint")}>
            <input
              id="t-name"
              value={name}
              maxLength={64}
              aria-describedby="t-name-hint"
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </Field>
          <Field id="t-ruleset" label={t("game")}>
            <Select
              id="t-ruleset"
              value={ruleset}
              onChange={chooseRuleset}
              options={(infos ?? []).map((i) => ({ value: i.name, label: rulesetName(i.name) }))}
            />
          </Field>
          {ruleset === "6-nimmt" ? (
            <Field id="t-preset" label={t("preset")}>
              <Select
                id="t-preset"
                value={preset}
                onChange={setPreset}
                options={presetValues.map((p) => ({ value: p as string, label: t(`preset_${p}` as Key) }))}
              />
            </Field>
          ) : null}
          <Field id="t-format" label={t("tFormat")} hint={t(format === "swiss" ? "tFormatHint_swiss" : "tFormatHint_duplicate")}>
            <Select<Format>
              id="t-format"
              value={format}
              describedBy="t-format-hint"
              onChange={setFormat}
              options={[
                { value: "swiss", label: t("tFormat_swiss") },
                ...(ruleset === "6-nimmt" ? [{ value: "duplicate" as Format, label: t("tFormat_duplicate") }] : []),
              ]}
            />
          </Field>
          <Field id="t-rounds" label={t("tRounds")} hint="1–12">
            <input
              id="t-rounds"
              type="number"
              min={1}
              max={12}
              value={rounds}
              aria-describedby="t-rounds-hint"
              onInput={(e) => setRounds(Number(e.currentTarget.value))}
            />
          </Field>
          <Field id="t-table-size" label={t("tTableSize")} hint={info ? `${info.players.min}–${info.players.max}` : undefined}>
            <input
              id="t-table-size"
              type="number"
              min={info?.players.min}
              max={info?.players.max}
              value={tableSize}
              aria-describedby={info ? "t-table-size-hint" : undefined}
              onInput={(e) => setTableSize(Number(e.currentTarget.value))}
            />
          </Field>
          {format === "duplicate" ? (
            <Field id="t-deals" label={t("tDeals")}>
              <Select
                id="t-deals"
                value={String(deals)}
                onChange={(v) => setDeals(Number(v))}
                options={["1", "2", "3", "4", "5"].map((v) => ({ value: v, label: v }))}
              />
            </Field>
          ) : rows ? (
            <Field id="t-end" label={t("tGameEnd")}>
              <Select<EndChoice>
                id="t-end"
                value={end}
                onChange={setEnd}
                options={[
                  { value: "", label: t("tGameEndRules") },
                  ...(["1", "2", "3"] as EndChoice[]).map((v) => ({ value: v, label: t("tGameEndRounds", { n: Number(v) }) })),
                ]}
              />
            </Field>
          ) : null}
          <Field id="t-tc" label={t("timeControl")} hint={t("tClockHint")}>
            <Select
              id="t-tc"
              value={tc}
              describedBy="t-tc-hint"
              onChange={setTc}
              options={TC_PRESETS.map((p) => ({
                value: p.id,
                label: `${t(p.tc.kind === "live" ? "tcLive" : "tcCorr")}: ${timeControlText(p.tc)}`,
              }))}
            />
          </Field>
          <fieldset>
            <legend>{t("tStart")}</legend>
            <label class="inline">
              <input type="radio" name="t-start" checked={startKind === "full"} onChange={() => setStartKind("full")} />{" "}
              {t("tWhenFull")}
            </label>
            <label class="inline">
              <input type="radio" name="t-start" checked={startKind === "at"} onChange={() => setStartKind("at")} />{" "}
              {t("tStartAtChoice")}
            </label>
            {startKind === "at" ? (
              <Field id="t-starts-at" label={t("tStartsAtLabel")}>
                <input id="t-starts-at" type="datetime-local" value={startsAt} onInput={(e) => setStartsAt(e.currentTarget.value)} />
              </Field>
            ) : null}
          </fieldset>
          <Field id="t-max" label={t("tMaxPlayers")} hint="2–256">
            <input
              id="t-max"
              type="number"
              min={2}
              max={256}
              value={maxPlayers}
              aria-describedby="t-max-hint"
              onInput={(e) => setMaxPlayers(Number(e.currentTarget.value))}
            />
          </Field>
          <label class="inline">
            <input id="t-public" type="checkbox" checked={isPublic} onChange={(e) => setPublic(e.currentTarget.checked)} />{" "}
            {t("tPublic")}
          </label>
          <InputHint text={hint} />
          <ErrorMessage error={error} />
          <p>
            <button type="submit" class="primary" disabled={busy} data-create-tournament>
              {t("tCreate")}
            </button>
          </p>
        </form>
      </section>
    </div>
  );
}

// --- a tournament -----------------------------------------------------------------------------

export function TournamentPage(props: { id: string; code: string | null }) {
  const me = useStore(session)?.account.id ?? "";
  const [tour, setTour] = useState<Tournament | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [codeInput, setCodeInput] = useState(props.code ?? "");
  const [run, busy, actionError] = useAction();
  const code = useRef(props.code);

  const load = async () => {
    try {
      setTour(await getTournament(props.id, code.current));
      setError(null);
    } catch (e) {
      setError(e);
    }
  };
  useEffect(() => {
    void load();
  }, [props.id]);
  // Live: every few seconds while it is open or running.
  const live = tour === null || tour.status === "open" || tour.status === "running";
  useEffect(() => {
    if (!live) return;
    const h = setInterval(() => void load(), POLL_MS);
    return () => clearInterval(h);
  }, [props.id, live]);

  if (!tour) {
    return (
      <div>
        <h1 tabIndex={-1}>{t("tTournament")}</h1>
        {error ? <ErrorMessage error={error} onRetry={() => void load()} /> : <p role="status">{t("loading")}</p>}
        {error instanceof ApiError && error.status === 404 ? (
          // A private tournament is hidden from outsiders: its invite code opens it.
          <form
            class="inline-form tournament-actions"
            onSubmit={(e) => {
              e.preventDefault();
              const c = codeInput.trim();
              if (c) go(`${href("tournaments", props.id)}?code=${encodeURIComponent(c)}`);
            }}
          >
            <Field id="t-open-code" label={t("tInviteCode")}>
              <input id="t-open-code" value={codeInput} onInput={(e) => setCodeInput(e.currentTarget.value)} />
            </Field>
            <button type="submit">{t("open")}</button>
          </form>
        ) : null}
        <p>
          <a href="#/tournaments">{t("tBack")}</a>
        </p>
      </div>
    );
  }
  const isHost = tour.host.id === me;
  const act = (f: () => Promise<Tournament>) =>
    void run(async () => {
      setTour(await f());
    });
  const next = tour.your_next_table;
  const inviteCode = tour.invite_code ?? code.current;

  return (
    <div class="tournament" data-status={tour.status} data-format={tour.format}>
      <h1 tabIndex={-1}>{tour.name}</h1>
      <p>
        <a href="#/tournaments">{t("tBack")}</a>
      </p>
      <ErrorMessage error={error} onRetry={() => void load()} />
      {next ? (
        <section class="panel next-table" aria-labelledby="next-h">
          <h2 id="next-h">{t("tNextTable")}</h2>
          <p>
            <a class="button primary" href={href("games", next.game)} data-next-table={next.game}>
              {t("tNextTableLink", { round: next.round, table: next.table })}
            </a>
          </p>
        </section>
      ) : null}
      <section class="panel" aria-labelledby="facts-h">
        <h2 id="facts-h">{t("tFacts")}</h2>
        <dl class="facts">
          <dt>{t("tStatus")}</dt>
          <dd data-tournament-status={tour.status}>
            {statusWord(tour.status)}
            {tour.status === "running" ? ` (${t("tRoundOf", { n: tour.current_round, of: tour.rounds })})` : ""}
          </dd>
          <dt>{t("game")}</dt>
          <dd>
            {rulesetName(tour.ruleset)}
            {tour.preset ? ` (${t(`preset_${tour.preset}` as Key)})` : ""}
          </dd>
          <dt>{t("tFormat")}</dt>
          <dd>
            {formatWord(tour.format)}
            {tour.format === "duplicate" ? ` · ${t("tDealsN", { n: tour.deals_per_round })}` : ""}
          </dd>
          <dt>{t("tRounds")}</dt>
          <dd>{tour.rounds}</dd>
          <dt>{t("tTableSize")}</dt>
          <dd>{tour.table_size}</dd>
          <dt>{t("timeControl")}</dt>
          <dd>
            <span aria-hidden="true">{timeControlText(tour.time_control)}</span>
            <span class="visually-hidden">{timeControlLabel(tour.time_control)}</span>
          </dd>
          <dt>{t("tStart")}</dt>
          <dd>{tour.starts_at ? dateTime(tour.starts_at) : t("tWhenFull")}</dd>
          <dt>{t("tHost")}</dt>
          <dd>
            <a href={href("players", tour.host.id)}>{tour.host.name}</a>
          </dd>
          <dt>{t("tVisibility")}</dt>
          <dd>{tour.public ? t("tPublicWord") : t("tPrivate")}</dd>
        </dl>
      </section>
      <section class="panel" aria-labelledby="people-h">
        <h2 id="people-h">{t("tPlayersOf", { n: tour.players.length, max: tour.max_players })}</h2>
        {tour.players.length === 0 ? (
          <p class="empty">{t("tNobody")}</p>
        ) : (
          <ul class="people">
            {tour.players.map((p) => (
              <li key={p.id} data-player={p.name}>
                <a href={href("players", p.id)}>{p.name}</a>
                {p.id === me ? ` (${t("you")})` : ""}
              </li>
            ))}
          </ul>
        )}
        <div aria-live="polite">
          <ErrorMessage error={actionError} />
        </div>
        {tour.status === "open" ? (
          <div class="tournament-actions">
            {tour.joined ? (
              <button type="button" disabled={busy} data-leave onClick={() => act(() => leaveTournament(tour.id))}>
                {t("tLeave")}
              </button>
            ) : (
              <form
                class="inline-form"
                onSubmit={(e) => {
                  e.preventDefault();
                  const c = tour.public ? null : codeInput.trim() || null;
                  code.current = c ?? code.current;
                  act(() => joinTournament(tour.id, c));
                }}
              >
                {!tour.public && !props.code ? (
                  <Field id="t-code" label={t("tInviteCode")}>
                    <input id="t-code" value={codeInput} onInput={(e) => setCodeInput(e.currentTarget.value)} />
                  </Field>
                ) : null}
                <button type="submit" class="primary" disabled={busy} data-join>
                  {t("tJoin")}
                </button>
              </form>
            )}
            {isHost ? (
              <button type="button" class="primary" disabled={busy} data-start onClick={() => act(() => startTournament(tour.id))}>
                {t("tStartNow")}
              </button>
            ) : null}
          </div>
        ) : null}
        {!tour.public && inviteCode && (tour.joined || isHost) && tour.status === "open" ? (
          <p class="invite">
            <label for="t-invite">{t("tInviteLink")}</label>{" "}
            <input
              readOnly
              id="t-invite"
              value={tournamentInviteLink(tour.id, inviteCode)}
              onFocus={(e) => e.currentTarget.select()}
            />{" "}
            <CopyButton text={tournamentInviteLink(tour.id, inviteCode)} />
          </p>
        ) : null}
      </section>
      {tour.round_list.length > 0 ? <StandingsPanel tour={tour} me={me} code={code.current} /> : null}
      {tour.round_list
        .slice()
        .reverse()
        .map((r) => (
          <RoundPanel key={r.round} r={r} tour={tour} me={me} />
        ))}
    </div>
  );
}

function endWord(e: string | null): string {
  return e === "round_deadline" ? t("tEnd_round_deadline") : e === "finished" ? t("tEnd_finished") : "";
}

function RoundPanel(props: { r: Round; tour: Tournament; me: string }) {
  const { r, tour, me } = props;
  const id = `round-${r.round}-h`;
  return (
    <section class="panel round" aria-labelledby={id} data-round={r.round} data-round-status={r.status}>
      <h2 id={id}>
        {t("tRoundN", { n: r.round })} · {r.status === "finished" ? t("tRoundDone") : t("tRoundRunning")}
      </h2>
      {r.status === "running" ? <p class="meta">{t("tRoundDeadline", { at: dateTime(r.deadline) })}</p> : null}
      {tour.format === "duplicate" ? (
        <p class="seed">
          {r.commitment ? (
            <>
              {t("tCommitment")} <code class="hash">{r.commitment}</code>
            </>
          ) : null}
          {r.seed ? (
            <>
              <br />
              {t("tSeed")} <code class="hash">{r.seed}</code>
            </>
          ) : r.commitment ? (
            <>
              <br />
              {t("tSeedLater")}
            </>
          ) : null}
        </p>
      ) : null}
      <div class="table-cards">
        {r.tables.map((tb) => (
          <div class="table-card" key={tb.table} data-table={tb.table}>
            <h3>
              <a href={href("games", tb.game)}>{t("tTableN", { n: tb.table })}</a>
              {" · "}
              {tb.finished ? endWord(tb.end) : t("tPlaying")}
            </h3>
            <table class="seats-table">
              <caption class="visually-hidden">{t("tTableCaption", { round: r.round, table: tb.table })}</caption>
              <thead>
                <tr>
                  <th scope="col">{t("tSeat")}</th>
                  <th scope="col">{t("tPlayer")}</th>
                  <th scope="col">{t("tPlace")}</th>
                  <th scope="col">{t("tTotal")}</th>
                </tr>
              </thead>
              <tbody>
                {tb.seats.map((s) => (
                  <tr key={s.seat} class={s.player?.id === me ? "mine" : undefined}>
                    <td>{s.seat + 1}</td>
                    <td>{s.player ? s.player.name : t("bot")}</td>
                    <td>{s.place ?? "–"}</td>
                    <td>{s.total ?? "–"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      </div>
    </section>
  );
}

function StandingsPanel(props: { tour: Tournament; me: string; code: string | null }) {
  const { tour, me } = props;
  const done = tour.round_list.filter((r) => r.status === "finished").map((r) => r.round);
  const latest = done.length > 0 ? Math.max(...done) : 0;
  // "" follows the latest finished round; a number stays where the reader put it.
  const [after, setAfter] = useState("");
  const [st, setSt] = useState<Standings | null>(null);
  const [error, setError] = useState<unknown>(null);
  const want = after === "" ? latest : Number(after);
  useEffect(() => {
    let gone = false;
    getStandings(tour.id, want, props.code).then(
      (s) => {
        if (!gone) {
          setSt(s);
          setError(null);
        }
      },
      (e: unknown) => !gone && setError(e),
    );
    return () => {
      gone = true;
    };
  }, [tour.id, want, tour.version]);

  const mine = st?.rows.find((r) => r.account === me) ?? null;
  return (
    <section class="panel t-standings" aria-labelledby="standings-h">
      <h2 id="standings-h">{t("tStandings")}</h2>
      <p class="filter">
        <label for="t-after">{t("tAfterRound")}</label>{" "}
        <Select
          id="t-after"
          value={after}
          onChange={setAfter}
          options={[
            { value: "", label: t("tAfterLatest", { n: latest }) },
            ...Array.from({ length: latest + 1 }, (_, k) => ({ value: String(k), label: t("tAfterRoundN", { n: k }) })),
          ]}
        />
      </p>
      <ErrorMessage error={error} />
      {st === null ? (
        <p>{t("loading")}</p>
      ) : (
        <div class="t-scroll" tabIndex={0} role="region" aria-labelledby="standings-h">
          <table class="standings-table" data-after-round={st.after_round}>
            <caption class="visually-hidden">{t("tStandingsCaption", { n: st.after_round })}</caption>
            <thead>
              <tr>
                <th scope="col">{t("tRank")}</th>
                <th scope="col">{t("tPlayer")}</th>
                <th scope="col">{t(tour.format === "duplicate" ? "tMatchpoints" : "tPoints")}</th>
                <th scope="col">{t(tour.format === "duplicate" ? "tTiebreak_duplicate" : "tTiebreak_swiss")}</th>
                <th scope="col">{t("tTotal")}</th>
              </tr>
            </thead>
            <tbody>
              {st.rows.map((row: StandingRow) => (
                <tr key={row.account} data-account={row.account} class={row.account === me ? "mine" : undefined}>
                  <td data-rank>{row.rank}</td>
                  <th scope="row" data-name>
                    {row.name}
                  </th>
                  <td data-points>{num(row.points)}</td>
                  <td data-tiebreak>{num(row.tiebreak)}</td>
                  <td data-total>{row.total}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {tour.format === "duplicate" && mine && mine.deals.length > 0 ? (
        <div class="deals">
          <h3>{t("tYourDeals")}</h3>
          <ul>
            {mine.deals.map((d) => (
              <li key={d.number} data-deal={d.number}>
                {dealSentence(d)}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}

/** "Deal 2: your 12 bullheads against 8, 15 and 21 at the other tables — 1 matchpoint". */
export function dealSentence(d: DealComparison): string {
  return t("tDealLine", {
    n: d.number,
    score: d.score,
    others: d.others.length > 0 ? joinScores(d.others.map((o) => o.score)) : "",
    count: d.others.length,
    mp: num(d.matchpoints),
    mpn: d.matchpoints,
  });
}

function joinScores(scores: number[]): string {
  return new Intl.ListFormat(document.documentElement.lang || "en", { style: "long", type: "conjunction" }).format(
    scores.map(String),
  );
}
