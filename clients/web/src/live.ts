// One open game: its latest view from the server, the view being shown, the live stream
// (EventSource with a stream ticket, reconnecting with a fresh ticket after the last seq),
// and the step-by-step replay of events (reveal, then each card placed) before the table
// settles on the server's view. The server's view is always the truth: replayed frames
// are only ever shown between two views and are replaced by the next one.
import { eventTypes, listEvents, streamUrl, type CardFace, type Command, type EventItem, type GameBody, type RulesetInfo } from "../../typescript/src/index.ts";
import { api, apiBase, ApiError, errorText, rulesets, unwrap } from "./api";
import { duration, joinNames, t, type Key } from "./i18n";
import { describeClock, noteServerTime, reduceClock } from "./clocks";
import { hold, recall, remember, unreachable } from "./offline";
import { Store } from "./store";
import { nosLabel } from "./ui";

export type Speed = "normal" | "fast" | "off";
function initialSpeed(): Speed {
  const s = localStorage.getItem("stammtisch.speed");
  if (s === "normal" || s === "fast" || s === "off") return s;
  return matchMedia("(prefers-reduced-motion: reduce)").matches ? "fast" : "normal";
}
export const speed = new Store<Speed>(initialSpeed());
speed.subscribe((s) => localStorage.setItem("stammtisch.speed", s));

/** Every event type the server streams (an `EventSource` needs one listener per name). */
export const EVENT_TYPES = eventTypes;

/** How long the table pauses on an event, in ms at normal speed. */
function pause(e: EventItem): number {
  switch (e.type) {
    case "cards_revealed":
      return 1400;
    case "card_placed":
      return e.data.taken.length > 0 ? 1500 : 900;
    case "card_kept":
      return 900;
    case "round_ended":
    case "nos_game_ended":
      return 1500;
    case "card_revealed":
    case "passed":
      return 600;
    case "card_taken":
      return 900;
    case "card_drafted":
      return 300;
    default:
      return 0;
  }
}

/** How often a finished game's page looks for a rematch. */
const REMATCH_POLL_MS = 3000;

export type Connection = "connecting" | "live" | "reconnecting" | "polling" | "closed";

/**
 * A log line kept as data: the event and who sat where when it happened. Its words are made
 * when it is shown ([`logText`]), so old lines follow a language switch.
 */
export interface LogEntry {
  seq: number;
  event: EventItem;
  /** Seat names at the time (a seat may be left or taken by someone else later). */
  names: (string | null)[];
  /** Your seat at the time, if you played. */
  you: number | null;
  ruleset: string;
}

export interface GameState {
  /** What the table shows now. */
  shown: GameBody | null;
  /** The newest view the server sent. */
  view: GameBody | null;
  /** The rules' description (bullheads, card faces). */
  info: RulesetInfo | null;
  /** True while a replay runs (the table waits to settle). */
  replaying: boolean;
  /** The last card that moved, for highlighting. */
  highlight: number | null;
  log: LogEntry[];
  connection: Connection;
  /** An error loading the game (not found, …). */
  error: unknown;
  /** When the view shown was last seen, while the server cannot be reached (else null). */
  seenAt: number | null;
}

/** Bullheads of a row-game card, from the ruleset's table. */
export function bulls(info: RulesetInfo | null, card: number): number {
  return info?.bullheads?.[String(card)] ?? 1;
}

/** The face of a nimm-oder-schieb card value. */
export function face(info: RulesetInfo | null, value: number): CardFace {
  return (
    info?.cards?.find((c) => c.value === value) ?? {
      value,
      suit: "clubs",
      rank: String(value),
      label: String(value),
    }
  );
}

const clone = <T>(v: T): T => structuredClone(v);

export class GameSession {
  readonly state: Store<GameState>;
  private readonly id: string;
  private lastSeq = 0;
  private queue: EventItem[] = [];
  private pumping = false;
  private catchingUp: Promise<void> | null = null;
  private source: EventSource | null = null;
  private retry = 0;
  private timers = new Set<ReturnType<typeof setTimeout>>();
  private viewFetch: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private skip = false;
  private awaitingRematch = false;

