//! Commands: decide on a copy and append, alone or in a group-commit batch, with bots
//! acting in the same request, bounded retries and durable idempotency.

use super::*;

/// How often a command without `If-Match` is decided again after losing a race.
pub(super) const MAX_ATTEMPTS: u32 = 16;

/// The group commit's largest batch unless configured (`COMMAND_BATCH_MAX`).
pub(super) const DEFAULT_BATCH_MAX: usize = 32;

/// The group commit's queues unless configured (`COMMAND_BATCH_LANES`).
pub(super) const DEFAULT_LANES: usize = 1;

/// How long a new batch waits at most for more commands unless configured
/// (`COMMAND_BATCH_LINGER_US`).
pub(super) const DEFAULT_LINGER: std::time::Duration = std::time::Duration::from_millis(1);

/// `count` group-commit queues of batches of at most `max` (none when either is 0), whose
/// leaders wait up to `linger` for more commands (`crate::group`).
pub(super) fn lanes(
    count: usize,
    max: usize,
    linger: std::time::Duration,
) -> std::sync::Arc<[crate::group::GroupQueue<Job, JobResult>]> {
    let count = if max == 0 { 0 } else { count };
    (0..count)
        .map(|_| crate::group::GroupQueue::new(max, linger))
        .collect()
}

/// The outcome of a command.
pub enum CommandOutcome {
    /// Applied now.
    Applied(Box<GameBody>),
    /// A repeated idempotency key: the first response, verbatim, and the version it left
    /// the game at.
    Replayed {
        /// The game's version after the first command.
        version: i32,
        /// The first response.
        body: Value,
    },
}

/// A command request.
pub struct CommandRequest<'a> {
    /// Game id.
    pub game: &'a str,
    /// Caller's account id.
    pub account: &'a str,
    /// Caller's name.
    pub name: &'a str,
    /// The command.
    pub command: Command,
    /// Expected version from `If-Match`.
    pub if_match: Option<i32>,
    /// `Idempotency-Key`.
    pub idempotency_key: Option<&'a str>,
    /// The invite code sent with `join` (needed for a private game).
    pub invite_code: Option<&'a str>,
    /// The version of the caller's bearer token, when its account is still to be checked
    /// (as the `Caller` extractor does: it exists, is not deleted, has not revoked the
    /// token): then it is checked before anything else, with the command (in its batch's
    /// transaction), and `name` is the account's. `None`: the caller was checked already.
    pub token_version: Option<i32>,
    /// The command's announcement to the group commit ([`Service::announce`]), if any.
    pub announced: Option<&'a crate::group::Announced>,
}

impl Service {
    /// Writes the outbox rows (webhooks, pushes, and mails when on) that a change causes,
    /// in the change's transaction.
    pub(super) fn notify_outbox(
        &self,
        tx: &mut Tx<'_>,
        game_id: &str,
        version: i32,
        before: &Game,
        after: &Game,
    ) -> Result<(), StoreError> {
        let news = crate::outbox::Announcements::of(before, after);
        let now = self.clock.naive();
        crate::webhooks::enqueue(tx, game_id, version, after, &news, now)?;
        crate::push::enqueue(tx, game_id, version, after, &news, self.push_window, now)?;
        if let Some(digest) = self.mail_digest {
            crate::mail::enqueue(tx, game_id, version, after, &news, digest, now)?;
        }
        // A seat whose deadline changed without a new ask (clocks resumed, an absence or a
        // vacation hour): its waiting reminders of time running low come due anew, and the
        // outbox's worker puts each off to its new time.
        let mut moved: Vec<&str> = after
            .deadlines
            .iter()
            .filter(|d| {
                !before
                    .deadlines
                    .iter()
                    .any(|b| b.seat == d.seat && b.at == d.at)
            })
            .filter_map(|d| after.seats.get(usize::from(d.seat))?.account())
            .filter(|a| !news.turns.iter().any(|t| t.account == *a))
            .collect();
        moved.sort_unstable();
        moved.dedup();
        for account in moved {
            tx.recheck_reminders(
                game_id,
                account,
                &[crate::outbox::TIME_RUNNING_LOW, crate::mail::DEADLINE_SOON],
            )?;
        }
        Ok(())
    }

    /// Runs a command: decide, let bots answer, append; retried on a lost race when the
    /// client did not pin a version. Commands without an idempotency key go through the
    /// group commit (see [`crate::group`]): those that arrive together are decided in
    /// order and appended in one transaction.
    ///
    /// # Errors
    /// Unknown game, a rule violation, a version conflict, storage failure.
    pub fn execute(&self, req: &CommandRequest<'_>) -> Result<CommandOutcome, ServiceError> {
        for attempt in 0..MAX_ATTEMPTS {
            // The first try counts the command against the caller's limit.
            let first = attempt == 0;
            let result = match self.lane(req.game) {
                Some(queue) if req.idempotency_key.is_none() => self.try_batched(queue, req, first),
                _ => {
                    // No batch waits for a command that goes alone.
                    if let Some(a) = req.announced {
                        let _ = a.arrive();
                    }
                    self.try_alone(req, first)
                }
            };
            match result {
                Err(ServiceError::Store(StoreError::Conflict)) => {
                    if let Some(expected) = req.if_match {
                        let current = self.current_version(req.game).unwrap_or(expected);
                        return Err(Contention::VersionConflict { current }.into());
                    }
                    tracing::debug!(game = req.game, attempt, "lost a race; deciding again");
                    let jitter = rand::random_range(1..=4u64) * u64::from(attempt + 1);
                    std::thread::sleep(std::time::Duration::from_millis(jitter));
                }
                other => return other,
            }
        }
        Err(Contention::Busy.into())
    }

