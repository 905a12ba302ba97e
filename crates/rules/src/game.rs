//! The game aggregate: `decide` and `apply`.
//!
//! `decide` holds every check and returns the events a command causes; `apply` folds an
//! event into the state and cannot fail. `decide` works on a copy of the [`Table`] (plain
//! `Copy` data) and applies each event as it emits it, so its output always applies and a
//! resolution chain (reveal → placements → choices → end of round → next deal) is computed
//! in one call. Randomness enters through [`Dealer`]: the caller shuffles, the events record
//! what was dealt.

use crate::card::{Card, CardSet};
use crate::error::RuleError;
use crate::model::{
    Actor, Awaiting, Command, Deal, Dealer, Event, Occupant, RULES_VERSION, Seat, SeatCard, Setup,
    Status,
};
use crate::options::{DealOption, Layout};
use crate::table::Table;

/// The state of one game, rebuilt by folding its events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    /// Ruleset, options, seats.
    pub setup: Setup,
    /// The table's shape, derived from the setup.
    pub layout: Layout,
    /// Game name.
    pub name: Option<String>,
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
    /// The table.
    pub table: Table,
    /// Seconds a seat has for a move, if the game has move deadlines.
    pub move_deadline_seconds: Option<u32>,
    /// The deadlines of the seats that must act now.
    pub deadlines: Vec<crate::model::SeatDeadline>,
    /// Scores per round and seat.
    pub scores: Vec<Vec<i32>>,
    /// Winning seats once finished.
    pub winners: Vec<u8>,
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
    /// Invalid options, an invalid deal.
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
            Event::GameCreated(Box::new(crate::model::GameCreation {
                ruleset: setup.ruleset,
                options: setup.options,
                players: setup.players,
                name,
                rules_version: RULES_VERSION,
                prepared_deal: deal.is_some(),
                commitment,
            })),
            Event::SeedRecorded { seed },
        ];
        if let Some(deal) = deal {
            events.push(Event::DealPrepared {
                deal: Box::new(deal),
            });
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
        let Event::GameCreated(creation) = created else {
            return None;
        };
        let crate::model::GameCreation {
            ruleset,
            options,
            players,
            name,
            rules_version,
            prepared_deal,
            commitment,
        } = creation.as_ref();
        Some(Self {
            setup: Setup {
                ruleset: *ruleset,
                options: *options,
                players: *players,
            },
            layout: Layout::new(*ruleset, *options),
            name: name.clone(),
            rules_version: *rules_version,
            seats: vec![Seat::default(); usize::from(*players)],
            host_seat: 0,
            prepared_deal: *prepared_deal,
            prepared: None,
            commitment: commitment.clone(),
            seed: None,
            seed_revealed: false,
            table: Table::new(*players),
            move_deadline_seconds: None,
            deadlines: Vec::new(),
            scores: Vec::new(),
            winners: Vec::new(),
        })
    }

    /// Lobby, active or finished.
    #[must_use]
    pub fn status(&self) -> Status {
        self.table.status
    }

    /// Current round, 1-based (0 before the first deal).
    #[must_use]
    pub fn round(&self) -> u16 {
        self.table.round
    }

    /// The secret seed (for the server's dealer).
    #[must_use]
    pub fn seed(&self) -> Option<&str> {
        self.seed.as_deref()
    }

    /// A seat's hand.
    #[must_use]
    pub fn hand(&self, seat: u8) -> CardSet {
        self.table
            .hands
            .get(usize::from(seat))
            .copied()
            .unwrap_or_default()
    }

    /// A seat's current selection (private to that seat).
    #[must_use]
    pub fn selection(&self, seat: u8) -> Option<Card> {
        self.table
            .selected
            .get(usize::from(seat))
            .copied()
            .flatten()
    }

    /// The rows, left to right, each ascending.
    #[must_use]
    pub fn rows(&self) -> Vec<Vec<Card>> {
        self.table.rows[..self.layout.rows]
            .iter()
            .map(|r| r.to_vec())
            .collect()
    }

    /// Cards a seat took this round (6 nimmt!, 11 nimmt!).
    #[must_use]
    pub fn taken(&self, seat: u8) -> Vec<Card> {
        self.table
            .taken
            .get(usize::from(seat))
            .map(|t| t.to_vec())
            .unwrap_or_default()
    }

    /// Revealed cards of this turn not yet placed, ascending.
    #[must_use]
    pub fn revealed(&self) -> Vec<SeatCard> {
        self.table.revealed().collect()
    }

    /// Totals per seat.
    #[must_use]
    pub fn totals(&self) -> Vec<i32> {
        self.table.totals[..usize::from(self.setup.players)].to_vec()
    }

    /// The seat of an account.
    #[must_use]
    pub fn seat_of(&self, account: &str) -> Option<u8> {
        self.seats
            .iter()
            .position(|s| s.account() == Some(account))
            .and_then(|i| u8::try_from(i).ok())
    }

    /// The seat that must take a row now, with its card.
    #[must_use]
    pub fn pending_take(&self) -> Option<SeatCard> {
        self.table.pending_take(&self.layout)
    }

    /// The row a card would go to now (`None`: it fits no row).
    #[must_use]
    pub fn target_row(&self, card: Card) -> Option<usize> {
        self.table.target(&self.layout, card).map(|(row, _)| row)
    }

    /// Who must act now, and how.
    #[must_use]
    pub fn awaiting(&self) -> Vec<Awaiting> {
        let t = &self.table;
        match t.status {
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
                if self.layout.take_or_pass() {
                    // Both, even for a seat without chips: `awaiting` is public, and chip
                    // counts may be hidden. The seat's own `legal` says what it can do.
                    let seat = t.to_act;
                    return vec![
                        Awaiting {
                            seat,
                            action: "pass",
                        },
                        Awaiting {
                            seat,
                            action: "take",
                        },
                    ];
                }
                if let Some(seat) = t.draft_seat(&self.layout) {
                    return vec![Awaiting {
                        seat,
                        action: "draft_card",
                    }];
                }
                if let Some((seat, _)) = t.pending_keep {
                    return vec![Awaiting {
                        seat,
                        action: "keep_card",
                    }];
                }
                if let Some(p) = self.pending_take() {
                    return vec![Awaiting {
                        seat: p.seat,
                        action: "take_row",
                    }];
                }
                if t.next_revealed().is_some() {
                    return Vec::new();
                }
                t.seats()
                    .filter(|s| self.selection(*s).is_none() && !self.hand(*s).is_empty())
                    .map(|seat| Awaiting {
                        seat,
                        action: "play_card",
                    })
                    .collect()
            }
        }
    }

    /// Whether `seat` must act now.
    #[must_use]
    pub fn is_awaited(&self, seat: u8) -> bool {
        let t = &self.table;
        if t.status != Status::Active {
            return false;
        }
        if self.layout.take_or_pass() {
            return t.to_act == seat;
        }
        if let Some(s) = t.draft_seat(&self.layout) {
            return s == seat;
        }
        if let Some((s, _)) = t.pending_keep {
            return s == seat;
        }
        if let Some(p) = self.pending_take() {
            return p.seat == seat;
        }
        t.next_revealed().is_none() && self.selection(seat).is_none() && !self.hand(seat).is_empty()
    }

    /// The commands an account (seated or not) may send now.
    #[must_use]
    pub fn legal_for(&self, account: &str) -> Vec<Command> {
        let seat = self.seat_of(account);
        match self.table.status {
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
                                strategy: crate::BotStrategy::Random,
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
        let t = &self.table;
        let selecting = t.status == Status::Active
            && !t.drafting
            && t.pending_keep.is_none()
            && t.next_revealed().is_none();
        if selecting && self.selection(seat).is_some() {
            // A selection may be replaced until the last one of the turn arrives.
            return self
                .hand(seat)
                .iter()
                .map(|card| Command::PlayCard { card })
                .collect();
        }
        if !self.is_awaited(seat) {
            return Vec::new();
        }
        if self.layout.take_or_pass() {
            let mut moves = Vec::with_capacity(2);
            if t.chips[usize::from(seat)] > 0 {
                moves.push(Command::Pass {});
            }
            moves.push(Command::Take {});
            return moves;
        }
        if t.drafting {
            return t
                .pool
                .iter()
                .map(|card| Command::DraftCard { card })
                .collect();
        }
        if let Some((_, cards)) = t.pending_keep {
            return cards
                .iter()
                .map(|card| Command::KeepCard { card })
                .collect();
        }
        if self.pending_take().is_some() {
            return (0..self.layout.rows)
                .filter_map(|r| u8::try_from(r).ok())
                .map(|row| Command::TakeRow { row })
                .collect();
        }
        self.hand(seat)
            .iter()
            .map(|card| Command::PlayCard { card })
            .collect()
    }

    /// The next bot-controlled seat that must act, if any.
    #[must_use]
    pub fn next_bot(&self) -> Option<u8> {
        let t = &self.table;
        if t.status != Status::Active {
            return None;
        }
        let bot = |s: u8| {
            self.seats
                .get(usize::from(s))
                .is_some_and(Seat::bot_controlled)
        };
        if self.layout.take_or_pass() {
            return bot(t.to_act).then_some(t.to_act);
        }
        if let Some(seat) = t.draft_seat(&self.layout) {
            return bot(seat).then_some(seat);
        }
        if let Some((seat, _)) = t.pending_keep {
            return bot(seat).then_some(seat);
        }
        if t.next_revealed().is_some() {
            return self.pending_take().map(|p| p.seat).filter(|s| bot(*s));
        }
        t.seats().find(|s| {
            let i = usize::from(*s);
            t.selected[i].is_none() && !t.hands[i].is_empty() && bot(*s)
        })
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
        let mut table = self.table;
        let mut decision = Decision {
            ctx: self.ctx(),
            table: &mut table,
            events: Vec::with_capacity(8),
        };
        decision.run(actor, command, dealer)?;
        Ok(decision.events)
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            seats: &self.seats,
            host_seat: self.host_seat,
            layout: &self.layout,
            players: self.setup.players,
            prepared: self.prepared.as_ref(),
            seed: self.seed.as_deref(),
        }
    }

    /// Decides a command and applies its events at once; returns the events.
    ///
    /// The same as [`Game::decide`] followed by [`Game::apply`] of every event, but the
    /// table `decide` already folded the events into is kept instead of folding them again.
    ///
    /// # Errors
    /// The rule the command breaks; the game is unchanged then.
    pub fn execute(
        &mut self,
        actor: Actor<'_>,
        command: &Command,
        dealer: &mut dyn Dealer,
    ) -> Result<Vec<Event>, RuleError> {
        let mut events = Vec::with_capacity(8);
        self.execute_into(actor, command, dealer, &mut events)?;
        Ok(events)
    }

    /// [`Game::execute`], appending the events to `out` (simulations reuse one buffer).
    ///
    /// # Errors
    /// The rule the command breaks; the game and `out` are unchanged then.
    pub fn execute_into(
        &mut self,
        actor: Actor<'_>,
        command: &Command,
        dealer: &mut dyn Dealer,
        out: &mut Vec<Event>,
    ) -> Result<(), RuleError> {
        let Self {
            table,
            seats,
            host_seat,
            layout,
            setup,
            prepared,
            seed,
            ..
        } = self;
        let ctx = Ctx {
            seats,
            host_seat: *host_seat,
            layout,
            players: setup.players,
            prepared: prepared.as_ref(),
            seed: seed.as_deref(),
        };
        // `run` checks everything before it emits the first event, so a refused command
        // leaves the table untouched and no copy is needed.
        let start = out.len();
        let mut decision = Decision {
            ctx,
            table,
            events: std::mem::take(out),
        };
        let result = decision.run(actor, command, dealer);
        debug_assert!(
            result.is_ok() || decision.events.len() == start,
            "an error after an event"
        );
        *out = decision.events;
        result?;
        for event in &out[start..] {
            if event.touches_meta() {
                self.apply_meta(event);
            }
        }
        Ok(())
    }

    /// Folds one event into the state.
    pub fn apply(&mut self, event: &Event) {
        self.table.apply(&self.layout, event);
        self.apply_meta(event);
    }

    /// Folds an event into everything but the table.
    fn apply_meta(&mut self, event: &Event) {
        match event {
            Event::SeedRecorded { seed } => self.seed = Some(seed.clone()),
            Event::MoveDeadlineSet { seconds } => self.move_deadline_seconds = Some(*seconds),
            Event::DeadlinesSet { deadlines } => self.deadlines.clone_from(deadlines),
            Event::DealPrepared { deal } => self.prepared = Some(deal.as_ref().clone()),
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
            Event::RoundStarted { .. } | Event::DraftStarted { .. } => self.prepared = None,
            Event::RoundEnded { scores, .. } => {
                self.scores.push(
                    scores
                        .iter()
                        .map(|s| i32::try_from(*s).unwrap_or(i32::MAX))
                        .collect(),
                );
            }
            Event::NosGameEnded(end) => self.scores.push(end.scores.clone()),
            Event::GameFinished { winners, .. } => {
                self.winners.clone_from(winners);
                self.seed_revealed = true;
            }
            Event::SeatResigned { seat } => {
                if let Some(s) = self.seats.get_mut(usize::from(*seat)) {
                    s.resigned = true;
                }
            }
            _ => {}
        }
    }
}

