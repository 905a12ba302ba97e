//! The game aggregate: `decide` and `apply`, and the dispatch to the game families.
//!
//! `decide` holds every check and returns the events a command causes; `apply` folds an
//! event into the state and cannot fail. `decide` works on a copy of the [`Progress`] and
//! the [`Board`] (plain `Copy` data) and applies each event as it emits it, so its output
//! always applies and a resolution chain (reveal → placements → choices → end of round →
//! next deal) is computed in one call. Randomness enters through [`Dealer`]: the caller
//! shuffles, the events record what was dealt.
//!
//! This module owns the [`Game`] (setup, seats, seed, scores, deadlines) and the dispatch
//! of a decision to the family's board; the `Turn` a decision runs in and the `Family`
//! trait each board implements are in `crate::turn`. The rules of play live
//! with the families ([`crate::rows`], [`crate::take_or_pass`]), seats in [`crate::lobby`],
//! dealing in [`crate::deal`]. How to add a ruleset: see [`crate::board`].

use crate::board::Board;
use crate::card::{Card, CardSet};
use crate::deal::validate_deal;
use crate::error::RuleError;
use crate::model::{
    Actor, Awaiting, Command, Deal, Dealer, Event, Occupant, RULES_VERSION, Seat, SeatCard, Status,
};
use crate::options::Layout;
use crate::options::Setup;
use crate::progress::Progress;
use crate::turn::{Ctx, Turn};

/// The state of one game, rebuilt by folding its events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    /// Ruleset, options, seats.
    pub setup: Setup,
    /// The table's shape, derived from the setup.
    pub layout: Layout,
    /// The name the creator gave, if any.
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
    /// Where the game stands: status, round, totals.
    pub progress: Progress,
    /// The table of the game's family.
    pub board: Board,
    /// Seconds a seat has for a move, if the game has move deadlines.
    pub move_deadline_seconds: Option<u32>,
    /// The deadlines of the seats that must act now.
    pub deadlines: Vec<crate::model::SeatDeadline>,
    /// Scores per round and seat.
    pub scores: Vec<Vec<i32>>,
    /// Winning seats once finished.
    pub winners: Vec<u8>,
    /// Listed and open to spectators, from the last `visibility_set` (`None` for a game
    /// recorded before visibility was an event: its visibility lives only in the index).
    pub public: Option<bool>,
    /// Starts by itself when the last seat is taken (quick play).
    pub auto_start: bool,
    /// The finished game this one is a rematch of.
    pub rematch_of: Option<String>,
    /// The rematch of this finished game, once created.
    pub rematch: Option<String>,
    /// The clocks, when the game has a time control.
    pub clock: Option<crate::clocks::ClockState>,
    /// The tournament table this game is.
    pub tournament: Option<crate::model::TournamentLink>,
}

/// Parameters of a new game.
#[derive(Clone, Debug)]
pub struct NewGame<'a> {
    /// Ruleset, options, seats.
    pub setup: Setup,
    /// The name the creator gave, if any.
    pub name: Option<String>,
    /// Creator's account id.
    pub host_account: &'a str,
    /// Creator's display name. Not recorded (events name accounts by id only).
    pub host_name: &'a str,
    /// A prepared first deal.
    pub deal: Option<Deal>,
    /// Hex shuffle seed (secret).
    pub seed: String,
    /// Hex SHA-256 of the seed.
    pub commitment: String,
}

/// What a game may be created with besides [`NewGame`]: a rematch's link and reserved
/// seats, and quick play's start by itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extras {
    /// The finished game this one is a rematch of.
    pub rematch_of: Option<String>,
    /// Seats kept for accounts until they join.
    pub reservations: Vec<crate::model::Reservation>,
    /// Start when the last seat is taken.
    pub auto_start: bool,
    /// The tournament table the game is.
    pub tournament: Option<crate::model::TournamentLink>,
    /// The seed to deal from instead of a fresh one (the server reads it: a duplicate
    /// round's tables share one); the rules take the seed from [`NewGame`].
    pub seed: Option<String>,
}

impl Game {
    /// The events that create a game. Checks options and a prepared deal.
    ///
    /// # Errors
    /// Invalid options, an invalid deal.
    pub fn create(new: NewGame<'_>) -> Result<Vec<Event>, RuleError> {
        Self::create_with(new, Extras::default())
    }

