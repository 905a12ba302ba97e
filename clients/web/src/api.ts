// The web client's connection to the server: where the API lives, the signed-in session
// (kept in localStorage), the typed client, the rulesets, and how API errors read as
// sentences. Rendering lives elsewhere.
import {
  ApiError,
  createApi,
  unwrap,
  type Account,
  type RulesetInfo,
} from "../../typescript/src/index.ts";
import { has, lang, t } from "./i18n";
import { Store } from "./store";

export { ApiError, unwrap };

/**
 * The API's origin: `<meta name="stammtisch-api" content="https://…">` in index.html, or
 * empty for the page's own origin (the server serves this client itself).
 */
export const apiBase: string = (
  document.querySelector<HTMLMetaElement>('meta[name="stammtisch-api"]')?.content ?? ""
).replace(/\/+$/, "");

export interface Session {
  token: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  account: Account;
}

const SESSION_KEY = "stammtisch.session";

function loadSession(): Session | null {
  try {
    const s = JSON.parse(localStorage.getItem(SESSION_KEY) ?? "null") as Session | null;
    if (s && typeof s.token === "string" && s.expiresAt > Date.now() + 60_000) return s;
  } catch {
    // A damaged entry counts as signed out.
  }
  return null;
}

export const session = new Store<Session | null>(loadSession());
/** Why the last session ended, shown on the sign-in page. */
export const signOutReason = new Store<string | null>(null);

session.subscribe((s) => {
  if (s) localStorage.setItem(SESSION_KEY, JSON.stringify(s));
  else localStorage.removeItem(SESSION_KEY);
});

// Other tabs of this browser follow a sign-in, a fresh token (registration, password
// change) or a sign-out, instead of using a revoked token and signing out the fresh one.
window.addEventListener("storage", (e) => {
  if (e.key !== SESSION_KEY) return;
  const next = loadSession();
  if (next?.token !== session.get()?.token) session.set(next);
});

// A confirmed e-mail address, told to the browser's other tabs: an account page open in
// one of them shows it at once (storage events reach the other tabs, not the one that wrote).
const MAIL_VERIFIED_KEY = "stammtisch.mailVerified";

/** Tells the other tabs that an e-mail address was just confirmed. */
export function announceMailVerified(): void {
  localStorage.setItem(MAIL_VERIFIED_KEY, String(Date.now()));
}

/** Calls `then` when another tab confirms an e-mail address; returns the unsubscribe. */
export function onMailVerified(then: () => void): () => void {
  const listener = (e: StorageEvent) => {
    if (e.key === MAIL_VERIFIED_KEY) then();
  };
  window.addEventListener("storage", listener);
  return () => window.removeEventListener("storage", listener);
}

export const api = createApi({
  baseUrl: apiBase,
  token: () => session.get()?.token ?? null,
});

/**
 * Asks for the language the reader chose, not the browser's, so the server's words (a
 * problem's detail, such as why a score pad refuses a round) come in the page's language.
 */
api.use({
  onRequest({ request }) {
    request.headers.set("Accept-Language", lang.get());
    return request;
  },
});

/**
 * Signs out when the server no longer accepts the token: only the current one (a request
 * still on its way with a token replaced meanwhile must not end the fresh session).
 */
api.use({
  onResponse({ response, request }) {
    const s = session.get();
    if (response.status === 401 && s && request.headers.get("Authorization") === `Bearer ${s.token}`) {
      signOutReason.set(t("sessionExpired"));
      session.set(null);
    }
    return response;
  },
});

export function startSession(token: string, expiresIn: number, account: Account): void {
  signOutReason.set(null);
  session.set({ token, expiresAt: Date.now() + expiresIn * 1000, account });
}

export function signOut(reason: string | null = null): void {
  signOutReason.set(reason);
  session.set(null);
}

/** Keeps the signed-in account but swaps in a fresh token (after a password change). */
export function renewToken(token: string, expiresIn: number): void {
  const s = session.get();
  if (s) session.set({ ...s, token, expiresAt: Date.now() + expiresIn * 1000 });
}

/** A sentence a player understands for any error. */
export function errorText(e: unknown): { text: string; detail: string | null } {
  if (e instanceof ApiError) {
    const key = `err_${e.code}`;
    const text = has(key) ? t(key) : t("err_generic", { code: e.code });
    // Details help where the sentence is general (which input, which option).
    const general = ["validation_failed", "invalid_options", "invalid_deal", "impossible_round", "invalid_end", "invalid_players", "invalid_time_control", "invalid_tournament"];
    const detail = general.includes(e.code) && e.problem?.detail ? e.problem.detail : null;
    return { text, detail };
  }
  return { text: t("err_generic", { code: e instanceof Error ? e.name : "error" }), detail: null };
}

let rulesetsPromise: Promise<RulesetInfo[]> | null = null;

const RULESETS_KEY = "stammtisch.rulesets";

/** The rulesets (`GET /v1/rulesets`), fetched once; offline, the copy of the last fetch. */
export function rulesets(): Promise<RulesetInfo[]> {
  rulesetsPromise ??= unwrap(api.GET("/v1/rulesets")).then(
    (r) => {
      localStorage.setItem(RULESETS_KEY, JSON.stringify(r.items));
      return r.items;
    },
    (e: unknown) => {
      const kept = localStorage.getItem(RULESETS_KEY);
      // No answer at all (status 0): the copy of the last fetch.
      if (e instanceof ApiError && e.status === 0 && kept) return JSON.parse(kept) as RulesetInfo[];
      throw e;
    },
  );
  rulesetsPromise.catch(() => {
    rulesetsPromise = null;
  });
  return rulesetsPromise;
}
