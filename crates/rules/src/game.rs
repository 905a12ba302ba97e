//! The game aggregate: state, commands, events, `decide` and `apply`.
//!
//! `decide` holds every check and returns the events a command causes; `apply` folds an
//! event into the state and cannot fail. `decide` works on a scratch copy of the state and
//! applies each event as it emits it, so its output always applies and a resolution chain
//! (reveal → placements → end of round → next deal) is computed in one call. Randomness
//! enters through [`Dealer`]: the caller shuffles, the events record what was dealt.

use serde::{Deserialize, Serialize};

use crate::card::{Card, CardSet};
use crate::error::RuleError;
use crate::options::{EndCondition, HAND_SIZE, Options, ROW_CAPACITY, ROWS, Ruleset};

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
}

/// Who sits at a seat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Occupant {
    /// A person's account.
    Human {
        /// Account id (opaque to the rules).
        account: String,
        /// Display name.
        name: String,
    },
    /// A bot.
    Bot {
        /// How it plays.
        strategy: BotStrategy,
        /// Display name.
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
}

impl Seat {
    /// Whether a bot chooses this seat's moves.
    #[must_use]
    pub fn bot_controlled(&self) -> bool {
        self.resigned || matches!(self.occupant, Some(Occupant::Bot { .. }))
    }

    /// The account sitting here, if a person.
    #[must_use]
    pub fn account(&self) -> Option<&str> {
        match &self.occupant {
            Some(Occupant::Human { account, .. }) => Some(account),
            _ => None,
        }
    }

    /// The display name, if occupied.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        match &self.occupant {
            Some(Occupant::Human { name, .. } | Occupant::Bot { name, .. }) => Some(name),
            None => None,
        }
    }
}

/// A deal: the rows' first cards and every seat's hand.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Deal {
    /// One list per row, each holding the row's starting card.
    pub rows: Vec<Vec<Card>>,
    /// One hand per seat, seat 0 first.
    pub hands: Vec<Vec<Card>>,
}

/// A seat and a card, e.g. a revealed selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SeatCard {
    /// The seat.
    pub seat: u8,
    /// The card.
    pub card: Card,
}

/// Shuffles for the rules. The rules never draw randomness themselves.
pub trait Dealer {
    /// Puts `cards` (ascending on entry) into the order of the deal for `round` (1-based).
    /// The deal then gives seat 0 the first ten cards, seat 1 the next ten, …, and the
    /// four cards after the last hand start rows 0–3.
    fn shuffle(&mut self, round: u16, cards: &mut [Card]);
}

/// What a command needs to know about who sent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor<'a> {
    /// A person, by account.
    Account {
        /// Account id.
        id: &'a str,
        /// Display name (for `join`).
        name: &'a str,
    },
    /// The server acting for a bot-controlled seat.
    Bot {
        /// The seat.
        seat: u8,
    },
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
        /// The card.
        card: Card,
    },
    /// Take a row when one's card is below every row (0-based index).
    TakeRow {
        /// The row.
        row: u8,
    },
    /// Hand one's seat to a bot for the rest of the game.
    Resign {},
}

impl Command {
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
            Self::Resign {} => "resign",
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

/// The ruleset, options and table size a game is created with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    /// Ruleset.
    pub ruleset: Ruleset,
    /// Options (validated).
    pub options: Options,
    /// Number of seats.
    pub players: u8,
}

