// Clocks (issue 28): a game's time control in words, each seat's clock ticking locally from
// the server's banks (the view's `clocks` at `clocks_at`, then every `clocks_set` event),
// corrected for the difference between this browser's clock and the server's; the clock
// events in the log; the account's vacation. The server is the truth: a seat's time shown
// here is `remaining_ms - (server now - at)` for a running clock, never decided here.
import { useEffect, useState } from "preact/hooks";
import type { Command, components, GameBody } from "../../typescript/src/index.ts";
import { api, unwrap } from "./api";
import { lang, t } from "./i18n";
import { Store } from "./store";

type S = components["schemas"];
export type TimeControl = S["TimeControl"];
export type SeatClock = S["SeatClock"];
export type PauseState = S["PauseView"];
export type Vacation = S["VacationBody"];
/** The clock commands (`hand_to_bot`, the pause), among the game's other commands. */
export type ClockCommand = Extract<Command, { type: "hand_to_bot" | "propose_pause" | "accept_pause" | "decline_pause" | "resume" }>;
interface ClockFields {
  time_control?: TimeControl | null;
  clocks?: SeatClock[] | null;
  clocks_at?: string | null;
  pause?: PauseState | null;
}

const fields = (v: unknown): ClockFields => (v ?? {}) as ClockFields;

export const timeControlOf = (v: unknown): TimeControl | null => fields(v).time_control ?? null;
export const pauseOf = (v: GameBody): PauseState | null => fields(v).pause ?? null;
export const clocksAtOf = (v: GameBody): string | null => fields(v).clocks_at ?? null;
export function clockOf(v: GameBody, seat: number): SeatClock | null {
  return fields(v).clocks?.find((c) => c.seat === seat) ?? null;
}

/** "3 days", "5 h", "3 min", "2 s", or a sum of them ("1 min 30 s"): a setting's span. */
export function span(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const parts: string[] = [];
  if (d) parts.push(t("spanDays", { n: d }));
  if (h) parts.push(t("spanHours", { n: h }));
  if (m) parts.push(t("spanMinutes", { n: m }));
  if (s || parts.length === 0) parts.push(t("spanSeconds", { n: s }));
  return parts.join(" ");
}

/** A time control in words: "3 min + 2 s", "3 days + 1 day, max 7 days". */
export function timeControlText(tc: TimeControl): string {
  let text = span(tc.initial_seconds);
  if (tc.increment_seconds > 0) text += ` + ${span(tc.increment_seconds)}`;
  if (tc.max_seconds) text += t("tcMax", { span: span(tc.max_seconds) });
  return text;
}

/** The time control with its kind, for a screen reader and a title: "Live clock: 3 min + 2 s". */
export function timeControlLabel(tc: TimeControl): string {
  return t(tc.kind === "live" ? "tcLiveLabel" : "tcCorrLabel", { text: timeControlText(tc) });
}

// --- the server's clock, as seen from here ----------------------------------------------

/**
 * Milliseconds to add to this browser's clock to get the server's: taken when a view
 * arrives (its `clocks_at` against the moment of arrival, so a browser clock that is wrong,
 * or a server's test clock moved forward, does not make the clocks wrong).
 */
export const serverOffset = new Store<number>(0);

/** Notes the server's time a view was computed at, as it arrives. */
export function noteServerTime(v: GameBody, arrived: number = Date.now()): void {
  const at = clocksAtOf(v);
  if (at) serverOffset.set(Date.parse(at) - arrived);
}

/** The server's time now, by this browser's clock corrected by the last view's. */
export const serverNow = (): number => Date.now() + serverOffset.get();

/** A seat's bank at server time `now` (never below zero). */
export function remainingAt(c: SeatClock, at: string, now: number): number {
  if (!c.running) return Math.max(0, c.remaining_ms);
  return Math.max(0, c.remaining_ms - (now - Date.parse(at)));
}

/** Low: under a fifth of the starting bank, or under 30 s (live) / 1 h (correspondence). */
export function isLow(tc: TimeControl | null, ms: number): boolean {
  if (!tc) return false;
  const floor = tc.kind === "live" ? 30_000 : 3_600_000;
  return ms < floor || ms < tc.initial_seconds * 200;
}