/// What a decision reads of the game besides the table.
#[derive(Clone, Copy)]
struct Ctx<'g> {
    seats: &'g [Seat],
    host_seat: u8,
    layout: &'g Layout,
    players: u8,
    prepared: Option<&'g Deal>,
    seed: Option<&'g str>,
}

impl Ctx<'_> {
    fn seat_of(&self, account: &str) -> Option<u8> {
        self.seats
            .iter()
            .position(|s| s.account() == Some(account))
            .and_then(|i| u8::try_from(i).ok())
    }
}

/// A decision in progress: the table it changes (the game's own in [`Game::execute`], a
/// copy in [`Game::decide`]) and the events emitted so far.
struct Decision<'g, 't> {
    ctx: Ctx<'g>,
    table: &'t mut Table,
    events: Vec<Event>,
}

impl Decision<'_, '_> {
    fn emit(&mut self, event: Event) {
        self.table.apply(self.ctx.layout, &event);
        self.events.push(event);
    }

    fn run(
        &mut self,
        actor: Actor<'_>,
        command: &Command,
        dealer: &mut dyn Dealer,
    ) -> Result<(), RuleError> {
        let g = self.ctx;
        let seat = match actor {
            Actor::Account { id, .. } => g.seat_of(id),
            Actor::Deadline { seat } => {
                // The server moves for a seat whose deadline passed: game moves only.
                if command.is_lobby_or_resign() || usize::from(seat) >= g.seats.len() {
                    return Err(RuleError::NotAPlayer);
                }
                Some(seat)
            }
            Actor::Bot { seat } => {
                // The server acts for bot-controlled seats with game moves only.
                let is_bot = g
                    .seats
                    .get(usize::from(seat))
                    .is_some_and(Seat::bot_controlled);
                let game_move = matches!(
                    command,
                    Command::PlayCard { .. }
                        | Command::TakeRow { .. }
                        | Command::DraftCard { .. }
                        | Command::KeepCard { .. }
                        | Command::Pass {}
                        | Command::Take {}
                );
                if !is_bot || !game_move {
                    return Err(RuleError::NotAPlayer);
                }
                Some(seat)
            }
        };
        let take_or_pass = g.layout.take_or_pass();
        match command {
            Command::PlayCard { .. }
            | Command::TakeRow { .. }
            | Command::DraftCard { .. }
            | Command::KeepCard { .. }
                if take_or_pass =>
            {
                return Err(RuleError::UnknownCommand {
                    command: command.name(),
                });
            }
            Command::Pass {} | Command::Take {} if !take_or_pass => {
                return Err(RuleError::UnknownCommand {
                    command: command.name(),
                });
            }
            _ => {}
        }
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
                if seat == g.host_seat {
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
                let occupied = g
                    .seats
                    .get(usize::from(*target))
                    .is_some_and(|s| s.occupant.is_some());
                if !occupied || *target == g.host_seat {
                    return Err(RuleError::InvalidSeat { seat: *target });
                }
                self.emit(Event::SeatRemoved { seat: *target });
            }
            Command::Start {} => {
                self.require_lobby()?;
                self.require_host(seat)?;
                if g.seats.iter().any(|s| s.occupant.is_none()) {
                    return Err(RuleError::SeatsNotFilled);
                }
                self.emit(Event::GameStarted {});
                self.deal(dealer);
            }
            Command::PlayCard { card } => {
                let seat = self.require_acting_seat(seat, actor)?;
                let t = &self.table;
                let hand = t.hands[usize::from(seat)];
                let selecting = !t.drafting
                    && t.pending_keep.is_none()
                    && t.next_revealed().is_none()
                    && !hand.is_empty();
                if !selecting {
                    return Err(RuleError::NotYourTurn {
                        action: "play_card",
                    });
                }
                if !hand.contains(*card) {
                    return Err(RuleError::CardNotInHand {
                        card: card.number(),
                    });
                }
                let first = t.selected[usize::from(seat)].is_none();
                self.emit(Event::CardSelected { seat, card: *card });
                if first {
                    self.emit(Event::SelectionMade { seat });
                }
                let t = &self.table;
                let all_selected = t.seats().all(|s| {
                    t.selected[usize::from(s)].is_some() || t.hands[usize::from(s)].is_empty()
                });
                if all_selected {
                    self.reveal();
                    self.resolve(dealer);
                }
            }
            Command::TakeRow { row } => {
                let seat = self.require_acting_seat(seat, actor)?;
                let layout = g.layout;
                let pending = self.table.pending_take(layout).filter(|p| p.seat == seat);
                let Some(pending) = pending else {
                    return Err(RuleError::NotYourTurn { action: "take_row" });
                };
                let r = usize::from(*row);
                if r >= layout.rows {
                    return Err(RuleError::NoSuchRow { row: *row });
                }
                let taken = self.table.rows[r].to_vec();
                self.emit(Event::CardPlaced {
                    seat,
                    card: pending.card,
                    row: *row,
                    taken,
                    chosen: true,
                    side: crate::Side::Right,
                });
                self.resolve(dealer);
            }
            Command::DraftCard { card } => {
                if g.layout.options.deal != DealOption::Draft {
                    return Err(RuleError::UnknownCommand {
                        command: "draft_card",
                    });
                }
                let seat = self.require_acting_seat(seat, actor)?;
                if self.table.draft_seat(g.layout) != Some(seat) {
                    return Err(RuleError::NotYourTurn {
                        action: "draft_card",
                    });
                }
                if !self.table.pool.contains(*card) {
                    return Err(RuleError::CardNotAvailable {
                        card: card.number(),
                    });
                }
                self.emit(Event::CardDrafted { seat, card: *card });
                if self.table.pool.len() == g.layout.rows {
                    let rows = self.table.pool.to_vec();
                    self.emit(Event::RoundStarted {
                        round: self.table.round,
                        rows,
                    });
                }
            }
            Command::KeepCard { card } => {
                if !g.layout.x_rows {
                    return Err(RuleError::UnknownCommand {
                        command: "keep_card",
                    });
                }
                let seat = self.require_acting_seat(seat, actor)?;
                let Some((keeper, cards)) = self.table.pending_keep.filter(|(s, _)| *s == seat)
                else {
                    return Err(RuleError::NotYourTurn {
                        action: "keep_card",
                    });
                };
                if !cards.contains(*card) {
                    return Err(RuleError::CardNotTaken {
                        card: card.number(),
                    });
                }
                self.keep(keeper, *card, cards);
                self.resolve(dealer);
            }
            Command::Pass {} => {
                let seat = self.require_acting_seat(seat, actor)?;
                if self.table.to_act != seat || self.table.open.is_none() {
                    return Err(RuleError::NotYourTurn { action: "pass" });
                }
                if self.table.chips[usize::from(seat)] == 0 {
                    return Err(RuleError::NoChips);
                }
                self.emit(Event::Passed { seat });
            }
            Command::Take {} => {
                let seat = self.require_acting_seat(seat, actor)?;
                let Some(card) = self.table.open.filter(|_| self.table.to_act == seat) else {
                    return Err(RuleError::NotYourTurn { action: "take" });
                };
                let chips = self.table.pot;
                self.emit(Event::CardTaken { seat, card, chips });
                self.next_card(dealer);
            }
            Command::Resign {} => {
                if self.table.status != Status::Active {
                    return Err(RuleError::GameNotActive);
                }
                let seat = seat.ok_or(RuleError::NotAPlayer)?;
                if g.seats
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
        if self.table.status == Status::Lobby {
            Ok(())
        } else {
            Err(RuleError::NotInLobby)
        }
    }

    fn require_host(&self, seat: Option<u8>) -> Result<(), RuleError> {
        match seat {
            None => Err(RuleError::NotAPlayer),
            Some(s) if s == self.ctx.host_seat => Ok(()),
            Some(_) => Err(RuleError::NotHost),
        }
    }

    /// A seated, active, non-resigned seat (or a bot acting for its seat).
    fn require_acting_seat(&self, seat: Option<u8>, actor: Actor<'_>) -> Result<u8, RuleError> {
        let seat = seat.ok_or(RuleError::NotAPlayer)?;
        if self.table.status != Status::Active {
            return Err(RuleError::GameNotActive);
        }
        let s = self
            .ctx
            .seats
            .get(usize::from(seat))
            .ok_or(RuleError::NotAPlayer)?;
        if matches!(actor, Actor::Account { .. }) && s.resigned {
            return Err(RuleError::Resigned);
        }
        Ok(seat)
    }

    fn free_seat(&self) -> Option<u8> {
        self.ctx
            .seats
            .iter()
            .position(|s| s.occupant.is_none())
            .and_then(|i| u8::try_from(i).ok())
    }

    fn reveal(&mut self) {
        let t = &*self.table;
        // Ascending by card: note each card's seat, then walk the set of selected cards.
        let mut owner = [0u8; 128];
        let mut chosen = CardSet::empty();
        for seat in t.seats() {
            if let Some(card) = t.selected[usize::from(seat)] {
                owner[usize::from(card.number())] = seat;
                chosen.insert(card);
            }
        }
        let cards: Vec<SeatCard> = chosen
            .iter()
            .map(|card| SeatCard {
                seat: owner[usize::from(card.number())],
                card,
            })
            .collect();
        self.emit(Event::CardsRevealed { cards });
    }

    /// The taken cards of an x-nimmt seat: `card` to the X row, the rest to the hand.
    fn keep(&mut self, seat: u8, card: Card, cards: CardSet) {
        let x_row = self.table.x_rows[usize::from(seat)];
        let stacked = if x_row.max().is_none_or(|last| card > last) {
            Vec::new()
        } else {
            x_row.to_vec()
        };
        let mut rest = cards;
        rest.remove(card);
        self.emit(Event::CardKept {
            seat,
            card,
            stacked,
            to_hand: rest.to_vec(),
        });
    }

    /// Places revealed cards until a choice is needed or the turn is over; ends the round
    /// (and maybe the game) when the turn ends with an empty hand.
    fn resolve(&mut self, dealer: &mut dyn Dealer) {
        let layout = *self.ctx.layout;
        loop {
            if let Some((seat, cards)) = self.table.pending_keep {
                match cards.iter().next() {
                    Some(only) if cards.len() == 1 => self.keep(seat, only, cards),
                    _ => return, // paused for keep_card
                }
                continue;
            }
            let Some(next) = self.table.next_revealed() else {
                break;
            };
            let Some((row, side)) = self.table.target(&layout, next.card) else {
                return; // paused for take_row
            };
            let lying = self.table.rows[row];
            let taken = if lying.len() >= layout.max_lying[row] {
                lying.to_vec()
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
                side,
            });
        }
        if self.table.round_over() {
            let scores = self.table.round_scores(&layout);
            self.emit(Event::RoundEnded {
                round: self.table.round,
                scores,
            });
            if self.table.game_over(&layout) {
                let winners = self.table.leaders(&layout);
                let seed = self.ctx.seed.unwrap_or_default().to_owned();
                self.emit(Event::GameFinished { winners, seed });
            } else {
                self.deal(dealer);
            }
        }
    }