  constructor(id: string) {
    this.id = id;
    this.state = new Store<GameState>({
      shown: null,
      view: null,
      info: null,
      replaying: false,
      highlight: null,
      log: [],
      connection: "connecting",
      error: null,
      seenAt: null,
    });
  }

  private patch(p: Partial<GameState>): void {
    this.state.set({ ...this.state.get(), ...p });
  }

  private later(ms: number, f: () => void): void {
    const h = setTimeout(() => {
      this.timers.delete(h);
      if (!this.stopped) f();
    }, ms);
    this.timers.add(h);
  }

  async start(): Promise<void> {
    try {
      const [view, all] = await Promise.all([this.fetchView(), rulesets()]);
      const info = all.find((r) => r.name === view.ruleset) ?? null;
      noteServerTime(view);
      this.lastSeq = view.version;
      this.patch({ view, shown: view, info, error: null });
      this.connect();
    } catch (e) {
      // Offline: the game as it was last seen here, until the stream is back.
      const seen = unreachable(e) ? recall<GameBody>(`game.${this.id}`) : null;
      if (seen) {
        const info = (await rulesets().catch(() => [])).find((r) => r.name === seen.value.ruleset) ?? null;
        this.lastSeq = seen.value.version;
        this.patch({ view: seen.value, shown: seen.value, info, error: null, seenAt: seen.at });
        this.reconnectLater();
        return;
      }
      this.patch({ error: e, connection: "closed" });
    }
  }

  stop(): void {
    this.stopped = true;
    this.source?.close();
    this.source = null;
    for (const h of this.timers) clearTimeout(h);
    if (this.viewFetch) clearTimeout(this.viewFetch);
  }

  /** Shows the newest view at once, ending a replay. */
  skipReplay(): void {
    this.skip = true;
  }

  private fetchView(): Promise<GameBody> {
    return unwrap(api.GET("/v1/games/{id}", { params: { path: { id: this.id } } }));
  }

  /** Sends a command; the answer (the new view) is shown after its events are replayed.
   *  Where the server cannot be reached, the move waits (offline.ts) and goes out, with the
   *  same Idempotency-Key, when the connection returns. */
  async act(command: Command): Promise<void> {
    const key = crypto.randomUUID();
    const seen = this.state.get().view;
    let view: GameBody;
    try {
      view = await unwrap(
        api.POST("/v1/games/{id}/commands", { params: { path: { id: this.id }, header: { "Idempotency-Key": key } }, body: command }),
      );
    } catch (e) {
      if (unreachable(e) && seen) {
        hold(this.id, command, key, seen);
        return;
      }
      if (e instanceof ApiError && e.code === "version_conflict") this.refresh();
      throw e;
    }
    this.onView(view);
  }

  /** Makes the game public or private (host). */
  async setPublic(isPublic: boolean): Promise<void> {
    const view = await unwrap(
      api.PATCH("/v1/games/{id}", { params: { path: { id: this.id } }, body: { public: isPublic } }),
    );
    this.onView(view);
  }

  refresh(): void {
    if (this.viewFetch) return;
    this.viewFetch = setTimeout(() => {
      this.viewFetch = null;
      if (this.stopped) return;
      this.fetchView().then(
        (v) => this.onView(v),
        () => undefined,
      );
    }, 50);
  }

  private onView(view: GameBody): void {
    const cur = this.state.get().view;
    if (cur && view.version < cur.version) return;
    noteServerTime(view);
    remember(`game.${this.id}`, view);
    this.patch({ view, seenAt: null });
    if (view.version > this.lastSeq) this.catchUp();
    void this.pump();
  }

  /** Reads the events between what was shown and the newest view, to replay them. */
  private catchUp(): void {
    if (this.catchingUp) return;
    this.catchingUp = (async () => {
      try {
        for (const e of await listEvents(api, this.id, this.lastSeq)) this.enqueue(e);
      } catch {
        // The view is still shown; a missed replay only loses the animation.
      } finally {
        const v = this.state.get().view;
        if (v) this.lastSeq = Math.max(this.lastSeq, v.version);
        this.catchingUp = null;
        void this.pump();
      }
    })();
  }

