//! Why a valid write did not land: another write came first. The games and the score pads
//! both append with optimistic concurrency and answer the same two ways; the HTTP layer
//! maps them to `409 version_conflict` and `503 busy`.

/// Another write came first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Contention {
    /// `If-Match` named another version.
    #[error("the game is at version {current}")]
    VersionConflict {
        /// The version now.
        current: i32,
    },
    /// Concurrent writers kept winning; the client may retry.
    #[error("the game is busy; try again")]
    Busy,
}