/// Events, past tense. Serialised as `{"type": …, "data": {…}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Event {
    /// The game exists; the creator is the host at seat 0.
    GameCreated {
        /// Ruleset.
        ruleset: Ruleset,
        /// Options.
        options: Options,
        /// Number of seats.
        players: u8,
        /// Display name of the game.
        name: Option<String>,
        /// Rules version the game is pinned to.
        rules_version: u32,
        /// Whether the creator prepared the first deal.
        prepared_deal: bool,
        /// Hex SHA-256 of the game's secret shuffle seed.
        commitment: String,
    },
    /// The secret shuffle seed (server only until the end).
    SeedRecorded {
        /// Hex seed.
        seed: String,
    },
    /// The prepared first deal (server only).
    DealPrepared {
        /// The deal.
        deal: Deal,
    },
    /// A person took a seat.
    SeatTaken {
        /// Seat.
        seat: u8,
        /// Account id.
        account: String,
        /// Display name.
        name: String,
    },
    /// A person left the lobby.
    SeatLeft {
        /// Seat.
        seat: u8,
    },
    /// The host seated a bot.
    BotAdded {
        /// Seat.
        seat: u8,
        /// Strategy.
        strategy: BotStrategy,
        /// Display name.
        name: String,
    },
    /// The host freed a seat.
    SeatRemoved {
        /// Seat.
        seat: u8,
    },
    /// Play begins.
    GameStarted {},
    /// A round was dealt; its rows are open.
    RoundStarted {
        /// Round, 1-based.
        round: u16,
        /// The rows' starting cards.
        rows: Vec<Card>,
    },
    /// A seat's hand (that seat only).
    HandDealt {
        /// Seat.
        seat: u8,
        /// The cards, ascending.
        cards: Vec<Card>,
    },
    /// A seat selected or replaced its card (that seat only).
    CardSelected {
        /// Seat.
        seat: u8,
        /// The card.
        card: Card,
    },
    /// A seat has selected (public; says nothing of the card).
    SelectionMade {
        /// Seat.
        seat: u8,
    },
    /// Every selection of the turn, revealed at once.
    CardsRevealed {
        /// The selections, ascending by card.
        cards: Vec<SeatCard>,
    },
    /// A revealed card was placed; `taken` are the cards its player took.
    CardPlaced {
        /// Seat.
        seat: u8,
        /// Card.
        card: Card,
        /// Row index.
        row: u8,
        /// Cards taken (empty when the card was simply added).
        taken: Vec<Card>,
        /// The player chose the row (card below every row).
        chosen: bool,
    },
    /// The round is over.
    RoundEnded {
        /// Round.
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
        /// Seat.
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
            Self::RoundEnded { .. } => "round_ended",
            Self::GameFinished { .. } => "game_finished",
            Self::SeatResigned { .. } => "seat_resigned",
        }
    }

    /// Who may read this event.
    #[must_use]
    pub fn audience(&self) -> Audience {
        match self {
            Self::SeedRecorded { .. } | Self::DealPrepared { .. } => Audience::Server,
            Self::HandDealt { seat, .. } | Self::CardSelected { seat, .. } => Audience::Seat(*seat),
            _ => Audience::Public,
        }
    }
}

/// The state of one game, rebuilt by folding its events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    /// Ruleset, options, seats.
    pub setup: Setup,
    /// Game name.
    pub name: Option<String>,
    /// Lobby, active, finished.
    pub status: Status,
    /// Rules version pinned at creation.
    pub rules_version: u32,
    /// The seats.
    pub seats: Vec<Seat>,
    /// The host's seat.
    pub host_seat: u8,
    /// Whether the first deal was prepared by the creator.
    pub prepared_deal: bool,
    prepared: Option<Deal>,
    /// Hex SHA-256 of the seed.
    pub commitment: String,
    seed: Option<String>,
    /// Whether the seed has been revealed (the game is over).
    pub seed_revealed: bool,
    /// Current round (0 before the first deal).
    pub round: u16,
    /// The rows, left to right.
    pub rows: Vec<Vec<Card>>,
    hands: Vec<CardSet>,
    selected: Vec<Option<Card>>,
    /// Revealed cards of this turn not yet placed, ascending.
    pub revealed: Vec<SeatCard>,
    /// Cards each seat took this round.
    pub taken: Vec<Vec<Card>>,
    /// Bullheads per round and seat.
    pub scores: Vec<Vec<u32>>,
    /// Totals per seat.
    pub totals: Vec<u32>,
    /// Winning seats once finished.
    pub winners: Vec<u8>,
}

/// What `awaiting` reports: a seat and the command it must send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Awaiting {
    /// Seat.
    pub seat: u8,
    /// Command name.
    pub action: &'static str,
}

/// Parameters of a new game.
#[derive(Clone, Debug)]
pub struct NewGame<'a> {
    /// Ruleset, options, seats.
    pub setup: Setup,
    /// Game name.
    pub name: Option<String>,
    /// Creator's account id.
    pub host_account: &'a str,
    /// Creator's display name.
    pub host_name: &'a str,
    /// A prepared first deal.
    pub deal: Option<Deal>,
    /// Hex shuffle seed (secret).
    pub seed: String,
    /// Hex SHA-256 of the seed.
    pub commitment: String,
}

