//! How a tournament moves on: the host's early start, and the worker step every replica
//! runs ([`Tournaments::advance_due`]) that starts tournaments, seats rounds (one game per
//! table, created and started in the transaction that records the round), records finished
//! tables, plays out the tables of a round whose deadline passed, reveals a round's seeds
//! and ends the tournament. What is due is the aggregate's to say
//! ([`rules::tournament::Tournament::due`]); each step is one transaction with a
//! compare-and-set on the tournament's version, so replicas that look at once do it once.
//! Also the helpers every tournament write goes through: [`load`] and [`append`].

use rules::tournament::{Due, TableEnd, Tournament, TournamentEvent, TournamentStatus};

use super::Tournaments;
use crate::games::{ServiceError, TableSpec};
use crate::store::{NewTournamentEvent, StoreError, TournamentRow, TournamentUpdate, Tx};

/// Tries of a write that lost its compare-and-set to another replica's.
const MAX_ATTEMPTS: u32 = 16;

/// Steps one tournament may take in one look of the worker (a finished round, the next
/// one seated, …): bounded, the next look goes on.
const STEPS_PER_LOOK: usize = 8;
/// Tournaments one look of the worker takes up.
const TOURNAMENTS_PER_LOOK: i64 = 50;

/// The index row's status for an aggregate's.
#[must_use]
pub(crate) fn status_text(status: TournamentStatus) -> &'static str {
    match status {
        TournamentStatus::Open => "open",
        TournamentStatus::Running => "running",
        TournamentStatus::Finished => "finished",
        TournamentStatus::Cancelled => "cancelled",
    }
}

/// A stored tournament event in the rules' type.
///
/// # Errors
/// A payload that does not decode.
pub(crate) fn decode(
    event_type: &str,
    data: &serde_json::Value,
) -> Result<TournamentEvent, ServiceError> {
    serde_json::from_value(serde_json::json!({"type": event_type, "data": data}))
        .map_err(ServiceError::Encode)
}

pub(crate) fn encode(event: &TournamentEvent) -> Result<NewTournamentEvent, ServiceError> {
    let mut value = serde_json::to_value(event).map_err(ServiceError::Encode)?;
    let data = value
        .get_mut("data")
        .map(serde_json::Value::take)
        .unwrap_or_else(|| serde_json::json!({}));
    Ok(NewTournamentEvent {
        event_type: event.kind().to_owned(),
        schema_version: 1,
        data,
    })
}

fn update_of(state: &Tournament) -> Result<TournamentUpdate, ServiceError> {
    Ok(TournamentUpdate {
        status: status_text(state.status).to_owned(),
        players: i32::try_from(state.players.len()).unwrap_or(i32::MAX),
        current_round: state.rounds.last().map_or(0, |r| i32::from(r.round)),
        state: serde_json::to_value(state).map_err(ServiceError::Encode)?,
    })
}

/// A tournament's index row and its folded state (the live projection kept in the row).
///
/// # Errors
/// No such tournament (`TournamentNotFound`), an unreadable state, storage failure.
pub(crate) fn load(tx: &mut Tx<'_>, id: &str) -> Result<(TournamentRow, Tournament), ServiceError> {
    let row = tx.tournament(id)?.ok_or(ServiceError::TournamentNotFound)?;
    let state: Tournament =
        serde_json::from_value(row.state.0.clone()).map_err(ServiceError::Encode)?;
    Ok((row, state))
}

/// Applies `events` to `state` and appends them with the new state, if the tournament is
/// still at the row's version (else `Store(Conflict)`: decide again). Returns the new
/// version.
///
/// # Errors
/// Conflict, encoding or storage failure.
pub(crate) fn append(
    tx: &mut Tx<'_>,
    row: &TournamentRow,
    state: &mut Tournament,
    events: &[TournamentEvent],
) -> Result<i32, ServiceError> {
    events.iter().for_each(|e| state.apply(e));
    let encoded = events.iter().map(encode).collect::<Result<Vec<_>, _>>()?;
    tx.append_tournament(&row.id, row.version, &encoded, &update_of(state)?)?;
    Ok(row.version + i32::try_from(events.len()).unwrap_or(i32::MAX))
}

