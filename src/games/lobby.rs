//! The lobby: creating games, visibility, invites, rematches and their reservations,
//! quick play, and handing seats over when an account goes.

use super::*;

/// What quick play looks for (the ruleset is its [`QuickTurn`]'s).
pub struct QuickRequest<'a> {
    /// The caller.
    pub account: &'a str,
    /// The caller's name.
    pub name: &'a str,
    /// Table size; any when `None` (a new table gets the ruleset's usual size).
    pub players: Option<u8>,
    /// Options; any when `None` (a new table gets the defaults).
    pub options: Option<rules::OptionsInput>,
}

/// A quick play's turn in its ruleset's queue ([`Service::quick_turn`]): held until the
/// quick play has committed, so the next one in this replica starts after it.
pub struct QuickTurn {
    pub(super) ruleset: rules::Ruleset,
    pub(super) _turn: tokio::sync::OwnedMutexGuard<()>,
}

/// The quick plays of this replica, one queue per ruleset, in the order they came.
/// Waiting here costs neither a database connection nor a thread: only the head of each
/// queue takes a connection (and, on PostgreSQL, waits for the replicas' named lock), so
/// a queue longer than the pool is not refused `database_unavailable`. Clones share the
/// queues.
#[derive(Clone, Default)]
pub(super) struct QuickQueues(std::sync::Arc<[std::sync::Arc<tokio::sync::Mutex<()>>; 4]>);

impl QuickQueues {
    fn of(&self, ruleset: rules::Ruleset) -> std::sync::Arc<tokio::sync::Mutex<()>> {
        let [six, eleven, x, nos] = &*self.0;
        std::sync::Arc::clone(match ruleset {
            rules::Ruleset::SixNimmt => six,
            rules::Ruleset::ElevenNimmt => eleven,
            rules::Ruleset::XNimmt => x,
            rules::Ruleset::NimmOderSchieb => nos,
        })
    }
}

/// A game creation request.
pub struct CreateRequest<'a> {
    /// Creator's account id.
    pub account: &'a str,
    /// Creator's name.
    pub name: &'a str,
    /// Ruleset, options, seats.
    pub setup: Setup,
    /// Game name.
    pub game_name: Option<String>,
    /// Prepared first deal.
    pub deal: Option<Deal>,
    /// Seconds per move (then the server moves for a seat that lets it pass).
    pub move_deadline_seconds: Option<u32>,
    /// The game's clocks (exclusive with `move_deadline_seconds`).
    pub time_control: Option<rules::TimeControl>,
    /// Listed for and watchable by every account.
    pub public: bool,
}

/// What an invite link shows before anyone signs in (`GET /v1/invites/{code}`).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct InvitePreview {
    /// The game's id (a UUID), as in `/v1/games/{id}`.
    pub game_id: String,
    /// The game played.
    pub ruleset: rules::Ruleset,
    /// 6-nimmt: the variant whose cards, dealing and placement the game has (`standard`
    /// included); `null` for another combination and for the other rulesets.
    #[schema(required = true)]
    pub preset: Option<rules::Preset>,
    /// Options in force, as in the game's view.
    pub options: rules::OptionsView,
    /// The name the host gave the game; `null` when none was given.
    #[schema(required = true)]
    pub name: Option<String>,
    /// Who invites: the host's current display name (`deleted player` once the account is
    /// deleted).
    pub host: String,
    /// `lobby` (seats can be taken), `active` (it has begun) or `finished`.
    pub status: Status,
    /// Number of seats.
    pub players: u8,
    /// Seats held by a person or a bot.
    pub seats_taken: usize,
    /// Seats anyone with the code may take now (in the lobby: neither held nor kept for a
    /// rematch's player).
    pub free_seats: usize,
}

/// A fresh invite code: 10 characters without look-alikes.
pub(crate) fn new_invite_code() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::rng();
    (0..10)
        .map(|_| char::from(ALPHABET[rand::RngExt::random_range(&mut rng, 0..ALPHABET.len())]))
        .collect()
}

