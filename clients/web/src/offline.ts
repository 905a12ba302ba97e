// Playing through a lost connection. The last view of each of the person's games (and the
// lists of their games) is kept in this browser, so a game reads offline as it was last
// seen. A move made while the server cannot be reached waits here with its Idempotency-Key
// and goes out when the connection returns: first pinned to the version the person saw (a
// move that reached the server before the answer was lost comes back as its first answer;
// the key makes a resend safe), and where the game moved on meanwhile, it goes out only if
// the person still faces the same decision; otherwise it is dropped and the person is told.
// What is kept belongs to the signed-in account and is wiped at sign-out.
import type { Command, GameBody } from "../../typescript/src/index.ts";
import { api, ApiError, errorText, session, unwrap } from "./api";
import { t } from "./i18n";
import { Store } from "./store";

const PREFIX = "stammtisch.offline.";

function account(): string | null {
  return session.get()?.account.id ?? null;
}

function keyFor(what: string): string | null {
  const a = account();
  return a ? `${PREFIX}${a}.${what}` : null;
}

function read<T>(what: string): T | null {
  const k = keyFor(what);
  if (!k) return null;
  try {
    return JSON.parse(localStorage.getItem(k) ?? "null") as T | null;
  } catch {
    return null;
  }
}

function write(what: string, value: unknown): void {
  const k = keyFor(what);
  if (!k) return;
  try {
    localStorage.setItem(k, JSON.stringify(value));
  } catch {
    // A full storage only costs the offline copy.
  }
}

/** A copy kept for reading offline, and when it was taken (ms since the epoch). */
export interface Seen<T> {
  at: number;
  value: T;
}

export function remember<T>(what: string, value: T): void {
  write(`seen.${what}`, { at: Date.now(), value } satisfies Seen<T>);
}

export function recall<T>(what: string): Seen<T> | null {
  return read<Seen<T>>(`seen.${what}`);
}

/** True for a failure to reach the server at all (no answer), as against an answer. */
export function unreachable(e: unknown): boolean {
  return e instanceof ApiError ? e.status === 0 : e instanceof TypeError;
}

// --- moves waiting for the connection -------------------------------------------------

export interface PendingMove {
  game: string;
  command: Command;
  /** The Idempotency-Key the move goes out with, every time. */
  key: string;
  /** The game's version the person acted on. */
  version: number;
  /** What the person was deciding (see `decisionOf`). */
  decision: string;
  /** When it was made (ms since the epoch). */
  at: number;
}

/** A move that did not go out (the game moved on, or the server refused it). */
export interface DroppedMove {
  game: string;
  command: Command;
  reason: string;
}

export const pending = new Store<PendingMove[]>([]);
export const dropped = new Store<DroppedMove[]>([]);

function loadPending(): void {
  pending.set(read<PendingMove[]>("pending") ?? []);
  dropped.set([]);
}

function savePending(list: PendingMove[]): void {
  pending.set(list);
  write("pending", list);
}

/**
 * What the person decides in `view`: the point of the game (round, hand, rows, the open
 * card…) and the choices the server offers them. A move made at one decision is sent at
 * another only if this is the same; choosing a card does not change it (the choice may be
 * changed until the turn resolves), so a choice whose answer was lost is recognised.
 */
export function decisionOf(view: GameBody): string {
  const me = view.you?.seat;
  const tb = view.table as unknown as Record<string, unknown>;
  const rows = (tb.rows as { cards: number[] }[] | undefined)?.map((r) => r.cards.length) ?? null;
  return JSON.stringify({
    status: view.status,
    round: view.round,
    mine: [...new Set(view.awaiting.filter((a) => a.seat === me).map((a) => a.action))].sort(),
    hand: view.you?.hand.length ?? null,
    rows,
    revealed: (tb.revealed as unknown[] | undefined)?.length ?? 0,
    keep: tb.pending_keep ? JSON.stringify(tb.pending_keep) : null,
    draft: (tb.draft_pool as unknown[] | undefined)?.length ?? null,
    open: tb.open_card ?? null,
    pot: tb.pot ?? null,
    pile: tb.draw_pile_size ?? null,
  });
}

/** Keeps a move made while the server could not be reached, to send it later. */
export function hold(game: string, command: Command, key: string, view: GameBody): void {
  const move: PendingMove = { game, command, key, version: view.version, decision: decisionOf(view), at: Date.now() };
  // A newer choice replaces an older one still waiting in the same game.
  savePending([...pending.get().filter((p) => p.game !== game), move]);
  scheduleFlush();
}

/** Takes back a waiting move (the person changed their mind). */
export function cancel(move: PendingMove): void {
  savePending(pending.get().filter((p) => p.key !== move.key));
}

export function dismiss(d: DroppedMove): void {
  dropped.set(dropped.get().filter((x) => x !== d));
}

function post(move: PendingMove, version: number): Promise<GameBody> {
  return unwrap(
    api.POST("/v1/games/{id}/commands", {
      params: { path: { id: move.game }, header: { "If-Match": `"${version}"`, "Idempotency-Key": move.key } },
      body: move.command,
    }),
  );
}

/** Gives up a waiting move, telling the person why; it is settled. */
function drop(move: PendingMove, reason: string): true {
  dropped.set([...dropped.get(), { game: move.game, command: move.command, reason }]);
  return true;
}

/** Sends one waiting move; true when it is settled (sent, or dropped with a reason). */
async function send(move: PendingMove): Promise<boolean> {
  let version = move.version;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await post(move, version);
      return true;
    } catch (e) {
      if (unreachable(e)) return false;
      if (!(e instanceof ApiError) || e.code !== "version_conflict") {
        return drop(move, errorText(e).text);
      }
    }
    // The game moved on: send only where the person still faces the same decision.
    let now: GameBody;
    try {
      now = await unwrap(api.GET("/v1/games/{id}", { params: { path: { id: move.game } } }));
    } catch (e) {
      if (unreachable(e)) return false;
      return drop(move, errorText(e).text);
    }
    if (decisionOf(now) !== move.decision) return drop(move, t("movedOn"));
    version = now.version;
  }
  return drop(move, t("movedOn"));
}

let flushing = false;
let timer: ReturnType<typeof setTimeout> | null = null;

/** Sends every waiting move, oldest first; what cannot go out yet waits for the next try. */
export async function flush(): Promise<void> {
  if (flushing || !account()) return;
  flushing = true;
  try {
    for (const move of [...pending.get()]) {
      if (!(await send(move))) break;
      savePending(pending.get().filter((p) => p.key !== move.key));
    }
  } finally {
    flushing = false;
  }
  if (pending.get().length > 0) scheduleFlush();
}

function scheduleFlush(): void {
  if (timer) return;
  timer = setTimeout(() => {
    timer = null;
    void flush();
  }, 5000);
}

window.addEventListener("online", () => void flush());

// Each account has its own waiting moves; a sign-out wipes everything kept for it.
let signedIn = account();
loadPending();
if (pending.get().length > 0) void flush();
session.subscribe((s) => {
  const next = s?.account.id ?? null;
  if (next === signedIn) return;
  if (signedIn && !next) {
    for (const k of Object.keys(localStorage)) if (k.startsWith(`${PREFIX}${signedIn}.`)) localStorage.removeItem(k);
  }
  signedIn = next;
  loadPending();
  if (pending.get().length > 0) void flush();
});
