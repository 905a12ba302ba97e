//! Who may read a game and who may send it a command: the one visibility rule, used by
//! reads, commands and live streams alike.
//!
//! A public game is open to every account. To anyone else a private game does not exist
//! (every request about it answers "not found", whatever its headers): only its seated
//! players and the people a rematch keeps a seat for may read it, and an outsider may only
//! `join`, with the invite code or a seat kept for them.

use super::*;

/// What the rule is decided on, as of one read of a game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// Public games are visible to every account.
    pub public: bool,
    /// Each seat's account, if any.
    pub seats: Vec<Option<String>>,
    /// Accounts a free seat is kept for (a rematch).
    pub kept: Vec<String>,
}

impl Access {
    /// The access to `game`, whose index row says whether it is `public`.
    #[must_use]
    pub fn of(public: bool, game: &Game) -> Self {
        Self {
            public,
            seats: game
                .seats
                .iter()
                .map(|s| s.account().map(str::to_owned))
                .collect(),
            kept: game
                .seats
                .iter()
                .filter(|s| s.occupant.is_none())
                .filter_map(|s| s.reserved_for.clone())
                .collect(),
        }
    }

    /// The seat of `account`.
    #[must_use]
    pub fn seat_of(&self, account: &str) -> Option<u8> {
        self.seats
            .iter()
            .position(|s| s.as_deref() == Some(account))
            .and_then(|i| u8::try_from(i).ok())
    }

    /// Whether a rematch keeps a free seat for `account`.
    #[must_use]
    pub fn keeps_seat_for(&self, account: &str) -> bool {
        self.kept.iter().any(|k| k == account)
    }

    /// Whether `account` may read the game at all.
    #[must_use]
    pub fn admits(&self, account: &str) -> bool {
        self.public || self.seat_of(account).is_some() || self.keeps_seat_for(account)
    }

    /// Whether `account` may send `command`: anyone who may read the game may try any
    /// command (the rules then decide), except that an outsider to a private game (one
    /// whose seat a rematch keeps, or who brings the invite code, `invited`) may only join.
    #[must_use]
    pub fn admits_command(&self, account: &str, command: &Command, invited: bool) -> bool {
        if self.public || self.seat_of(account).is_some() {
            return true;
        }
        matches!(command, Command::Join {}) && (invited || self.keeps_seat_for(account))
    }
}

impl Service {
    /// The game's index row, version and state, if `viewer` may read it ([`Access::admits`];
    /// others get "not found").
    pub(super) fn visible(
        &self,
        tx: &mut Tx<'_>,
        game_id: &str,
        viewer: &str,
    ) -> Result<(GameRow, i32, Game), ServiceError> {
        let (row, version, game) = self.load_row(tx, game_id)?;
        if !Access::of(row.public, &game).admits(viewer) {
            return Err(ServiceError::GameNotFound);
        }
        if self.cache.would_keep(game_id, version) {
            self.cache.put(game_id, version, game.clone());
        }
        Ok((row, version, game))
    }
}
