//! Reads: a game as one caller sees it, game lists and the inbox, event pages, the
//! stream's pages and stream tickets.

use super::*;

/// Which games a list shows.
pub struct ListRequest<'a> {
    /// The caller.
    pub account: &'a str,
    /// Only the caller's games.
    pub mine: bool,
    /// The inbox: the caller's games in which the caller must act now, earliest deadline
    /// first.
    pub inbox: bool,
    /// Only games in this state.
    pub status: Option<Status>,
    /// Only games of this ruleset.
    pub ruleset: Option<rules::Ruleset>,
    /// Only games with at least this many free seats (lobbies with room).
    pub min_free_seats: Option<i32>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<&'a str>,
    /// Page size.
    pub limit: i64,
}

/// A page of games.
pub struct GameListPage {
    /// The games, as the caller sees them in a list.
    pub games: Vec<GameSummary>,
    /// The cursor of the next page, `None` at the end.
    pub next_cursor: Option<String>,
}

/// The inbox is sorted in memory from at most this many games.
pub(super) const MAX_INBOX: i64 = 2_000;

impl Service {
    /// Loads a game as `viewer` sees it.
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn view(&self, game_id: &str, viewer: &str) -> Result<GameBody, ServiceError> {
        self.store.read(|tx| {
            let (row, version, game) = self.visible(tx, game_id, viewer)?;
            self.body(tx, &game, &row, version, viewer)
        })
    }

    /// Issues a stream ticket: a random, single-use credential for the game's live stream,
    /// bound to `account` and `game` and to the token version `token_version` of the token
    /// that asked for it, valid for the configured time (returned in seconds). Only its hash
    /// is stored. The game must be visible to the account.
    ///
    /// # Errors
    /// Unknown or invisible game, storage failure.
    pub fn issue_stream_ticket(
        &self,
        game_id: &str,
        account: &str,
        token_version: i32,
    ) -> Result<(String, u64), ServiceError> {
        // 256 random bits, hex (the same generator as shuffle seeds).
        let ticket = fairness::new_seed();
        let ttl = self.ticket_ttl.as_secs();
        let expires_at =
            self.clock.naive() + chrono::Duration::seconds(i64::try_from(ttl).unwrap_or(60));
        self.store.write(|tx| {
            self.visible(tx, game_id, account)?;
            tx.insert_stream_ticket(
                &ticket_hash(&ticket),
                account,
                token_version,
                game_id,
                expires_at,
            )?;
            Ok::<_, ServiceError>(())
        })?;
        Ok((ticket, ttl))
    }

    /// Redeems a stream ticket for `game_id`: the account it was issued to and the token
    /// version it was issued under, once, before it expires, while the account exists and
    /// its token version is still that one; `None` for an unknown, used, expired or other
    /// game's ticket, and for one issued before a logout everywhere, a password change or
    /// the account's deletion.
    ///
    /// # Errors
    /// Storage failure.
    pub fn redeem_stream_ticket(
        &self,
        game_id: &str,
        ticket: &str,
    ) -> Result<Option<(String, i32)>, ServiceError> {
        let now = self.clock.naive();
        self.store.write(|tx| {
            let Some((account, version)) =
                tx.redeem_stream_ticket(&ticket_hash(ticket), game_id, now)?
            else {
                return Ok(None);
            };
            let row = tx.account_by_id(&account)?;
            Ok(crate::accounts::admit(row, version)
                .ok()
                .map(|_| (account, version)))
        })
    }

