//! The vocabulary of the row games: commands (imperative), events (past tense), seats,
//! deals and who may read what.

use serde::{Deserialize, Serialize};

use crate::card::{Card, Cards};
use crate::options::{Options, Ruleset};

/// The version of these rules that new games are pinned to.
pub const RULES_VERSION: u32 = 1;

/// Where a game is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Status {
    /// Seats are being filled.
    Lobby,
    /// Being played.
    Active,
    /// Over; `winners` is set.
    Finished,
}

/// A bot's way of choosing moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum BotStrategy {
    /// A uniformly random legal move.
    #[default]
    Random,
    /// Avoids taking rows: plays the card with the lowest expected penalty.
    Heuristic,
    /// Searches: plays out deals consistent with what the seat may see (its hand, the
    /// public table) and picks the move with the best average outcome.
    Expert,
}

/// Who sits at a seat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Occupant {
    /// A person's account (the rules know no names of people; views add them).
    Human {
        /// Account id (opaque to the rules).
        account: String,
    },
    /// A bot.
    Bot {
        /// How it plays.
        strategy: BotStrategy,
        /// The bot's name, `Bot N` with N = seat + 1.
        name: String,
    },
}

/// One seat at the table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seat {
    /// Who sits here (`None`: free, lobby only).
    pub occupant: Option<Occupant>,
    /// The human resigned; a bot plays the seat.
    pub resigned: bool,
    /// Kept for this account until it joins or the reservations are released (a rematch).
    pub reserved_for: Option<String>,
}

impl Seat {
    /// Whether a bot chooses this seat's moves.
    #[must_use]
    pub fn bot_controlled(&self) -> bool {
        // Both read (`|`): which of the two holds changes from seat to seat at a table of
        // bots and resigned people, a branch the bots' games mispredict.
        self.resigned | matches!(self.occupant, Some(Occupant::Bot { .. }))
    }

    /// The account sitting here, if a person.
    #[must_use]
    pub fn account(&self) -> Option<&str> {
        match &self.occupant {
            Some(Occupant::Human { account, .. }) => Some(account),
            _ => None,
        }
    }

    /// The display name of a bot (people's names are not part of the game).
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        match &self.occupant {
            Some(Occupant::Bot { name, .. }) => Some(name),
            Some(Occupant::Human { .. }) | None => None,
        }
    }
}

/// A deal: the rows' first cards and every seat's hand.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Deal {
    /// Row games: one list per row, each holding the row's starting card.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<Vec<Card>>,
    /// Row games: one hand per seat, seat 0 first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hands: Vec<Vec<Card>>,
    /// nimm-oder-schieb: the 24 values of the draw pile, top first (the other 9 of 3–35 are
    /// the removed ones).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub draw_pile: Vec<Card>,
}

/// An end of a row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Side {
    /// Before the first card (`placement: both_ends`).
    Left,
    /// After the last card.
    #[default]
    Right,
}

impl Side {
    /// Whether this is the right end (the default, left out of events).
    #[must_use]
    pub fn is_right(&self) -> bool {
        *self == Self::Right
    }
}

/// A seat and a card, e.g. a revealed selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SeatCard {
    /// The seat (0-based) the card belongs to.
    pub seat: u8,
    /// The card that seat selected.
    pub card: Card,
}

/// The selections of a turn as `cards_revealed` lists them: one per seat, all inline, so
/// a reveal costs no allocation. Written as a JSON array like a `Vec`.
pub type SeatCards = smallvec::SmallVec<[SeatCard; crate::options::MAX_SEATS]>;

// The inline lists must not make every event bigger: `CardKept`'s two lists set the size.
const _: () = assert!(std::mem::size_of::<Event>() <= 56);

/// Shuffles for the rules. The rules never draw randomness themselves.
pub trait Dealer {
    /// Puts `cards` (ascending on entry) into the order of the deal for `round` (1-based).
    /// The deal then gives seat 0 the first hand (ten cards; eight in x-nimmt), seat 1 the
    /// next, …, and the cards after the last hand start the rows, one each, in row order.
    fn shuffle(&mut self, round: u16, cards: &mut [Card]);
}

/// What a command needs to know about who sent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor<'a> {
    /// A person, by account.
    Account {
        /// The sender's account id (opaque to the rules).
        id: &'a str,
        /// Display name. Not recorded in any event (events name accounts by id only).
        name: &'a str,
    },
    /// The server acting for a bot-controlled seat.
    Bot {
        /// The bot-controlled seat (0-based) the move is for.
        seat: u8,
    },
    /// The server acting for a seat whose move deadline passed (game moves only).
    Deadline {
        /// The seat (0-based) whose deadline passed.
        seat: u8,
    },
}

