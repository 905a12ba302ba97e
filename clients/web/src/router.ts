// Hash routes, so the server needs no fallback route: `#/`, `#/games/<id>`,
// `#/join/<game>/<code>`, `#/join/<game>` (a rematch: the seat is kept, no code needed),
// `#/invite/<code>` (the code alone), `#/pads`, `#/pads/<id>`, `#/calculator`, `#/leaderboard/<ruleset>`, `#/players/<id>`, `#/account`,
// `#/rules`, `#/rules/<ruleset>`, `#/rules/6-nimmt/<preset>`, `#/tournaments`,
// `#/tournaments/new`, `#/tournaments/<id>` (`?code=<invite code>` for a private one),
// `#/mail/verify/<token>` (where a mailed verification link leads).
import { Store } from "./store";

export type Route =
  | { page: "lobby" }
  | { page: "game"; id: string }
  | { page: "join"; id: string; code: string | null }
  | { page: "invite"; code: string }
  | { page: "pads" }
  | { page: "pad"; id: string }
  | { page: "calculator" }
  | { page: "leaderboard"; ruleset: string | null }
  | { page: "player"; id: string }
  | { page: "account" }
  | { page: "rules"; ruleset: string | null; preset: string | null }
  | { page: "tournaments" }
  | { page: "tournament-new" }
  | { page: "tournament"; id: string; code: string | null }
  | { page: "verify-mail"; token: string }
  | { page: "missing" };

export function parse(hash: string): Route {
  const [path = "", query = ""] = hash.replace(/^#\/?/, "").split("?", 2);
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const [a, b, c] = parts;
  if (parts.length === 0) return { page: "lobby" };
  if (a === "games" && b && parts.length === 2) return { page: "game", id: b };
  if (a === "join" && b && c && parts.length === 3) return { page: "join", id: b, code: c };
  if (a === "join" && b && parts.length === 2) return { page: "join", id: b, code: null };
  if (a === "invite" && b && parts.length === 2) return { page: "invite", code: b };
  if (a === "pads" && parts.length === 1) return { page: "pads" };
  if (a === "pads" && b && parts.length === 2) return { page: "pad", id: b };
  if (a === "calculator" && parts.length === 1) return { page: "calculator" };
  if (a === "leaderboard" && parts.length <= 2) return { page: "leaderboard", ruleset: b ?? null };
  if (a === "players" && b && parts.length === 2) return { page: "player", id: b };
  if (a === "account" && parts.length === 1) return { page: "account" };
  if (a === "rules" && parts.length <= 3) return { page: "rules", ruleset: b ?? null, preset: c ?? null };
  if (a === "tournaments" && parts.length === 1) return { page: "tournaments" };
  if (a === "tournaments" && b === "new" && parts.length === 2) return { page: "tournament-new" };
  if (a === "tournaments" && b && parts.length === 2) {
    return { page: "tournament", id: b, code: new URLSearchParams(query).get("code") };
  }
  if (a === "mail" && b === "verify" && c && parts.length === 3) return { page: "verify-mail", token: c };
  return { page: "missing" };
}

export const route = new Store<Route>(parse(location.hash));
window.addEventListener("hashchange", () => route.set(parse(location.hash)));

export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join("/")}`;
}

export function go(hash: string): void {
  if (location.hash === hash) route.set(parse(hash));
  else location.hash = hash;
}

/** The absolute invite link of a private game. */
export function inviteLink(id: string, code: string): string {
  return `${location.origin}${location.pathname}${href("join", id, code)}`;
}

/** The absolute link that takes the seat a rematch keeps for one of its people. */
export function rematchLink(id: string): string {
  return `${location.origin}${location.pathname}${href("join", id)}`;
}

/**
 * The game id and code of a pasted invite link (or `<game>/<code>`), the code alone (no
 * id) for a typed invite code, else null.
 */
export function parseInvite(text: string): { id: string | null; code: string } | null {
  const s = text.trim();
  if (/^[A-Za-z0-9]{6,32}$/.test(s)) return { id: null, code: s.toUpperCase() };
  const m = /#\/join\/([^/\s]+)\/([^/\s]+)\/?$/.exec(s) ?? /^([0-9a-f-]{36})\/([A-Za-z0-9]+)$/i.exec(s);
  if (!m || !m[1] || !m[2]) return null;
  return { id: decodeURIComponent(m[1]), code: decodeURIComponent(m[2]) };
}