    /// How the group commit's batches went so far (all lanes).
    #[must_use]
    pub fn batch_stats(&self) -> crate::group::GroupStats {
        self.batches
            .iter()
            .map(crate::group::GroupQueue::stats)
            .fold(crate::group::GroupStats::default(), |a, b| {
                crate::group::GroupStats {
                    batches: a.batches + b.batches,
                    jobs: a.jobs + b.jobs,
                }
            })
    }

    /// How the batches decided on cached states went so far (see [`DraftStats`]).
    #[must_use]
    pub fn draft_stats(&self) -> DraftStats {
        use std::sync::atomic::Ordering::Relaxed;
        DraftStats {
            appended_with_reads: self.drafts.appended_with_reads.load(Relaxed),
            decided_again: self.drafts.decided_again.load(Relaxed),
        }
    }

    /// The group-commit queue of a game's commands, if any.
    pub(super) fn lane(&self, game_id: &str) -> Option<&crate::group::GroupQueue<Job, JobResult>> {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        if self.batches.len() <= 1 {
            return self.batches.first();
        }
        let n = u64::try_from(self.batches.len()).ok()?;
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(game_id);
        self.batches.get(usize::try_from(hash % n).ok()?)
    }

    /// One try of a command in a group-commit batch; the caller renders its own view.
    pub(super) fn try_batched(
        &self,
        queue: &crate::group::GroupQueue<Job, JobResult>,
        req: &CommandRequest<'_>,
        count: bool,
    ) -> Result<CommandOutcome, ServiceError> {
        let done = queue.submit(
            Job::of(req, count),
            req.announced,
            |jobs, pass| self.run_batch(jobs, pass),
            || Err(Contention::Busy.into()),
        )?;
        Ok(match done {
            Batched::Done(outcome) => outcome,
            Batched::Applied(a) => CommandOutcome::Applied(Box::new(self.body_named(
                &a.game,
                &a.row,
                a.version,
                req.account,
                &a.names,
            ))),
        })
    }

    /// One try of a command in a transaction of its own: the caller's account first (when
    /// not checked yet), then its limit (when `count`), then the command.
    pub(super) fn try_alone(
        &self,
        req: &CommandRequest<'_>,
        count: bool,
    ) -> Result<CommandOutcome, ServiceError> {
        let (checked, resolved);
        let req = match req.token_version {
            Some(version) => {
                let row = self
                    .store
                    .read(|tx| tx.account_by_id(req.account).map_err(ServiceError::from))?;
                checked = crate::accounts::admit(row, version)?;
                resolved = CommandRequest {
                    name: &checked.name,
                    token_version: None,
                    announced: None,
                    command: req.command.clone(),
                    ..*req
                };
                &resolved
            }
            None => req,
        };
        if count {
            self.limits.command(req.account)?;
        }
        let mut committed = None;
        // Every statement of a command finds its rows by key (`write_by_keys`).
        let result = self
            .store
            .write_by_keys(|tx| self.attempt(tx, req, &mut committed));
        if let (Ok(CommandOutcome::Applied(_)), Some((version, game))) = (&result, committed) {
            self.cache.put(req.game, version, game);
            self.notifier.notify(req.game);
        }
        result
    }

    pub(super) fn current_version(&self, game_id: &str) -> Result<i32, ServiceError> {
        let row = self
            .store
            .read(|tx| tx.game(game_id).map_err(ServiceError::from))?;
        row.map(|g| g.version).ok_or(ServiceError::GameNotFound)
    }

    /// Checks `req` against the game (privacy, `If-Match`) and decides it, with the bots'
    /// answers and the new deadlines: the events to append and the game after them. Reads
    /// and writes nothing.
    pub(super) fn decide_on(
        &self,
        row: &GameRow,
        version: i32,
        game: &Game,
        req: &CommandRequest<'_>,
    ) -> Result<(Vec<NewEvent>, Game), ServiceError> {
        // Privacy first: to an outsider a private game does not exist, whatever the
        // request's headers say (a stale If-Match must not reveal its version).
        let invited = req.invite_code.is_some() && req.invite_code == row.invite_code.as_deref();
        if !Access::of(row.public, game).admits_command(req.account, &req.command, invited) {
            return Err(ServiceError::GameNotFound);
        }
        self.decide_admitted(version, game, req)
    }