  private enqueue(e: EventItem): void {
    if (e.seq <= this.lastSeq) return;
    this.lastSeq = e.seq;
    this.queue.push(e);
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0 && !this.stopped) {
        const e = this.queue.shift() as EventItem;
        const st = this.state.get();
        const next = st.shown ? reduce(st.shown, e, st.info) : st.shown;
        const entry = logEntry(e, st.shown ?? st.view);
        const log = describe(entry, st.info) !== null ? [...st.log, entry].slice(-60) : st.log;
        const moved = e.type === "card_placed" ? e.data.card : null;
        const factor = speed.get() === "normal" ? 1 : speed.get() === "fast" ? 0.25 : 0;
        const wait = this.skip ? 0 : pause(e) * factor;
        this.patch({ shown: next, log, replaying: wait > 0 || st.replaying, highlight: moved ?? st.highlight });
        if (wait > 0) await new Promise<void>((r) => this.later(wait, r));
      }
    } finally {
      this.pumping = false;
    }
    // A catch-up still reading events will pump again when it is done.
    if (this.stopped || this.catchingUp) return;
    this.skip = false;
    const st = this.state.get();
    if (st.view && st.view.version >= this.lastSeq) {
      // Settle on the server's view; events up to it were replayed or are not ours to see.
      this.lastSeq = st.view.version;
      this.patch({ shown: st.view, replaying: false, highlight: null });
    } else {
      this.refresh();
    }
  }

  // --- the live stream -------------------------------------------------------------

  private connect(): void {
    if (this.stopped) return;
    const view = this.state.get().view;
    if (view?.status === "finished") {
      this.patch({ connection: "closed" });
      this.awaitRematch();
      return;
    }
    void (async () => {
      let ticket: string;
      try {
        const res = await unwrap(
          api.POST("/v1/games/{id}/stream-tickets", { params: { path: { id: this.id } } }),
        );
        ticket = res.ticket;
      } catch (e) {
        if (e instanceof ApiError && (e.status === 404 || e.status === 405)) {
          // A server without stream tickets: follow the game by polling.
          this.poll();
          return;
        }
        this.reconnectLater();
        return;
      }
      if (this.stopped) return;
      const es = new EventSource(streamUrl(apiBase, this.id, ticket, this.lastSeq));
      this.source = es;
      es.onopen = () => {
        this.retry = 0;
        this.patch({ connection: "live" });
        // Anything that happened while the stream was down.
        this.refresh();
      };
      const onEvent = (m: MessageEvent<string>) => {
        let e: EventItem;
        try {
          e = JSON.parse(m.data) as EventItem;
        } catch {
          return;
        }
        this.enqueue(e);
        const v = this.state.get().view;
        if (!v || e.seq > v.version) this.refresh();
        void this.pump();
        if (e.type === "game_finished") {
          // The server ends the stream after the last event; do not reconnect.
          es.close();
          this.source = null;
          this.patch({ connection: "closed" });
          this.awaitRematch();
        }
      };
      for (const type of EVENT_TYPES) es.addEventListener(type, onEvent);
      es.onmessage = onEvent;
      es.onerror = () => {
        // A ticket is single-use: never let the browser retry with it.
        es.close();
        if (this.source === es) this.source = null;
        if (this.state.get().view?.status === "finished") {
          this.patch({ connection: "closed" });
          this.awaitRematch();
          return;
        }
        this.reconnectLater();
      };
    })();
  }

  private reconnectLater(): void {
    if (this.stopped) return;
    this.patch({ connection: "reconnecting" });
    const wait = Math.min(10_000, 500 * 2 ** this.retry);
    this.retry += 1;
    this.later(wait, () => this.connect());
  }

  /**
   * After the end the stream is closed, yet someone may still start a rematch: the people
   * of the game look for it every few seconds (for half an hour) until it appears.
   */
  private awaitRematch(): void {
    if (this.awaitingRematch) return;
    this.awaitingRematch = true;
    const until = Date.now() + 30 * 60_000;
    const tick = () => {
      const v = this.state.get().view;
      if (!v || v.rematch || !v.you || Date.now() > until) {
        this.awaitingRematch = false;
        return;
      }
      this.refresh();
      this.later(REMATCH_POLL_MS, tick);
    };
    this.later(REMATCH_POLL_MS, tick);
  }

  private poll(): void {
    this.patch({ connection: "polling" });
    const tick = () => {
      this.refresh();
      if (this.state.get().view?.status !== "finished") this.later(3000, tick);
    };
    this.later(3000, tick);
  }
}

