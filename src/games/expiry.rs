//! Move deadlines: what the server does for a seat whose deadline passed.

use super::*;

/// The deadlines after a command: a person asked to act gets `now + move_deadline_seconds`,
/// unless the same ask was already running for a seat that did not act in this command.
/// `None` when nothing changed (or the game has no deadlines).
pub(super) fn refresh_deadlines(
    game: &Game,
    acted: Option<u8>,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Event> {
    let seconds = game.move_deadline_seconds?;
    let mut deadlines = Vec::new();
    if game.status() == Status::Active {
        for asked in game.awaiting() {
            let person = game
                .seats
                .get(usize::from(asked.seat))
                .is_some_and(|s| !s.bot_controlled());
            if !person {
                continue;
            }
            let running = game.deadlines.iter().find(|d| {
                d.seat == asked.seat && d.action == asked.action && Some(asked.seat) != acted
            });
            // Milliseconds, as stored: a rebuilt game equals the one that wrote the event.
            let at = running.map_or_else(
                || {
                    chrono::SubsecRound::trunc_subsecs(
                        now + chrono::Duration::seconds(i64::from(seconds)),
                        3,
                    )
                },
                |d| d.at,
            );
            deadlines.push(SeatDeadline {
                seat: asked.seat,
                action: asked.action.to_owned(),
                at,
            });
        }
    }
    (deadlines != game.deadlines).then_some(Event::DeadlinesSet { deadlines })
}

impl Service {
    /// Moves for every seat of a game whose deadline has passed (`take_row`: the cheapest
    /// row; otherwise the heuristic bot's choice); those events carry `"cause": "deadline"`.
    /// Safe with any number of replicas: the append is a compare-and-set on the version, so
    /// one replica wins and the others find nothing due when they look again.
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn expire(&self, game_id: &str) -> Result<usize, ServiceError> {
        for _ in 0..MAX_ATTEMPTS {
            match self
                .store
                .write(|tx| self.expire_attempt(tx, game_id, self.clock.now()))
            {
                Err(ServiceError::Store(StoreError::Conflict)) => {}
                Ok(moved) => {
                    if moved > 0 {
                        self.notifier.notify(game_id);
                    }
                    return Ok(moved);
                }
                Err(e) => return Err(e),
            }
        }
        Err(Contention::Busy.into())
    }

    pub(super) fn expire_attempt(
        &self,
        tx: &mut Tx<'_>,
        game_id: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<usize, ServiceError> {
        let (version, mut game) = self.load(tx, game_id)?;
        let before = game.clone();
        let mut dealer = SeededDealer::new(game.seed().unwrap_or_default());
        let mut dice = BotDice(rand::rng());
        let mut encoded = Vec::new();
        let mut moved = 0;
        // Each pass moves for one overdue seat; the loop ends when none is left.
        while let Some(seat) = overdue(&game, now) {
            let Some(choice) = rules::bots::choose(&game, seat, self.stand_in, &mut dice) else {
                break;
            };
            let caused = game.decide(Actor::Deadline { seat }, &choice, &mut dealer)?;
            let mut followed = Vec::new();
            caused.iter().for_each(|e| game.apply(e));
            play_bots(&mut game, &mut dealer, &mut followed, self.stand_in)?;
            if let Some(deadlines) = refresh_deadlines(&game, Some(seat), now) {
                game.apply(&deadlines);
                followed.push(deadlines);
            }
            for event in &caused {
                encoded.push(
                    to_new_event_with_cause(event, Some("deadline"))
                        .map_err(ServiceError::Encode)?,
                );
            }
            encoded.extend(encode_all(&followed)?);
            moved += 1;
            tracing::info!(
                game = game_id,
                seat,
                action = choice.name(),
                "moved for a seat whose deadline passed"
            );
        }
        if encoded.is_empty() {
            return Ok(0);
        }
        let new_version = version + i32::try_from(encoded.len()).unwrap_or(i32::MAX);
        tx.append(game_id, version, &index_of(&game, game_id), &encoded)?;
        self.notify_outbox(tx, game_id, new_version, &before, &game)?;
        Ok(moved)
    }
}

/// The first seat whose deadline is at or before `now` and which is still asked to act.
pub(super) fn overdue(game: &Game, now: chrono::DateTime<chrono::Utc>) -> Option<u8> {
    game.deadlines
        .iter()
        .filter(|d| d.at <= now)
        .map(|d| d.seat)
        .find(|seat| game.is_awaited(*seat))
}