impl Service {
    /// After an account's deletion: a bot takes over its seats in running games (`resign`,
    /// so no game waits for a player who is gone) and it leaves the lobbies it sits in. A
    /// lobby it hosts, which its host cannot leave and nobody else can start, is closed to
    /// everyone else instead (`close_hosted_lobby`). Returns how many games it
    /// left or closed; a game that refuses is logged and skipped.
    ///
    /// # Errors
    /// Storage failure while listing the games.
    pub fn hand_over_seats(&self, account: &str) -> Result<usize, ServiceError> {
        let mut handed = 0;
        let mut before: Option<String> = None;
        loop {
            let page = self.store.read(|tx| {
                tx.list_games(&ListQuery {
                    account,
                    mine: true,
                    awaiting: false,
                    status: None,
                    ruleset: None,
                    before_id: before.as_deref(),
                    min_free_seats: None,
                    limit: 200,
                })
            })?;
            let Some(last) = page.last() else {
                return Ok(handed);
            };
            before = Some(last.game.id.clone());
            for summary in &page {
                if summary.game.status == "lobby" && summary.game.host_account == account {
                    match self.close_hosted_lobby(&summary.game.id, account) {
                        Ok(()) => handed += 1,
                        Err(e) => tracing::info!(
                            game = summary.game.id,
                            error = %crate::telemetry::Chain(&e),
                            "a deleted account's lobby stays open"
                        ),
                    }
                    continue;
                }
                let command = match summary.game.status.as_str() {
                    "active" => Command::Resign {},
                    "lobby" => Command::Leave {},
                    _ => continue,
                };
                let req = CommandRequest {
                    game: &summary.game.id,
                    account,
                    name: crate::store::DELETED_NAME,
                    command,
                    if_match: None,
                    idempotency_key: None,
                    invite_code: None,
                    token_version: None,
                    announced: None,
                };
                match self.execute(&req) {
                    Ok(_) => handed += 1,
                    Err(e) => tracing::info!(
                        game = summary.game.id,
                        error = %crate::telemetry::Chain(&e),
                        "a deleted account's seat stays"
                    ),
                }
            }
        }
    }

    /// Closes a lobby whose host's account was deleted, so that nobody waits in it or
    /// joins it: private (out of the public list and quick play) without an invite code,
    /// the seats a rematch kept released, and every other seat freed (`remove_seat`, as the
    /// host, so each person sees why). The deleted host's seat and the game stay: the log
    /// is never rewritten.
    ///
    /// # Errors
    /// Storage failure, or a command the game refuses.
    fn close_hosted_lobby(&self, game_id: &str, account: &str) -> Result<(), ServiceError> {
        self.set_public(game_id, account, false)?;
        self.store.write(|tx| tx.clear_invite_code(game_id))?;
        self.release_reservations(game_id)?;
        let game = self
            .store
            .read(|tx| self.load(tx, game_id).map(|(_, g)| g))?;
        let others = game.seats.iter().enumerate().filter_map(|(seat, s)| {
            let seat = u8::try_from(seat).ok()?;
            (s.occupant.is_some() && seat != game.host_seat).then_some(seat)
        });
        for seat in others {
            self.execute(&CommandRequest {
                game: game_id,
                account,
                name: crate::store::DELETED_NAME,
                command: Command::RemoveSeat { seat },
                if_match: None,
                idempotency_key: None,
                invite_code: None,
                token_version: None,
                announced: None,
            })?;
        }
        Ok(())
    }

    /// Creates a game; the creator takes seat 0.
    ///
    /// # Errors
    /// Invalid options or deal, storage failure.
    pub fn create(&self, req: CreateRequest<'_>) -> Result<GameBody, ServiceError> {
        let open = self
            .store
            .read(|tx| tx.open_lobbies(req.account).map_err(ServiceError::from))?;
        self.limits.game(req.account, open)?;
        let account = req.account;
        let (row, game, events) = self.new_game(req, Extras::default())?;
        self.store
            .write(|tx| insert_game(tx, &row, &game, &events))?;
        self.store
            .read(|tx| self.body(tx, &game, &row, row.version, account))
    }

