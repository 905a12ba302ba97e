//! Ids parsed at the edge. A value of these types is a well-formed id (a UUID in its
//! canonical lower-case text), so that what is given an id never checks it by hand: the
//! HTTP layer parses a path into a [`GameId`], [`PadId`] or [`AccountId`] (anything else
//! is a 404 there), and passes it on. The kinds cannot be mixed up: a [`PadId`] is not a
//! [`GameId`]. Each derefs to `str` for the store, which keeps ids as text.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

/// An id of kind `K` (see [`GameId`], [`PadId`], [`AccountId`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id<K> {
    text: String,
    kind: PhantomData<K>,
}

/// Games.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Game {}
/// Score pads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pad {}
/// Accounts (players).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Account {}

/// Tournaments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tournament {}
/// A game's id.
pub type GameId = Id<Game>;
/// A tournament's id.
pub type TournamentId = Id<Tournament>;
/// A score pad's id.
pub type PadId = Id<Pad>;
/// An account's id.
pub type AccountId = Id<Account>;

impl<K> Id<K> {
    /// The id written in `raw`, in canonical form; `None` when `raw` is no UUID.
    #[must_use]
    pub fn parse(raw: &str) -> Option<Self> {
        uuid::Uuid::parse_str(raw).ok().map(|u| Self {
            text: u.to_string(),
            kind: PhantomData,
        })
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl<K> Deref for Id<K> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

impl<K> fmt::Display for Id<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<K> From<Id<K>> for String {
    fn from(id: Id<K>) -> Self {
        id.text
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)]

    use super::{GameId, PadId};

    #[test]
    fn an_id_is_a_uuid_in_canonical_form() {
        let id = GameId::parse("0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B").expect("a UUID");
        assert_eq!(id.as_str(), "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
        assert_eq!(&*id, id.to_string());
        for bad in ["", "game", "0190a1b2-c3d4-7e5f-8a9b", "../0190a1b2"] {
            assert!(PadId::parse(bad).is_none(), "{bad}");
        }
    }
}
