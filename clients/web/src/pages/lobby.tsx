// The lobby: quick play ("Play now"), the inbox of games awaiting me (with deadlines), my
// games, open public games (filtered by free seats), games to watch, creating a game (the
// game, players and bots at once; every other option under "More options"), joining by
// invite link.
import { useEffect, useRef, useState } from "preact/hooks";
import {
  botStrategyValues,
  type BotStrategy,
  chipsOptionValues,
  dealOptionValues,
  deckOptionValues,
  placementOptionValues,
  presetValues,
  type CreateGame,
  type GameSummary,
  rulesetValues,
  type OptionsInput,
  type Ruleset,
  type RulesetInfo,
} from "../../../typescript/src/index.ts";
import { api, rulesets, session, unwrap } from "../api";
import { dateTime, duration, has, rulesetName, t, type Key } from "../i18n";
import { go, href, parseInvite } from "../router";
import { ErrorMessage, Field, Icon, InputHint, Select, useAction } from "../ui";
import { recall, remember, unreachable } from "../offline";
import { useStore } from "../store";
import { rulesRef } from "../rules";
import { RulesLink } from "./rules";
import type { ComponentChildren } from "preact";
import { TC_PRESETS, timeControlLabel, timeControlOf, timeControlProblem, timeControlText, type TimeControl } from "../clocks";

function actionsText(actions: string[]): string {
  const words = [...new Set(actions.map((a) => (a === "pass" || a === "take" ? "take_or_pass" : a)))].map((a) => {
    const key = `act_${a}`;
    return has(key) ? t(key) : a;
  });
  return words.join(", ");
}

function statusText(s: string): string {
  return s === "lobby" ? t("statusLobby") : s === "active" ? t("statusActive") : t("statusFinished");
}

function GameItem(props: { g: GameSummary; now: number; action?: "join" | "watch" | "open" }) {
  const { g, now } = props;
  const title = g.name ? `${g.name} · ${rulesetName(g.ruleset)}` : rulesetName(g.ruleset);
  const due = g.deadline_at ? Date.parse(g.deadline_at) - now : null;
  return (
    <li class="game-item">
      <a href={href("games", g.id)} class="game-link">
        <strong>{title}</strong>
      </a>
      <span class="meta">
        {statusText(g.status)} · {t("peopleOf", { people: g.people, players: g.players })}
        {g.status === "lobby" ? ` · ${t("freeSeats", { n: g.free_seats })}` : ""}
      </span>
      <TimeControlMeta g={g} />
      {g.your_turn && g.your_actions.length > 0 ? (
        <span class="meta your-turn">{actionsText(g.your_actions)}</span>
      ) : null}
      {g.deadline_at && due !== null ? (
        <span class={`meta deadline${due < 3_600_000 ? " soon" : ""}`}>
          {t("deadline")}: {dateTime(g.deadline_at)} ({due <= 0 ? t("overdue") : t("dueIn", { time: duration(due) })})
        </span>
      ) : null}
      {props.action === "join" ? (
        <a class="button" href={href("games", g.id)}>
          {t("join")}
        </a>
      ) : props.action === "watch" ? (
        <a class="button" href={href("games", g.id)}>
          {t("watch")}
        </a>
      ) : null}
    </li>
  );
}

/** A listed game's time control: "⏱ 3 min + 2 s" (its kind for a screen reader). */
function TimeControlMeta(props: { g: GameSummary }) {
  const tc = timeControlOf(props.g);
  if (!tc) return null;
  return (
    <span class="meta tc" data-time-control={tc.kind}>
      <span aria-hidden="true">
        <Icon name="clock" /> {timeControlText(tc)}
      </span>
      <span class="visually-hidden">{timeControlLabel(tc)}</span>
    </span>
  );
}