    /// [`Service::decide_on`] for a sender the game admits (one seated at it, whom every
    /// game admits, needs no index row to know it).
    pub(super) fn decide_admitted(
        &self,
        version: i32,
        game: &Game,
        req: &CommandRequest<'_>,
    ) -> Result<(Vec<NewEvent>, Game), ServiceError> {
        if let Some(expected) = req.if_match
            && expected != version
        {
            return Err(Contention::VersionConflict { current: version }.into());
        }
        let mut game = game.clone();
        let mut dealer = SeededDealer::new(game.seed().unwrap_or_default());
        let actor = Actor::Account {
            id: req.account,
            name: req.name,
        };
        let acted = game.seat_of(req.account);
        let mut events = game.decide(actor, &req.command, &mut dealer)?;
        events.iter().for_each(|e| game.apply(e));
        play_bots(&mut game, &mut dealer, &mut events, self.stand_in)?;
        if let Some(deadlines) = refresh_deadlines(&game, acted, self.clock.now()) {
            game.apply(&deadlines);
            events.push(deadlines);
        }
        // A game move completes the sender's turn (its bank gets the increment); lobby
        // commands, `resign` and the clocks' own commands do not.
        let moved = acted.filter(|_| !req.command.is_lobby_or_resign() && !req.command.is_clock());
        if let Some(clocks) = game.next_clocks(moved, self.clock.now()) {
            game.apply(&clocks);
            events.push(clocks);
        }
        Ok((encode_all(&events)?, game))
    }

    pub(super) fn attempt(
        &self,
        tx: &mut Tx<'_>,
        req: &CommandRequest<'_>,
        committed: &mut Option<(i32, Game)>,
    ) -> Result<CommandOutcome, ServiceError> {
        let request_hash = request_hash(req);
        if let Some(key) = req.idempotency_key
            && let Some(stored) = tx.idempotent_response(req.game, req.account, key)?
        {
            let age = self.clock.naive() - stored.created_at;
            if age > chrono::Duration::hours(IDEMPOTENCY_HOURS) {
                // Past the promised 24 hours the key is free again.
                tx.forget_idempotency_key(req.game, req.account, key)?;
            } else if stored
                .request_hash
                .as_deref()
                .is_some_and(|h| h != request_hash)
            {
                return Err(ServiceError::IdempotencyKeyReused);
            } else {
                // Every stored answer has its version (the migration that added the column
                // filled it in for the older ones).
                let version = stored.version.unwrap_or_default();
                return Ok(CommandOutcome::Replayed {
                    version,
                    body: stored.response,
                });
            }
        }
        let (row, version, before) = self.load_row(tx, req.game)?;
        let (encoded, game) = self.decide_on(&row, version, &before, req)?;
        let new_version = version + i32::try_from(encoded.len()).unwrap_or(i32::MAX);
        tx.append(req.game, version, &index_of(&game, req.game), &encoded)?;
        self.notify_outbox(tx, req.game, new_version, &before, &game)?;
        let response = self.body(tx, &game, &row, new_version, req.account)?;
        *committed = Some((new_version, game));
        if let Some(key) = req.idempotency_key {
            let json = serde_json::to_value(&response).map_err(ServiceError::Encode)?;
            let answer = IdempotentAnswer {
                status: 200,
                version: new_version,
                response: &json,
            };
            tx.save_idempotent_response(req.game, req.account, key, &request_hash, answer)?;
        }
        Ok(CommandOutcome::Applied(Box::new(response)))
    }

    /// The senders of a batch's commands, in order: each one's name, or why it is refused —
    /// a token that no longer speaks for its account (checked on the accounts of the
    /// batch's reads, as the `Caller` extractor does), then the command limit (counted on a
    /// command's first try only: by the reads' statement on PostgreSQL, here on SQLite).
    pub(super) fn batch_senders(
        &self,
        jobs: &[Job],
        reads: &BatchReads,
        window: Option<&crate::limits::CommandWindow>,
    ) -> Result<Vec<Result<String, ServiceError>>, ServiceError> {
        let mut senders: Vec<Result<String, ServiceError>> = jobs
            .iter()
            .map(|j| match j.token_version {
                None => Ok(j.name.clone()),
                Some(version) => {
                    let row = reads.accounts.iter().find(|r| r.id == j.account).cloned();
                    crate::accounts::admit(row, version)
                        .map(|row| row.name)
                        .map_err(ServiceError::from)
                }
            })
            .collect();
        let Some(window) = window else {
            return Ok(senders);
        };
        // Counted: first tries whose token holds.
        let (counted, accounts): (Vec<usize>, Vec<&str>) = jobs
            .iter()
            .zip(&senders)
            .enumerate()
            .filter(|(_, (job, sender))| job.count && sender.is_ok())
            .map(|(i, (job, _))| (i, job.account.as_str()))
            .unzip();
        let verdicts = self
            .limits
            .commands_in(&accounts, window, reads.counts.as_deref())?;
        for (i, verdict) in counted.into_iter().zip(verdicts) {
            if let (Err(e), Some(sender)) = (verdict, senders.get_mut(i)) {
                *sender = Err(e.into());
            }
        }
        Ok(senders)
    }

