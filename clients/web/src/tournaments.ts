// Tournaments (issue 29): their shapes as the API serves them and the calls the pages make.
// The shapes follow the issue's contract (docs/api.md, "Tournaments"); the calls go through
// the typed client's token and language like every other call, and a problem+json answer
// becomes an `ApiError` with its `code`, so `errorText` words it.
import { ApiError, type Problem } from "../../typescript/src/index.ts";
import { apiBase, session, signOut } from "./api";
import type { TimeControl } from "./clocks";
import { lang, t } from "./i18n";

export type Format = "swiss" | "duplicate";
export type TournamentStatus = "open" | "running" | "finished" | "cancelled";
export type TableEnd = "finished" | "round_deadline";

export interface Person {
  id: string;
  name: string;
}

export interface TableSeat {
  seat: number;
  /** `null`: a bot. */
  player: Person | null;
  place: number | null;
  total: number | null;
}

export interface RoundTable {
  table: number;
  game: string;
  finished: boolean;
  end: TableEnd | null;
  seats: TableSeat[];
}

export interface Round {
  round: number;
  status: "running" | "finished";
  deadline: string;
  commitment: string | null;
  seed: string | null;
  tables: RoundTable[];
}

export interface Tournament {
  id: string;
  name: string;
  ruleset: string;
  preset: string | null;
  options: Record<string, unknown>;
  format: Format;
  rounds: number;
  table_size: number;
  deals_per_round: number;
  time_control: TimeControl;
  round_seconds: number;
  starts_at: string | null;
  max_players: number;
  public: boolean;
  status: TournamentStatus;
  host: Person;
  players: Person[];
  invite_code: string | null;
  joined: boolean;
  current_round: number;
  your_next_table: { round: number; table: number; game: string } | null;
  round_list: Round[];
  version: number;
  created_at: string;
}

export interface TournamentSummary {
  id: string;
  name: string;
  ruleset: string;
  format: Format;
  rounds: number;
  table_size: number;
  status: TournamentStatus;
  public: boolean;
  players: number;
  max_players: number;
  starts_at: string | null;
  current_round: number;
  joined: boolean;
}

export interface OtherHolder {
  table: number;
  account: string | null;
  score: number;
}

export interface DealComparison {
  round: number;
  deal: number;
  number: number;
  hand: number;
  table: number;
  score: number;
  others: OtherHolder[];
  matchpoints: number;
}

export interface StandingTable {
  round: number;
  table: number;
  game: string;
  seat: number;
  place: number;
  total: number;
  points: number;
  end: TableEnd;
}

export interface StandingRow {
  rank: number;
  account: string;
  name: string;
  points: number;
  tiebreak: number;
  total: number;
  tables: StandingTable[];
  deals: DealComparison[];
}

export interface Standings {
  after_round: number;
  rows: StandingRow[];
}

export interface TournamentInput {
  name: string;
  ruleset: string;
  preset?: string;
  options?: Record<string, unknown>;
  format: Format;
  rounds: number;
  table_size: number;
  deals_per_round?: number;
  time_control: TimeControl;
  starts_at?: string;
  max_players?: number;
  public?: boolean;
}

/** One call to the API with the session's token and the page's language. */
async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const token = session.get()?.token ?? null;
  const headers: Record<string, string> = { "Accept-Language": lang.get(), Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(apiBase + path, { method, headers, body: body === undefined ? null : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, "network", e instanceof Error ? e.message : String(e));
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (res.ok) return json as T;
  if (res.status === 401 && token && session.get()?.token === token) signOut(t("sessionExpired"));
  const p = json as Problem | null;
  if (p && typeof p.code === "string") throw new ApiError(res.status, p.code, p.detail || p.title, p);
  throw new ApiError(res.status, `http_${res.status}`, res.statusText);
}

const enc = encodeURIComponent;

export type ListFilter = "upcoming" | "running" | "finished" | "mine";

/** `GET /v1/tournaments` with one of the list's filters. */
export function listTournaments(filter: ListFilter): Promise<{ items: TournamentSummary[]; next_cursor?: string | null }> {
  const q = filter === "mine" ? "mine=true" : `status=${filter}`;
  return call("GET", `/v1/tournaments?${q}`);
}

export function getTournament(id: string, code: string | null): Promise<Tournament> {
  return call("GET", `/v1/tournaments/${enc(id)}${code ? `?invite_code=${enc(code)}` : ""}`);
}

export function createTournament(input: TournamentInput): Promise<Tournament> {
  return call("POST", "/v1/tournaments", input);
}

export function joinTournament(id: string, code: string | null): Promise<Tournament> {
  return call("POST", `/v1/tournaments/${enc(id)}/join`, code ? { invite_code: code } : {});
}

export function leaveTournament(id: string): Promise<Tournament> {
  return call("POST", `/v1/tournaments/${enc(id)}/leave`, {});
}

export function startTournament(id: string): Promise<Tournament> {
  return call("POST", `/v1/tournaments/${enc(id)}/start`, {});
}

export function getStandings(id: string, afterRound: number | null, code: string | null): Promise<Standings> {
  const q = [afterRound !== null ? `after_round=${afterRound}` : "", code ? `invite_code=${enc(code)}` : ""].filter(Boolean).join("&");
  return call("GET", `/v1/tournaments/${enc(id)}/standings${q ? `?${q}` : ""}`);
}

/** The absolute invite link of a private tournament. */
export function tournamentInviteLink(id: string, code: string): string {
  return `${location.origin}${location.pathname}#/tournaments/${enc(id)}?code=${enc(code)}`;
}

/** The game view's link to its tournament, if it is a tournament table. */
export function tournamentOf(v: unknown): { tournament: string; round: number; table: number } | null {
  const link = (v as { tournament?: { tournament: string; round: number; table: number } | null } | null)?.tournament;
  return link && typeof link.tournament === "string" ? link : null;
}