/// The data of a `game_created` event (boxed in [`Event`]: it is the largest and comes once).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GameCreation {
    /// The game played: `6-nimmt`, `11-nimmt`, `x-nimmt` or `nimm-oder-schieb`.
    pub ruleset: Ruleset,
    /// The options in force: the preset applied, defaults filled in.
    pub options: Options,
    /// Number of seats.
    pub players: u8,
    /// Display name of the game.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub name: Option<String>,
    /// Rules version the game is pinned to.
    pub rules_version: u32,
    /// Whether the creator prepared the first deal.
    pub prepared_deal: bool,
    /// Hex SHA-256 of the game's secret shuffle seed.
    pub commitment: String,
    /// The finished game this one is a rematch of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub rematch_of: Option<String>,
    /// Seats kept for the people of that game until they join.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reservations: Vec<Reservation>,
    /// The game starts by itself when its last seat is taken (quick play).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_start: bool,
    /// The tournament table this game is (its seed stays secret until the round ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub tournament: Option<TournamentLink>,
}

/// Where a tournament game belongs: the tournament, its round and the table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TournamentLink {
    /// The tournament's id.
    pub tournament: String,
    /// The round (1-based).
    pub round: u8,
    /// The table (1-based).
    pub table: u16,
}

/// A seat kept for an account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Reservation {
    /// The seat (0-based) kept for `account`.
    pub seat: u8,
    /// The account it is kept for.
    pub account: String,
}

/// The data of a `nos_game_ended` event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NosGameEnd {
    /// Game of the match.
    pub game: u16,
    /// Card points minus chips, per seat.
    pub scores: Vec<i32>,
    /// Chips left, per seat.
    pub chips: Vec<u8>,
    /// The 9 cards that were removed unseen.
    pub removed: Vec<Card>,
}

/// When a seat must have acted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SeatDeadline {
    /// The seat (0-based) that must act by `at`.
    pub seat: u8,
    /// The command asked of it.
    pub action: String,
    /// The instant (UTC; RFC 3339 with milliseconds on the wire).
    #[serde(with = "rfc3339_millis")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub at: chrono::DateTime<chrono::Utc>,
}

/// An instant on the wire: RFC 3339 in UTC with milliseconds (`2026-12-01T10:00:00.000Z`),
/// the form deadline events have always been stored in.
pub mod rfc3339_millis {
    use chrono::{DateTime, SecondsFormat, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    /// The wire form of an instant.
    #[must_use]
    pub fn format(at: &DateTime<Utc>) -> String {
        at.to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    /// Serialises an instant.
    ///
    /// # Errors
    /// The serializer's.
    pub fn serialize<S: Serializer>(at: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format(at))
    }

    /// Parses an RFC 3339 instant (any offset) into UTC.
    ///
    /// # Errors
    /// A string that is not RFC 3339.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let text = String::deserialize(d)?;
        DateTime::parse_from_rfc3339(&text)
            .map(|t| t.with_timezone(&Utc))
            .map_err(serde::de::Error::custom)
    }
}

/// Commands, as clients send them (`{"type": "play_card", "card": 17}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Command {
    /// Take the lowest free seat (lobby).
    Join {},
    /// Give up one's seat (lobby; not the host).
    Leave {},
    /// Seat a bot (host, lobby).
    AddBot {
        /// How it plays; `random` by default.
        #[serde(default)]
        strategy: BotStrategy,
    },
    /// Free a seat (host, lobby).
    RemoveSeat {
        /// The seat to free.
        seat: u8,
    },
    /// Start the game (host, every seat filled).
    Start {},
    /// Select a hand card face down, or replace the selection before the reveal.
    PlayCard {
        /// The card to select: one in the caller's hand.
        card: Card,
    },
    /// Take a row when one's card fits no row (0-based index).
    TakeRow {
        /// The row to take: its 0-based index in `table.rows`.
        row: u8,
    },
    /// Take a card from the open draft (`deal: draft`).
    DraftCard {
        /// The card to take: one in `table.draft_pool`.
        card: Card,
    },
    /// Choose which of the cards just taken goes to one's X row (x-nimmt).
    KeepCard {
        /// The card for the X row: one of those just taken (`table.pending_keep`).
        card: Card,
    },
    /// Pay a chip onto the open card and pass it on (nimm-oder-schieb).
    Pass {},
    /// Take the open card and its chips, then act on the next card (nimm-oder-schieb).
    Take {},
    /// Hand one's seat to a bot for the rest of the game.
    Resign {},
    /// Let a bot play a flagged seat (its clock reached zero; `at_zero: others_decide`).
    HandToBot {
        /// The flagged seat.
        seat: u8,
    },
    /// Propose to pause the clocks (correspondence games).
    ProposePause {},
    /// Accept the proposed pause; when every person accepted, the clocks stop.
    AcceptPause {},
    /// Decline (or withdraw) the proposed pause.
    DeclinePause {},
    /// Let the paused clocks run again.
    Resume {},
}