    /// A batch of the group commit: one transaction for all its commands. When the
    /// transaction fails as a whole (a database error, or a stored event that cannot be
    /// read), nothing of it is kept and each command is tried alone, so one command's
    /// failure is never another's.
    pub(super) fn run_batch(&self, jobs: Vec<Job>, pass: &dyn Fn()) -> Vec<JobResult> {
        let mut committed = Vec::new();
        let mut counted = false;
        match self
            .store
            .by_keys(|tx| self.batch_attempt(tx, &jobs, &mut committed, &mut counted, pass))
        {
            Ok(results) => {
                for (game_id, version, game) in committed {
                    self.notifier.notify(&game_id);
                    self.cache.put(&game_id, version, game);
                }
                results
            }
            // An outage is every command's: no point in waiting for the database again.
            Err(ServiceError::Store(e)) if e.is_unavailable() => {
                let cause = crate::telemetry::Chain(&e).to_string();
                jobs.iter()
                    .map(|_| Err(StoreError::Unavailable(cause.clone()).into()))
                    .collect()
            }
            Err(e) => {
                tracing::warn!(
                    commands = jobs.len(),
                    error = %crate::telemetry::Chain(&e),
                    "a batch failed; each command alone"
                );
                // The batch's count stands (its own statement on PostgreSQL, the process's
                // counters on SQLite): the commands alone are not counted again.
                jobs.iter()
                    .map(|job| {
                        self.try_alone(&job.request(), job.count && !counted)
                            .map(Batched::Done)
                    })
                    .collect()
            }
        }
    }