impl Game {
    /// The events that create a game. Checks options and a prepared deal.
    ///
    /// # Errors
    /// Invalid or unsupported options, an invalid deal.
    pub fn create(new: NewGame<'_>) -> Result<Vec<Event>, RuleError> {
        let NewGame {
            setup,
            name,
            host_account,
            host_name,
            deal,
            seed,
            commitment,
        } = new;
        setup.options.validate(setup.ruleset, setup.players)?;
        if let Some(deal) = &deal {
            validate_deal(&setup, deal)?;
        }
        let mut events = vec![
            Event::GameCreated {
                ruleset: setup.ruleset,
                options: setup.options,
                players: setup.players,
                name,
                rules_version: RULES_VERSION,
                prepared_deal: deal.is_some(),
                commitment,
            },
            Event::SeedRecorded { seed },
        ];
        if let Some(deal) = deal {
            events.push(Event::DealPrepared { deal });
        }
        events.push(Event::SeatTaken {
            seat: 0,
            account: host_account.into(),
            name: host_name.into(),
        });
        Ok(events)
    }

    /// Rebuilds a game from its events. `None` when the first event is not `game_created`.
    #[must_use]
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Option<Self> {
        let mut iter = events.into_iter();
        let mut game = Self::new_from(iter.next()?)?;
        for event in iter {
            game.apply(event);
        }
        Some(game)
    }

    /// The state right after a `game_created` event.
    #[must_use]
    pub fn new_from(created: &Event) -> Option<Self> {
        let Event::GameCreated {
            ruleset,
            options,
            players,
            name,
            rules_version,
            prepared_deal,
            commitment,
        } = created
        else {
            return None;
        };
        let n = usize::from(*players);
        Some(Self {
            setup: Setup {
                ruleset: *ruleset,
                options: *options,
                players: *players,
            },
            name: name.clone(),
            status: Status::Lobby,
            rules_version: *rules_version,
            seats: vec![Seat::default(); n],
            host_seat: 0,
            prepared_deal: *prepared_deal,
            prepared: None,
            commitment: commitment.clone(),
            seed: None,
            seed_revealed: false,
            round: 0,
            rows: Vec::new(),
            hands: vec![CardSet::empty(); n],
            selected: vec![None; n],
            revealed: Vec::new(),
            taken: vec![Vec::new(); n],
            scores: Vec::new(),
            totals: vec![0; n],
            winners: Vec::new(),
        })
    }

    /// The secret seed (for the server's dealer).
    #[must_use]
    pub fn seed(&self) -> Option<&str> {
        self.seed.as_deref()
    }

    /// A seat's hand.
    #[must_use]
    pub fn hand(&self, seat: u8) -> CardSet {
        self.hands
            .get(usize::from(seat))
            .copied()
            .unwrap_or_default()
    }

    /// A seat's current selection (private to that seat).
    #[must_use]
    pub fn selection(&self, seat: u8) -> Option<Card> {
        self.selected.get(usize::from(seat)).copied().flatten()
    }

    /// The seat of an account.
    #[must_use]
    pub fn seat_of(&self, account: &str) -> Option<u8> {
        self.seats
            .iter()
            .position(|s| s.account() == Some(account))
            .and_then(|i| u8::try_from(i).ok())
    }

    fn seat_count(&self) -> u8 {
        self.setup.players
    }

    /// The seat that must take a row now, with its card.
    #[must_use]
    pub fn pending_take(&self) -> Option<SeatCard> {
        let first = *self.revealed.first()?;
        self.target_row(first.card).is_none().then_some(first)
    }

    /// The row a card goes to: the highest row end below it. `None` when below every row.
    #[must_use]
    pub fn target_row(&self, card: Card) -> Option<usize> {
        self.rows
            .iter()
            .enumerate()
            .filter_map(|(i, row)| row.last().filter(|end| **end < card).map(|end| (i, *end)))
            .max_by_key(|(_, end)| *end)
            .map(|(i, _)| i)
    }

    /// Who must act now, and how.
    #[must_use]
    pub fn awaiting(&self) -> Vec<Awaiting> {
        match self.status {
            Status::Finished => Vec::new(),
            Status::Lobby => {
                if self.seats.iter().all(|s| s.occupant.is_some()) {
                    vec![Awaiting {
                        seat: self.host_seat,
                        action: "start",
                    }]
                } else {
                    Vec::new()
                }
            }
            Status::Active => {
                if let Some(p) = self.pending_take() {
                    return vec![Awaiting {
                        seat: p.seat,
                        action: "take_row",
                    }];
                }
                if !self.revealed.is_empty() {
                    return Vec::new();
                }
                (0..self.seat_count())
                    .filter(|s| self.selection(*s).is_none() && !self.hand(*s).is_empty())
                    .map(|seat| Awaiting {
                        seat,
                        action: "play_card",
                    })
                    .collect()
            }
        }
    }