    /// nimm-oder-schieb: turns up the next card, or ends the game after the last.
    fn next_card(&mut self, dealer: &mut dyn Dealer) {
        let t = &*self.table;
        if let Some(card) = t.pile.get(usize::from(t.drawn)).copied().flatten() {
            self.emit(Event::CardRevealed { card });
            return;
        }
        let scores = t.nos_scores();
        let chips = t.seats().map(|s| t.chips[usize::from(s)]).collect();
        let removed = t.removed.to_vec();
        self.emit(Event::NosGameEnded(Box::new(crate::model::NosGameEnd {
            game: t.round,
            scores,
            chips,
            removed,
        })));
        let layout = *self.ctx.layout;
        if self.table.game_over(&layout) {
            let winners = self.table.leaders(&layout);
            let seed = self.ctx.seed.unwrap_or_default().to_owned();
            self.emit(Event::GameFinished { winners, seed });
        } else {
            self.deal(dealer);
        }
    }

    /// nimm-oder-schieb: a new game of the match: fresh chips, a shuffled (or prepared) pile.
    fn deal_take_or_pass(&mut self, dealer: &mut dyn Dealer) {
        let g = self.ctx;
        let game = self.table.round + 1;
        let players = g.players;
        let first_seat =
            u8::try_from(usize::from(game - 1) % usize::from(players.max(1))).unwrap_or(0);
        let chips = crate::nos_cards::starting_chips(players);
        self.emit(Event::NosGameStarted {
            game,
            first_seat,
            chips,
        });
        let deck = g.layout.deck(players);
        let (pile, removed) = match g.prepared {
            Some(deal) if game == 1 => {
                let pile = deal.draw_pile.clone();
                let removed = deck.difference(pile.iter().copied().collect()).to_vec();
                (pile, removed)
            }
            _ => {
                let mut cards = deck.to_vec();
                dealer.shuffle(game, &mut cards);
                let mut removed = cards.split_off(crate::table::NOS_PILE);
                removed.sort_unstable();
                (cards, removed)
            }
        };
        self.emit(Event::DrawPileSet { pile, removed });
        self.next_card(dealer);
    }