    /// The batch ([`Store::by_keys`](crate::store::Store::by_keys)): one statement of reads
    /// on PostgreSQL (the senders' accounts, their command count, the games' rows, and the
    /// names of the people seated and whether they have a webhook or a mail address); the
    /// events after the cached states, where a game's row is ahead of them; the commands
    /// decided in the order they came (a command sees the ones before it on the same game);
    /// one append for all games. On PostgreSQL that is two round trips and no transaction,
    /// whatever the batch's size (three when a cached state is behind its game's row): the
    /// reads' statement counts the commands in an unlogged table (no WAL to wait for), and
    /// the append is one statement, atomic alone. Reading in a transaction would not make
    /// the reads agree with the append either (each statement of a `READ COMMITTED`
    /// transaction sees what is committed when it starts); the compare-and-set does. When
    /// someone seated listens, the append and its outbox rows go in one transaction
    /// (`BEGIN` and `COMMIT`: four round trips). A command the rules refuse writes
    /// nothing; a game that moved on meanwhile (another replica) makes its commands
    /// conflict, and they are decided again in a later batch. Once the append is made, the
    /// next batch may start (`pass`): a command of it on a game of this one meets the row
    /// lock until this one commits, and then its compare-and-set fails. The views are
    /// rendered by each command's own caller afterwards, not here, so the batches stay
    /// short. `counted`: whether the batch's commands were counted against their senders'
    /// limit (a count is not undone when the batch fails later).
    ///
    /// Where the backend appends with the reads (PostgreSQL) and every game of the batch is
    /// cached, the commands are decided on the cached states first ([`Service::draft`]) and
    /// the appends go in the reads' statement, which makes them only if the reads let every
    /// command through (`store/batch.rs`): then a batch is one round trip. When they do not
    /// (a token, a limit, someone listening), nothing was appended and the batch goes on
    /// from the reads as above; a game that moved on elsewhere conflicts, and its cached
    /// state is brought up to date for the next try.
    pub(super) fn batch_attempt(
        &self,
        tx: &mut Tx<'_>,
        jobs: &[Job],
        committed: &mut Vec<(String, i32, Game)>,
        counted: &mut bool,
        pass: &dyn Fn(),
    ) -> Result<Vec<JobResult>, ServiceError> {
        let mut unchecked: Vec<&str> = jobs
            .iter()
            .filter(|j| j.token_version.is_some())
            .map(|j| j.account.as_str())
            .collect();
        unchecked.sort_unstable();
        unchecked.dedup();
        let mut ids: Vec<&str> = jobs.iter().map(|j| j.game.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        // First tries count against their senders' limit: in the reads' statement where
        // the backend can (only those whose token holds), else after them.
        let window = self.limits.command_window();
        let count: Vec<(String, &str, Option<i32>)> = match window {
            Some(_) => jobs
                .iter()
                .filter(|j| j.count)
                .map(|j| {
                    let account = j.account.as_str();
                    (
                        crate::limits::CommandWindow::key(account),
                        account,
                        j.token_version,
                    )
                })
                .collect(),
            None => Vec::new(),
        };
        let query = crate::store::BatchQuery {
            accounts: &unchecked,
            games: &ids,
            mail: self.mail_digest.is_some(),
            count: &count,
            window: window.map_or((0, 0), |w| (w.start(), w.length())),
        };
        // Where the backend can append with the reads, a batch whose games are all cached
        // is decided first and sent with them (one round trip when nothing stands in the way).
        let draft = tx.appends_with_reads().then(|| self.draft(jobs)).flatten();
        let (mut reads, made) = match &draft {
            Some(draft) => {
                let sent = self.send_with_reads(tx, jobs, draft, &query)?;
                let counter = if sent.1.is_some() {
                    &self.drafts.appended_with_reads
                } else {
                    &self.drafts.decided_again
                };
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                sent
            }
            None => (tx.batch_reads(&query)?, None),
        };
        if let (Some(draft), None, Some(people)) = (&draft, &made, reads.people.as_deref()) {
            self.remember_listeners(draft, people);
        }
        let senders = self.batch_senders(jobs, &reads, window.as_ref())?;
        *counted = true;
        if let (Some(draft), Some(made)) = (draft, made) {
            let rows = std::mem::take(&mut reads.games);
            return self.drafted(tx, draft, &made, senders, &rows, &reads, committed, pass);
        }
        let rows = std::mem::take(&mut reads.games);
        let cached: Vec<(&GameRow, Option<(i32, Game)>)> = rows
            .iter()
            .map(|row| (row, self.cache.get(&row.id)))
            .collect();
        // Only games whose row is ahead of the cached state have newer events to read.
        let wanted: Vec<(&str, i32)> = cached
            .iter()
            .filter_map(|(row, state)| {
                let after = state.as_ref().map_or(0, |(version, _)| *version);
                (row.version > after).then_some((row.id.as_str(), after))
            })
            .collect();
        let mut newer: HashMap<String, Vec<StoredEvent>> = HashMap::new();
        for event in tx.events_after_many(&wanted)? {
            newer.entry(event.game_id.clone()).or_default().push(event);
        }
        let mut tables: HashMap<&str, Table<'_>> = HashMap::new();
        for (row, state) in cached {
            let id = row.id.as_str();
            let stored = newer.remove(id).unwrap_or_default();
            let (version, game) = Self::fold(id, state, &stored)?;
            tables.insert(
                id,
                Table {
                    row,
                    loaded: version,
                    version,
                    game,
                    events: Vec::new(),
                },
            );
        }
        // Decide in order; a decided command's place holds its states and version.
        let mut decided: Vec<Result<Decided<'_>, ServiceError>> = Vec::with_capacity(jobs.len());
        for (job, sender) in jobs.iter().zip(senders) {
            let name = match sender {
                Ok(name) => name,
                Err(e) => {
                    decided.push(Err(e));
                    continue;
                }
            };
            let req = CommandRequest {
                name: &name,
                token_version: None,
                ..job.request()
            };
            let Some(table) = tables.get_mut(job.game.as_str()) else {
                decided.push(Err(ServiceError::GameNotFound));
                continue;
            };
            decided.push(
                self.decide_on(table.row, table.version, &table.game, &req)
                    .map(|(encoded, after)| {
                        table.version += i32::try_from(encoded.len()).unwrap_or(i32::MAX);
                        table.events.extend(encoded);
                        let before = std::mem::replace(&mut table.game, after.clone());
                        Decided {
                            table: job.game.as_str(),
                            version: table.version,
                            before,
                            after,
                        }
                    }),
            );
        }
        let changed: Vec<(&str, &Table<'_>, GameIndex)> = tables
            .iter()
            .filter(|(_, t)| !t.events.is_empty())
            .map(|(id, t)| (*id, t, index_of(&t.game, id)))
            .collect();
        let appends: Vec<Append<'_>> = changed
            .iter()
            .map(|(id, t, index)| Append {
                game: id,
                expected: t.loaded,
                index,
                events: &t.events,
            })
            .collect();
        // Outbox rows only where someone seated listens (a webhook, a push subscription, or
        // a mail address when mail is on); then each command's own announcements as alone,
        // with the append in one transaction.
        let ok: Vec<&Decided<'_>> = decided.iter().filter_map(|d| d.as_ref().ok()).collect();
        let afters: Vec<&Game> = ok.iter().map(|d| &d.after).collect();
        let seated = seated_people(&afters);
        let (listening, names) = self.seated_facts(tx, &seated, reads.people.as_deref())?;
        let append = |tx: &mut Tx<'_>| -> Result<Vec<&str>, ServiceError> {
            let made: Vec<&str> = changed
                .iter()
                .zip(tx.append_many(&appends)?)
                .filter_map(|((id, _, _), made)| made.then_some(*id))
                .collect();
            if listening {
                for d in ok.iter().filter(|d| made.contains(&d.table)) {
                    self.notify_outbox(tx, d.table, d.version, &d.before, &d.after)?;
                }
            }
            Ok(made)
        };
        let made = if listening {
            tx.atomically(append)?
        } else {
            append(tx)?
        };
        let names = std::sync::Arc::new(names);
        let mut results = Vec::with_capacity(jobs.len());
        for d in decided {
            results.push(match d {
                Err(e) => Err(e),
                Ok(d) => {
                    let row = tables.get(d.table).map(|t| t.row.clone());
                    applied(d, &made, row, &names)
                }
            });
        }
        for id in made {
            if let Some(table) = tables.remove(id) {
                committed.push((id.to_owned(), table.version, table.game));
            }
        }
        pass();
        Ok(results)
    }

    /// A batch decided on the cached states, before anything is read: `None` unless every
    /// game is cached, every sender is seated at their game (whom it admits whatever its
    /// index row says) and the rules take every command. The states may be behind their
    /// games (another replica moved one on): the append's compare-and-set finds that out.
    pub(super) fn draft<'j>(&self, jobs: &'j [Job]) -> Option<Draft<'j>> {
        let now = self.clock.timestamp();
        let listened = |game: &str| {
            self.drafts
                .listened
                .get(game)
                .is_some_and(|at| now - at < LISTENED_SECONDS)
        };
        if jobs.iter().any(|j| listened(&j.game)) {
            return None;
        }
        let mut tables: Vec<(&'j str, Drafted)> = Vec::new();
        let mut decided = Vec::with_capacity(jobs.len());
        for job in jobs {
            let game = job.game.as_str();
            let i = match tables.iter().position(|(id, _)| *id == game) {
                Some(i) => i,
                None => {
                    // Counted as a load once the draft is used.
                    let (version, state) = self.cache.peek(game)?;
                    tables.push((
                        game,
                        Drafted {
                            loaded: version,
                            version,
                            game: state,
                            events: Vec::new(),
                        },
                    ));
                    tables.len() - 1
                }
            };
            let (_, table) = tables.get_mut(i)?;
            table.game.seat_of(&job.account)?;
            // Names are in no event (the rules know people by account only): the sender's
            // name, read with the batch, is needed for the views only.
            let req = CommandRequest {
                token_version: None,
                ..job.request()
            };
            let (encoded, after) = self
                .decide_admitted(table.version, &table.game, &req)
                .ok()?;
            table.version += i32::try_from(encoded.len()).unwrap_or(i32::MAX);
            table.events.extend(encoded);
            let before = std::mem::replace(&mut table.game, after.clone());
            decided.push(Decided {
                table: game,
                version: table.version,
                before,
                after,
            });
        }
        // A game without events to append is left to the batch's usual path.
        if tables.iter().any(|(_, t)| t.events.is_empty()) {
            return None;
        }
        Some(Draft { tables, decided })
    }