    /// A page of games: without `mine` the caller's and the public ones, newest first and
    /// paged by id; the inbox ordered by the caller's deadline (games without one after,
    /// newest first) and paged by position. The cursor is opaque to clients.
    ///
    /// # Errors
    /// A cursor this list did not hand out, storage failure.
    pub fn list_games(&self, req: &ListRequest<'_>) -> Result<GameListPage, ServiceError> {
        use base64::Engine;
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let cursor = match req.cursor {
            None => None,
            Some(c) => Some(
                URL_SAFE_NO_PAD
                    .decode(c)
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                    .filter(|c| !c.is_empty())
                    .ok_or(ServiceError::InvalidCursor)?,
            ),
        };
        let offset: usize = match (&cursor, req.inbox) {
            (Some(c), true) => c.parse().map_err(|_| ServiceError::InvalidCursor)?,
            _ => 0,
        };
        let before = cursor.filter(|_| !req.inbox);
        let query = ListQuery {
            account: req.account,
            mine: req.mine,
            awaiting: req.inbox,
            status: req.status.map(status_text),
            ruleset: req.ruleset.map(rules::Ruleset::name),
            before_id: before.as_deref(),
            min_free_seats: req.min_free_seats,
            limit: if req.inbox { MAX_INBOX } else { req.limit },
        };
        let mut games = self
            .store
            .read_replica(Some(req.account), |tx| tx.list_games(&query))?;
        let limit = usize::try_from(req.limit).unwrap_or(usize::MAX);
        if !req.inbox {
            let next_cursor = (games.len() == limit)
                .then(|| games.last().map(|g| URL_SAFE_NO_PAD.encode(&g.game.id)))
                .flatten();
            let games = games.into_iter().map(|g| summary(g, req.account)).collect();
            return Ok(GameListPage { games, next_cursor });
        }
        let deadline = |row: &GameSummaryRow| {
            row.seats
                .iter()
                .find(|s| s.account_id.as_deref() == Some(req.account))
                .and_then(|s| s.deadline_at)
        };
        games.sort_by(|a, b| match (deadline(a), deadline(b)) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => b.game.id.cmp(&a.game.id),
        });
        let games: Vec<GameSummary> = games
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|g| summary(g, req.account))
            .collect();
        let next_cursor =
            (games.len() == limit).then(|| URL_SAFE_NO_PAD.encode((offset + limit).to_string()));
        Ok(GameListPage { games, next_cursor })
    }

    /// Forgets idempotency keys older than 24 hours.
    ///
    /// # Errors
    /// Storage failure.
    pub fn prune_idempotency_keys(&self) -> Result<usize, ServiceError> {
        let before = self.clock.naive() - chrono::Duration::hours(IDEMPOTENCY_HOURS);
        self.store.write(|tx| {
            tx.prune_idempotency_keys(before)
                .map_err(ServiceError::from)
        })
    }

    /// A page of a game's events as `viewer` may read them.
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn events(
        &self,
        game_id: &str,
        viewer: &str,
        after: i32,
        limit: i64,
    ) -> Result<Vec<ReadEvent>, ServiceError> {
        self.store.read(|tx| {
            let (_, _, game) = self.visible(tx, game_id, viewer)?;
            let seat = game.seat_of(viewer);
            let audiences: Vec<String> = std::iter::once(Audience::Public)
                .chain(seat.map(Audience::Seat))
                .map(Audience::as_text)
                .collect();
            let rows = tx.events_page(game_id, after, &audiences, limit)?;
            Ok(rows.into_iter().map(ReadEvent::from).collect())
        })
    }

    /// A page of the game's events after `after` for live streams, for every seat at once
    /// (one read serves all of a game's streams, [`live`]): the events of every
    /// audience but the server's, who may see which ([`Access`]), and `upto`, the seq up
    /// to which the page covers the game (events past the last row and up to `upto` are for
    /// the server only). The caller filters each event by its viewer's audience. With
    /// `after = i32::MAX` it only reads the game's current version as `upto`.
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn stream_page(
        &self,
        game_id: &str,
        after: i32,
        limit: i64,
    ) -> Result<StreamPage, ServiceError> {
        self.store.read(|tx| {
            let (row, version, game) = self.load_row(tx, game_id)?;
            if self.cache.would_keep(game_id, version) {
                self.cache.put(game_id, version, game.clone());
            }
            let view = Access::of(row.public, &game);
            let audiences: Vec<String> = std::iter::once(Audience::Public)
                .chain(
                    (0..game.seats.len()).filter_map(|s| u8::try_from(s).ok().map(Audience::Seat)),
                )
                .map(Audience::as_text)
                .collect();
            let rows = tx.events_page(game_id, after, &audiences, limit)?;
            let last = rows.last().map(|r| r.seq);
            // Appends commit in seq order and this read began after `load`, so a short page
            // covers every event up to `version`; a full one only up to its last row.
            let upto = if i64::try_from(rows.len()).unwrap_or(i64::MAX) < limit {
                version.max(last.unwrap_or(0))
            } else {
                last.unwrap_or(after)
            };
            Ok(StreamPage {
                view,
                events: rows.into_iter().map(ReadEvent::from).collect(),
                upto,
            })
        })
    }
}