    /// The index row, state and events of a new game (nothing stored yet).
    pub(super) fn new_game(
        &self,
        req: CreateRequest<'_>,
        extras: Extras,
    ) -> Result<(GameRow, Game, Vec<Event>), ServiceError> {
        let seed = extras.seed.clone().unwrap_or_else(fairness::new_seed);
        let commitment = fairness::commitment(&seed);
        let mut events = Game::create_with(
            NewGame {
                setup: req.setup.clone(),
                name: req.game_name.clone(),
                host_account: req.account,
                host_name: req.name,
                deal: req.deal,
                seed,
                commitment,
            },
            extras,
        )?;
        if let Some(seconds) = req.move_deadline_seconds {
            events.push(Event::MoveDeadlineSet { seconds });
        }
        if let Some(time_control) = req.time_control {
            events.push(Event::TimeControlSet { time_control });
        }
        events.push(Event::VisibilitySet { public: req.public });
        let game = Game::from_events(&events).ok_or(ServiceError::GameNotFound)?;
        let id = uuid::Uuid::now_v7().to_string();
        let now = self.clock.naive();
        let index = index_of(&game, &id);
        let row = GameRow {
            id,
            ruleset: req.setup.ruleset.name().to_owned(),
            name: req.game_name,
            status: "lobby".into(),
            host_account: req.account.to_owned(),
            version: i32::try_from(events.len()).unwrap_or(i32::MAX),
            created_at: now,
            updated_at: now,
            public: req.public,
            invite_code: (!req.public).then(new_invite_code),
            free_seats: index.free_seats,
            time_control: req
                .time_control
                .map(|t| serde_json::to_string(&t))
                .transpose()
                .map_err(ServiceError::Encode)?,
        };
        Ok((row, game, events))
    }

    /// Makes a game public or private (its host only).
    ///
    /// # Errors
    /// Unknown or invisible game, not the host, storage failure.
    pub fn set_public(
        &self,
        game_id: &str,
        account: &str,
        public: bool,
    ) -> Result<GameBody, ServiceError> {
        for _ in 0..MAX_ATTEMPTS {
            let mut committed = None;
            let result = self.store.write(|tx| {
                let (mut row, version, mut game) = self.visible(tx, game_id, account)?;
                if game.seat_of(account) != Some(game.host_seat) {
                    return Err(ServiceError::Rule(rules::RuleError::NotHost));
                }
                if row.public == public {
                    return self.body(tx, &game, &row, version, account);
                }
                // Recorded in the log (ratings and profiles read visibility from it).
                let event = Event::VisibilitySet { public };
                game.apply(&event);
                let new_version = version + 1;
                tx.append(
                    game_id,
                    version,
                    &index_of(&game, game_id),
                    &encode_all(&[event])?,
                )?;
                row.public = public;
                let response = self.body(tx, &game, &row, new_version, account)?;
                committed = Some((new_version, game));
                Ok(response)
            });
            match result {
                Err(ServiceError::Store(StoreError::Conflict)) => {}
                Ok(response) => {
                    if let Some((version, game)) = committed {
                        self.cache.put(game_id, version, game);
                        self.notifier.notify(game_id);
                    }
                    return Ok(response);
                }
                Err(e) => return Err(e),
            }
        }
        Err(Contention::Busy.into())
    }

    /// The game a private game's invite code belongs to.
    ///
    /// # Errors
    /// No game has that code (`GameNotFound`), storage failure.
    pub fn game_of_invite(&self, code: &str) -> Result<String, ServiceError> {
        self.store
            .read(|tx| tx.game_by_invite_code(code).map_err(ServiceError::from))?
            .ok_or(ServiceError::GameNotFound)
    }