// --- replaying events onto a shown view --------------------------------------------

/** The table after one event, as far as the event tells; the next view corrects the rest. */
export function reduce(view: GameBody, e: EventItem, info: RulesetInfo | null): GameBody {
  const v = clone(view);
  const me = v.you?.seat;
  const seat = (i: number) => v.seats[i];
  const stopActing = () => {
    v.awaiting = [];
    v.legal = v.legal.filter((c) => c.type === "resign");
  };
  switch (e.type) {
    case "selection_made": {
      const s = seat(e.data.seat);
      if (s) s.selected = true;
      break;
    }
    case "card_selected":
      if (v.you && e.data.seat === me) v.you.selected = e.data.card;
      break;
    case "cards_revealed": {
      const cards = e.data.cards;
      v.table.revealed = cards.map((c) => ({ seat: c.seat, card: c.card }));
      for (const s of v.seats) {
        s.selected = false;
        if (cards.some((c) => c.seat === s.seat)) s.hand_size = Math.max(0, s.hand_size - 1);
      }
      if (v.you) {
        const mine = cards.find((c) => c.seat === me);
        if (mine) v.you.hand = v.you.hand.filter((c) => c !== mine.card);
        v.you.selected = null;
      }
      stopActing();
      break;
    }
    case "card_placed": {
      const { card, taken, chosen, side } = e.data;
      const row = v.table.rows[e.data.row];
      v.table.revealed = v.table.revealed.filter((r) => r.card !== card);
      if (row) {
        if (taken.length > 0 || chosen) row.cards = [card];
        else if (side === "left") row.cards.unshift(card);
        else row.cards.push(card);
      }
      const s = seat(e.data.seat);
      if (s && taken.length > 0) {
        s.taken = [...(s.taken ?? []), ...taken];
        s.round_bullheads = (s.round_bullheads ?? 0) + taken.reduce((a, c) => a + bulls(info, c), 0);
      }
      stopActing();
      break;
    }
    case "card_kept": {
      const { card, stacked, to_hand: toHand } = e.data;
      const s = seat(e.data.seat);
      if (s) {
        if (stacked.length > 0) {
          s.x_row = [card];
          s.x_stack_size = (s.x_stack_size ?? 0) + stacked.length;
        } else {
          s.x_row = [...(s.x_row ?? []), card];
        }
        s.hand_size += toHand.length;
      }
      if (v.you && e.data.seat === me) {
        v.you.hand = [...v.you.hand, ...toHand].sort((a, b) => a - b);
        if (stacked.length > 0) v.you.x_stack = [...(v.you.x_stack ?? []), ...stacked];
      }
      delete v.table.pending_keep;
      break;
    }
    case "card_drafted": {
      const { card } = e.data;
      v.table.draft_pool = (v.table.draft_pool ?? []).filter((c) => c !== card);
      const s = seat(e.data.seat);
      if (s) s.hand_size += 1;
      if (v.you && e.data.seat === me) v.you.hand = [...v.you.hand, card].sort((a, b) => a - b);
      break;
    }
    case "round_started": {
      const starts = e.data.rows;
      v.round = e.data.round;
      v.table.rows = v.table.rows.map((r, i) => {
        const c = starts[i];
        return { ...r, cards: c === undefined ? [] : [c] };
      });
      v.table.revealed = [];
      for (const s of v.seats) {
        s.taken = [];
        s.round_bullheads = 0;
      }
      break;
    }
    case "hand_dealt":
      if (v.you && e.data.seat === me) v.you.hand = e.data.cards;
      break;
    case "round_ended": {
      const scores = e.data.scores;
      v.scores = [...v.scores, scores];
      v.totals = v.totals.map((tot, i) => tot + (scores[i] ?? 0));
      v.seats.forEach((s, i) => (s.total = v.totals[i] ?? s.total));
      break;
    }
    case "nos_game_started": {
      v.round = e.data.game;
      v.table.pot = 0;
      v.table.open_card = null;
      for (const s of v.seats) {
        s.cards = [];
        if (typeof s.chips === "number") s.chips = e.data.chips;
      }
      if (v.you) v.you.chips = e.data.chips;
      break;
    }
    case "card_revealed":
      v.table.open_card = face(info, e.data.card);
      v.table.pot = 0;
      v.table.draw_pile_size = Math.max(0, (v.table.draw_pile_size ?? 1) - 1);
      break;
    case "passed": {
      v.table.pot = (v.table.pot ?? 0) + 1;
      const s = seat(e.data.seat);
      if (s && typeof s.chips === "number") s.chips = Math.max(0, s.chips - 1);
      if (v.you && e.data.seat === me && typeof v.you.chips === "number") v.you.chips -= 1;
      break;
    }
    case "card_taken": {
      const s = seat(e.data.seat);
      if (s) {
        s.cards = [...(s.cards ?? []), face(info, e.data.card)].sort((a, b) => a.value - b.value);
        if (typeof s.chips === "number") s.chips += e.data.chips;
      }
      if (v.you && e.data.seat === me && typeof v.you.chips === "number") v.you.chips += e.data.chips;
      v.table.open_card = null;
      v.table.pot = 0;
      break;
    }
    case "nos_game_ended": {
      const scores = e.data.scores;
      v.scores = [...v.scores, scores];
      v.totals = v.totals.map((tot, i) => tot + (scores[i] ?? 0));
      v.table.removed = e.data.removed.map((c) => face(info, c));
      break;
    }
    case "game_finished":
      v.status = "finished";
      v.winners = e.data.winners;
      v.fairness = { ...v.fairness, seed: e.data.seed };
      v.awaiting = [];
      v.legal = [];
      break;
    default:
      break;
  }
  reduceClock(v, e as unknown as { type: string; data: Record<string, unknown> });
  return v;
}