    /// Remembers the games of a refused draft at which someone listens (by the reads'
    /// `people`), so that their next commands are read first ([`LISTENED_SECONDS`]).
    pub(super) fn remember_listeners(&self, draft: &Draft<'_>, people: &[PersonRow]) {
        let now = self.clock.timestamp();
        let listens = |account: &str| people.iter().any(|p| p.listens && p.id == account);
        for (id, table) in &draft.tables {
            if table
                .game
                .seats
                .iter()
                .filter_map(rules::Seat::account)
                .any(listens)
            {
                self.drafts.listened.insert(std::sync::Arc::from(*id), now);
            }
        }
    }

    /// The batch's reads with `draft`'s appends ([`Tx::batch_reads_and_append`]): the reads,
    /// and the games whose appends were made, or `None` when the reads stood in the way
    /// (nothing but the count was written).
    pub(super) fn send_with_reads<'j>(
        &self,
        tx: &mut Tx<'_>,
        jobs: &[Job],
        draft: &Draft<'j>,
        query: &crate::store::BatchQuery<'_>,
    ) -> Result<(BatchReads, Option<Vec<&'j str>>), ServiceError> {
        let indexes: Vec<GameIndex> = draft
            .tables
            .iter()
            .map(|(id, t)| index_of(&t.game, id))
            .collect();
        let appends: Vec<Append<'_>> = draft
            .tables
            .iter()
            .zip(&indexes)
            .map(|((id, t), index)| Append {
                game: id,
                expected: t.loaded,
                index,
                events: &t.events,
            })
            .collect();
        let tokens: Vec<(&str, i32)> = jobs
            .iter()
            .filter_map(|j| Some((j.account.as_str(), j.token_version?)))
            .collect();
        let done = tx.batch_reads_and_append(
            query,
            &crate::store::Speculative {
                appends: &appends,
                tokens: &tokens,
                limit: self.limits.command_limit(),
            },
        )?;
        let made = done.made.map(|made| {
            draft
                .tables
                .iter()
                .zip(made)
                .filter_map(|((id, _), made)| made.then_some(*id))
                .collect()
        });
        Ok((done.reads, made))
    }

    /// The results of a batch whose drafted appends the reads let through: each command
    /// applied where its game's append was made, a conflict where the game had moved on
    /// (its cached state is brought up to date for the next try). `senders`: the batch's
    /// own verdicts on the reads, which the statement's guard passed by the same test.
    #[expect(
        clippy::too_many_arguments,
        reason = "the batch's parts, each used once"
    )]
    pub(super) fn drafted<'j>(
        &self,
        tx: &mut Tx<'_>,
        draft: Draft<'j>,
        made: &[&'j str],
        senders: Vec<Result<String, ServiceError>>,
        rows: &[GameRow],
        reads: &BatchReads,
        committed: &mut Vec<(String, i32, Game)>,
        pass: &dyn Fn(),
    ) -> Result<Vec<JobResult>, ServiceError> {
        self.cache
            .count_hits(u64::try_from(draft.tables.len()).unwrap_or(u64::MAX));
        if let Some(Err(e)) = senders.iter().find(|s| s.is_err()) {
            // Cannot be: the guard is the same test on the same rows.
            tracing::error!(error = %e, "a drafted batch was appended for a refused sender");
        }
        let afters: Vec<&Game> = draft.decided.iter().map(|d| &d.after).collect();
        let seated = seated_people(&afters);
        let (_, names) = self.seated_facts(tx, &seated, reads.people.as_deref())?;
        let names = std::sync::Arc::new(names);
        let stale: Vec<(&str, i32)> = draft
            .tables
            .iter()
            .filter(|(id, _)| !made.contains(id))
            .map(|(id, t)| (*id, t.loaded))
            .collect();
        self.catch_up_cached(tx, &stale)?;
        let mut results = Vec::with_capacity(draft.decided.len());
        for (d, sender) in draft.decided.into_iter().zip(senders) {
            results.push(match sender {
                Err(e) => Err(e),
                Ok(_) => {
                    let row = rows.iter().find(|r| r.id == d.table).cloned();
                    applied(d, made, row, &names)
                }
            });
        }
        for (id, table) in draft.tables {
            if made.contains(&id) {
                committed.push((id.to_owned(), table.version, table.game));
            }
        }
        pass();
        Ok(results)
    }

    /// Brings the cached states of `stale` (game, the version its state was cached at) up
    /// to date with the events after them, where the cache still holds that version.
    pub(super) fn catch_up_cached(
        &self,
        tx: &mut Tx<'_>,
        stale: &[(&str, i32)],
    ) -> Result<(), ServiceError> {
        if stale.is_empty() {
            return Ok(());
        }
        let mut newer: HashMap<String, Vec<StoredEvent>> = HashMap::new();
        for event in tx.events_after_many(stale)? {
            newer.entry(event.game_id.clone()).or_default().push(event);
        }
        for (id, loaded) in stale {
            let state = self.cache.peek(id).filter(|(version, _)| version == loaded);
            if state.is_some() {
                let stored = newer.remove(*id).unwrap_or_default();
                let (version, game) = Self::fold(id, state, &stored)?;
                self.cache.put(id, version, game);
            }
        }
        Ok(())
    }

    /// Whether anyone seated listens (a webhook, a push subscription, or a mail address
    /// when mail is on), and the seated people's names: from the batch's first read when it
    /// covers them all (PostgreSQL; someone who joined in this batch is a sender, so
    /// covered), else read now.
    pub(super) fn seated_facts(
        &self,
        tx: &mut Tx<'_>,
        seated: &[&str],
        known: Option<&[PersonRow]>,
    ) -> Result<(bool, HashMap<String, String>), ServiceError> {
        if let Some(known) = known {
            let found: Vec<&PersonRow> = seated
                .iter()
                .filter_map(|id| known.iter().find(|p| p.id == *id))
                .collect();
            if found.len() == seated.len() {
                return Ok((
                    found.iter().any(|p| p.listens),
                    found
                        .iter()
                        .map(|p| (p.id.clone(), p.name.clone()))
                        .collect(),
                ));
            }
        }
        let listening = !seated.is_empty()
            && (!tx.webhooks_of_accounts(seated)?.is_empty()
                || !tx.push_subscriptions_of_accounts(seated)?.is_empty()
                || (self.mail_digest.is_some() && !tx.mail_recipients(seated)?.is_empty()));
        let names = tx.account_names(seated)?.into_iter().collect();
        Ok((listening, names))
    }
}