    /// What the invite link of a private game shows to anyone who holds its code, signed
    /// in or not: the game, who invites, how many seats are taken, and how far it is.
    /// Nothing of the play: no hand, seed, prepared deal or seat's name but the host's.
    ///
    /// # Errors
    /// No game has that code (`GameNotFound`), storage failure.
    pub fn invite_preview(&self, code: &str) -> Result<InvitePreview, ServiceError> {
        self.store.read(|tx| {
            let id = tx
                .game_by_invite_code(code)?
                .ok_or(ServiceError::GameNotFound)?;
            let (row, version, game) = self.load_row(tx, &id)?;
            if self.cache.would_keep(&id, version) {
                self.cache.put(&id, version, game.clone());
            }
            let host = game
                .seats
                .get(usize::from(game.host_seat))
                .and_then(rules::Seat::account);
            let host_name = match host {
                Some(account) => tx
                    .account_names(&[account])?
                    .into_iter()
                    .next()
                    .map(|(_, name)| name),
                None => None,
            };
            let setup = &game.setup;
            let preset = (setup.ruleset == rules::Ruleset::SixNimmt)
                .then(|| {
                    rules::Preset::ALL.into_iter().find(|p| {
                        let o = p.options();
                        (o.deck, o.deal, o.placement)
                            == (
                                setup.options.deck,
                                setup.options.deal,
                                setup.options.placement,
                            )
                    })
                })
                .flatten();
            let count = |f: fn(&rules::Seat) -> bool| game.seats.iter().filter(|s| f(s)).count();
            Ok(InvitePreview {
                game_id: row.id,
                ruleset: setup.ruleset,
                preset,
                options: setup.options.view(setup.ruleset),
                name: game.name.clone(),
                host: host_name.unwrap_or_else(|| crate::store::DELETED_NAME.to_owned()),
                status: game.status(),
                players: setup.players,
                seats_taken: count(|s| s.occupant.is_some()),
                free_seats: count(|s| s.occupant.is_none() && s.reserved_for.is_none()),
            })
        })
    }

