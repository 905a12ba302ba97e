// Re-derives a finished game's deals from its revealed seed, in the browser, and checks
// them against the commitment and the game's event log. The algorithm is the server's
// (src/fairness.rs, docs/architecture.md, "Fair shuffles"): deal seed of round r =
// SHA-256("stammtisch/deal/v1" ‖ seed ‖ r as u16 big-endian); ChaCha20 (rand_chacha's
// ChaCha20Rng: 20 rounds, zero nonce, counter from 0, little-endian u32 words) drives a
// Fisher–Yates shuffle of the ascending deck with rejection sampling.
import { chacha20 } from "@noble/ciphers/chacha.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";
import type { EventItem, GameBody, RulesetInfo } from "../../typescript/src/index.ts";

const DOMAIN = new TextEncoder().encode("stammtisch/deal/v1");

/** hex(SHA-256(seed bytes)). */
export function commitmentOf(seedHex: string): string {
  return bytesToHex(sha256(hexToBytes(seedHex)));
}

/** The generator of one round: u32 words of the ChaCha20 keystream, in order. */
function words(key: Uint8Array): () => number {
  const nonce = new Uint8Array(12);
  const BLOCKS = 16;
  let block = new Uint8Array(0);
  let view = new DataView(block.buffer);
  let pos = 0;
  let counter = 0;
  return () => {
    if (pos + 4 > block.length) {
      block = chacha20(key, nonce, new Uint8Array(64 * BLOCKS), undefined, counter);
      view = new DataView(block.buffer, block.byteOffset, block.byteLength);
      counter += BLOCKS;
      pos = 0;
    }
    const w = view.getUint32(pos, true);
    pos += 4;
    return w;
  };
}

/** The deck `cards` (ascending) shuffled as the server shuffles round `round` of `seedHex`. */
export function shuffle(seedHex: string, round: number, cards: number[]): number[] {
  const seed = hexToBytes(seedHex);
  const input = new Uint8Array(DOMAIN.length + seed.length + 2);
  input.set(DOMAIN, 0);
  input.set(seed, DOMAIN.length);
  input[input.length - 2] = (round >> 8) & 0xff;
  input[input.length - 1] = round & 0xff;
  const next = words(sha256(input));
  const out = [...cards];
  const MAX = 0xffffffff;
  for (let i = out.length - 1; i >= 1; i--) {
    const bound = i + 1;
    const zone = MAX - (MAX % bound);
    let x = next();
    while (x >= zone) x = next();
    const j = x % bound;
    const a = out[i] as number;
    out[i] = out[j] as number;
    out[j] = a;
  }
  return out;
}

const range = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
const sameSet = (a: number[], b: number[]) =>
  a.length === b.length && [...a].sort((x, y) => x - y).every((v, i) => v === [...b].sort((x, y) => x - y)[i]);

export type Check =
  | { kind: "commitment"; ok: boolean }
  | { kind: "rows" | "hand" | "pile" | "removed" | "prepared"; round: number; ok: boolean }
  | { kind: "played"; round: number; seat: number; ok: boolean }
  | { kind: "draft"; ok: boolean };

/** The deck of a row game for its options and table size, ascending. */
function rowDeck(view: GameBody): number[] {
  if (view.options.deck === "tactical") return range(1, view.players * 10 + 4);
  return range(1, view.ruleset === "6-nimmt" ? 104 : 100);
}

/** Every check of a finished game, given all its events the caller may read. */
export function verify(view: GameBody, info: RulesetInfo, events: EventItem[]): Check[] {
  const seed = view.fairness.seed;
  if (!seed) return [];
  const checks: Check[] = [{ kind: "commitment", ok: commitmentOf(seed) === view.fairness.commitment }];
  const me = view.you?.seat;

  if (view.ruleset === "nimm-oder-schieb") {
    // Split the log into the games of the match.
    let game = 0;
    const revealed = new Map<number, number[]>();
    const removed = new Map<number, number[]>();
    for (const e of events) {
      if (e.type === "nos_game_started") game = e.data.game;
      if (e.type === "card_revealed") revealed.set(game, [...(revealed.get(game) ?? []), e.data.card]);
      if (e.type === "nos_game_ended") removed.set(game, e.data.removed);
    }
    for (const g of [...revealed.keys()].sort((a, b) => a - b)) {
      if (g === 1 && view.prepared_deal) {
        checks.push({ kind: "prepared", round: g, ok: true });
        continue;
      }
      const order = shuffle(seed, g, range(3, 35));
      const pile = order.slice(0, 24);
      const seen = revealed.get(g) ?? [];
      checks.push({ kind: "pile", round: g, ok: seen.length > 0 && seen.every((c, i) => c === pile[i]) });
      const rem = removed.get(g);
      if (rem) checks.push({ kind: "removed", round: g, ok: sameSet(rem, order.slice(24)) });
    }
    return checks;
  }

  if (view.options.deal === "draft") {
    checks.push({ kind: "draft", ok: true });
    return checks;
  }
  const handSize = info.hand_size ?? 10;
  const rowCount = info.rows?.length ?? 4;
  const deck = rowDeck(view);
  let round = 0;
  const starts = new Map<number, number[]>();
  const myHands = new Map<number, number[]>();
  const played = new Map<number, Map<number, number[]>>();
  const toHand = new Map<number, Map<number, number[]>>();
  const add = (m: Map<number, Map<number, number[]>>, r: number, s: number, cards: number[]) => {
    const per = m.get(r) ?? new Map<number, number[]>();
    per.set(s, [...(per.get(s) ?? []), ...cards]);
    m.set(r, per);
  };
  for (const e of events) {
    if (e.type === "round_started") {
      round = e.data.round;
      starts.set(round, e.data.rows);
    } else if (e.type === "hand_dealt" && e.data.seat === me) {
      myHands.set(round, e.data.cards);
    } else if (e.type === "cards_revealed") {
      for (const c of e.data.cards) add(played, round, c.seat, [c.card]);
    } else if (e.type === "card_kept") {
      add(toHand, round, e.data.seat, e.data.to_hand);
    }
  }
  for (const r of [...starts.keys()].sort((a, b) => a - b)) {
    if (r === 1 && view.prepared_deal) {
      checks.push({ kind: "prepared", round: r, ok: true });
      continue;
    }
    const order = shuffle(seed, r, deck);
    const hands = Array.from({ length: view.players }, (_, s) => order.slice(s * handSize, (s + 1) * handSize));
    const rows = order.slice(view.players * handSize, view.players * handSize + rowCount);
    const got = starts.get(r) ?? [];
    checks.push({ kind: "rows", round: r, ok: got.length === rows.length && got.every((c, i) => c === rows[i]) });
    const mine = myHands.get(r);
    if (me !== undefined && mine) checks.push({ kind: "hand", round: r, ok: sameSet(mine, hands[me] ?? []) });
    for (let s = 0; s < view.players; s++) {
      if (s === me) continue;
      const cards = played.get(r)?.get(s) ?? [];
      if (cards.length === 0) continue;
      // X nimmt!: taken cards go back to the hand and may be played later.
      const allowed = new Set([...(hands[s] ?? []), ...(toHand.get(r)?.get(s) ?? [])]);
      checks.push({ kind: "played", round: r, seat: s, ok: cards.every((c) => allowed.has(c)) });
    }
  }
  return checks;
}