function List(props: {
  title: string;
  id: string;
  items: GameSummary[] | null;
  empty: string;
  now: number;
  action?: "join" | "watch";
  children?: ComponentChildren;
}) {
  return (
    <section class="panel" aria-labelledby={props.id}>
      <h2 id={props.id}>{props.title}</h2>
      {props.children}
      {props.items === null ? (
        <p>{t("loading")}</p>
      ) : props.items.length === 0 ? (
        <p class="empty">{props.empty}</p>
      ) : (
        <ul class="games">
          {props.items.map((g) => (
            <GameItem key={g.id} g={g} now={props.now} action={props.action} />
          ))}
        </ul>
      )}
    </section>
  );
}

export function Lobby() {
  const guest = useStore(session)?.account.guest ?? false;
  const [inbox, setInbox] = useState<GameSummary[] | null>(null);
  const [mine, setMine] = useState<GameSummary[] | null>(null);
  const [open, setOpen] = useState<GameSummary[] | null>(null);
  const [watch, setWatch] = useState<GameSummary[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [now, setNow] = useState(Date.now());
  // The open games' filter: at least this many free seats ("" = any). A ref, so the
  // periodic reload reads the current choice.
  const [freeSeats, setFreeSeats] = useState("");
  const filter = useRef("");

  const load = async () => {
    const free = filter.current ? Number(filter.current) : undefined;
    try {
      const [a, b, c, d] = await Promise.all([
        unwrap(api.GET("/v1/games", { params: { query: { awaiting: "me" } } })),
        unwrap(api.GET("/v1/games", { params: { query: { mine: true } } })),
        unwrap(api.GET("/v1/games", { params: { query: free ? { status: "lobby", free_seats: free } : { status: "lobby" } } })),
        unwrap(api.GET("/v1/games", { params: { query: { status: "active" } } })),
      ]);
      setInbox(a.items);
      setMine(b.items);
      remember("inbox", a.items);
      remember("mine", b.items);
      setOpen(c.items.filter((g) => g.your_seat === null || g.your_seat === undefined));
      setWatch(d.items.filter((g) => g.your_seat === null || g.your_seat === undefined));
      setError(null);
      setNow(Date.now());
    } catch (e) {
      setError(e);
      // Offline: the person's own games as last seen (the open tables are not kept).
      if (unreachable(e)) {
        setInbox((cur) => cur ?? recall<GameSummary[]>("inbox")?.value ?? null);
        setMine((cur) => cur ?? recall<GameSummary[]>("mine")?.value ?? null);
      }
    }
  };

  useEffect(() => {
    void load();
    const h = setInterval(() => void load(), 15_000);
    const tick = setInterval(() => setNow(Date.now()), 30_000);
    return () => {
      clearInterval(h);
      clearInterval(tick);
    };
  }, []);

  return (
    <div class="lobby">
      <h1 tabIndex={-1}>{t("navLobby")}</h1>
      {guest ? (
        <p class="notice register-hint">
          {t("lobbyGuestPrompt")} <a href="#/account">{t("registerPromptTitle")}</a>
        </p>
      ) : null}
      <ErrorMessage error={error} onRetry={() => void load()} />
      <QuickPlay />
      <PlayBots />
      <div class="lobby-grid">
        <div>
          <List id="inbox-h" title={t("inboxTitle")} items={inbox} empty={t("inboxEmpty")} now={now} />
          <List id="mine-h" title={t("myGamesTitle")} items={mine} empty={t("myGamesEmpty")} now={now} />
          <List id="open-h" title={t("openGamesTitle")} items={open} empty={freeSeats ? t("openGamesNoneFree") : t("openGamesEmpty")} now={now} action="join">
            <p class="filter">
              <label for="free-seats">{t("freeSeatsFilter")}</label>{" "}
              <Select
                id="free-seats"
                value={freeSeats}
                onChange={(v) => {
                  filter.current = v;
                  setFreeSeats(v);
                  setOpen(null);
                  void load();
                }}
                options={[
                  { value: "", label: t("freeSeatsAny") },
                  ...["1", "2", "3", "4"].map((n) => ({ value: n, label: t("freeSeatsAtLeast", { n: Number(n) }) })),
                ]}
              />
            </p>
          </List>
          {watch && watch.length > 0 ? (
            <List id="watch-h" title={t("watchTitle")} items={watch} empty="" now={now} action="watch" />
          ) : null}
          <p>
            <button type="button" data-refresh onClick={() => void load()}>
              {t("refresh")}
            </button>
          </p>
        </div>
        <div>
          <CreateGameForm />
          <JoinByLink />
        </div>
      </div>
    </div>
  );
}

/** "Play now": a seat at a waiting public table of the chosen game, or a new one. */
function QuickPlay() {
  const [infos, setInfos] = useState<RulesetInfo[] | null>(null);
  const [ruleset, setRuleset] = useState<Ruleset>("6-nimmt");
  const [players, setPlayers] = useState("");
  const [run, busy, error] = useAction();
  useEffect(() => {
    rulesets().then(setInfos, () => setInfos([]));
  }, []);
  const info = infos?.find((r) => r.name === ruleset) ?? null;
  const sizes = info ? Array.from({ length: info.players.max - info.players.min + 1 }, (_, i) => String(info.players.min + i)) : [];
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const body = players ? { ruleset, players: Number(players) } : { ruleset };
      const g = await unwrap(api.POST("/v1/games/quick", { body }));
      go(href("games", g.id));
    });
  };
  return (
    <section class="panel quick" aria-labelledby="quick-h">
      <h2 id="quick-h">{t("quickTitle")}</h2>
      <p class="hint">{t("quickExplain")}</p>
      <form onSubmit={submit} class="quick-form">
        <Field id="q-ruleset" label={t("game")}>
          <Select
            id="q-ruleset"
            value={ruleset}
            onChange={(r) => {
              setRuleset(r);
              const i = infos?.find((x) => x.name === r);
              if (i && players && (Number(players) < i.players.min || Number(players) > i.players.max)) setPlayers("");
            }}
            options={rulesetValues.map((r) => ({ value: r, label: rulesetName(r) }))}
          />
        </Field>
        <RulesLink to={rulesRef(ruleset)} />
        <Field id="q-players" label={t("players")}>
          <Select
            id="q-players"
            value={players}
            onChange={setPlayers}
            options={[{ value: "", label: t("anyTableSize") }, ...sizes.map((n) => ({ value: n, label: n }))]}
          />
        </Field>
        <button type="submit" class="primary" disabled={busy}>
          {t("playNow")}
        </button>
      </form>
      <ErrorMessage error={error} />
    </section>
  );
}