/// A command waiting for a batch of the group commit (owned: the batch's leader runs it
/// on its own thread).
pub(super) struct Job {
    pub(super) game: String,
    pub(super) account: String,
    pub(super) name: String,
    pub(super) command: Command,
    pub(super) if_match: Option<i32>,
    pub(super) invite_code: Option<String>,
    pub(super) token_version: Option<i32>,
    /// Counted against the caller's command limit (its first try).
    pub(super) count: bool,
}

impl Job {
    fn of(req: &CommandRequest<'_>, count: bool) -> Self {
        Self {
            game: req.game.to_owned(),
            account: req.account.to_owned(),
            name: req.name.to_owned(),
            command: req.command.clone(),
            if_match: req.if_match,
            invite_code: req.invite_code.map(str::to_owned),
            token_version: req.token_version,
            count,
        }
    }

    fn request(&self) -> CommandRequest<'_> {
        CommandRequest {
            game: &self.game,
            account: &self.account,
            name: &self.name,
            command: self.command.clone(),
            if_match: self.if_match,
            idempotency_key: None,
            invite_code: self.invite_code.as_deref(),
            token_version: self.token_version,
            announced: None,
        }
    }
}

/// A command's result from its batch.
pub(super) type JobResult = Result<Batched, ServiceError>;

/// What a batch hands a command's caller.
pub(super) enum Batched {
    /// Answered in full (the command was tried alone after its batch failed).
    Done(CommandOutcome),
    /// Applied; the caller renders its own view of the game.
    Applied(Box<Unrendered>),
}

/// An applied command's game, for its caller's view.
pub(super) struct Unrendered {
    pub(super) game: Game,
    pub(super) row: GameRow,
    pub(super) version: i32,
    pub(super) names: std::sync::Arc<HashMap<String, String>>,
}

/// A game in a batch: as loaded, and as the batch's commands so far left it.
pub(super) struct Table<'r> {
    pub(super) row: &'r GameRow,
    /// The version read from the store: the append's compare-and-set.
    pub(super) loaded: i32,
    pub(super) version: i32,
    pub(super) game: Game,
    /// The events of the batch's commands on this game, in order.
    pub(super) events: Vec<NewEvent>,
}