    fn deal(&mut self, dealer: &mut dyn Dealer) {
        let g = self.ctx;
        if g.layout.take_or_pass() {
            self.deal_take_or_pass(dealer);
            return;
        }
        let round = self.table.round + 1;
        let players = g.players;
        if g.layout.options.deal == DealOption::Draft {
            let pool = g.layout.deck(players).to_vec();
            let first_seat =
                u8::try_from(usize::from(round - 1) % usize::from(players)).unwrap_or(0);
            self.emit(Event::DraftStarted {
                round,
                pool,
                first_seat,
            });
            return;
        }
        if let (Some(deal), 1) = (g.prepared, round) {
            let rows = deal
                .rows
                .iter()
                .filter_map(|r| r.first().copied())
                .collect();
            self.emit(Event::RoundStarted { round, rows });
            for (seat, hand) in deal.hands.iter().enumerate() {
                let cards = hand.iter().copied().collect::<CardSet>().to_vec();
                let seat = u8::try_from(seat).unwrap_or_default();
                self.emit(Event::HandDealt { seat, cards });
            }
            return;
        }
        // The deck on the stack: no allocation per deal for the shuffle.
        let deck = g.layout.deck(players);
        let mut buf = [Card(1); crate::card::MAX_CARD as usize];
        for (slot, card) in buf.iter_mut().zip(deck.iter()) {
            *slot = card;
        }
        let cards = &mut buf[..deck.len()];
        dealer.shuffle(round, cards);
        let (hands, rows) = split_deal(cards, players, g.layout);
        self.emit(Event::RoundStarted {
            round,
            rows: rows.to_vec(),
        });
        for (seat, hand) in hands.enumerate() {
            let cards = hand.iter().copied().collect::<CardSet>().to_vec();
            let seat = u8::try_from(seat).unwrap_or_default();
            self.emit(Event::HandDealt { seat, cards });
        }
    }
}