/** One click to play against bots: a private table of the chosen game, every other seat a
 *  bot of the chosen strength, started at once. */
function PlayBots() {
  const [infos, setInfos] = useState<RulesetInfo[] | null>(null);
  const [ruleset, setRuleset] = useState<Ruleset>("6-nimmt");
  const [players, setPlayers] = useState("4");
  const [strategy, setStrategy] = useState<BotStrategy>("heuristic");
  const [run, busy, error] = useAction();
  useEffect(() => {
    rulesets().then(setInfos, () => setInfos([]));
  }, []);
  const info = infos?.find((r) => r.name === ruleset) ?? null;
  const sizes = info ? Array.from({ length: info.players.max - info.players.min + 1 }, (_, i) => String(info.players.min + i)) : [];
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const n = Number(players);
      const g = await unwrap(api.POST("/v1/games", { body: { ruleset, players: n, public: false } }));
      const path = { params: { path: { id: g.id } } };
      for (let seat = 1; seat < n; seat++) {
        await unwrap(api.POST("/v1/games/{id}/commands", { ...path, body: { type: "add_bot", strategy } }));
      }
      await unwrap(api.POST("/v1/games/{id}/commands", { ...path, body: { type: "start" } }));
      go(href("games", g.id));
    });
  };
  return (
    <section class="panel bots" aria-labelledby="bots-h">
      <h2 id="bots-h">{t("botsTitle")}</h2>
      <p class="hint">{t("botsExplain")}</p>
      <form onSubmit={submit} class="bots-form">
        <Field id="b-ruleset" label={t("game")}>
          <Select
            id="b-ruleset"
            value={ruleset}
            onChange={(r) => {
              setRuleset(r);
              const i = infos?.find((x) => x.name === r);
              if (i && (Number(players) < i.players.min || Number(players) > i.players.max)) {
                setPlayers(String(Math.min(Math.max(4, i.players.min), i.players.max)));
              }
            }}
            options={rulesetValues.map((r) => ({ value: r, label: rulesetName(r) }))}
          />
        </Field>
        <RulesLink to={rulesRef(ruleset)} />
        <Field id="b-players" label={t("players")}>
          <Select id="b-players" value={players} onChange={setPlayers} options={sizes.map((n) => ({ value: n, label: n }))} />
        </Field>
        <Field id="b-strategy" label={t("botStrength")}>
          <Select
            id="b-strategy"
            value={strategy}
            onChange={setStrategy}
            options={botStrategyValues.map((s) => ({ value: s, label: t(`strategy_${s}` as Key) }))}
          />
        </Field>
        <button type="submit" class="primary" disabled={busy || sizes.length === 0}>
          {t("playBots")}
        </button>
      </form>
      <ErrorMessage error={error} />
    </section>
  );
}

