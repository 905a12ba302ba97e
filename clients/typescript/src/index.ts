// The typed Stammtisch client: the generated OpenAPI types (`schema.ts`) and a thin
// openapi-fetch wrapper that adds the bearer token and turns problem+json answers into
// `ApiError`s. It owns no state beyond what its caller passes in; it never stores tokens.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

export * from "./schema";
export type { components, paths };

type S = components["schemas"];
export type Account = S["Account"];
export type Awaiting = S["Awaiting"];
export type BotStrategy = S["BotStrategy"];
export type Card = S["Card"];
export type CardFace = S["CardFace"];
export type Command = S["Command"];
export type CreateGame = S["CreateGame"];
export type CreatePad = S["CreatePad"];
export type Deal = S["Deal"];
export type EndCondition = S["EndCondition"];
/**
 * An event as the caller may see it: `{seq, at}` beside the discriminated `Event`
 * (`type` + typed `data`). Spelled out here because openapi-typescript reads the schema's
 * `allOf` with a discriminated `$ref` as inheritance and would give `type: "EventItem"`.
 */
export type EventItem = { seq: number; at: string } & S["Event"];
export type EventType = EventItem["type"];
/** A page of events, with `items` typed as `EventItem`. */
export interface EventPage {
  items: EventItem[];
  next_cursor?: string | null;
}
export type GameBody = S["GameBody"];
export type GameSummary = S["GameSummary"];
export type GameView = S["GameView"];
export type HandScoreBody = S["HandScoreBody"];
export type InvitePreview = S["InvitePreview"];
export type OptionsInput = S["OptionsInput"];
export type PadBody = S["PadBody"];
export type Preset = S["Preset"];
export type Problem = S["Problem"];
export type Ruleset = S["Ruleset"];
export type RulesetInfo = S["RulesetInfo"];
export type SeatView = S["SeatView"];
export type TableView = S["TableView"];
export type YouView = S["YouView"];

/** An answer that is not a 2xx, or no answer at all (`status` 0, `code` `network`). */
export class ApiError extends Error {
  readonly status: number;
  /** The problem's stable `code` (`not_your_turn`, …), `network`, or `http_<status>`. */
  readonly code: string;
  readonly problem: Problem | null;

  constructor(status: number, code: string, message: string, problem: Problem | null = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.problem = problem;
  }
}

function isProblem(v: unknown): v is Problem {
  return typeof v === "object" && v !== null && typeof (v as Problem).code === "string";
}

/** Options of `createApi`. */
export interface ApiOptions {
  /** Where the API lives, e.g. `https://api.example.org`; `""` for the page's own origin. */
  baseUrl?: string;
  /** The current bearer token, read before every request (`null`: send none). */
  token?: () => string | null;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

/** A typed client: `api.GET("/v1/games/{id}", { params: { path: { id } } })`. */
export function createApi(options: ApiOptions = {}) {
  const client = createClient<paths>({
    baseUrl: options.baseUrl ?? "",
    fetch: options.fetch ?? ((req: Request) => globalThis.fetch(req)),
  });
  client.use({
    onRequest({ request }) {
      const token = options.token?.();
      if (token && !request.headers.has("Authorization")) {
        request.headers.set("Authorization", `Bearer ${token}`);
      }
      return request;
    },
  });
  return client;
}

export type Api = ReturnType<typeof createApi>;

/**
 * Awaits an openapi-fetch call and returns its data, or throws an `ApiError` carrying the
 * problem's `code` (also for a network failure, as `code: "network"`).
 */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (e) {
    throw new ApiError(0, "network", e instanceof Error ? e.message : String(e));
  }
  const { data, error, response } = result;
  if (response.ok) {
    return data as T;
  }
  if (isProblem(error)) {
    throw new ApiError(response.status, error.code, error.detail || error.title, error);
  }
  throw new ApiError(response.status, `http_${response.status}`, response.statusText);
}

/** The URL of a game's live stream for `EventSource`, authorised by a stream ticket. */
export function streamUrl(baseUrl: string, gameId: string, ticket: string, after?: number): string {
  const q = new URLSearchParams({ ticket });
  if (after !== undefined) q.set("after", String(after));
  return `${baseUrl}/v1/games/${encodeURIComponent(gameId)}/stream?${q.toString()}`;
}

/**
 * Every event of a game after `after` that the caller may read, following the pages
 * (`GET /v1/games/{id}/events`).
 */
export async function listEvents(api: Api, id: string, after = 0): Promise<EventItem[]> {
  const out: EventItem[] = [];
  let from = after;
  for (;;) {
    const page = (await unwrap(
      api.GET("/v1/games/{id}/events", { params: { path: { id }, query: { after: from, limit: 500 } } }),
    )) as unknown as EventPage;
    out.push(...page.items);
    const last = page.items[page.items.length - 1];
    if (!page.next_cursor || !last) return out;
    from = last.seq;
  }
}
