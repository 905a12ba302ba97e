//! Why a command or a set-up is refused: facts about the game, no HTTP.

/// A command or set-up that the rules refuse. Each variant has a stable [`RuleError::code`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// Options out of range or a combination the rules forbid.
    #[error("invalid options: {0}")]
    InvalidOptions(String),
    /// A valid option this server does not play yet.
    #[error("option not supported yet: {0}")]
    UnsupportedOption(String),
    /// A prepared deal that is incomplete or impossible.
    #[error("invalid deal: {0}")]
    InvalidDeal(String),
    /// The command needs the lobby.
    #[error("the game is not in the lobby")]
    NotInLobby,
    /// The command needs a running game.
    #[error("the game is not running")]
    GameNotActive,
    /// The caller already has a seat.
    #[error("you already have a seat in this game")]
    AlreadySeated,
    /// No free seat.
    #[error("every seat is taken")]
    GameFull,
    /// The caller has no seat in this game.
    #[error("you are not a player of this game")]
    NotAPlayer,
    /// Only the host may do this.
    #[error("only the host may do this")]
    NotHost,
    /// The host cannot leave their own lobby.
    #[error("the host cannot leave the lobby")]
    HostCannotLeave,
    /// The seat does not exist or is empty, or is the host's.
    #[error("seat {seat} cannot be removed")]
    InvalidSeat {
        /// The seat named.
        seat: u8,
    },
    /// `start` before every seat is filled.
    #[error("not every seat is filled")]
    SeatsNotFilled,
    /// Nothing is asked of the caller now, or something else is.
    #[error("it is not your turn to {action}")]
    NotYourTurn {
        /// The command tried.
        action: &'static str,
    },
    /// The card is not in the caller's hand.
    #[error("card {card} is not in your hand")]
    CardNotInHand {
        /// The card named.
        card: u8,
    },
    /// No such row.
    #[error("there is no row {row}")]
    NoSuchRow {
        /// The row named.
        row: u8,
    },
    /// The seat was handed to a bot.
    #[error("you resigned from this game")]
    Resigned,
    /// The card is not among the cards just taken.
    #[error("card {card} is not among the cards you took")]
    CardNotTaken {
        /// The card named.
        card: u8,
    },
    /// The card is not in the open draft.
    #[error("card {card} is not available in the draft")]
    CardNotAvailable {
        /// The card named.
        card: u8,
    },
    /// A player without chips cannot pass.
    #[error("you have no chips left: take the card")]
    NoChips,
    /// The command does not exist in this ruleset.
    #[error("{command} is not a command of this game")]
    UnknownCommand {
        /// The command tried.
        command: &'static str,
    },
    /// A time control out of range.
    #[error("invalid time control: {0}")]
    InvalidTimeControl(String),
    /// A clock command in a game without a time control.
    #[error("this game has no clocks")]
    NoTimeControl,
    /// `hand_to_bot` names a seat whose clock is not flagged (or the caller's own).
    #[error("seat {seat} is not waiting for the others after its clock ran out")]
    NotFlagged {
        /// The seat named.
        seat: u8,
    },
    /// Pauses are for correspondence games only.
    #[error("only correspondence games can be paused")]
    PauseNotAllowed,
    /// `propose_pause` while a pause is proposed or in force.
    #[error("a pause is already proposed")]
    PauseAlreadyProposed,
    /// `accept_pause` or `decline_pause` with no pause proposed.
    #[error("no pause is proposed")]
    NoPauseProposed,
    /// `accept_pause` a second time.
    #[error("you accepted the pause already")]
    PauseAlreadyAccepted,
    /// `resume` while the clocks run.
    #[error("the clocks are not paused")]
    NotPaused,
    /// A tournament set-up out of range.
    #[error("invalid tournament: {0}")]
    InvalidTournament(String),
    /// Joining, leaving or starting a tournament that is no longer open.
    #[error("the tournament is no longer open")]
    TournamentNotOpen,
    /// Joining a tournament twice.
    #[error("you have already joined this tournament")]
    AlreadyJoined,
    /// Joining a tournament that has as many people as it takes.
    #[error("the tournament is full")]
    TournamentFull,
    /// Leaving a tournament one has not joined.
    #[error("you have not joined this tournament")]
    NotJoined,
    /// Starting a tournament with fewer than two people.
    #[error("a tournament needs at least two people to start")]
    TooFewPlayers,
}

impl RuleError {
    /// Stable machine-readable code.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidOptions(_) => "invalid_options",
            Self::UnsupportedOption(_) => "unsupported_option",
            Self::InvalidDeal(_) => "invalid_deal",
            Self::NotInLobby => "not_in_lobby",
            Self::GameNotActive => "game_not_active",
            Self::AlreadySeated => "already_seated",
            Self::GameFull => "game_full",
            Self::NotAPlayer => "not_a_player",
            Self::NotHost => "not_host",
            Self::HostCannotLeave => "host_cannot_leave",
            Self::InvalidSeat { .. } => "invalid_seat",
            Self::SeatsNotFilled => "seats_not_filled",
            Self::NotYourTurn { .. } => "not_your_turn",
            Self::CardNotInHand { .. } => "card_not_in_hand",
            Self::NoSuchRow { .. } => "no_such_row",
            Self::Resigned => "resigned",
            Self::CardNotTaken { .. } => "card_not_taken",
            Self::CardNotAvailable { .. } => "card_not_available",
            Self::NoChips => "no_chips",
            Self::UnknownCommand { .. } => "unknown_command",
            Self::InvalidTimeControl(_) => "invalid_time_control",
            Self::NoTimeControl => "no_time_control",
            Self::NotFlagged { .. } => "not_flagged",
            Self::PauseNotAllowed => "pause_not_allowed",
            Self::PauseAlreadyProposed => "pause_already_proposed",
            Self::NoPauseProposed => "no_pause_proposed",
            Self::PauseAlreadyAccepted => "pause_already_accepted",
            Self::NotPaused => "not_paused",
            Self::InvalidTournament(_) => "invalid_tournament",
            Self::TournamentNotOpen => "tournament_not_open",
            Self::AlreadyJoined => "already_joined",
            Self::TournamentFull => "tournament_full",
            Self::NotJoined => "not_joined",
            Self::TooFewPlayers => "too_few_players",
        }
    }
}