function JoinByLink() {
  const [text, setText] = useState("");
  const [bad, setBad] = useState(false);
  return (
    <section class="panel" aria-labelledby="join-h">
      <h2 id="join-h">{t("joinTitle")}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const inv = parseInvite(text);
          setBad(!inv);
          if (inv) go(inv.id ? href("join", inv.id, inv.code) : href("invite", inv.code));
        }}
      >
        <Field id="invite" label={t("inviteLinkOrCode")} hint={t("inviteHint")}>
          <input
            id="invite"
            value={text}
            aria-describedby="invite-hint"
            aria-invalid={bad ? "true" : undefined}
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </Field>
        <InputHint text={bad && t("badInvite")} />
        <button type="submit">{t("join")}</button>
      </form>
    </section>
  );
}

const DEADLINES: { value: string; key: Key; n: number }[] = [
  { value: "", key: "deadlineNone", n: 0 },
  { value: "60", key: "minutes", n: 1 },
  { value: "300", key: "minutes", n: 5 },
  { value: "3600", key: "hours", n: 1 },
  { value: "86400", key: "days", n: 1 },
  { value: "259200", key: "days", n: 3 },
];

type Preset = (typeof presetValues)[number] | "";

interface RowOpts {
  deck: (typeof deckOptionValues)[number];
  deal: (typeof dealOptionValues)[number];
  placement: (typeof placementOptionValues)[number];
}

/** The clock's fields of the new-game form, in the units a person types (live: minutes and
 *  seconds; correspondence: days and hours). */
interface TcFields {
  kind: TimeControl["kind"];
  initial: string;
  increment: string;
  max: string;
  atZero: NonNullable<TimeControl["at_zero"]>;
  vacation: boolean;
}

function tcFields(tc: TimeControl, prev: TcFields): TcFields {
  const live = tc.kind === "live";
  const big = live ? 60 : 86400;
  return {
    ...prev,
    kind: tc.kind,
    initial: String(tc.initial_seconds / big),
    increment: String(live ? tc.increment_seconds : tc.increment_seconds / 3600),
    max: tc.max_seconds ? String(tc.max_seconds / big) : "",
  };
}

function tcOf(f: TcFields): TimeControl {
  const live = f.kind === "live";
  const big = live ? 60 : 86400;
  const tc: TimeControl = {
    kind: f.kind,
    initial_seconds: Math.round(Number(f.initial) * big),
    increment_seconds: Math.round(Number(f.increment) * (live ? 1 : 3600)),
    at_zero: f.atZero,
  };
  if (f.max.trim()) tc.max_seconds = Math.round(Number(f.max) * big);
  if (!live) tc.vacation = f.vacation;
  return tc;
}

/** Set by a finished game's "New game": the lobby then puts the focus on this form. */
export const NEW_GAME_FLAG = "stammtisch.new-game";