impl Command {
    /// Whether this is a lobby command or `resign` rather than a move in the game.
    #[must_use]
    pub fn is_lobby_or_resign(&self) -> bool {
        matches!(
            self,
            Self::Join {}
                | Self::Leave {}
                | Self::AddBot { .. }
                | Self::RemoveSeat { .. }
                | Self::Start {}
                | Self::Resign {}
        )
    }

    /// Whether this is a clock command (`hand_to_bot`, the pause's commands).
    #[must_use]
    pub fn is_clock(&self) -> bool {
        matches!(
            self,
            Self::HandToBot { .. }
                | Self::ProposePause {}
                | Self::AcceptPause {}
                | Self::DeclinePause {}
                | Self::Resume {}
        )
    }

    /// The command's name as used in `type`, `awaiting` and `legal`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Join {} => "join",
            Self::Leave {} => "leave",
            Self::AddBot { .. } => "add_bot",
            Self::RemoveSeat { .. } => "remove_seat",
            Self::Start {} => "start",
            Self::PlayCard { .. } => "play_card",
            Self::TakeRow { .. } => "take_row",
            Self::DraftCard { .. } => "draft_card",
            Self::KeepCard { .. } => "keep_card",
            Self::Pass {} => "pass",
            Self::Take {} => "take",
            Self::Resign {} => "resign",
            Self::HandToBot { .. } => "hand_to_bot",
            Self::ProposePause {} => "propose_pause",
            Self::AcceptPause {} => "accept_pause",
            Self::DeclinePause {} => "decline_pause",
            Self::Resume {} => "resume",
        }
    }
}

/// Who may read an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Audience {
    /// Everyone who may see the game.
    Public,
    /// Only the player at this seat.
    Seat(u8),
    /// Nobody through the API while the game runs (the server, and the archive of a
    /// finished game).
    Server,
}

impl Audience {
    /// Stable text form: `public`, `seat:N`, `server`.
    #[must_use]
    pub fn as_text(self) -> String {
        match self {
            Self::Public => "public".into(),
            Self::Seat(s) => format!("seat:{s}"),
            Self::Server => "server".into(),
        }
    }

    /// Whether a caller at `seat` (or a spectator) may read it.
    #[must_use]
    pub fn admits(self, seat: Option<u8>) -> bool {
        match self {
            Self::Public => true,
            Self::Seat(s) => seat == Some(s),
            Self::Server => false,
        }
    }
}

