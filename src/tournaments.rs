//! Tournaments (Swiss and duplicate): a tournament is an aggregate with its own event
//! stream (`rules::tournament`), stored like a game's (`store::tournaments`). This module
//! holds the use cases people start (create, join, leave, the reads); `flow` holds how a
//! tournament moves on (the host's start, the worker's step, the rebuild). See
//! docs/tournaments.md.

mod flow;

use rules::tournament::{
    Format, StandingRow, Standings, TableEnd, Tournament, TournamentInput, TournamentSetup,
    TournamentStatus,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::games::ServiceError;
use crate::store::{Store, TournamentListFilter, TournamentRow, Tx};
use flow::{append, load, status_text};

/// The tournament use cases. Clones share the store, the games and the clock.
#[derive(Clone)]
pub struct Tournaments {
    pub(crate) store: Store,
    pub(crate) games: crate::games::Service,
    pub(crate) clock: crate::clock::Clock,
}

/// A person as tournament reads show them.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentPerson {
    /// Account id.
    pub id: String,
    /// Current display name (`deleted player` once the account is gone).
    pub name: String,
}

/// A seat of a tournament table.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentSeat {
    /// 0-based; in duplicate also the hand (every table of a round deals seat `n` the same).
    pub seat: u8,
    /// The person, or `null` for a bot.
    #[schema(required = true)]
    pub player: Option<TournamentPerson>,
    /// Place at the table once finished (1 = best), else `null`.
    #[schema(required = true)]
    pub place: Option<u8>,
    /// Game total once finished, else `null`.
    #[schema(required = true)]
    pub total: Option<i32>,
}

/// A table of a round.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentTable {
    /// 1-based.
    pub table: u16,
    /// The table's game (`/v1/games/{game}`).
    pub game: String,
    /// Its result is recorded.
    pub finished: bool,
    /// `finished` (by the rules) or `round_deadline` (played out by bots at the round's
    /// deadline); `null` while it plays.
    #[schema(required = true)]
    pub end: Option<TableEnd>,
    /// Seats in order.
    pub seats: Vec<TournamentSeat>,
}

/// A round.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentRound {
    /// 1-based.
    pub round: u8,
    /// `running` or `finished`.
    pub status: String,
    /// When the round ends at the latest (RFC 3339).
    #[schema(format = DateTime)]
    pub deadline: String,
    /// Duplicate: hex SHA-256 of the seed every table of the round deals from.
    #[schema(required = true)]
    pub commitment: Option<String>,
    /// Duplicate: the seed, once the round ended.
    #[schema(required = true)]
    pub seed: Option<String>,
    /// Its tables.
    pub tables: Vec<TournamentTable>,
}

/// Where the caller plays now.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentNextTable {
    /// The round.
    pub round: u8,
    /// The table.
    pub table: u16,
    /// Its game (`/v1/games/{game}`).
    pub game: String,
}

/// A tournament as the caller may see it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentView {
    /// Id (a UUID).
    pub id: String,
    /// Name.
    pub name: String,
    /// The game played at the tables.
    pub ruleset: rules::Ruleset,
    /// 6-nimmt: the preset given, else `null`.
    #[schema(required = true)]
    pub preset: Option<rules::Preset>,
    /// The tables' options (duplicate: `end` is `{"rounds": deals_per_round}`).
    pub options: rules::OptionsView,
    /// `swiss` or `duplicate`.
    pub format: Format,
    /// Number of rounds.
    pub rounds: u8,
    /// Seats per table.
    pub table_size: u8,
    /// Deals every table plays per round (1 for Swiss).
    pub deals_per_round: u16,
    /// The tables' clocks.
    pub time_control: rules::TimeControl,
    /// The most a round lasts (seconds).
    pub round_seconds: u32,
    /// When it starts by itself (RFC 3339), or `null`: when full or when the host starts it.
    #[schema(required = true, format = DateTime)]
    pub starts_at: Option<String>,
    /// The most people it takes.
    pub max_players: u16,
    /// Listed for everyone.
    pub public: bool,
    /// `open` (taking people), `running`, `finished` or `cancelled`.
    pub status: TournamentStatus,
    /// Why it was cancelled, else `null`.
    #[schema(required = true)]
    pub cancelled: Option<String>,
    /// Who created it.
    pub host: TournamentPerson,
    /// Who joined, in order.
    pub players: Vec<TournamentPerson>,
    /// A private tournament's code, shown to its host and players only.
    #[schema(required = true)]
    pub invite_code: Option<String>,
    /// The caller joined.
    pub joined: bool,
    /// The running or last round (0 before the start).
    pub current_round: u8,
    /// The caller's table in the running round while it plays there, else `null`.
    #[schema(required = true)]
    pub your_next_table: Option<TournamentNextTable>,
    /// The rounds so far.
    pub round_list: Vec<TournamentRound>,
    /// Number of events in its stream (also the `ETag`).
    pub version: i32,
    /// When it was created (RFC 3339).
    #[schema(format = DateTime)]
    pub created_at: String,
}