function CreateGameForm() {
  const [infos, setInfos] = useState<RulesetInfo[] | null>(null);
  useEffect(() => {
    if (sessionStorage.getItem(NEW_GAME_FLAG) === null) return;
    sessionStorage.removeItem(NEW_GAME_FLAG);
    // After the page has put the focus on its heading.
    setTimeout(() => {
      const first = document.getElementById("c-ruleset");
      first?.scrollIntoView({ block: "center" });
      first?.focus({ preventScroll: true });
    }, 0);
  }, []);
  const [ruleset, setRuleset] = useState<Ruleset>("6-nimmt");
  const [players, setPlayers] = useState(4);
  const [preset, setPreset] = useState<Preset>("standard");
  const [opts, setOpts] = useState<RowOpts>({ deck: "full", deal: "random", placement: "right" });
  const [endKind, setEndKind] = useState<"points" | "rounds">("points");
  const [points, setPoints] = useState(66);
  const [rounds, setRounds] = useState(1);
  const [deals, setDeals] = useState(2);
  const [chips, setChips] = useState<(typeof chipsOptionValues)[number]>("hidden");
  const [games, setGames] = useState(1);
  const [name, setName] = useState("");
  const [isPublic, setPublic] = useState(false);
  const [deadline, setDeadline] = useState("");
  const [dealJson, setDealJson] = useState("");
  const [bots, setBots] = useState(0);
  const [strategy, setStrategy] = useState<BotStrategy>("heuristic");
  const [localError, setLocalError] = useState<string | null>(null);
  const [run, busy, error] = useAction();
  // The clock: "" (none), a preset's id, or "custom" (its fields under "More options").
  const [tcChoice, setTcChoice] = useState("");
  const [tc, setTc] = useState<TcFields>({ kind: "live", initial: "3", increment: "2", max: "", atZero: "bot_moves", vacation: true });
  const more = useRef<HTMLDetailsElement>(null);

  useEffect(() => {
    rulesets().then(setInfos, () => setInfos([]));
  }, []);

  const chooseTc = (choice: string) => {
    setTcChoice(choice);
    const preset = TC_PRESETS.find((p) => p.id === choice);
    if (preset) setTc((prev) => tcFields(preset.tc, prev));
    if (choice === "custom" && more.current) {
      more.current.open = true;
      setTimeout(() => document.getElementById("c-tc-kind")?.focus(), 0);
    }
  };
  /** A change of a clock's field makes the choice custom. */
  const setTcField = <K extends keyof TcFields>(k: K, v: TcFields[K]) => {
    setTc((prev) => ({ ...prev, [k]: v }));
    if (k !== "atZero" && k !== "vacation") setTcChoice("custom");
  };

  const info = infos?.find((r) => r.name === ruleset) ?? null;
  const presetOpts = (p: Preset): RowOpts | null => {
    const o = p ? (info?.presets as Record<string, RowOpts & { end?: { points?: number } }> | undefined)?.[p] : undefined;
    return o ? { deck: o.deck, deal: o.deal, placement: o.placement } : null;
  };

  const chooseRuleset = (r: Ruleset) => {
    setRuleset(r);
    const i = infos?.find((x) => x.name === r);
    if (i) {
      const n = Math.min(Math.max(players, i.players.min), i.players.max);
      setPlayers(n);
      setBots((b) => Math.max(0, Math.min(b, n - 1)));
    }
    setPreset(r === "6-nimmt" ? "standard" : "");
  };

  /** The variant's deck, deal and placement, once the rulesets have answered. */
  const applyPreset = (p: Preset) => {
    const o = presetOpts(p);
    if (o) setOpts(o);
  };
  // Whether deck, deal or placement were set by hand since the variant was chosen.
  const setByHand = useRef(false);
  const choosePreset = (p: Preset) => {
    setPreset(p);
    setByHand.current = false;
    applyPreset(p);
  };
  /** A change away from the variant's values makes the choice custom. */
  const customIfChanged = (next: RowOpts) => {
    const p = presetOpts(preset);
    if (p && (p.deck !== next.deck || p.deal !== next.deal || p.placement !== next.placement)) setPreset("");
  };
  // A variant chosen before `GET /v1/rulesets` answered could not set its options then:
  // they are set when the answer comes (otherwise the defaults went out as overrides and the
  // game was created without the variant). Options set by hand in the meantime are kept
  // instead, and make the choice custom when they are not the variant's.
  useEffect(() => (setByHand.current ? customIfChanged(opts) : applyPreset(preset)), [info]);

  const setOpt = <K extends keyof RowOpts>(k: K, v: RowOpts[K]) => {
    const next = { ...opts, [k]: v };
    setOpts(next);
    setByHand.current = true;
    customIfChanged(next);
  };

  const submit = (e: Event) => {
    e.preventDefault();
    setLocalError(null);
    const body: CreateGame = { ruleset, players, public: isPublic };
    const options: OptionsInput = {};
    if (ruleset === "6-nimmt" || ruleset === "11-nimmt") {
      options.end = endKind === "points" ? { points } : { rounds };
    }
    if (ruleset === "6-nimmt") {
      if (preset) body.preset = preset;
      const p = presetOpts(preset);
      (Object.keys(opts) as (keyof RowOpts)[]).forEach((k) => {
        if (!p || p[k] !== opts[k]) (options as Record<string, unknown>)[k] = opts[k];
      });
    }
    if (ruleset === "x-nimmt") options.deals = deals;
    if (ruleset === "nimm-oder-schieb") {
      options.chips = chips;
      options.games = games;
    }
    if (Object.keys(options).length > 0) body.options = options;
    if (name.trim()) body.name = name.trim();
    if (tcChoice) {
      const control = tcOf(tc);
      const problem = timeControlProblem(control);
      if (problem) {
        setLocalError(problem);
        if (more.current) more.current.open = true;
        return;
      }
      body.time_control = control;
    } else if (deadline) body.move_deadline_seconds = Number(deadline);
    if (dealJson.trim()) {
      try {
        body.deal = JSON.parse(dealJson) as CreateGame["deal"];
      } catch {
        setLocalError(t("badJson"));
        return;
      }
    }
    const seats = Math.min(bots, Math.max(0, players - 1));
    void run(async () => {
      const g = await unwrap(api.POST("/v1/games", { body }));
      // The bots sit down as the host would seat them in the game's lobby. The game exists
      // once created: should a bot not sit down, its lobby still lets the host add one.
      const path = { params: { path: { id: g.id } } };
      try {
        for (let i = 0; i < seats; i++) {
          await unwrap(api.POST("/v1/games/{id}/commands", { ...path, body: { type: "add_bot", strategy } }));
        }
      } finally {
        go(href("games", g.id));
      }
    });
  };

  const names = rulesetValues.map((r) => ({ value: r, label: rulesetName(r) }));
  // Every seat but the host's may be a bot.
  const botChoices = Array.from({ length: Math.max(1, players) }, (_, n) => ({
    value: String(n),
    label: n === 0 ? t("botsNone") : t("botsCount", { n }),
  }));
  return (
    <section class="panel" aria-labelledby="create-h">
      <h2 id="create-h">{t("createTitle")}</h2>
      {infos === null ? <p>{t("loading")}</p> : null}
      <form onSubmit={submit} class="create">
        <Field id="c-ruleset" label={t("game")}>
          <Select id="c-ruleset" value={ruleset} options={names} onChange={chooseRuleset} />
        </Field>
        <p class="rules-line">
          <RulesLink to={rulesRef(ruleset, ruleset === "6-nimmt" ? preset : null)} />
        </p>
        <Field id="c-players" label={t("players")} hint={info ? `${info.players.min}–${info.players.max}` : undefined}>
          <input
            id="c-players"
            type="number"
            min={info?.players.min}
            max={info?.players.max}
            value={players}
            aria-describedby="c-players-hint"
            onInput={(e) => {
              const n = Number(e.currentTarget.value);
              setPlayers(n);
              setBots((b) => Math.max(0, Math.min(b, n - 1)));
            }}
          />
        </Field>
        <Field id="c-bots" label={t("botSeats")}>
          <Select id="c-bots" value={String(bots)} onChange={(v) => setBots(Number(v))} options={botChoices} />
        </Field>
        {bots > 0 ? (
          <Field id="c-bot-strength" label={t("botStrengthOf")}>
            <Select
              id="c-bot-strength"
              value={strategy}
              onChange={setStrategy}
              options={botStrategyValues.map((v) => ({ value: v, label: t(`strategy_${v}` as Key) }))}
            />
          </Field>
        ) : null}
        <Field id="c-tc" label={t("timeControl")}>
          <Select
            id="c-tc"
            value={tcChoice}
            onChange={chooseTc}
            options={[
              { value: "", label: t("tcNone") },
              ...TC_PRESETS.map((p) => ({
                value: p.id,
                label: `${t(p.tc.kind === "live" ? "tcLive" : "tcCorr")}: ${timeControlText(p.tc)}`,
              })),
              { value: "custom", label: t("tcCustom") },
            ]}
          />
        </Field>
        <details class="more-options" ref={more}>
          <summary>{t("moreOptions")}</summary>
          {ruleset === "6-nimmt" ? (
            <>
              <Field id="c-preset" label={t("preset")} hint={preset ? t(`presetHint_${preset}` as Key) : undefined}>
                <Select<Preset>
                  id="c-preset"
                  describedBy={preset ? "c-preset-hint" : undefined}
                  value={preset}
                  onChange={choosePreset}
                  options={[
                    ...presetValues.map((p) => ({ value: p as Preset, label: t(`preset_${p}` as Key) })),
                    { value: "" as Preset, label: t("presetCustom") },
                  ]}
                />
              </Field>
              <Field id="c-deck" label={t("deck")}>
                <Select
                  id="c-deck"
                  value={opts.deck}
                  onChange={(v) => setOpt("deck", v)}
                  options={deckOptionValues.map((v) => ({ value: v, label: t(`deck_${v}` as Key) }))}
                />
              </Field>
              <Field id="c-deal" label={t("deal")}>
                <Select
                  id="c-deal"
                  value={opts.deal}
                  onChange={(v) => setOpt("deal", v)}
                  options={dealOptionValues.map((v) => ({ value: v, label: t(`deal_${v}` as Key) }))}
                />
              </Field>
              <Field id="c-placement" label={t("placement")}>
                <Select
                  id="c-placement"
                  value={opts.placement}
                  onChange={(v) => setOpt("placement", v)}
                  options={placementOptionValues.map((v) => ({ value: v, label: t(`placement_${v}` as Key) }))}
                />
              </Field>
            </>
          ) : null}
          {ruleset === "6-nimmt" || ruleset === "11-nimmt" ? (
            <fieldset>
              <legend>{t("end")}</legend>
              <label class="inline">
                <input type="radio" name="end" checked={endKind === "points"} onChange={() => setEndKind("points")} />{" "}
                {t("endPoints")}
              </label>
              <label class="inline">
                <input type="radio" name="end" checked={endKind === "rounds"} onChange={() => setEndKind("rounds")} />{" "}
                {t("endRounds")}
              </label>
              {endKind === "points" ? (
                <Field id="c-points" label={t("points")}>
                  <input
                    id="c-points"
                    type="number"
                    min={1}
                    max={999}
                    list="c-points-list"
                    value={points}
                    onInput={(e) => setPoints(Number(e.currentTarget.value))}
                  />
                  <datalist id="c-points-list">
                    <option value="33" />
                    <option value="66" />
                    <option value="100" />
                  </datalist>
                </Field>
              ) : (
                <Field id="c-rounds" label={t("rounds")}>
                  <input
                    id="c-rounds"
                    type="number"
                    min={1}
                    max={50}
                    value={rounds}
                    onInput={(e) => setRounds(Number(e.currentTarget.value))}
                  />
                </Field>
              )}
            </fieldset>
          ) : null}
          {ruleset === "x-nimmt" ? (
            <Field id="c-deals" label={t("deals")}>
              <input id="c-deals" type="number" min={1} max={50} value={deals} onInput={(e) => setDeals(Number(e.currentTarget.value))} />
            </Field>
          ) : null}
          {ruleset === "nimm-oder-schieb" ? (
            <>
              <Field id="c-chips" label={t("chips")}>
                <Select
                  id="c-chips"
                  value={chips}
                  onChange={setChips}
                  options={chipsOptionValues.map((v) => ({ value: v, label: t(`chips_${v}` as Key) }))}
                />
              </Field>
              <Field id="c-games" label={t("games")}>
                <input id="c-games" type="number" min={1} max={50} value={games} onInput={(e) => setGames(Number(e.currentTarget.value))} />
              </Field>
            </>
          ) : null}
          <Field id="c-name" label={t("gameName")}>
            <input id="c-name" maxLength={64} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          {tcChoice ? (
            <TimeControlFields tc={tc} set={setTcField} />
          ) : (
            <Field id="c-deadline" label={t("moveDeadline")}>
              <Select
                id="c-deadline"
                value={deadline}
                onChange={setDeadline}
                options={DEADLINES.map((d) => ({ value: d.value, label: t(d.key, { n: d.n }) }))}
              />
            </Field>
          )}
          <label class="check">
            <input type="checkbox" checked={isPublic} onChange={(e) => setPublic(e.currentTarget.checked)} /> {t("publicGame")}
          </label>
          <Field id="c-deal-json" label={t("preparedDeal")} hint={t("preparedDealHint")}>
            <textarea
              id="c-deal-json"
              rows={4}
              spellcheck={false}
              aria-describedby="c-deal-json-hint"
              value={dealJson}
              onInput={(e) => setDealJson(e.currentTarget.value)}
            />
          </Field>
        </details>
        <InputHint text={localError} />
        <ErrorMessage error={error} />
        <button type="submit" class="primary" disabled={busy || infos === null}>
          {t("create")}
        </button>
      </form>
    </section>
  );
}