    /// The commands an account (seated or not) may send now.
    #[must_use]
    pub fn legal_for(&self, account: &str) -> Vec<Command> {
        let seat = self.seat_of(account);
        match self.status {
            Status::Finished => Vec::new(),
            Status::Lobby => {
                let mut legal = Vec::new();
                let free = self.seats.iter().any(|s| s.occupant.is_none());
                match seat {
                    None if free => legal.push(Command::Join {}),
                    None => {}
                    Some(s) if s == self.host_seat => {
                        if free {
                            legal.push(Command::AddBot {
                                strategy: BotStrategy::Random,
                            });
                        }
                        for (i, other) in self.seats.iter().enumerate() {
                            if i != usize::from(s)
                                && other.occupant.is_some()
                                && let Ok(i) = u8::try_from(i)
                            {
                                legal.push(Command::RemoveSeat { seat: i });
                            }
                        }
                        if !free {
                            legal.push(Command::Start {});
                        }
                    }
                    Some(_) => legal.push(Command::Leave {}),
                }
                legal
            }
            Status::Active => match seat {
                Some(s) if !self.seats[usize::from(s)].resigned => {
                    let mut legal = self.moves_for(s);
                    legal.push(Command::Resign {});
                    legal
                }
                _ => Vec::new(),
            },
        }
    }

    /// The game moves a seat may make now (no lobby commands, no `resign`).
    #[must_use]
    pub fn moves_for(&self, seat: u8) -> Vec<Command> {
        if self.status != Status::Active {
            return Vec::new();
        }
        if let Some(p) = self.pending_take() {
            if p.seat == seat {
                return (0..ROWS)
                    .filter_map(|r| u8::try_from(r).ok())
                    .map(|row| Command::TakeRow { row })
                    .collect();
            }
            return Vec::new();
        }
        if !self.revealed.is_empty() {
            return Vec::new();
        }
        self.hand(seat)
            .iter()
            .map(|card| Command::PlayCard { card })
            .collect()
    }

    /// The next bot-controlled seat that must act, if any.
    #[must_use]
    pub fn next_bot(&self) -> Option<u8> {
        self.awaiting()
            .into_iter()
            .find(|a| {
                a.action != "start"
                    && self
                        .seats
                        .get(usize::from(a.seat))
                        .is_some_and(Seat::bot_controlled)
            })
            .map(|a| a.seat)
    }

    /// Decides what a command causes.
    ///
    /// # Errors
    /// The rule the command breaks.
    pub fn decide(
        &self,
        actor: Actor<'_>,
        command: &Command,
        dealer: &mut dyn Dealer,
    ) -> Result<Vec<Event>, RuleError> {
        let mut scratch = Decision {
            game: self.clone(),
            events: Vec::new(),
        };
        scratch.run(actor, command, dealer)?;
        Ok(scratch.events)
    }

