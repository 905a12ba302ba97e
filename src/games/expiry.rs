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
            if game.clock.is_some() && super::away::back_from_away(&game, seat, now) {
                // The seat's absence ended: its clock runs again, nothing runs out.
                let Some(clocks) = game.next_clocks(None, now) else {
                    break;
                };
                game.apply(&clocks);
                encoded.extend(encode_all(std::slice::from_ref(&clocks))?);
                moved += 1;
                continue;
            }
            if game.clock.is_some()
                && let Some(away) = self.away_now(tx, &game, seat, now)?
            {
                // Its account is away (since before the game knew): the clock stops
                // until the absence ends, nothing runs out.
                game.apply(&away);
                encoded.extend(encode_all(std::slice::from_ref(&away))?);
                moved += 1;
                continue;
            }
            if game.clock.is_some() {
                let (events, caused) = self.clock_ran_out(tx, &mut game, &mut dealer, seat, now)?;
                for (i, event) in events.iter().enumerate() {
                    let cause = (caused.0..caused.1).contains(&i).then_some("clock");
                    encoded
                        .push(to_new_event_with_cause(event, cause).map_err(ServiceError::Encode)?);
                }
                moved += 1;
                continue;
            }
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

impl Service {
    /// A tournament round's deadline passed with this game unfinished: every seat still
    /// held by a person goes to a bot (`seat_handed_to_bot`, cause `round_deadline`) and
    /// the bots play the game to its end in the same append, as the time control's
    /// `bot_moves` would have. Returns how many seats were handed over (0: the game was
    /// not running, or nobody was left to hand over). Safe with any number of replicas:
    /// the append is a compare-and-set on the version.
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn hand_all_to_bots(&self, game_id: &str) -> Result<usize, ServiceError> {
        for _ in 0..MAX_ATTEMPTS {
            match self.store.write(|tx| self.hand_all_attempt(tx, game_id)) {
                Err(ServiceError::Store(StoreError::Conflict)) => {}
                Ok(handed) => {
                    if handed > 0 {
                        self.notifier.notify(game_id);
                    }
                    return Ok(handed);
                }
                Err(e) => return Err(e),
            }
        }
        Err(Contention::Busy.into())
    }

    fn hand_all_attempt(&self, tx: &mut Tx<'_>, game_id: &str) -> Result<usize, ServiceError> {
        let now = self.clock.now();
        let (version, mut game) = self.load(tx, game_id)?;
        if game.status() != Status::Active {
            return Ok(0);
        }
        let before = game.clone();
        let people = game.people();
        if people.is_empty() {
            return Ok(0);
        }
        let mut events: Vec<Event> = people
            .iter()
            .map(|&seat| Event::SeatHandedToBot {
                seat,
                cause: rules::HandedCause::RoundDeadline,
            })
            .collect();
        events.iter().for_each(|e| game.apply(e));
        let mut dealer = SeededDealer::new(game.seed().unwrap_or_default());
        play_bots(&mut game, &mut dealer, &mut events, self.stand_in)?;
        if let Some(deadlines) = refresh_deadlines(&game, None, now) {
            game.apply(&deadlines);
            events.push(deadlines);
        }
        if let Some(clocks) = game.next_clocks(None, now) {
            game.apply(&clocks);
            events.push(clocks);
        }
        let encoded = encode_all(&events)?;
        let new_version = version + i32::try_from(encoded.len()).unwrap_or(i32::MAX);
        tx.append(game_id, version, &index_of(&game, game_id), &encoded)?;
        self.notify_outbox(tx, game_id, new_version, &before, &game)?;
        tracing::info!(
            game = game_id,
            seats = people.len(),
            "a tournament round's deadline passed: its people went to bots"
        );
        Ok(people.len())
    }

    /// Makes a finished tournament game's seed public (`seed_revealed`), once its round
    /// has ended. Returns whether it was written now (`false`: already revealed, or no
    /// tournament game, or not finished).
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn reveal_seed(&self, game_id: &str) -> Result<bool, ServiceError> {
        for _ in 0..MAX_ATTEMPTS {
            let mut committed = None;
            let result = self.store.write(|tx| {
                let (version, mut game) = self.load(tx, game_id)?;
                if game.seed_revealed
                    || game.tournament.is_none()
                    || game.status() != Status::Finished
                {
                    return Ok(false);
                }
                let event = Event::SeedRevealed {};
                game.apply(&event);
                tx.append(
                    game_id,
                    version,
                    &index_of(&game, game_id),
                    &encode_all(std::slice::from_ref(&event))?,
                )?;
                committed = Some((version + 1, game));
                Ok(true)
            });
            match result {
                Err(ServiceError::Store(StoreError::Conflict)) => {}
                Ok(written) => {
                    if let Some((version, game)) = committed {
                        self.cache.put(game_id, version, game);
                        self.notifier.notify(game_id);
                    }
                    return Ok(written);
                }
                Err(e) => return Err(e),
            }
        }
        Err(Contention::Busy.into())
    }

    /// A seat whose flag fell (a game with clocks): vacation first (when the hook spends
    /// some, the bank grows and nothing else happens), else `clock_ran_out` and what the
    /// time control says: the server moves for the seat (`bot_moves`; those events carry
    /// `"cause": "clock"`), or the seat waits flagged for the others (`others_decide`); the
    /// third run-out hands it to a bot. Returns the events, folded into `game`, and the
    /// range of them that the server's move for the seat caused.
    fn clock_ran_out(
        &self,
        tx: &mut Tx<'_>,
        game: &mut Game,
        dealer: &mut SeededDealer,
        seat: u8,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(Vec<Event>, (usize, usize)), ServiceError> {
        let mut events = Vec::new();
        let mut moved = None;
        let mut caused = (0, 0);
        let vacation = self.spend_vacation_hour(tx, game, seat, now)?;
        if let Some(hours) = vacation {
            events.push(Event::VacationSpent { seat, hours });
        } else {
            events.extend(game.run_out(seat));
        }
        events.iter().for_each(|e| game.apply(e));
        let handed = events
            .iter()
            .any(|e| matches!(e, Event::SeatHandedToBot { .. }));
        let bot_moves = game
            .clock
            .as_ref()
            .is_some_and(|c| c.at_zero() == rules::AtZero::BotMoves);
        if vacation.is_none() && !handed && bot_moves {
            let mut dice = BotDice(rand::rng());
            if let Some(choice) = rules::bots::choose(game, seat, self.stand_in, &mut dice) {
                let made = game.decide(Actor::Deadline { seat }, &choice, dealer)?;
                made.iter().for_each(|e| game.apply(e));
                caused = (events.len(), events.len() + made.len());
                events.extend(made);
                moved = Some(seat);
                tracing::info!(seat, action = choice.name(), "moved for a seat out of time");
            }
        }
        let mut followed = Vec::new();
        play_bots(game, dealer, &mut followed, self.stand_in)?;
        events.extend(followed);
        // After a run-out the clocks are written even when they look unchanged: the
        // stream must show the flag or the bank of zero.
        let clocks = if vacation.is_some() {
            game.next_clocks(None, now)
        } else {
            game.clocks_after_run_out(moved, now)
        };
        if let Some(clocks) = clocks {
            game.apply(&clocks);
            events.push(clocks);
        }
        Ok((events, caused))
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