/// A tournament in a list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentSummary {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// The game played.
    pub ruleset: String,
    /// `swiss` or `duplicate`.
    pub format: String,
    /// Number of rounds.
    pub rounds: u8,
    /// Seats per table.
    pub table_size: u8,
    /// `open`, `running`, `finished` or `cancelled`.
    pub status: String,
    /// Listed for everyone.
    pub public: bool,
    /// People joined.
    pub players: i32,
    /// The most it takes.
    pub max_players: i32,
    /// When it starts by itself, or `null`.
    #[schema(required = true, format = DateTime)]
    pub starts_at: Option<String>,
    /// The running or last round.
    pub current_round: i32,
    /// The caller joined.
    pub joined: bool,
}

/// A page of tournaments.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentPage {
    /// Newest first.
    pub items: Vec<TournamentSummary>,
    /// Pass as `cursor` for the next page; `null` at the end.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

/// The list's filters (checked by the handler).
pub struct TournamentListQuery {
    /// `upcoming`, `running` or `finished`; all when `None`.
    pub status: Option<String>,
    /// Only the caller's.
    pub mine: bool,
    /// The previous page's `next_cursor`.
    pub cursor: Option<String>,
    /// Page size.
    pub limit: i64,
}

/// One standing with the person's name.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentStandingRow {
    /// The standing.
    #[serde(flatten)]
    pub row: StandingRow,
    /// The person's current display name.
    pub name: String,
}

/// Standings with names.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentStandings {
    /// Finished rounds counted.
    pub after_round: u8,
    /// Best first.
    pub rows: Vec<TournamentStandingRow>,
}

/// An event of a tournament's stream: `seq`, `recorded_at` and the event's `type` and
/// `data`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentEventItem {
    /// Position in the tournament's stream, from 1.
    pub seq: i32,
    /// Event type (see `TournamentEvent`).
    #[serde(rename = "type")]
    pub type_: String,
    /// Its payload.
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
    /// When it was appended (RFC 3339).
    #[schema(format = DateTime)]
    pub recorded_at: String,
}

/// A page of a tournament's stream.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentEventPage {
    /// In order.
    pub items: Vec<TournamentEventItem>,
}

/// An event of the analysts' tournament feed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentFeedItem {
    /// Global position (commit order): pass the last one as `after`.
    pub position: i64,
    /// The tournament.
    pub tournament_id: String,
    /// Position in its stream.
    pub seq: i32,
    /// Event type (see `TournamentEvent`).
    #[serde(rename = "type")]
    pub type_: String,
    /// Its payload.
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
    /// When it was appended (RFC 3339).
    #[schema(format = DateTime)]
    pub recorded_at: String,
}

/// A page of the analysts' tournament feed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TournamentFeedPage {
    /// In commit order.
    pub items: Vec<TournamentFeedItem>,
    /// The last item's position (pass as `after`), `null` when the page is empty.
    #[schema(required = true)]
    pub next: Option<i64>,
}