// --- events in words ---------------------------------------------------------------

/** A seat's name for the reader: "Anna (you)", "you" or "Seat 3" for an empty one. */
function nameOf(names: (string | null | undefined)[], you: number | null | undefined, seat: number): string {
  const name = names[seat];
  if (you === seat) return name ? `${name} (${t("you")})` : t("you");
  return name ?? t("seat", { seat });
}

export function seatName(view: GameBody | null, seat: number): string {
  return nameOf(view?.seats.map((s) => s.name ?? null) ?? [], view?.you?.seat, seat);
}

/** A log entry for an event, with the table as it was then. */
export function logEntry(e: EventItem, view: GameBody | null): LogEntry {
  return {
    seq: e.seq,
    event: e,
    names: view?.seats.map((s) => s.name ?? null) ?? [],
    you: view?.you?.seat ?? null,
    ruleset: view?.ruleset ?? "",
  };
}

/**
 * A row-game card, or a nimm-oder-schieb card in words: its value first (what it counts),
 * then rank and suit in the current language ("35 (9♥)").
 */
export function cardText(ruleset: string, info: RulesetInfo | null, card: number): string {
  return ruleset === "nimm-oder-schieb" ? `${card} (${nosLabel(face(info, card))})` : String(card);
}

/** A log line's words in the current language. */
export function logText(entry: LogEntry, info: RulesetInfo | null): string {
  return describe(entry, info) ?? "";
}