/// How a shuffled deck is dealt: seat 0 the first hand, seat 1 the next, …, then one card for
/// each row in row order. Returns the hands and the rows' first cards.
fn split_deal<'c>(
    cards: &'c [Card],
    players: u8,
    layout: &Layout,
) -> (std::slice::ChunksExact<'c, Card>, &'c [Card]) {
    let start = usize::from(players) * layout.hand_size;
    (
        cards[..start].chunks_exact(layout.hand_size),
        &cards[start..start + layout.rows],
    )
}

/// The deal a shuffled deck gives (see `split_deal`), as a [`Deal`].
#[must_use]
pub fn deal_from_order(cards: &[Card], players: u8, layout: &Layout) -> Deal {
    let (hands, rows) = split_deal(cards, players, layout);
    Deal {
        rows: rows.iter().map(|c| vec![*c]).collect(),
        hands: hands.map(<[Card]>::to_vec).collect(),
        draw_pile: Vec::new(),
    }
}

/// Checks that a prepared deal is complete and possible.
fn validate_deal(setup: &Setup, deal: &Deal) -> Result<(), RuleError> {
    let layout = Layout::new(setup.ruleset, setup.options);
    let bad = |m: String| Err(RuleError::InvalidDeal(m));
    if layout.take_or_pass() {
        if !deal.rows.is_empty() || !deal.hands.is_empty() {
            return bad("a nimm-oder-schieb deal is a `draw_pile` only".into());
        }
        let deck = layout.deck(setup.players);
        let mut seen = CardSet::empty();
        for card in &deal.draw_pile {
            if !deck.contains(*card) {
                return bad(format!("card {card} is not one of the values 3–35"));
            }
            if !seen.insert(*card) {
                return bad(format!("card {card} appears twice"));
            }
        }
        if deal.draw_pile.len() != crate::table::NOS_PILE {
            return bad(format!(
                "draw_pile must hold {} cards",
                crate::table::NOS_PILE
            ));
        }
        return Ok(());
    }
    if !deal.draw_pile.is_empty() {
        return bad("`draw_pile` is for nimm-oder-schieb".into());
    }
    if setup.options.deal == DealOption::Draft {
        return bad("a draft deal lies open and cannot be prepared".into());
    }
    let rows = layout.rows;
    if deal.rows.len() != rows || deal.rows.iter().any(|r| r.len() != 1) {
        return bad(format!("rows must be {rows} rows of exactly one card each"));
    }
    if deal.hands.len() != usize::from(setup.players) {
        return bad(format!(
            "hands must hold one hand per seat ({})",
            setup.players
        ));
    }
    let size = layout.hand_size;
    if let Some(i) = deal.hands.iter().position(|h| h.len() != size) {
        return bad(format!("hand {i} must hold {size} cards"));
    }
    let deck = layout.deck(setup.players);
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