fn rfc3339(at: chrono::NaiveDateTime) -> String {
    at.and_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The current names of `ids`, in one statement (`Tx::account_names`, as games read their
/// seats' names); an id without an account reads as a deleted player.
struct Names(std::collections::HashMap<String, String>);

impl Names {
    fn of<'a>(
        tx: &mut Tx<'_>,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, ServiceError> {
        let mut ids: Vec<&str> = ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        Ok(Self(tx.account_names(&ids)?.into_iter().collect()))
    }

    fn name(&self, id: &str) -> String {
        self.0
            .get(id)
            .cloned()
            .unwrap_or_else(|| crate::store::DELETED_NAME.to_owned())
    }

    fn person(&self, id: &str) -> TournamentPerson {
        TournamentPerson {
            id: id.to_owned(),
            name: self.name(id),
        }
    }
}

/// The part of a stored aggregate a list line shows.
#[derive(Deserialize)]
struct Brief {
    setup: BriefSetup,
    players: Vec<String>,
}

#[derive(Deserialize)]
struct BriefSetup {
    rounds: u8,
    table_size: u8,
}

/// Whether `account` may see the tournament: it is public, or the caller hosts or joined
/// it, or gives its code.
fn admits(row: &TournamentRow, state: &Tournament, account: &str, code: Option<&str>) -> bool {
    row.public
        || row.host_account == account
        || state.players.iter().any(|p| p == account)
        || code.is_some_and(|c| row.invite_code.as_deref() == Some(c))
}

/// Loads a tournament the caller may see; to anyone else it does not exist.
fn visible(
    tx: &mut Tx<'_>,
    id: &str,
    account: &str,
    code: Option<&str>,
) -> Result<(TournamentRow, Tournament), ServiceError> {
    let (row, state) = load(tx, id)?;
    if !admits(&row, &state, account, code) {
        return Err(ServiceError::TournamentNotFound);
    }
    Ok((row, state))
}

impl Tournaments {
    /// The tournaments of `store`, creating their tables' games through `games`.
    #[must_use]
    pub fn new(store: Store, games: crate::games::Service, clock: crate::clock::Clock) -> Self {
        Self {
            store,
            games,
            clock,
        }
    }

    /// Creates a tournament; the caller is its host (and joins like anyone).
    ///
    /// # Errors
    /// An invalid set-up, the games-per-hour limit, storage failure.
    pub fn create(
        &self,
        account: &str,
        input: TournamentInput,
    ) -> Result<TournamentView, ServiceError> {
        let setup = TournamentSetup::from_input(input, self.clock.now())?;
        self.games.count_new_tournament(account)?;
        let events = Tournament::create(setup, account);
        let state = Tournament::from_events(&events).ok_or(ServiceError::TournamentNotFound)?;
        let id = uuid::Uuid::now_v7().to_string();
        let now = self.clock.naive();
        let encoded = events
            .iter()
            .map(flow::encode)
            .collect::<Result<Vec<_>, _>>()?;
        let row = TournamentRow {
            id: id.clone(),
            name: state.setup.name.clone(),
            format: match state.setup.format {
                Format::Swiss => "swiss".into(),
                Format::Duplicate => "duplicate".into(),
            },
            ruleset: state.setup.game.ruleset.name().to_owned(),
            status: status_text(state.status).to_owned(),
            public: state.setup.public,
            host_account: account.to_owned(),
            invite_code: (!state.setup.public).then(crate::games::new_invite_code),
            version: i32::try_from(events.len()).unwrap_or(i32::MAX),
            players: 0,
            max_players: i32::from(state.setup.max_players),
            starts_at: state.setup.starts_at.map(|t| t.naive_utc()),
            current_round: 0,
            state: crate::store::json::JsonValue(
                serde_json::to_value(&state).map_err(ServiceError::Encode)?,
            ),
            created_at: now,
            updated_at: now,
        };
        self.store.write(|tx| {
            tx.create_tournament(&row, &encoded)
                .map_err(ServiceError::from)
        })?;
        self.view(&id, account, None)
    }

    /// A tournament as the caller sees it.
    ///
    /// # Errors
    /// Unknown or invisible tournament, storage failure.
    pub fn view(
        &self,
        id: &str,
        account: &str,
        code: Option<&str>,
    ) -> Result<TournamentView, ServiceError> {
        self.store.read(|tx| {
            let (row, state) = visible(tx, id, account, code)?;
            render(tx, &row, &state, account)
        })
    }

    /// The tournaments the caller may see, newest first.
    ///
    /// # Errors
    /// A bad cursor, storage failure.
    pub fn list(
        &self,
        account: &str,
        q: &TournamentListQuery,
    ) -> Result<TournamentPage, ServiceError> {
        let statuses: &[&str] = match q.status.as_deref() {
            Some("upcoming") => &["open"],
            Some("running") => &["running"],
            Some("finished") => &["finished", "cancelled"],
            _ => &[],
        };
        let before = match q.cursor.as_deref() {
            Some(c) => Some(
                crate::ids::TournamentId::parse(c)
                    .ok_or(ServiceError::InvalidCursor)?
                    .as_str()
                    .to_owned(),
            ),
            None => None,
        };
        let rows = self.store.read(|tx| {
            tx.list_tournaments(&TournamentListFilter {
                account,
                statuses,
                mine: q.mine,
                before_id: before.as_deref(),
                limit: q.limit,
            })
            .map_err(ServiceError::from)
        })?;
        let full = i64::try_from(rows.len()).unwrap_or(i64::MAX) == q.limit;
        let next_cursor = rows.last().filter(|_| full).map(|r| r.id.clone());
        let items = rows
            .into_iter()
            .map(|row| {
                // Only what a list line shows, not the whole aggregate with its rounds.
                let brief = Brief::deserialize(&row.state.0).ok();
                let joined = brief
                    .as_ref()
                    .is_some_and(|b| b.players.iter().any(|p| p == account));
                let (rounds, table_size) = brief
                    .as_ref()
                    .map_or((0, 0), |b| (b.setup.rounds, b.setup.table_size));
                TournamentSummary {
                    id: row.id,
                    name: row.name,
                    ruleset: row.ruleset,
                    format: row.format,
                    rounds,
                    table_size,
                    status: row.status,
                    public: row.public,
                    players: row.players,
                    max_players: row.max_players,
                    starts_at: row.starts_at.map(rfc3339),
                    current_round: row.current_round,
                    joined,
                }
            })
            .collect();
        Ok(TournamentPage { items, next_cursor })
    }

    /// Joins a tournament that is still open (a private one with its code).
    ///
    /// # Errors
    /// Unknown or invisible tournament, not open, joined already, full, storage failure.
    pub fn join(
        &self,
        id: &str,
        account: &str,
        code: Option<&str>,
    ) -> Result<TournamentView, ServiceError> {
        self.games.count_tournament_command(account)?;
        flow::retried(self, |tx| {
            let (row, mut state) = visible(tx, id, account, code)?;
            let events = state.join(account)?;
            tx.add_tournament_player(id, account)?;
            append(tx, &row, &mut state, &events)?;
            Ok(())
        })?;
        self.view(id, account, code)
    }

    /// Leaves a tournament before it starts.
    ///
    /// # Errors
    /// Unknown or invisible tournament, not open, not joined, storage failure.
    pub fn leave(&self, id: &str, account: &str) -> Result<TournamentView, ServiceError> {
        self.games.count_tournament_command(account)?;
        flow::retried(self, |tx| {
            let (row, mut state) = visible(tx, id, account, None)?;
            let events = state.leave(account)?;
            tx.remove_tournament_player(id, account)?;
            append(tx, &row, &mut state, &events)?;
            Ok(())
        })?;
        self.view(id, account, None)
    }

    /// Standings after `after_round` finished rounds (default: all so far), with names.
    ///
    /// # Errors
    /// Unknown or invisible tournament, a round beyond the tournament's, storage failure.
    pub fn standings(
        &self,
        id: &str,
        account: &str,
        code: Option<&str>,
        after_round: Option<u8>,
    ) -> Result<TournamentStandings, ServiceError> {
        self.store.read(|tx| {
            let (_, state) = visible(tx, id, account, code)?;
            if after_round.is_some_and(|r| r > state.setup.rounds) {
                return Err(ServiceError::Rule(rules::RuleError::InvalidTournament(
                    format!(
                        "after_round must be at most the tournament's {} rounds",
                        state.setup.rounds
                    ),
                )));
            }
            let Standings { after_round, rows } = state.standings(after_round);
            let names = Names::of(tx, rows.iter().map(|r| r.account.as_str()))?;
            let rows = rows
                .into_iter()
                .map(|row| TournamentStandingRow {
                    name: names.name(&row.account),
                    row,
                })
                .collect();
            Ok(TournamentStandings { after_round, rows })
        })
    }

    /// A tournament's events after `after` (its own `seq`).
    ///
    /// # Errors
    /// Unknown or invisible tournament, storage failure.
    pub fn events(
        &self,
        id: &str,
        account: &str,
        code: Option<&str>,
        after: i32,
        limit: i64,
    ) -> Result<TournamentEventPage, ServiceError> {
        self.store.read(|tx| {
            visible(tx, id, account, code)?;
            let items = tx
                .tournament_events(id, after)?
                .into_iter()
                .take(usize::try_from(limit).unwrap_or(usize::MAX))
                .map(|e| TournamentEventItem {
                    seq: e.seq,
                    type_: e.event_type,
                    data: e.data.0,
                    recorded_at: rfc3339(e.recorded_at),
                })
                .collect();
            Ok(TournamentEventPage { items })
        })
    }

    /// Every tournament's events after global position `after`, in commit order (the
    /// analysts' feed; the caller's role is the handler's to check).
    ///
    /// # Errors
    /// Storage failure.
    pub fn feed(&self, after: i64, limit: i64) -> Result<TournamentFeedPage, ServiceError> {
        let rows = self
            .store
            .read(|tx| tx.tournament_feed(after, limit).map_err(ServiceError::from))?;
        let next = rows.last().map(|e| e.position);
        let items = rows
            .into_iter()
            .map(|e| TournamentFeedItem {
                position: e.position,
                type_: e.event_type,
                data: e.data.0,
                tournament_id: e.tournament_id,
                seq: e.seq,
                recorded_at: rfc3339(e.recorded_at),
            })
            .collect();
        Ok(TournamentFeedPage { items, next })
    }
}

/// The view of a tournament for `account`.
fn render(
    tx: &mut Tx<'_>,
    row: &TournamentRow,
    state: &Tournament,
    account: &str,
) -> Result<TournamentView, ServiceError> {
    let seated = state
        .rounds
        .iter()
        .flat_map(|r| r.tables.iter())
        .flat_map(|t| t.seats.iter().flatten());
    let names = Names::of(
        tx,
        state
            .players
            .iter()
            .chain(seated)
            .chain(std::iter::once(&state.host))
            .map(String::as_str),
    )?;
    let joined = state.players.iter().any(|p| p == account);
    let players = state.players.iter().map(|p| names.person(p)).collect();
    let host = names.person(&state.host);
    let mut round_list = Vec::with_capacity(state.rounds.len());
    for round in &state.rounds {
        let mut tables = Vec::with_capacity(round.tables.len());
        for table in &round.tables {
            let finished = round.finished.get(&table.table);
            let mut seats = Vec::with_capacity(table.seats.len());
            for (i, seat) in table.seats.iter().enumerate() {
                let seat_no = u8::try_from(i).unwrap_or(u8::MAX);
                let result =
                    finished.and_then(|(_, results)| results.iter().find(|r| r.seat == seat_no));
                seats.push(TournamentSeat {
                    seat: seat_no,
                    player: seat.as_deref().map(|a| names.person(a)),
                    place: result.map(|r| r.place),
                    total: result.map(|r| r.total),
                });
            }
            tables.push(TournamentTable {
                table: table.table,
                game: table.game.clone(),
                finished: finished.is_some(),
                end: finished.map(|(end, _)| *end),
                seats,
            });
        }
        round_list.push(TournamentRound {
            round: round.round,
            status: if round.done { "finished" } else { "running" }.into(),
            deadline: round
                .deadline
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            commitment: round.commitment.clone(),
            seed: round.seed.clone(),
            tables,
        });
    }
    let insider = row.host_account == account || joined;
    Ok(TournamentView {
        id: row.id.clone(),
        name: state.setup.name.clone(),
        ruleset: state.setup.game.ruleset,
        preset: state.setup.preset,
        options: state.setup.game.options.view(state.setup.game.ruleset),
        format: state.setup.format,
        rounds: state.setup.rounds,
        table_size: state.setup.table_size,
        deals_per_round: state.setup.deals_per_round,
        time_control: state.setup.time_control,
        round_seconds: state.setup.round_seconds,
        starts_at: state
            .setup
            .starts_at
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        max_players: state.setup.max_players,
        public: row.public,
        status: state.status,
        cancelled: state.cancelled.clone(),
        host,
        players,
        invite_code: row.invite_code.clone().filter(|_| insider),
        joined,
        current_round: state.rounds.last().map_or(0, |r| r.round),
        your_next_table: state
            .next_table(account)
            .map(|(round, t)| TournamentNextTable {
                round,
                table: t.table,
                game: t.game.clone(),
            }),
        round_list,
        version: row.version,
        created_at: rfc3339(row.created_at),
    })
}