/** One log line for an event, or null for events that say nothing to a player. */
export function describe(entry: LogEntry, info: RulesetInfo | null): string | null {
  const e = entry.event;
  const name = (s: number) => nameOf(entry.names, entry.you, s);
  const card = (c: number) => cardText(entry.ruleset, info, c);
  // Moves the server made for a seat whose deadline passed say so.
  const cause = (e.data as Record<string, unknown>).cause;
  const late = cause === "deadline" ? ` ${t("ev_deadline")}` : cause === "clock" ? ` ${t("ev_clock")}` : "";
  const k = (key: Key, p: Record<string, string | number> = {}) => t(key, p) + late;
  const scoreList = (scores: number[]) => scores.map((s, i) => `${name(i)} ${s}`).join(", ");
  switch (e.type) {
    case "seat_taken":
      return k("ev_seat_taken", { name: name(e.data.seat) });
    case "bot_added":
      return k("ev_bot_added", { name: e.data.name });
    case "seat_left":
      return k("ev_seat_left", { name: name(e.data.seat) });
    case "seat_removed":
      return k("ev_seat_removed", { seat: e.data.seat + 1 });
    case "game_started":
      return k("ev_game_started");
    case "round_started":
      return k("ev_round_started", { round: e.data.round });
    case "selection_made":
      return entry.you === e.data.seat ? null : k("ev_selection_made", { name: name(e.data.seat) });
    case "card_selected":
      return k("ev_card_selected", { card: card(e.data.card) });
    case "cards_revealed":
      return k("ev_cards_revealed", { list: e.data.cards.map((c) => `${name(c.seat)} ${c.card}`).join(", ") });
    case "card_placed": {
      const { taken } = e.data;
      const p = {
        name: name(e.data.seat),
        card: card(e.data.card),
        row: e.data.row + 1,
        n: taken.length,
        bulls: taken.reduce((a, c) => a + bulls(info, c), 0),
      };
      if (e.data.chosen) return k("ev_card_placed_chosen", p);
      if (taken.length > 0) return k("ev_card_placed_takes", p);
      return k(e.data.side === "left" ? "ev_card_placed_left" : "ev_card_placed", p);
    }
    case "card_kept":
      return k(e.data.stacked.length > 0 ? "ev_card_kept_stacked" : "ev_card_kept", {
        name: name(e.data.seat),
        card: card(e.data.card),
      });
    case "draft_started":
      return k("ev_draft_started", { round: e.data.round, name: name(e.data.first_seat) });
    case "card_drafted":
      return k("ev_card_drafted", { name: name(e.data.seat), card: card(e.data.card) });
    case "nos_game_started":
      return k("ev_nos_game_started", { game: e.data.game, chips: e.data.chips });
    case "card_revealed":
      return k("ev_card_revealed", { card: card(e.data.card) });
    case "passed":
      return k("ev_passed", { name: name(e.data.seat) });
    case "card_taken":
      return k("ev_card_taken", { name: name(e.data.seat), card: card(e.data.card), chips: e.data.chips });
    case "round_ended":
      return k("ev_round_ended", { round: e.data.round, list: scoreList(e.data.scores) });
    case "nos_game_ended":
      return k("ev_nos_game_ended", { game: e.data.game, list: scoreList(e.data.scores) });
    case "game_finished": {
      const w = e.data.winners.map((s) => name(s));
      return k("ev_game_finished", { winners: t(w.length > 1 ? "winnersMany" : "winners", { names: joinNames(w) }) });
    }
    case "seat_resigned":
      return k("ev_seat_resigned", { name: name(e.data.seat) });
    case "rematch_created":
      return k("ev_rematch_created");
    case "reservations_released":
      return k("ev_reservations_released");
    default:
      return describeClock(e as unknown as { type: string; data: Record<string, unknown> }, name);
  }
}

/** "in 3 h 5 min" for a deadline, or null. */
export function deadlineText(iso: string | null | undefined, now: number): string | null {
  if (!iso) return null;
  const ms = Date.parse(iso) - now;
  return ms <= 0 ? t("overdue") : t("timeLeft", { time: duration(ms) });
}

export { errorText };