/// Events, past tense. Serialised as `{"type": …, "data": {…}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Event {
    /// The game exists; the creator is the host at seat 0.
    GameCreated(Box<GameCreation>),
    /// Moves must be made within this many seconds, or the server moves for the seat.
    MoveDeadlineSet {
        /// Seconds per move.
        seconds: u32,
    },
    /// The deadlines of the seats that must act now (replaces the previous ones).
    DeadlinesSet {
        /// One per seat and action asked.
        deadlines: Vec<SeatDeadline>,
    },
    /// The secret shuffle seed (server only until the end).
    SeedRecorded {
        /// The secret shuffle seed: 32 random bytes as 64 hex characters.
        seed: String,
    },
    /// The prepared first deal (server only).
    DealPrepared {
        /// The first deal as the creator sent it (`deal` of `POST /v1/games`).
        deal: Box<Deal>,
    },
    /// A person took a seat. Names are not recorded (an account may change its name or be
    /// deleted; the log refers to people by account id only): views look the current name
    /// up. Schema 1 carried a `name`, which reading drops (see `upcast`).
    SeatTaken {
        /// The seat taken (0-based): one kept for the account, else the lowest free one.
        seat: u8,
        /// Id of the account that sat down; the game view's `seats` show its current name.
        account: String,
    },
    /// A person left the lobby.
    SeatLeft {
        /// The seat (0-based) the person left; it is free again.
        seat: u8,
    },
    /// The host seated a bot.
    BotAdded {
        /// The seat (0-based) the bot took: the lowest free one nobody keeps.
        seat: u8,
        /// How the bot chooses its moves.
        strategy: BotStrategy,
        /// The bot's name, `Bot N` with N = seat + 1.
        name: String,
    },
    /// The host freed a seat.
    SeatRemoved {
        /// The seat (0-based) the host freed; never the host's own.
        seat: u8,
    },
    /// Play began: the host sent `start`, or the last seat of a quick-play game was taken.
    GameStarted {},
    /// A round was dealt; its rows are open.
    RoundStarted {
        /// Round, 1-based.
        round: u16,
        /// The rows' starting cards.
        #[cfg_attr(feature = "openapi", schema(value_type = Vec<Card>))]
        rows: Cards,
    },
    /// A seat's hand (that seat only).
    HandDealt {
        /// The seat (0-based) the hand was dealt to.
        seat: u8,
        /// The cards, ascending.
        #[cfg_attr(feature = "openapi", schema(value_type = Vec<Card>))]
        cards: Cards,
    },
    /// A seat selected or replaced its card (that seat only).
    CardSelected {
        /// The seat (0-based) that selected.
        seat: u8,
        /// The card it selected, hidden from everyone else until the reveal.
        card: Card,
    },
    /// A seat has selected (public; says nothing of the card).
    SelectionMade {
        /// The seat (0-based) that has selected a card.
        seat: u8,
    },
    /// Every selection of the turn, revealed at once.
    CardsRevealed {
        /// The selections, ascending by card.
        #[cfg_attr(feature = "openapi", schema(value_type = Vec<SeatCard>))]
        cards: SeatCards,
    },
    /// A revealed card was placed; `taken` are the cards its player took.
    CardPlaced {
        /// The seat (0-based) that played the card.
        seat: u8,
        /// The revealed card that was placed.
        card: Card,
        /// The row it went to: 0-based index in `table.rows`.
        row: u8,
        /// Cards taken (empty when the card was simply added).
        #[cfg_attr(feature = "openapi", schema(value_type = Vec<Card>))]
        taken: Cards,
        /// The player chose the row (the card fitted no row).
        chosen: bool,
        /// The end of the row the card went to (`left` only with `placement: both_ends`).
        #[serde(default, skip_serializing_if = "Side::is_right")]
        side: Side,
    },
    /// The open draft of a round began (`deal: draft`); every card of the deck lies open.
    DraftStarted {
        /// Round, 1-based.
        round: u16,
        /// The round's whole deck, ascending; the cards left after the draft start the rows.
        pool: Vec<Card>,
        /// The seat that picks first.
        first_seat: u8,
    },
    /// A seat took a card from the open draft.
    CardDrafted {
        /// The seat (0-based) that took the card.
        seat: u8,
        /// The card taken from the draft into that seat's hand.
        card: Card,
    },
    /// A game of nimm-oder-schieb (of a match) began with fresh chips.
    NosGameStarted {
        /// Game of the match, 1-based.
        game: u16,
        /// The seat that reveals the first card and acts first.
        first_seat: u8,
        /// Chips each player starts with.
        chips: u8,
    },
    /// The shuffled draw pile and the cards removed unseen (server only until the end).
    DrawPileSet {
        /// The pile, top first.
        pile: Vec<Card>,
        /// The 9 removed cards.
        removed: Vec<Card>,
    },
    /// The top card of the draw pile was turned up.
    CardRevealed {
        /// The open card's value, 3–35 (`GET /v1/rulesets` lists its suit and rank).
        card: Card,
    },
    /// A seat paid a chip onto the open card and passed it on.
    Passed {
        /// The seat (0-based) that paid the chip.
        seat: u8,
    },
    /// A seat took the open card and the chips on it.
    CardTaken {
        /// The seat (0-based) that took the card.
        seat: u8,
        /// The card's value.
        card: Card,
        /// Chips collected with it.
        chips: u8,
    },
    /// The last card was taken: the game is scored and the removed cards are revealed.
    /// (Boxed: this is the largest event and rare; the JSON is that of its fields.)
    NosGameEnded(Box<NosGameEnd>),
    /// A seat chose the card for its X row from the cards it took (x-nimmt).
    CardKept {
        /// The seat (0-based) that chose the card.
        seat: u8,
        /// The card that went to the X row.
        card: Card,
        /// The X row that went onto the X stack (empty when the card was appended).
        #[cfg_attr(feature = "openapi", schema(value_type = Vec<Card>))]
        stacked: Cards,
        /// The other taken cards, which went into the hand.
        #[cfg_attr(feature = "openapi", schema(value_type = Vec<Card>))]
        to_hand: Cards,
    },
    /// The round is over.
    RoundEnded {
        /// The round that ended, 1-based.
        round: u16,
        /// Bullheads each seat took this round.
        scores: Vec<u32>,
    },
    /// The game is over.
    GameFinished {
        /// Seats with the lowest total.
        winners: Vec<u8>,
        /// The shuffle seed, revealed.
        seed: String,
    },
    /// A person handed their seat to a bot.
    SeatResigned {
        /// The seat (0-based) whose person resigned; a bot plays it from now on.
        seat: u8,
    },
    /// The game became public (listed, open to spectators) or private (players and the
    /// invited only). Written at creation and whenever the host changes it.
    VisibilitySet {
        /// `true`: listed and open to spectators; `false`: seen by its players only (others join
        /// with the invite code).
        public: bool,
    },
    /// The seats kept for a rematch's people are free for anyone now.
    ReservationsReleased {},
    /// A tournament game's seed is public now: its round ended (a tournament game does
    /// not reveal it when it finishes, since other tables of a duplicate round play the
    /// same deals).
    SeedRevealed {},
    /// A rematch of this finished game was created.
    RematchCreated {
        /// Id of the rematch game.
        game: String,
    },
    /// The game's time control (written at creation; defaults filled in).
    TimeControlSet {
        /// The time control.
        time_control: crate::clocks::TimeControl,
    },
    /// The seats' banks at `at` and which clocks run from then on (written with every
    /// change of them). A running clock shows `remaining_ms - (T - at)` at `T`.
    ClocksSet(Box<crate::clocks::ClocksSnapshot>),
    /// A seat's bank reached zero.
    ClockRanOut {
        /// The seat (0-based).
        seat: u8,
        /// Its run-outs so far in this game (the third hands it to a bot).
        timeouts: u8,
    },
    /// A seat went to a bot because of its clock (its third run-out, or the others chose
    /// `hand_to_bot`); like `seat_resigned`, and ratings place it last.
    SeatHandedToBot {
        /// The seat (0-based).
        seat: u8,
        /// `timeouts` or `others`.
        cause: crate::clocks::HandedCause,
    },
    /// The seat's account spent vacation hours: its bank grew by that.
    VacationSpent {
        /// The seat (0-based).
        seat: u8,
        /// Hours spent (and added to the bank).
        hours: u32,
    },
    /// A seat proposed to pause the clocks.
    PauseProposed {
        /// The proposing seat.
        seat: u8,
    },
    /// A seat accepted the proposed pause.
    PauseAccepted {
        /// The accepting seat.
        seat: u8,
    },
    /// A seat declined (or withdrew) the proposed pause.
    PauseDeclined {
        /// The declining seat.
        seat: u8,
    },
    /// Every person accepted: the clocks stand still.
    ClocksPaused {},
    /// A seat let the paused clocks run again.
    ClocksResumed {
        /// The seat that resumed.
        seat: u8,
    },
}