    /// Folds one event into the state.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::GameCreated { .. } => {}
            Event::SeedRecorded { seed } => self.seed = Some(seed.clone()),
            Event::DealPrepared { deal } => self.prepared = Some(deal.clone()),
            Event::SeatTaken {
                seat,
                account,
                name,
            } => {
                if let Some(s) = self.seats.get_mut(usize::from(*seat)) {
                    s.occupant = Some(Occupant::Human {
                        account: account.clone(),
                        name: name.clone(),
                    });
                }
            }
            Event::BotAdded {
                seat,
                strategy,
                name,
            } => {
                if let Some(s) = self.seats.get_mut(usize::from(*seat)) {
                    s.occupant = Some(Occupant::Bot {
                        strategy: *strategy,
                        name: name.clone(),
                    });
                }
            }
            Event::SeatLeft { seat } | Event::SeatRemoved { seat } => {
                if let Some(s) = self.seats.get_mut(usize::from(*seat)) {
                    *s = Seat::default();
                }
            }
            Event::GameStarted {} => self.status = Status::Active,
            Event::RoundStarted { round, rows } => {
                self.round = *round;
                self.prepared = None;
                self.rows = rows.iter().map(|c| vec![*c]).collect();
                self.revealed.clear();
                for t in &mut self.taken {
                    t.clear();
                }
            }
            Event::HandDealt { seat, cards } => {
                if let Some(h) = self.hands.get_mut(usize::from(*seat)) {
                    *h = cards.iter().copied().collect();
                }
            }
            Event::CardSelected { seat, card } => {
                if let Some(s) = self.selected.get_mut(usize::from(*seat)) {
                    *s = Some(*card);
                }
            }
            Event::SelectionMade { .. } => {}
            Event::CardsRevealed { cards } => {
                for sc in cards {
                    if let Some(h) = self.hands.get_mut(usize::from(sc.seat)) {
                        h.remove(sc.card);
                    }
                }
                self.selected.iter_mut().for_each(|s| *s = None);
                self.revealed.clone_from(cards);
            }
            Event::CardPlaced {
                seat,
                card,
                row,
                taken,
                ..
            } => {
                if let Some(pos) = self.revealed.iter().position(|sc| sc.card == *card) {
                    self.revealed.remove(pos);
                }
                if let Some(r) = self.rows.get_mut(usize::from(*row)) {
                    if taken.is_empty() {
                        r.push(*card);
                    } else {
                        r.clear();
                        r.push(*card);
                    }
                }
                if let Some(t) = self.taken.get_mut(usize::from(*seat)) {
                    t.extend_from_slice(taken);
                }
            }
            Event::RoundEnded { scores, .. } => {
                for (total, s) in self.totals.iter_mut().zip(scores) {
                    *total += s;
                }
                self.scores.push(scores.clone());
            }
            Event::GameFinished { winners, .. } => {
                self.status = Status::Finished;
                self.winners.clone_from(winners);
                self.seed_revealed = true;
            }
            Event::SeatResigned { seat } => {
                if let Some(s) = self.seats.get_mut(usize::from(*seat)) {
                    s.resigned = true;
                }
            }
        }
    }

    /// Bullheads a seat took in the current round.
    #[must_use]
    pub fn round_bullheads(&self, seat: u8) -> u32 {
        let table = self.setup.ruleset.score_table();
        self.taken
            .get(usize::from(seat))
            .map_or(0, |t| table.sum(t))
    }

    fn round_over(&self) -> bool {
        self.revealed.is_empty() && self.hands.iter().all(|h| h.is_empty())
    }

    fn game_over(&self) -> bool {
        match self.setup.options.end {
            EndCondition::Points(limit) => self.totals.iter().any(|t| *t >= u32::from(limit)),
            EndCondition::Rounds(k) => self.round >= k,
        }
    }
}

/// A decision in progress: a scratch copy of the game and the events emitted so far.
struct Decision {
    game: Game,
    events: Vec<Event>,
}

impl Decision {
    fn emit(&mut self, event: Event) {
        self.game.apply(&event);
        self.events.push(event);
    }