/// A page read by [`Service::stream_page`].
#[derive(Debug)]
pub struct StreamPage {
    /// Who may see what.
    pub view: Access,
    /// Events of every audience but the server's, in seq order.
    pub events: Vec<ReadEvent>,
    /// The page covers the game up to this seq.
    pub upto: i32,
}

/// The stored form of a stream ticket: its SHA-256, hex.
pub(super) fn ticket_hash(ticket: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(ticket.as_bytes()))
}

/// A game in a list.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct GameSummary {
    /// The game's id (a UUID), as in `/v1/games/{id}`.
    pub id: String,
    /// `6-nimmt`, `11-nimmt`, `x-nimmt` or `nimm-oder-schieb`.
    pub ruleset: String,
    /// The name the creator gave; `null` when none was given.
    #[schema(required = true)]
    pub name: Option<String>,
    /// `lobby`, `active`, `finished`.
    pub status: String,
    /// Number of events in the game's stream (the game's `ETag`).
    pub version: i32,
    /// Number of seats, bots and free seats included.
    pub players: usize,
    /// Seats taken by people (bots not counted).
    pub people: usize,
    /// Seats nobody holds yet (lobbies).
    pub free_seats: i32,
    /// Listed and open to spectators.
    pub public: bool,
    /// The caller's seat, if any.
    #[schema(required = true)]
    pub your_seat: Option<i32>,
    /// The caller must act now.
    pub your_turn: bool,
    /// What is asked of the caller now (`play_card`, `take_row`, `pass`, `take`, …).
    pub your_actions: Vec<String>,
    /// When the caller must have acted (games with move deadlines; UTC, RFC 3339).
    #[schema(format = DateTime)]
    #[schema(required = true)]
    pub deadline_at: Option<String>,
    /// Creation time (UTC, RFC 3339).
    #[schema(format = DateTime)]
    pub created_at: String,
    /// Last change (UTC, RFC 3339).
    #[schema(format = DateTime)]
    pub updated_at: String,
    /// The game's time control; absent when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub time_control: Option<rules::TimeControl>,
}

/// The list entry of `row` for `account`: its seat, turn, actions and deadline there.
pub(super) fn summary(row: GameSummaryRow, account: &str) -> GameSummary {
    let mine = row
        .seats
        .iter()
        .find(|s| s.account_id.as_deref() == Some(account));
    GameSummary {
        time_control: row
            .game
            .time_control
            .as_deref()
            .and_then(|t| serde_json::from_str(t).ok()),
        your_seat: mine.map(|s| s.seat),
        your_turn: mine.is_some_and(|s| s.awaiting),
        your_actions: mine
            .and_then(|s| s.action.as_deref())
            .filter(|_| mine.is_some_and(|s| s.awaiting))
            .map(|a| a.split(',').map(str::to_owned).collect())
            .unwrap_or_default(),
        deadline_at: mine
            .and_then(|s| s.deadline_at)
            .map(|t| t.and_utc().to_rfc3339()),
        players: row.seats.len(),
        people: row.seats.iter().filter(|s| s.account_id.is_some()).count(),
        free_seats: row.game.free_seats,
        public: row.game.public,
        id: row.game.id,
        ruleset: row.game.ruleset,
        name: row.game.name,
        status: row.game.status,
        version: row.game.version,
        created_at: row.game.created_at.and_utc().to_rfc3339(),
        updated_at: row.game.updated_at.and_utc().to_rfc3339(),
    }
}