/// How the group commit's batches decided on cached states went ([`Service::draft_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DraftStats {
    /// Batches whose appends went with their reads and were let through (one round trip
    /// on PostgreSQL; an append may still have lost its compare-and-set).
    pub appended_with_reads: u64,
    /// Batches whose reads stood in the way (a token, a limit, someone listening): decided
    /// again from the reads, as a batch without cached states is.
    pub decided_again: u64,
}

/// How long a game whose draft was refused because someone concerned listens goes without
/// drafts (seconds of the services' clock): its commands are read first meanwhile, as the
/// guard would refuse them again (their outbox rows go with their events).
pub(super) const LISTENED_SECONDS: i64 = 60;

/// How the drafts went ([`DraftStats`]), and the games they leave alone for a while.
pub(super) struct Drafts {
    pub(super) appended_with_reads: std::sync::atomic::AtomicU64,
    pub(super) decided_again: std::sync::atomic::AtomicU64,
    /// Games whose draft someone's listening refused, with when (the clock's seconds).
    /// Bounded; a game evicted early is only drafted once more.
    listened: moka::sync::Cache<std::sync::Arc<str>, i64>,
}

impl Default for Drafts {
    fn default() -> Self {
        Self {
            appended_with_reads: std::sync::atomic::AtomicU64::default(),
            decided_again: std::sync::atomic::AtomicU64::default(),
            listened: moka::sync::Cache::new(100_000),
        }
    }
}

impl std::fmt::Debug for Drafts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Drafts")
            .field("appended_with_reads", &self.appended_with_reads)
            .field("decided_again", &self.decided_again)
            .finish_non_exhaustive()
    }
}

/// A batch decided on cached states ([`Service::draft`]).
pub(super) struct Draft<'j> {
    /// Its games, in the order first met.
    pub(super) tables: Vec<(&'j str, Drafted)>,
    /// Its commands, in order.
    pub(super) decided: Vec<Decided<'j>>,
}

/// A game of a [`Draft`]: as cached, and as the batch's commands left it.
pub(super) struct Drafted {
    /// The cached version: the append's compare-and-set.
    pub(super) loaded: i32,
    pub(super) version: i32,
    pub(super) game: Game,
    /// The events of the batch's commands on this game, in order.
    pub(super) events: Vec<NewEvent>,
}

/// A command of a batch that the rules accepted.
pub(super) struct Decided<'j> {
    pub(super) table: &'j str,
    /// The game's version after it.
    pub(super) version: i32,
    pub(super) before: Game,
    pub(super) after: Game,
}

/// A decided command's result: applied, for its caller to render, where its game's append
/// was made (`made`); a conflict where the game had moved on.
fn applied(
    d: Decided<'_>,
    made: &[&str],
    row: Option<GameRow>,
    names: &std::sync::Arc<HashMap<String, String>>,
) -> JobResult {
    if !made.contains(&d.table) {
        return Err(ServiceError::Store(StoreError::Conflict));
    }
    Ok(Batched::Applied(Box::new(Unrendered {
        game: d.after,
        row: row.ok_or(ServiceError::GameNotFound)?,
        version: d.version,
        names: names.clone(),
    })))
}

/// What an idempotency key is bound to: a SHA-256 of the command and the invite code.
pub(super) fn request_hash(req: &CommandRequest<'_>) -> String {
    use sha2::Digest;
    let canonical = serde_json::to_string(&(&req.command, req.invite_code)).unwrap_or_default();
    hex::encode(sha2::Sha256::digest(canonical.as_bytes()))
}

/// The server's randomness for bots.
pub(super) struct BotDice(pub(super) rand::rngs::ThreadRng);

impl rules::bots::Random for BotDice {
    fn below(&mut self, n: usize) -> usize {
        rand::RngExt::random_range(&mut self.0, 0..n.max(1))
    }
}

/// The strategy that plays a bot-controlled seat: a seated bot's own, and the stand-in
/// for a person who resigned.
pub(super) fn strategy_of(seat: &rules::Seat, stand_in: BotStrategy) -> BotStrategy {
    match &seat.occupant {
        Some(rules::Occupant::Bot { strategy, .. }) => *strategy,
        _ => stand_in,
    }
}

/// Lets every bot-controlled seat that must act choose its move, until a person must act
/// or the game ends.
pub(super) fn play_bots(
    game: &mut Game,
    dealer: &mut SeededDealer,
    events: &mut Vec<Event>,
    stand_in: BotStrategy,
) -> Result<(), ServiceError> {
    let mut dice = BotDice(rand::rng());
    while let Some(seat) = game.next_bot() {
        let strategy = game
            .seats
            .get(usize::from(seat))
            .map_or(stand_in, |s| strategy_of(s, stand_in));
        let Some(choice) = rules::bots::choose(game, seat, strategy, &mut dice) else {
            break;
        };
        let produced = game.decide(Actor::Bot { seat }, &choice, dealer)?;
        produced.iter().for_each(|e| game.apply(e));
        events.extend(produced);
    }
    Ok(())
}