    /// [`Game::create`] with [`Extras`].
    ///
    /// # Errors
    /// Invalid options, an invalid prepared deal, a reservation of seat 0 or of a seat
    /// that does not exist.
    pub fn create_with(new: NewGame<'_>, extras: Extras) -> Result<Vec<Event>, RuleError> {
        let NewGame {
            setup,
            name,
            host_account,
            host_name: _,
            deal,
            seed,
            commitment,
        } = new;
        setup.options.validate(setup.ruleset, setup.players)?;
        if let Some(deal) = &deal {
            validate_deal(&setup, deal)?;
        }
        if let Some(r) = extras
            .reservations
            .iter()
            .find(|r| r.seat == 0 || r.seat >= setup.players)
        {
            return Err(RuleError::InvalidSeat { seat: r.seat });
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
                rematch_of: extras.rematch_of,
                reservations: extras.reservations,
                auto_start: extras.auto_start,
                tournament: extras.tournament,
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
            rematch_of,
            reservations,
            auto_start,
            tournament,
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
            seats: (0..*players)
                .map(|seat| Seat {
                    reserved_for: reservations
                        .iter()
                        .find(|r| r.seat == seat)
                        .map(|r| r.account.clone()),
                    ..Seat::default()
                })
                .collect(),
            host_seat: 0,
            prepared_deal: *prepared_deal,
            prepared: None,
            commitment: commitment.clone(),
            seed: None,
            seed_revealed: false,
            progress: Progress::new(*players),
            board: Board::new(&Layout::new(*ruleset, *options), *players),
            move_deadline_seconds: None,
            deadlines: Vec::new(),
            scores: Vec::new(),
            winners: Vec::new(),
            public: None,
            auto_start: *auto_start,
            rematch_of: rematch_of.clone(),
            rematch: None,
            clock: None,
            tournament: tournament.clone(),
        })
    }

    /// Lobby, active or finished.
    #[must_use]
    pub fn status(&self) -> Status {
        self.progress.status
    }

    /// Current round, 1-based (0 before the first deal).
    #[must_use]
    pub fn round(&self) -> u16 {
        self.progress.round
    }

    /// The secret seed (for the server's dealer).
    #[must_use]
    pub fn seed(&self) -> Option<&str> {
        self.seed.as_deref()
    }

    /// A seat's hand.
    #[must_use]
    pub fn hand(&self, seat: u8) -> CardSet {
        self.board
            .rows()
            .and_then(|b| b.hands.get(usize::from(seat)))
            .copied()
            .unwrap_or_default()
    }

    /// A seat's current selection (private to that seat).
    #[must_use]
    pub fn selection(&self, seat: u8) -> Option<Card> {
        self.board
            .rows()
            .and_then(|b| b.selected.get(usize::from(seat)))
            .copied()
            .flatten()
    }

    /// The rows, left to right, each ascending.
    #[must_use]
    pub fn rows(&self) -> Vec<Vec<Card>> {
        self.board
            .rows()
            .map(|b| {
                b.rows[..self.layout.rows]
                    .iter()
                    .map(|r| r.to_vec())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Cards a seat took this round (6 nimmt!, 11 nimmt!) or this game (nimm-oder-schieb).
    #[must_use]
    pub fn taken(&self, seat: u8) -> Vec<Card> {
        let taken = match &self.board {
            Board::Rows(b) => &b.taken,
            Board::TakeOrPass(b) => &b.taken,
        };
        taken
            .get(usize::from(seat))
            .map(|t| t.to_vec())
            .unwrap_or_default()
    }

    /// Revealed cards of this turn not yet placed, ascending.
    #[must_use]
    pub fn revealed(&self) -> Vec<SeatCard> {
        self.board
            .rows()
            .map(|b| b.revealed().collect())
            .unwrap_or_default()
    }

    /// Totals per seat.
    #[must_use]
    pub fn totals(&self) -> Vec<i32> {
        self.progress.totals[..usize::from(self.setup.players)].to_vec()
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
        self.board.rows()?.pending_take(&self.layout)
    }

    /// The row a card would go to now (`None`: it fits no row).
    #[must_use]
    pub fn target_row(&self, card: Card) -> Option<usize> {
        self.board
            .rows()?
            .target(&self.layout, card)
            .map(|(row, _)| row)
    }

    /// Who must act now, and how.
    #[must_use]
    pub fn awaiting(&self) -> Vec<Awaiting> {
        match self.progress.status {
            Status::Finished => Vec::new(),
            Status::Lobby => self.lobby_awaiting(),
            Status::Active => match &self.board {
                Board::Rows(b) => b.awaiting(&self.layout, self.progress.round),
                Board::TakeOrPass(b) => b.awaiting(),
            },
        }
    }

    /// Whether `seat` must act now.
    #[must_use]
    pub fn is_awaited(&self, seat: u8) -> bool {
        if self.progress.status != Status::Active {
            return false;
        }
        match &self.board {
            Board::Rows(b) => b.is_awaited(&self.layout, self.progress.round, seat),
            Board::TakeOrPass(b) => b.to_act == seat,
        }
    }

    /// The commands an account (seated or not) may send now.
    #[must_use]
    pub fn legal_for(&self, account: &str) -> Vec<Command> {
        let seat = self.seat_of(account);
        match self.progress.status {
            Status::Finished => Vec::new(),
            Status::Lobby => self.lobby_legal(seat, account),
            Status::Active => match seat {
                Some(s) if !self.seats[usize::from(s)].resigned => {
                    let mut legal = self.moves_for(s);
                    legal.push(Command::Resign {});
                    legal.extend(self.clock_legal(account));
                    legal
                }
                _ => Vec::new(),
            },
        }
    }

    /// The game moves a seat may make now (no lobby commands, no `resign`).
    #[must_use]
    pub fn moves_for(&self, seat: u8) -> Vec<Command> {
        if self.progress.status != Status::Active {
            return Vec::new();
        }
        match &self.board {
            Board::Rows(b) => b.moves_for(&self.layout, self.progress.round, seat),
            Board::TakeOrPass(b) => b.moves_for(seat),
        }
    }

    /// The next bot-controlled seat that must act, if any.
    ///
    /// (Always inlined: a simulation asks it before every move; as a call, the board's
    /// questions were answered into memory and read back. −1.8 % of X nimmt!'s instructions
    /// on the engine benchmark, `scripts/bench-engine --instructions`.)
    #[must_use]
    #[inline(always)]
    pub fn next_bot(&self) -> Option<u8> {
        if self.progress.status != Status::Active {
            return None;
        }
        let bot = |s: u8| {
            self.seats
                .get(usize::from(s))
                .is_some_and(Seat::bot_controlled)
        };
        match &self.board {
            Board::Rows(b) => b.next_bot(&self.layout, self.progress.round, bot),
            Board::TakeOrPass(b) => bot(b.to_act).then_some(b.to_act),
        }
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
        if command.is_clock() {
            return match actor {
                Actor::Account { id, .. } => self.decide_clock(id, command),
                Actor::Bot { .. } | Actor::Deadline { .. } => Err(RuleError::NotAPlayer),
            };
        }
        let mut progress = self.progress;
        let mut board = self.board;
        let mut events = Vec::with_capacity(8);
        run_turn(
            self.ctx(),
            &mut progress,
            &mut board,
            &mut events,
            actor,
            command,
            dealer,
        )?;
        Ok(events)
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            seats: &self.seats,
            host_seat: self.host_seat,
            layout: &self.layout,
            players: self.setup.players,
            prepared: self.prepared.as_ref(),
            // `game_finished` reveals the seed, except at a tournament table (its round's
            // other tables may deal from it): there `seed_revealed` does, later.
            seed: self.seed.as_deref().filter(|_| self.tournament.is_none()),
            auto_start: self.auto_start,
        }
    }

    /// Decides a command and applies its events at once; returns the events.
    ///
    /// The same as [`Game::decide`] followed by [`Game::apply`] of every event, but the
    /// board `decide` already folded the events into is kept instead of folding them again.
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
    ///
    /// (Always inlined: it is a thin frame around the turn, called once per move by
    /// simulations and the expert's rollouts; inlined, the turn's context is built where the
    /// caller holds the game. −3.3 % of X nimmt!'s instructions on the engine benchmark.)
    #[inline(always)]
    pub fn execute_into(
        &mut self,
        actor: Actor<'_>,
        command: &Command,
        dealer: &mut dyn Dealer,
        out: &mut Vec<Event>,
    ) -> Result<(), RuleError> {
        if command.is_clock() {
            let events = self.decide(actor, command, dealer)?;
            for event in &events {
                self.apply(event);
            }
            out.extend(events);
            return Ok(());
        }
        let Self {
            progress,
            board,
            seats,
            host_seat,
            layout,
            setup,
            prepared,
            seed,
            auto_start,
            tournament,
            ..
        } = self;
        let ctx = Ctx {
            seats,
            host_seat: *host_seat,
            layout,
            players: setup.players,
            prepared: prepared.as_ref(),
            seed: seed.as_deref().filter(|_| tournament.is_none()),
            auto_start: *auto_start,
        };
        // A turn checks everything before it emits the first event, so a refused command
        // leaves the board untouched and no copy is needed.
        let start = out.len();
        let result = run_turn(ctx, progress, board, out, actor, command, dealer);
        debug_assert!(
            result.is_ok() || out.len() == start,
            "an error after an event"
        );
        if !result? {
            return Ok(());
        }
        for event in &out[start..] {
            if event.touches_meta() {
                self.apply_meta(event);
            }
        }
        Ok(())
    }

    /// Folds one event into the state.
    pub fn apply(&mut self, event: &Event) {
        if Progress::concerns(event) {
            self.progress.apply(event);
        }
        self.board.apply(&self.layout, event);
        self.apply_meta(event);
    }

    /// Folds an event into everything but the progress and the board.
    fn apply_meta(&mut self, event: &Event) {
        match event {
            Event::SeedRecorded { seed } => self.seed = Some(seed.clone()),
            Event::MoveDeadlineSet { seconds } => self.move_deadline_seconds = Some(*seconds),
            Event::DeadlinesSet { deadlines } => self.deadlines.clone_from(deadlines),
            Event::DealPrepared { deal } => self.prepared = Some(deal.as_ref().clone()),
            Event::SeatTaken { seat, account } => {
                if let Some(s) = self.seats.get_mut(usize::from(*seat)) {
                    s.occupant = Some(Occupant::Human {
                        account: account.clone(),
                    });
                    s.reserved_for = None;
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
                // A tournament table keeps its seed until its round ends (`seed_revealed`).
                self.seed_revealed = self.tournament.is_none();
            }
            Event::SeatResigned { seat } => {
                if let Some(s) = self.seats.get_mut(usize::from(*seat)) {
                    s.resigned = true;
                }
            }
            Event::VisibilitySet { public } => self.public = Some(*public),
            Event::ReservationsReleased {} => {
                self.seats.iter_mut().for_each(|s| s.reserved_for = None);
            }
            Event::RematchCreated { game } => self.rematch = Some(game.clone()),
            Event::SeedRevealed {} => self.seed_revealed = true,
            Event::TimeControlSet { .. }
            | Event::ClocksSet(_)
            | Event::ClockRanOut { .. }
            | Event::SeatHandedToBot { .. }
            | Event::VacationSpent { .. }
            | Event::PauseProposed { .. }
            | Event::PauseAccepted { .. }
            | Event::PauseDeclined { .. }
            | Event::ClocksPaused {}
            | Event::ClocksResumed { .. }
            | Event::GameStarted {} => self.apply_clock(event),
            _ => {}
        }
    }
}

/// Runs a command on the family's board, appending the events it causes to `events`;
/// whether one of them touches more than the progress and the board.
/// (Always inlined: the arguments then stay where the caller has them.)
#[inline(always)]
fn run_turn(
    ctx: Ctx<'_>,
    progress: &mut Progress,
    board: &mut Board,
    events: &mut Vec<Event>,
    actor: Actor<'_>,
    command: &Command,
    dealer: &mut dyn Dealer,
) -> Result<bool, RuleError> {
    match board {
        Board::Rows(board) => Turn {
            ctx,
            progress,
            board,
            events,
            meta: false,
        }
        .run_meta(actor, command, dealer),
        Board::TakeOrPass(board) => Turn {
            ctx,
            progress,
            board,
            events,
            meta: false,
        }
        .run_meta(actor, command, dealer),
    }
}