    /// Starts the rematch of a finished game for one of its people, or finds the one
    /// already started: a new game with the same ruleset, options, visibility and people
    /// (bots with their strategies), a fresh seed, the caller as host, and the other people's
    /// seats kept for them for the rematch window. The finished game records the link
    /// (`rematch_created`). Returns the game and whether it was created now.
    ///
    /// # Errors
    /// Unknown or invisible game, not a person of it, a game not finished yet, limits,
    /// storage failure.
    pub fn rematch(
        &self,
        game_id: &str,
        account: &str,
        name: &str,
    ) -> Result<(GameBody, bool), ServiceError> {
        for _ in 0..MAX_ATTEMPTS {
            let mut linked = None;
            let result = self.store.write(|tx| {
                let (row, version, old) = self.visible(tx, game_id, account)?;
                if let Some(existing) = old.rematch.clone() {
                    let (erow, eversion, egame) = self.visible(tx, &existing, account)?;
                    return Ok((self.body(tx, &egame, &erow, eversion, account)?, false));
                }
                let Some(seat) = old.seat_of(account) else {
                    return Err(ServiceError::Rule(rules::RuleError::NotAPlayer));
                };
                if old.status() != Status::Finished {
                    return Err(ServiceError::NotFinished);
                }
                let open = tx.open_lobbies(account)?;
                self.limits.game(account, open)?;
                let mut reservations = Vec::new();
                let mut bots = Vec::new();
                let others = old
                    .seats
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != usize::from(seat));
                for (new_seat, (_, s)) in (1u8..).zip(others) {
                    match &s.occupant {
                        // A deleted account's seat stays open instead of waiting for
                        // someone who cannot come back.
                        Some(rules::Occupant::Human { account: a, .. })
                            if tx
                                .account_by_id(a)?
                                .is_some_and(|row| row.deleted_at.is_none()) =>
                        {
                            reservations.push(rules::Reservation {
                                seat: new_seat,
                                account: a.clone(),
                            });
                        }
                        Some(rules::Occupant::Human { .. }) => {}
                        Some(rules::Occupant::Bot { strategy, .. }) => bots.push(*strategy),
                        None => {}
                    }
                }
                let kept = !reservations.is_empty();
                let (new_row, mut game, mut events) = self.new_game(
                    CreateRequest {
                        account,
                        name,
                        setup: old.setup.clone(),
                        game_name: old.name.clone(),
                        deal: None,
                        move_deadline_seconds: old.move_deadline_seconds,
                        time_control: old.clock.as_ref().map(|c| c.control),
                        public: row.public,
                    },
                    Extras {
                        rematch_of: Some(game_id.to_owned()),
                        reservations,
                        auto_start: false,
                        tournament: None,
                        seed: None,
                    },
                )?;
                let mut dealer = SeededDealer::new(game.seed().unwrap_or_default());
                for strategy in bots {
                    let actor = Actor::Account { id: account, name };
                    let added = game.decide(actor, &Command::AddBot { strategy }, &mut dealer)?;
                    added.iter().for_each(|e| game.apply(e));
                    events.extend(added);
                }
                let new_row = GameRow {
                    version: i32::try_from(events.len()).unwrap_or(i32::MAX),
                    free_seats: index_of(&game, &new_row.id).free_seats,
                    ..new_row
                };
                insert_game(tx, &new_row, &game, &events)?;
                if kept {
                    let until = self.clock.naive()
                        + chrono::Duration::seconds(
                            i64::try_from(self.rematch_window.as_secs()).unwrap_or(86_400),
                        );
                    tx.set_reserved_until(&new_row.id, Some(until))?;
                }
                let link = Event::RematchCreated {
                    game: new_row.id.clone(),
                };
                let mut finished = old;
                finished.apply(&link);
                tx.append(
                    game_id,
                    version,
                    &index_of(&finished, game_id),
                    &encode_all(std::slice::from_ref(&link))?,
                )?;
                crate::webhooks::enqueue_rematch(
                    tx,
                    &new_row.id,
                    new_row.version,
                    &game,
                    self.clock.naive(),
                )?;
                crate::push::enqueue_rematch(
                    tx,
                    &new_row.id,
                    new_row.version,
                    &game,
                    self.clock.naive(),
                )?;
                linked = Some((version + 1, finished));
                Ok((
                    self.body(tx, &game, &new_row, new_row.version, account)?,
                    true,
                ))
            });
            match result {
                Err(ServiceError::Store(StoreError::Conflict)) => {}
                Ok(answer) => {
                    if let Some((version, finished)) = linked {
                        self.cache.put(game_id, version, finished);
                        self.notifier.notify(game_id);
                    }
                    return Ok(answer);
                }
                Err(e) => return Err(e),
            }
        }
        Err(Contention::Busy.into())
    }

    /// Frees the seats a rematch kept when nobody came for them in time.
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn release_reservations(&self, game_id: &str) -> Result<(), ServiceError> {
        for _ in 0..MAX_ATTEMPTS {
            let mut released = None;
            let result = self.store.write(|tx| {
                let (version, mut game) = self.load(tx, game_id)?;
                tx.set_reserved_until(game_id, None)?;
                let waiting = game
                    .seats
                    .iter()
                    .any(|s| s.occupant.is_none() && s.reserved_for.is_some());
                if !waiting || game.status() != Status::Lobby {
                    return Ok(());
                }
                let event = Event::ReservationsReleased {};
                game.apply(&event);
                tx.append(
                    game_id,
                    version,
                    &index_of(&game, game_id),
                    &encode_all(std::slice::from_ref(&event))?,
                )?;
                released = Some((version + 1, game));
                Ok(())
            });
            match result {
                Err(ServiceError::Store(StoreError::Conflict)) => {}
                Ok(()) => {
                    if let Some((version, game)) = released {
                        self.cache.put(game_id, version, game);
                        self.notifier.notify(game_id);
                    }
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        Err(Contention::Busy.into())
    }

    /// Games whose rematch reservations are due at `now`.
    ///
    /// # Errors
    /// Storage failure.
    pub fn due_reservations(
        &self,
        now: chrono::NaiveDateTime,
    ) -> Result<Vec<String>, ServiceError> {
        Ok(self.store.read(|tx| tx.due_reservations(now, 50))?)
    }

    /// Waits for a quick play's turn in `ruleset`'s queue of this replica (first come,
    /// first served; a caller that goes away leaves the queue). Async and before any
    /// connection is taken: see [`Service::quick_play`].
    pub async fn quick_turn(&self, ruleset: rules::Ruleset) -> QuickTurn {
        QuickTurn {
            ruleset,
            _turn: self.quick.of(ruleset).lock_owned().await,
        }
    }

    /// Quick play: seats the caller at the oldest public quick-play table of the turn's
    /// ruleset that fits what they asked for and has a free seat, or opens one (public,
    /// starting by itself when full). Quick plays of a ruleset take turns, so simultaneous
    /// callers fill one table before the next is opened: in this replica by the queue the
    /// `turn` was taken from, which holds no connection while it waits; across replicas
    /// by a named lock, for which at most one connection per replica and ruleset waits.
    /// Returns the game and whether it was opened now; the turn ends with the call.
    ///
    /// # Errors
    /// Invalid players or options, limits, storage failure.
    pub fn quick_play(
        &self,
        turn: QuickTurn,
        req: &QuickRequest<'_>,
    ) -> Result<(GameBody, bool), ServiceError> {
        let ruleset = turn.ruleset;
        let players = req.players.unwrap_or_else(|| quick_players(ruleset));
        let wanted = Setup::from_input(ruleset, players, None, req.options)?;
        for _ in 0..MAX_ATTEMPTS {
            let mut committed = None;
            let result = self.store.write(|tx| {
                tx.lock_named(&format!("quick-play:{}", ruleset.name()))?;
                for id in tx.open_public_lobbies(ruleset.name(), 50)? {
                    let (row, version, game) = self.load_row(tx, &id)?;
                    let fits = game.auto_start
                        && req.players.is_none_or(|p| p == game.setup.players)
                        && (req.options.is_none() || game.setup.options == wanted.options);
                    if !fits {
                        continue;
                    }
                    if game.seat_of(req.account).is_some() {
                        return Ok((self.body(tx, &game, &row, version, req.account)?, false));
                    }
                    let join = CommandRequest {
                        game: &id,
                        account: req.account,
                        name: req.name,
                        command: Command::Join {},
                        if_match: Some(version),
                        idempotency_key: None,
                        invite_code: None,
                        token_version: None,
                        announced: None,
                    };
                    return match self.attempt(tx, &join, &mut committed)? {
                        CommandOutcome::Applied(body) => Ok((*body, false)),
                        CommandOutcome::Replayed { .. } => Err(Contention::Busy.into()),
                    };
                }
                let open = tx.open_lobbies(req.account)?;
                self.limits.game(req.account, open)?;
                let setup = Setup {
                    players,
                    ..wanted.clone()
                };
                let (row, game, events) = self.new_game(
                    CreateRequest {
                        account: req.account,
                        name: req.name,
                        setup,
                        game_name: None,
                        deal: None,
                        move_deadline_seconds: None,
                        time_control: None,
                        public: true,
                    },
                    Extras {
                        auto_start: true,
                        ..Extras::default()
                    },
                )?;
                insert_game(tx, &row, &game, &events)?;
                Ok((self.body(tx, &game, &row, row.version, req.account)?, true))
            });
            match result {
                Err(
                    ServiceError::Store(StoreError::Conflict)
                    | ServiceError::Contention(Contention::VersionConflict { .. }),
                ) => {}
                Ok(answer) => {
                    if let Some((version, game)) = committed {
                        self.cache.put(&answer.0.id, version, game);
                        self.notifier.notify(&answer.0.id);
                    }
                    return Ok(answer);
                }
                Err(e) => return Err(e),
            }
        }
        Err(Contention::Busy.into())
    }
}

/// The table size quick play opens when the caller names none.
pub(super) fn quick_players(ruleset: rules::Ruleset) -> u8 {
    match ruleset {
        rules::Ruleset::XNimmt => 3,
        _ => 4,
    }
}

/// Stores a new game made by `Service::new_game`.
pub(super) fn insert_game(
    tx: &mut Tx<'_>,
    row: &GameRow,
    game: &Game,
    events: &[Event],
) -> Result<(), ServiceError> {
    tx.create_game(row, &index_of(game, &row.id), &encode_all(events)?)?;
    Ok(())
}