    fn run(
        &mut self,
        actor: Actor<'_>,
        command: &Command,
        dealer: &mut dyn Dealer,
    ) -> Result<(), RuleError> {
        let g = &self.game;
        let seat = match actor {
            Actor::Account { id, .. } => g.seat_of(id),
            Actor::Bot { seat } => {
                // The server acts for bot-controlled seats with game moves only.
                let is_bot = g
                    .seats
                    .get(usize::from(seat))
                    .is_some_and(Seat::bot_controlled);
                if !is_bot || !matches!(command, Command::PlayCard { .. } | Command::TakeRow { .. })
                {
                    return Err(RuleError::NotAPlayer);
                }
                Some(seat)
            }
        };
        match command {
            Command::Join {} => {
                self.require_lobby()?;
                let Actor::Account { id, name } = actor else {
                    return Err(RuleError::NotAPlayer);
                };
                if seat.is_some() {
                    return Err(RuleError::AlreadySeated);
                }
                let free = self.free_seat().ok_or(RuleError::GameFull)?;
                self.emit(Event::SeatTaken {
                    seat: free,
                    account: id.into(),
                    name: name.into(),
                });
            }
            Command::Leave {} => {
                self.require_lobby()?;
                let seat = seat.ok_or(RuleError::NotAPlayer)?;
                if seat == self.game.host_seat {
                    return Err(RuleError::HostCannotLeave);
                }
                self.emit(Event::SeatLeft { seat });
            }
            Command::AddBot { strategy } => {
                self.require_lobby()?;
                self.require_host(seat)?;
                let free = self.free_seat().ok_or(RuleError::GameFull)?;
                let name = format!("Bot {}", free + 1);
                self.emit(Event::BotAdded {
                    seat: free,
                    strategy: *strategy,
                    name,
                });
            }
            Command::RemoveSeat { seat: target } => {
                self.require_lobby()?;
                self.require_host(seat)?;
                let occupied = self
                    .game
                    .seats
                    .get(usize::from(*target))
                    .is_some_and(|s| s.occupant.is_some());
                if !occupied || *target == self.game.host_seat {
                    return Err(RuleError::InvalidSeat { seat: *target });
                }
                self.emit(Event::SeatRemoved { seat: *target });
            }
            Command::Start {} => {
                self.require_lobby()?;
                self.require_host(seat)?;
                if self.game.seats.iter().any(|s| s.occupant.is_none()) {
                    return Err(RuleError::SeatsNotFilled);
                }
                self.emit(Event::GameStarted {});
                self.deal(dealer);
            }
            Command::PlayCard { card } => {
                let seat = self.require_acting_seat(seat, actor)?;
                let g = &self.game;
                if g.hand(seat).is_empty() || !g.revealed.is_empty() {
                    return Err(RuleError::NotYourTurn {
                        action: "play_card",
                    });
                }
                if !g.hand(seat).contains(*card) {
                    return Err(RuleError::CardNotInHand {
                        card: card.number(),
                    });
                }
                let first = g.selection(seat).is_none();
                self.emit(Event::CardSelected { seat, card: *card });
                if first {
                    self.emit(Event::SelectionMade { seat });
                }
                if self.game.awaiting().is_empty() {
                    self.reveal();
                    self.resolve(dealer);
                }
            }
            Command::TakeRow { row } => {
                let seat = self.require_acting_seat(seat, actor)?;
                let pending = self.game.pending_take().filter(|p| p.seat == seat);
                let Some(pending) = pending else {
                    return Err(RuleError::NotYourTurn { action: "take_row" });
                };
                let Some(taken) = self.game.rows.get(usize::from(*row)).cloned() else {
                    return Err(RuleError::NoSuchRow { row: *row });
                };
                self.emit(Event::CardPlaced {
                    seat,
                    card: pending.card,
                    row: *row,
                    taken,
                    chosen: true,
                });
                self.resolve(dealer);
            }
            Command::Resign {} => {
                if self.game.status != Status::Active {
                    return Err(RuleError::GameNotActive);
                }
                let seat = seat.ok_or(RuleError::NotAPlayer)?;
                if self
                    .game
                    .seats
                    .get(usize::from(seat))
                    .is_none_or(Seat::bot_controlled)
                {
                    return Err(RuleError::Resigned);
                }
                self.emit(Event::SeatResigned { seat });
            }
        }
        Ok(())
    }

    fn require_lobby(&self) -> Result<(), RuleError> {
        if self.game.status == Status::Lobby {
            Ok(())
        } else {
            Err(RuleError::NotInLobby)
        }
    }

    fn require_host(&self, seat: Option<u8>) -> Result<(), RuleError> {
        match seat {
            None => Err(RuleError::NotAPlayer),
            Some(s) if s == self.game.host_seat => Ok(()),
            Some(_) => Err(RuleError::NotHost),
        }
    }

    /// A seated, active, non-resigned seat (or a bot acting for its seat).
    fn require_acting_seat(&self, seat: Option<u8>, actor: Actor<'_>) -> Result<u8, RuleError> {
        let seat = seat.ok_or(RuleError::NotAPlayer)?;
        if self.game.status != Status::Active {
            return Err(RuleError::GameNotActive);
        }
        let s = self
            .game
            .seats
            .get(usize::from(seat))
            .ok_or(RuleError::NotAPlayer)?;
        if matches!(actor, Actor::Account { .. }) && s.resigned {
            return Err(RuleError::Resigned);
        }
        Ok(seat)
    }

    fn free_seat(&self) -> Option<u8> {
        self.game
            .seats
            .iter()
            .position(|s| s.occupant.is_none())
            .and_then(|i| u8::try_from(i).ok())
    }

