//! The rules of the Stammtisch games: pure, synchronous, no I/O, no clock, no randomness.
//!
//! One decider shape: [`Game::decide`] checks a command and returns events,
//! [`Game::apply`] folds an event into the state and cannot fail, [`Game::view_for`] says
//! what a seat may see, [`Game::legal_for`] lists what it may send. Shuffling is done by the
//! caller through [`Dealer`]; the events record the deal, so a replay never shuffles.
//!
//! The state of play is a [`Progress`] (status, round, totals) and a [`Board`] per game
//! family: the row games (6 nimmt!, 11 nimmt!, X nimmt!) share one parameterised
//! [`RowBoard`] ([`rows`]), nimm-oder-schieb has its [`TakeOrPassBoard`] ([`take_or_pass`]).
//! Seats and the lobby are in [`lobby`], dealing in [`deal`]. [`board`] says how to add a
//! ruleset.

pub mod asks;
pub mod board;
pub mod bots;
pub mod card;
pub mod clocks;
pub mod deal;
pub mod error;
pub mod game;
pub mod lobby;
pub mod model;
pub mod nos_cards;
pub mod options;
pub mod pad;
pub mod pad_bounds;
pub mod progress;
pub mod rows;
pub mod take_or_pass;
pub mod text;
pub mod tournament;
mod turn;
pub mod upcast;
pub mod view;

pub use asks::PersonAsk;
pub use board::Board;
pub use card::{Card, CardSet, Cards, ScoreTable};
pub use clocks::{
    AtZero, ClockKind, ClocksSnapshot, HandedCause, PauseView, SeatClock, TimeControl,
};
pub use deal::deal_from_order;
pub use error::RuleError;
pub use game::{Extras, Game, NewGame};
pub use model::{
    Actor, Audience, Awaiting, BotStrategy, Command, Deal, Dealer, Event, GameCreation, NosGameEnd,
    Occupant, RULES_VERSION, Reservation, Seat, SeatCard, SeatCards, SeatDeadline, Side, Status,
    TournamentLink,
};
pub use options::{
    ChipsOption, DealOption, DeckOption, EndCondition, Layout, Options, OptionsInput, OptionsView,
    PlacementOption, Preset, Ruleset, Setup,
};
pub use progress::Progress;
pub use rows::RowBoard;
pub use take_or_pass::TakeOrPassBoard;
pub use view::{GameView, SHUFFLE_ALGORITHM};