/// Runs `attempt` in a write transaction, again after a lost compare-and-set.
pub(crate) fn retried<T>(
    t: &Tournaments,
    mut attempt: impl FnMut(&mut Tx<'_>) -> Result<T, ServiceError>,
) -> Result<T, ServiceError> {
    for _ in 0..MAX_ATTEMPTS {
        match t.store.write(&mut attempt) {
            Err(ServiceError::Store(StoreError::Conflict)) => {}
            other => return other,
        }
    }
    Err(crate::contention::Contention::Busy.into())
}

impl Tournaments {
    /// The host starts the tournament now: round 1 is seated and its games begin.
    ///
    /// # Errors
    /// Unknown or invisible tournament, not the host, not open, fewer than two people,
    /// storage failure.
    pub fn start(&self, id: &str, account: &str) -> Result<super::TournamentView, ServiceError> {
        self.games.count_tournament_command(account)?;
        retried(self, |tx| {
            let (row, state) = super::visible(tx, id, account, None)?;
            let seating = state.start_early(account)?;
            self.seat_round(tx, row, state, 1, seating)
        })?;
        self.view(id, account, None)
    }

    /// The worker's step: every tournament that has something due moves on (bounded per
    /// look). Returns the steps taken. A tournament that fails is logged and left for the
    /// next look.
    ///
    /// # Errors
    /// Storage failure while listing them.
    pub fn advance_due(&self) -> Result<usize, ServiceError> {
        let now = self.clock.naive();
        let due = self.store.read(|tx| {
            tx.due_tournaments(now, TOURNAMENTS_PER_LOOK)
                .map_err(ServiceError::from)
        })?;
        let mut steps = 0;
        for id in due {
            for _ in 0..STEPS_PER_LOOK {
                match self.step(&id) {
                    Ok(true) => steps += 1,
                    Ok(false) => break,
                    Err(e) => {
                        tracing::warn!(tournament = id, error = %crate::telemetry::Chain(&e), "could not advance a tournament");
                        break;
                    }
                }
            }
        }
        Ok(steps)
    }

    /// One step of one tournament, if one is due. Whether something was done.
    fn step(&self, id: &str) -> Result<bool, ServiceError> {
        let now = self.clock.now();
        let (read, state) = self.store.read(|tx| load(tx, id))?;
        match state.due(now) {
            Due::Nothing => Ok(false),
            Due::Cancel(reason) => retried(self, |tx| {
                let (row, mut state) = load(tx, id)?;
                if !matches!(state.due(now), Due::Cancel(_)) {
                    return Ok(false);
                }
                let event = TournamentEvent::TournamentCancelled {
                    reason: reason.clone(),
                };
                append(tx, &row, &mut state, &[event])?;
                Ok(true)
            }),
            Due::StartRound { round, seating } => retried(self, |tx| {
                let (row, state) = load(tx, id)?;
                // The seating read above holds while nothing was appended since (a
                // large field's seating is a bounded search worth doing once).
                let seating = if row.version == read.version {
                    seating.clone()
                } else {
                    match state.due(now) {
                        Due::StartRound { round: r, seating } if r == round => seating,
                        _ => return Ok(false),
                    }
                };
                self.seat_round(tx, row, state, round, seating)?;
                Ok(true)
            }),
            Due::CheckTables {
                round,
                games,
                deadline_passed,
            } => {
                if deadline_passed {
                    for game in &games {
                        self.games.hand_all_to_bots(game)?;
                    }
                }
                self.record_tables(id, round, &games, deadline_passed)
            }
            Due::FinishRound { round } => self.finish_round(id, round),
        }
    }

    /// Seats round `round`: one game per table, created and started, and `round_started`,
    /// all in `tx`. A duplicate round's tables share one fresh seed.
    fn seat_round(
        &self,
        tx: &mut Tx<'_>,
        row: TournamentRow,
        mut state: Tournament,
        round: u8,
        seating: Vec<Vec<Option<String>>>,
    ) -> Result<(), ServiceError> {
        let duplicate = state.setup.format == rules::tournament::Format::Duplicate;
        let seed = duplicate.then(crate::fairness::new_seed);
        let commitment = seed.as_deref().map(crate::fairness::commitment);
        let short: String = state.setup.name.chars().take(48).collect();
        let names = super::Names::of(tx, seating.iter().flatten().flatten().map(String::as_str))?;
        let mut games = Vec::with_capacity(seating.len());
        for (i, table) in seating.iter().enumerate() {
            let seats: Vec<Option<(String, String)>> = table
                .iter()
                .map(|seat| seat.as_ref().map(|a| (a.clone(), names.name(a))))
                .collect();
            let number = u16::try_from(i + 1).unwrap_or(u16::MAX);
            let spec = TableSpec {
                link: rules::TournamentLink {
                    tournament: row.id.clone(),
                    round,
                    table: number,
                },
                setup: state.setup.game.clone(),
                name: format!("{short} · R{round} T{number}"),
                seats: &seats,
                time_control: state.setup.time_control,
                seed: seed.clone(),
                public: row.public,
            };
            let (game, _) = self.games.open_table(tx, &spec)?;
            games.push(game);
        }
        let event = state.round_started(round, seating, games, commitment, self.clock.now());
        append(tx, &row, &mut state, &[event])?;
        tracing::info!(tournament = row.id, round, "a tournament round began");
        Ok(())
    }

    /// Records the tables of `round` whose games finished (`table_finished`). A table
    /// whose people went to bots at the round's deadline ends `round_deadline`; that can
    /// only be once the deadline passed, so only then are a finished game's events read
    /// for it. The worker calls this every look while a round runs: a read of the games'
    /// index rows comes first, and a write only when one of them finished.
    fn record_tables(
        &self,
        id: &str,
        round: u8,
        games: &[String],
        deadline_passed: bool,
    ) -> Result<bool, ServiceError> {
        let finished: Vec<&String> = self.store.read(|tx| {
            let mut finished = Vec::new();
            for game in games {
                if tx.game(game)?.is_some_and(|row| row.status == "finished") {
                    finished.push(game);
                }
            }
            Ok::<_, ServiceError>(finished)
        })?;
        if finished.is_empty() {
            return Ok(false);
        }
        retried(self, |tx| {
            let (row, mut state) = load(tx, id)?;
            let mut events = Vec::new();
            for game_id in &finished {
                let game = self.games.table_game(tx, game_id)?;
                let handed_at_deadline = deadline_passed
                    && tx.load_events(game_id)?.iter().any(|e| {
                        e.event_type == "seat_handed_to_bot"
                            && e.data.0.get("cause").and_then(serde_json::Value::as_str)
                                == Some("round_deadline")
                    });
                let end = if handed_at_deadline {
                    TableEnd::RoundDeadline
                } else {
                    TableEnd::Finished
                };
                // Each game is one table: the events of this batch do not depend on
                // each other, so they are folded once, by `append`.
                events.extend(state.table_finished(round, game_id, &game, end));
            }
            if events.is_empty() {
                return Ok(false);
            }
            append(tx, &row, &mut state, &events)?;
            Ok(true)
        })
    }

    /// Every table of `round` finished: their seeds become public (`seed_revealed`), then
    /// `round_finished` (duplicate: with the round's seed) and, after the last round,
    /// `tournament_ended`.
    fn finish_round(&self, id: &str, round: u8) -> Result<bool, ServiceError> {
        let (_, state) = self.store.read(|tx| load(tx, id))?;
        let Some(games) = state
            .rounds
            .iter()
            .find(|r| r.round == round)
            .map(|r| r.tables.iter().map(|t| t.game.clone()).collect::<Vec<_>>())
        else {
            return Ok(false);
        };
        // Idempotent: a replica that stops here leaves the next look to finish.
        for game in &games {
            self.games.reveal_seed(game)?;
        }
        retried(self, |tx| {
            let (row, mut state) = load(tx, id)?;
            if !matches!(state.due(self.clock.now()), Due::FinishRound { round: r } if r == round) {
                return Ok(false);
            }
            let seed = if state.setup.format == rules::tournament::Format::Duplicate {
                match games.first() {
                    Some(game) => self.games.table_game(tx, game)?.seed().map(str::to_owned),
                    None => None,
                }
            } else {
                None
            };
            let mut events = vec![TournamentEvent::RoundFinished { round, seed }];
            if round >= state.setup.rounds {
                events.push(TournamentEvent::TournamentEnded {});
            }
            append(tx, &row, &mut state, &events)?;
            tracing::info!(tournament = id, round, "a tournament round finished");
            Ok(true)
        })
    }

    /// `stammtisch rebuild-tournaments`: folds every tournament's state again from its
    /// event stream and writes it into its row. Returns how many.
    ///
    /// # Errors
    /// An unreadable event, storage failure.
    pub fn rebuild(&self) -> Result<usize, ServiceError> {
        let ids = self
            .store
            .read(|tx| tx.tournament_ids().map_err(ServiceError::from))?;
        for id in &ids {
            self.store.write(|tx| {
                let events = tx
                    .tournament_events(id, 0)?
                    .iter()
                    .map(|e| decode(&e.event_type, &e.data.0))
                    .collect::<Result<Vec<_>, _>>()?;
                let state =
                    Tournament::from_events(&events).ok_or(ServiceError::TournamentNotFound)?;
                tx.set_tournament_state(id, &update_of(&state)?)?;
                Ok::<_, ServiceError>(())
            })?;
        }
        Ok(ids.len())
    }
}