/** The clock's own values (a preset fills them; a change makes the clock custom): its kind,
 *  the starting time, what a move adds, the cap, what happens at zero and, for
 *  correspondence, whether vacation may be taken. A game with a clock has no time per move. */
function TimeControlFields(props: { tc: TcFields; set: <K extends keyof TcFields>(k: K, v: TcFields[K]) => void }) {
  const { tc, set } = props;
  const live = tc.kind === "live";
  const num = (id: string, label: string, value: string, key: "initial" | "increment" | "max", step: string) => (
    <Field id={id} label={label}>
      <input id={id} type="number" min={0} step={step} inputMode="decimal" value={value} onInput={(e) => set(key, e.currentTarget.value)} />
    </Field>
  );
  return (
    <fieldset class="tc-fields">
      <legend>{t("tcDetails")}</legend>
      <p class="hint">{t("tcNoDeadline")}</p>
      <Field id="c-tc-kind" label={t("tcKind")}>
        <Select<TimeControl["kind"]>
          id="c-tc-kind"
          value={tc.kind}
          onChange={(k) => set("kind", k)}
          options={[
            { value: "live", label: t("tcLive") },
            { value: "correspondence", label: t("tcCorr") },
          ]}
        />
      </Field>
      {num("c-tc-initial", t(live ? "tcInitialMin" : "tcInitialDays"), tc.initial, "initial", "any")}
      {num("c-tc-increment", t(live ? "tcIncrementSec" : "tcIncrementHours"), tc.increment, "increment", live ? "1" : "any")}
      {num("c-tc-max", t(live ? "tcMaxMin" : "tcMaxDays"), tc.max, "max", "any")}
      <Field id="c-tc-zero" label={t("tcAtZero")}>
        <Select<TcFields["atZero"]>
          id="c-tc-zero"
          value={tc.atZero}
          onChange={(v) => set("atZero", v)}
          options={(["bot_moves", "others_decide"] as const).map((v) => ({ value: v, label: t(`atZero_${v}`) }))}
        />
      </Field>
      {live ? null : (
        <label class="check">
          <input type="checkbox" checked={tc.vacation} onChange={(e) => set("vacation", e.currentTarget.checked)} /> {t("tcVacation")}
        </label>
      )}
    </fieldset>
  );
}