/** A clock's face: "2:05", "1:02:05", "2 d 5 h". */
export function clockFace(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const d = Math.floor(total / 86400);
  const h = Math.floor((total % 86400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const two = (n: number) => String(n).padStart(2, "0");
  if (d > 0) return t("clockDays", { d, h });
  if (h > 0) return `${h}:${two(m)}:${two(s)}`;
  return `${m}:${two(s)}`;
}

/** A clock's time in words for a screen reader: "2 minutes 5 seconds". */
export function clockWords(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const l = lang.get();
  const unit = (n: number, u: "day" | "hour" | "minute" | "second") =>
    new Intl.NumberFormat(l, { style: "unit", unit: u, unitDisplay: "long" }).format(n);
  const d = Math.floor(total / 86400);
  const h = Math.floor((total % 86400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const parts: string[] = [];
  if (d) parts.push(unit(d, "day"));
  if (h) parts.push(unit(h, "hour"));
  if (m && !d) parts.push(unit(m, "minute"));
  if ((s || parts.length === 0) && !d && !h) parts.push(unit(s, "second"));
  return parts.join(" ");
}

// --- one tick for every clock on the page ---------------------------------------------

const tick = new Store<number>(Date.now());
let ticking: ReturnType<typeof setInterval> | null = null;
let users = 0;

/** This browser's time, renewed every second while a clock is shown (one timer for all). */
export function useTick(): number {
  const [now, setNow] = useState(tick.get());
  useEffect(() => {
    users += 1;
    if (ticking === null) ticking = setInterval(() => tick.set(Date.now()), 1000);
    const off = tick.subscribe(setNow);
    return () => {
      off();
      users -= 1;
      if (users === 0 && ticking !== null) {
        clearInterval(ticking);
        ticking = null;
      }
    };
  }, []);
  return now;
}

// --- events --------------------------------------------------------------------------

interface AnyEvent {
  type: string;
  data: Record<string, unknown>;
}

/** The shown view after a clock event (the next view from the server settles the rest). */
export function reduceClock(v: GameBody, e: AnyEvent): void {
  const f = v as unknown as ClockFields;
  const d = e.data;
  switch (e.type) {
    case "clocks_set":
      f.clocks = d.clocks as SeatClock[];
      f.clocks_at = d.at as string;
      if (f.pause) f.pause = { ...f.pause, paused: Boolean(d.paused) };
      break;
    case "time_control_set":
      f.time_control = d.time_control as TimeControl;
      break;
    case "pause_proposed":
      f.pause = { proposed_by: d.seat as number, accepted: [d.seat as number], paused: false };
      break;
    case "pause_accepted":
      if (f.pause) f.pause.accepted = [...f.pause.accepted, d.seat as number];
      break;
    case "pause_declined":
      f.pause = null;
      break;
    case "clocks_paused":
      if (f.pause) f.pause = { ...f.pause, paused: true };
      break;
    case "clocks_resumed":
      f.pause = null;
      break;
    default:
      break;
  }
}

/** A clock event's log line, or null (a `clocks_set` says nothing a player reads). */
export function describeClock(e: AnyEvent, name: (seat: number) => string): string | null {
  const d = e.data;
  const seat = typeof d.seat === "number" ? d.seat : -1;
  switch (e.type) {
    case "clock_ran_out":
      return t("ev_clock_ran_out", { name: name(seat), n: Number(d.timeouts ?? 1) });
    case "seat_handed_to_bot":
      return t(d.cause === "others" ? "ev_handed_others" : "ev_handed_timeouts", { name: name(seat) });
    case "vacation_spent":
      return t("ev_vacation_spent", { name: name(seat), n: Number(d.hours ?? 1) });
    case "pause_proposed":
      return t("ev_pause_proposed", { name: name(seat) });
    case "pause_accepted":
      return t("ev_pause_accepted", { name: name(seat) });
    case "pause_declined":
      return t("ev_pause_declined", { name: name(seat) });
    case "clocks_paused":
      return t("ev_clocks_paused");
    case "clocks_resumed":
      return t("ev_clocks_resumed", { name: name(seat) });
    default:
      return null;
  }
}

// --- presets of the new-game form ----------------------------------------------------

export const TC_PRESETS: { id: string; tc: TimeControl }[] = [
  { id: "live-3-2", tc: { kind: "live", initial_seconds: 180, increment_seconds: 2 } },
  { id: "live-10-5", tc: { kind: "live", initial_seconds: 600, increment_seconds: 5 } },
  { id: "corr-1-1", tc: { kind: "correspondence", initial_seconds: 86400, increment_seconds: 86400, max_seconds: 3 * 86400 } },
  { id: "corr-3-1", tc: { kind: "correspondence", initial_seconds: 3 * 86400, increment_seconds: 86400, max_seconds: 7 * 86400 } },
];

/** The contract's ranges, checked before asking the server (which checks them again). */
export function timeControlProblem(tc: TimeControl): string | null {
  const live = tc.kind === "live";
  const [lo, hi] = live ? [30, 7200] : [3600, 2_592_000];
  const incHi = live ? 600 : 2_592_000;
  const whole = (n: number) => Number.isInteger(n);
  if (!whole(tc.initial_seconds) || tc.initial_seconds < lo || tc.initial_seconds > hi) {
    return t(live ? "tcBadInitialLive" : "tcBadInitialCorr");
  }
  if (!whole(tc.increment_seconds) || tc.increment_seconds < 0 || tc.increment_seconds > incHi) {
    return t(live ? "tcBadIncrementLive" : "tcBadIncrementCorr");
  }
  if (tc.max_seconds != null && (!whole(tc.max_seconds) || tc.max_seconds < tc.initial_seconds)) return t("tcBadMax");
  return null;
}

/** Vacation hours as days and hours: "13 days 5 h". */
export function hoursText(hours: number): string {
  const d = Math.floor(hours / 24);
  const h = hours % 24;
  if (d && h) return `${t("spanDays", { n: d })} ${t("spanHours", { n: h })}`;
  if (d) return t("spanDays", { n: d });
  return t("spanHours", { n: h });
}

// --- vacation (the account page) -----------------------------------------------------

/** `GET /v1/account/vacation`. */
export function getVacation(): Promise<Vacation> {
  return unwrap(api.GET("/v1/account/vacation"));
}

/** `PUT /v1/account/vacation`: away until `until` (an instant), or back now (null). */
export function setAway(until: string | null): Promise<Vacation> {
  return unwrap(api.PUT("/v1/account/vacation", { body: { away_until: until } }));
}

/** A `datetime-local` input's value for an instant, in this browser's time zone. */
export function localInput(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}`;
}