    fn reveal(&mut self) {
        let mut cards: Vec<SeatCard> = (0..self.game.seat_count())
            .filter_map(|seat| {
                self.game
                    .selection(seat)
                    .map(|card| SeatCard { seat, card })
            })
            .collect();
        cards.sort_by_key(|sc| sc.card);
        self.emit(Event::CardsRevealed { cards });
    }

    /// Places revealed cards until a choice is needed or the turn is over; ends the round
    /// (and maybe the game) when the last turn is resolved.
    fn resolve(&mut self, dealer: &mut dyn Dealer) {
        while let Some(next) = self.game.revealed.first().copied() {
            let Some(row) = self.game.target_row(next.card) else {
                return; // paused for take_row
            };
            let lying = &self.game.rows[row];
            let taken = if lying.len() >= ROW_CAPACITY {
                lying.clone()
            } else {
                Vec::new()
            };
            let row = u8::try_from(row).unwrap_or_default();
            self.emit(Event::CardPlaced {
                seat: next.seat,
                card: next.card,
                row,
                taken,
                chosen: false,
            });
        }
        if self.game.round_over() {
            let scores: Vec<u32> = (0..self.game.seat_count())
                .map(|s| self.game.round_bullheads(s))
                .collect();
            self.emit(Event::RoundEnded {
                round: self.game.round,
                scores,
            });
            if self.game.game_over() {
                let min = self.game.totals.iter().copied().min().unwrap_or_default();
                let winners = (0..self.game.seat_count())
                    .filter(|s| self.game.totals[usize::from(*s)] == min)
                    .collect();
                let seed = self.game.seed.clone().unwrap_or_default();
                self.emit(Event::GameFinished { winners, seed });
            } else {
                self.deal(dealer);
            }
        }
    }

    fn deal(&mut self, dealer: &mut dyn Dealer) {
        let round = self.game.round + 1;
        let players = self.game.seat_count();
        let deal = match self.game.prepared.take() {
            Some(deal) if round == 1 => deal,
            _ => {
                let g = &self.game;
                let mut cards = g.setup.options.deck(g.setup.ruleset, players).to_vec();
                dealer.shuffle(round, &mut cards);
                deal_from_order(&cards, players)
            }
        };
        self.emit(Event::RoundStarted {
            round,
            rows: deal
                .rows
                .iter()
                .filter_map(|r| r.first().copied())
                .collect(),
        });
        for (seat, hand) in deal.hands.into_iter().enumerate() {
            let mut cards = hand;
            cards.sort_unstable();
            let seat = u8::try_from(seat).unwrap_or_default();
            self.emit(Event::HandDealt { seat, cards });
        }
    }
}

/// The deal a shuffled deck gives: seat 0 the first ten cards, seat 1 the next ten, …,
/// then one card for each row.
#[must_use]
pub fn deal_from_order(cards: &[Card], players: u8) -> Deal {
    let players = usize::from(players);
    let hands = (0..players)
        .map(|s| cards[s * HAND_SIZE..(s + 1) * HAND_SIZE].to_vec())
        .collect();
    let start = players * HAND_SIZE;
    let rows = cards[start..start + ROWS]
        .iter()
        .map(|c| vec![*c])
        .collect();
    Deal { rows, hands }
}

/// Checks that a prepared deal is complete and possible.
fn validate_deal(setup: &Setup, deal: &Deal) -> Result<(), RuleError> {
    let bad = |m: String| Err(RuleError::InvalidDeal(m));
    if deal.rows.len() != ROWS || deal.rows.iter().any(|r| r.len() != 1) {
        return bad(format!("rows must be {ROWS} rows of exactly one card each"));
    }
    if deal.hands.len() != usize::from(setup.players) {
        return bad(format!(
            "hands must hold one hand per seat ({})",
            setup.players
        ));
    }
    if let Some(i) = deal.hands.iter().position(|h| h.len() != HAND_SIZE) {
        return bad(format!("hand {i} must hold {HAND_SIZE} cards"));
    }
    let deck = setup.options.deck(setup.ruleset, setup.players);
    let mut seen = CardSet::empty();
    for card in deal.rows.iter().chain(&deal.hands).flatten() {
        if !deck.contains(*card) {
            return bad(format!("card {card} is not in this game's deck"));
        }
        if !seen.insert(*card) {
            return bad(format!("card {card} appears twice"));
        }
    }
    Ok(())
}