impl Event {
    /// The event's type name (`card_placed`, …).
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::GameCreated { .. } => "game_created",
            Self::SeedRecorded { .. } => "seed_recorded",
            Self::MoveDeadlineSet { .. } => "move_deadline_set",
            Self::DeadlinesSet { .. } => "deadlines_set",
            Self::DealPrepared { .. } => "deal_prepared",
            Self::SeatTaken { .. } => "seat_taken",
            Self::SeatLeft { .. } => "seat_left",
            Self::BotAdded { .. } => "bot_added",
            Self::SeatRemoved { .. } => "seat_removed",
            Self::GameStarted {} => "game_started",
            Self::RoundStarted { .. } => "round_started",
            Self::HandDealt { .. } => "hand_dealt",
            Self::CardSelected { .. } => "card_selected",
            Self::SelectionMade { .. } => "selection_made",
            Self::CardsRevealed { .. } => "cards_revealed",
            Self::CardPlaced { .. } => "card_placed",
            Self::DraftStarted { .. } => "draft_started",
            Self::CardDrafted { .. } => "card_drafted",
            Self::CardKept { .. } => "card_kept",
            Self::NosGameStarted { .. } => "nos_game_started",
            Self::DrawPileSet { .. } => "draw_pile_set",
            Self::CardRevealed { .. } => "card_revealed",
            Self::Passed { .. } => "passed",
            Self::CardTaken { .. } => "card_taken",
            Self::NosGameEnded { .. } => "nos_game_ended",
            Self::RoundEnded { .. } => "round_ended",
            Self::GameFinished { .. } => "game_finished",
            Self::SeatResigned { .. } => "seat_resigned",
            Self::VisibilitySet { .. } => "visibility_set",
            Self::ReservationsReleased {} => "reservations_released",
            Self::RematchCreated { .. } => "rematch_created",
            Self::SeedRevealed {} => "seed_revealed",
            Self::TimeControlSet { .. } => "time_control_set",
            Self::ClocksSet(_) => "clocks_set",
            Self::ClockRanOut { .. } => "clock_ran_out",
            Self::SeatHandedToBot { .. } => "seat_handed_to_bot",
            Self::VacationSpent { .. } => "vacation_spent",
            Self::PauseProposed { .. } => "pause_proposed",
            Self::PauseAccepted { .. } => "pause_accepted",
            Self::PauseDeclined { .. } => "pause_declined",
            Self::ClocksPaused {} => "clocks_paused",
            Self::ClocksResumed { .. } => "clocks_resumed",
        }
    }

    /// Whether folding this event changes more than the table (seats, scores, seed, …).
    /// The events of play (selections, reveals, placements, hands) do not.
    #[inline]
    #[must_use]
    pub fn touches_meta(&self) -> bool {
        !matches!(
            self,
            Self::CardSelected { .. }
                | Self::SelectionMade { .. }
                | Self::CardsRevealed { .. }
                | Self::CardPlaced { .. }
                | Self::HandDealt { .. }
                | Self::CardDrafted { .. }
                | Self::CardKept { .. }
                | Self::CardRevealed { .. }
                | Self::Passed { .. }
                | Self::CardTaken { .. }
        )
    }

    /// Who may read this event. Every variant is listed, with no wildcard, so a new event
    /// cannot be published by default: the compiler asks where it belongs.
    #[must_use]
    pub fn audience(&self) -> Audience {
        match self {
            // Secrets: the shuffle seed, the prepared deal, the pile order and removed cards.
            Self::SeedRecorded { .. } | Self::DealPrepared { .. } | Self::DrawPileSet { .. } => {
                Audience::Server
            }
            // One seat's hand and face-down selection.
            Self::HandDealt { seat, .. } | Self::CardSelected { seat, .. } => Audience::Seat(*seat),
            // What everybody at the table sees.
            Self::GameCreated(_)
            | Self::MoveDeadlineSet { .. }
            | Self::DeadlinesSet { .. }
            | Self::SeatTaken { .. }
            | Self::SeatLeft { .. }
            | Self::BotAdded { .. }
            | Self::SeatRemoved { .. }
            | Self::GameStarted {}
            | Self::RoundStarted { .. }
            | Self::SelectionMade { .. }
            | Self::CardsRevealed { .. }
            | Self::CardPlaced { .. }
            | Self::DraftStarted { .. }
            | Self::CardDrafted { .. }
            | Self::NosGameStarted { .. }
            | Self::CardRevealed { .. }
            | Self::Passed { .. }
            | Self::CardTaken { .. }
            | Self::NosGameEnded(_)
            | Self::CardKept { .. }
            | Self::RoundEnded { .. }
            | Self::GameFinished { .. }
            | Self::SeatResigned { .. }
            | Self::VisibilitySet { .. }
            | Self::ReservationsReleased {}
            | Self::RematchCreated { .. }
            | Self::SeedRevealed {}
            | Self::TimeControlSet { .. }
            | Self::ClocksSet(_)
            | Self::ClockRanOut { .. }
            | Self::SeatHandedToBot { .. }
            | Self::VacationSpent { .. }
            | Self::PauseProposed { .. }
            | Self::PauseAccepted { .. }
            | Self::PauseDeclined { .. }
            | Self::ClocksPaused {}
            | Self::ClocksResumed { .. } => Audience::Public,
        }
    }
}

/// What `awaiting` reports: a seat and the command it must send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Awaiting {
    /// The seat (0-based) that must act.
    pub seat: u8,
    /// The command it must send: `start`, `play_card`, `take_row`, `keep_card`, `draft_card`,
    /// `pass` or `take`.
    pub action: &'static str,
}
