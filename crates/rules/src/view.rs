//! What a seat (or a spectator) may see of a game: a pure function of the state.
//!
//! Every endpoint builds its game body from [`Game::view_for`]; hidden information (other
//! hands, unrevealed selections, the seed before the end, a prepared deal) has no field here.

use serde::Serialize;

use crate::card::Card;
use crate::game::Game;
use crate::model::{Awaiting, BotStrategy, Command, Occupant, SeatCard, Status};
use crate::nos_cards::{CardFace, NosCard};
use crate::options::{ChipsOption, OptionsView, Ruleset};
use crate::take_or_pass::NOS_PILE;

/// The shuffle algorithm, as published with every game.
pub const SHUFFLE_ALGORITHM: &str = "stammtisch-chacha20-fisher-yates-v1";

/// A game as one caller may see it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GameView {
    /// The game played: `6-nimmt`, `11-nimmt`, `x-nimmt` or `nimm-oder-schieb`.
    pub ruleset: Ruleset,
    /// Options in force: the fields the ruleset takes at creation, defaults filled in.
    pub options: OptionsView,
    /// Number of seats.
    pub players: u8,
    /// The name the creator gave (a rematch keeps its original's); `null` when none was given.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub name: Option<String>,
    /// `lobby`, `active` or `finished`.
    pub status: Status,
    /// The host's seat.
    pub host_seat: u8,
    /// Whether the creator prepared the first deal (and so knew the cards).
    pub prepared_deal: bool,
    /// Rules version the game is pinned to.
    pub rules_version: u32,
    /// Current round, 1-based (0 before the first deal).
    pub round: u16,
    /// Every seat's public state.
    pub seats: Vec<SeatView>,
    /// The public state of the table.
    pub table: TableView,
    /// The caller's seat and private state; `null` for a spectator.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub you: Option<YouView>,
    /// Who must act now.
    pub awaiting: Vec<Awaiting>,
    /// Commands the caller may send now.
    pub legal: Vec<Command>,
    /// Score per round and seat (`scores[r][s]`): bullheads in the row games, card points
    /// minus chips in nimm-oder-schieb (where a round is a game of the match).
    pub scores: Vec<Vec<i32>>,
    /// Totals per seat.
    pub totals: Vec<i32>,
    /// Winning seats once finished, else `null`.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub winners: Option<Vec<u8>>,
    /// The fair-shuffle commitment and, once finished, the seed.
    pub fairness: FairnessView,
    /// Seconds per move when the game has move deadlines.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub move_deadline_seconds: Option<u32>,
    /// The finished game this one is a rematch of.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub rematch_of: Option<String>,
    /// The rematch of this finished game, once someone started it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub rematch: Option<String>,
    /// The tournament table this game is (`/v1/tournaments/{tournament}`); absent for
    /// other games.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub tournament: Option<crate::model::TournamentLink>,
    /// Quick play: the game starts by itself when its last seat is taken.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub auto_start: bool,
    /// The game's time control; absent when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub time_control: Option<crate::clocks::TimeControl>,
    /// Every seat's clock as of `clocks_at` (a running one shows `remaining_ms - (T -
    /// clocks_at)` at `T`); absent before the game started or without a time control.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub clocks: Option<Vec<crate::clocks::SeatClock>>,
    /// The server's instant the `clocks` were computed at (UTC, RFC 3339 with milliseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(format = DateTime, nullable = false))]
    pub clocks_at: Option<String>,
    /// A pause proposed or in force (correspondence games); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub pause: Option<crate::clocks::PauseView>,
}

/// A seat's public state.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SeatView {
    /// The seat's 0-based index, its position in `seats`.
    pub seat: u8,
    /// Display name: a bot's, or a person's current account name (`deleted player` once
    /// the account is deleted; the server fills it in); `null` for a free seat.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub name: Option<String>,
    /// Account id of a person; `null` for a bot or a free seat.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub account_id: Option<String>,
    /// Whether a bot plays this seat (seated bot or resigned person).
    pub bot: bool,
    /// The bot strategy, for a bot seat.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub strategy: Option<BotStrategy>,
    /// The seat is kept for one of the people of the game this one is a rematch of.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reserved: bool,
    /// The person resigned and a bot took over.
    pub resigned: bool,
    /// The seat has selected a card this turn (the card stays hidden).
    pub selected: bool,
    /// Cards left in hand.
    pub hand_size: usize,
    /// Cards taken this round (public; row games).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub taken: Option<Vec<Card>>,
    /// Bullheads taken this round (row games).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub round_bullheads: Option<u32>,
    /// The cards the seat has taken this game (nimm-oder-schieb; public).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub cards: Option<Vec<CardFace>>,
    /// The seat's chips (nimm-oder-schieb): shown only with `chips: open` or to the seat itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub chips: Option<u8>,
    /// The seat's X row, ascending (x-nimmt only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub x_row: Option<Vec<Card>>,
    /// Number of cards on the seat's face-down X stack (x-nimmt only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub x_stack_size: Option<usize>,
    /// Total of finished rounds.
    pub total: i32,
    /// The seat went to a bot because of its clock (three run-outs, or the others chose
    /// `hand_to_bot`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lost_on_time: bool,
    /// When the seat must have acted (games with move deadlines; UTC, RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub deadline_at: Option<String>,
}

/// A row of the table.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RowView {
    /// The row's capacity as the game names it: 6-nimmt and 11-nimmt rows are full at 5
    /// (the sixth card takes them); an x-nimmt row of capacity 3, 4 or 5 is taken by the card
    /// that makes it reach that count.
    pub capacity: usize,
    /// The most cards that can lie in the row; the next card placed takes them
    /// (5 in 6-nimmt and 11-nimmt, capacity − 1 in x-nimmt).
    pub max_cards: usize,
    /// Cards left to right.
    pub cards: Vec<Card>,
}

/// Cards a seat took and must choose from (x-nimmt `keep_card`), public.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PendingKeepView {
    /// The seat that chooses.
    pub seat: u8,
    /// The cards it took.
    pub cards: Vec<Card>,
}

/// The public table.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TableView {
    /// The rows, left to right.
    pub rows: Vec<RowView>,
    /// Revealed cards of this turn not yet placed, ascending.
    pub revealed: Vec<SeatCard>,
    /// The open draft's cards (`deal: draft`, while drafting).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub draft_pool: Option<Vec<Card>>,
    /// Cards just taken that wait for `keep_card` (x-nimmt).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub pending_keep: Option<PendingKeepView>,
    /// nimm-oder-schieb: the open card, or `null` between games.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_card: Option<Option<CardFace>>,
    /// nimm-oder-schieb: chips on the open card.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub pot: Option<u8>,
    /// nimm-oder-schieb: cards left face down on the draw pile.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub draw_pile_size: Option<usize>,
    /// nimm-oder-schieb: the 9 cards removed unseen from the last game, once the game is over.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub removed: Option<Vec<CardFace>>,
}

/// The caller's private state.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct YouView {
    /// The caller's seat.
    pub seat: u8,
    /// The caller's hand, ascending.
    pub hand: Vec<Card>,
    /// The caller's selection this turn, before the reveal.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub selected: Option<Card>,
    /// The caller's X stack (x-nimmt only; face down to everyone else).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub x_stack: Option<Vec<Card>>,
    /// The caller's chips (nimm-oder-schieb).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub chips: Option<u8>,
}

/// Fair-shuffle information.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FairnessView {
    /// The documented shuffle algorithm.
    pub algorithm: &'static str,
    /// Hex SHA-256 of the seed's bytes.
    pub commitment: String,
    /// The seed (hex), once the game is finished.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub seed: Option<String>,
}

impl GameView {
    /// Shows the clocks as of `now` (the server's instant) instead of the last change's.
    pub fn clocks_now(&mut self, game: &Game, now: chrono::DateTime<chrono::Utc>) {
        if let Some(clocks) = game.clocks_at(now) {
            self.clocks = Some(clocks);
            self.clocks_at = Some(crate::model::rfc3339_millis::format(
                &crate::clocks::millis(now),
            ));
        }
    }
}

impl Game {
    /// The game as the account `viewer` may see it (`None`: anonymous spectator).
    #[must_use]
    pub fn view_for(&self, viewer: Option<&str>) -> GameView {
        let layout = &self.layout;
        let open_chips = self.setup.options.chips == ChipsOption::Open;
        let you_seat = viewer.and_then(|a| self.seat_of(a));
        let rows = self.board.rows();
        let nos = self.board.take_or_pass();
        let x = layout.x_rows;
        let seats = self
            .seats
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let seat = u8::try_from(i).unwrap_or_default();
                SeatView {
                    seat,
                    name: s.name().map(str::to_owned),
                    account_id: s.account().map(str::to_owned),
                    bot: s.bot_controlled(),
                    strategy: match &s.occupant {
                        Some(Occupant::Bot { strategy, .. }) => Some(*strategy),
                        _ if s.resigned => Some(BotStrategy::Heuristic),
                        _ => None,
                    },
                    resigned: s.resigned,
                    reserved: s.reserved_for.is_some() && s.occupant.is_none(),
                    selected: self.selection(seat).is_some(),
                    hand_size: self.hand(seat).len(),
                    taken: rows.map(|b| b.taken[i].to_vec()),
                    round_bullheads: rows.map(|b| layout.table.sum_set(b.taken[i])),
                    cards: nos.map(|b| faces(b.taken[i])),
                    chips: nos
                        .filter(|_| open_chips || you_seat == Some(seat))
                        .map(|b| b.chips[i]),
                    x_row: rows.filter(|_| x).map(|b| b.x_rows[i].to_vec()),
                    x_stack_size: rows.filter(|_| x).map(|b| b.x_stacks[i].len()),
                    total: self.progress.totals[i],
                    lost_on_time: self
                        .clock
                        .as_ref()
                        .and_then(|c| c.lost_on_time.get(i))
                        .copied()
                        .unwrap_or(false),
                    deadline_at: self
                        .deadlines
                        .iter()
                        .filter(|d| usize::from(d.seat) == i)
                        .map(|d| d.at)
                        .min()
                        .map(|at| crate::model::rfc3339_millis::format(&at)),
                }
            })
            .collect();
        let status = self.status();
        GameView {
            ruleset: self.setup.ruleset,
            options: self.setup.options.view(self.setup.ruleset),
            players: self.setup.players,
            name: self.name.clone(),
            status,
            host_seat: self.host_seat,
            prepared_deal: self.prepared_deal,
            rules_version: self.rules_version,
            round: self.round(),
            seats,
            table: TableView {
                rows: rows
                    .map(|b| {
                        (0..layout.rows)
                            .map(|r| RowView {
                                capacity: layout.capacity[r],
                                max_cards: layout.max_lying[r],
                                cards: b.rows[r].to_vec(),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                revealed: self.revealed(),
                draft_pool: rows.filter(|b| b.drafting).map(|b| b.pool.to_vec()),
                pending_keep: rows.and_then(|b| b.pending_keep).map(|(seat, cards)| {
                    PendingKeepView {
                        seat,
                        cards: cards.to_vec(),
                    }
                }),
                open_card: nos.map(|b| b.open.and_then(face)),
                pot: nos.map(|b| b.pot),
                draw_pile_size: nos.map(|b| NOS_PILE.saturating_sub(usize::from(b.drawn))),
                removed: nos
                    .filter(|_| status == Status::Finished)
                    .map(|b| faces(b.removed)),
            },
            you: you_seat.map(|seat| YouView {
                seat,
                hand: self.hand(seat).to_vec(),
                selected: self.selection(seat),
                x_stack: rows
                    .filter(|_| x)
                    .map(|b| b.x_stacks[usize::from(seat)].to_vec()),
                chips: nos.map(|b| b.chips[usize::from(seat)]),
            }),
            awaiting: self.awaiting(),
            legal: viewer.map(|a| self.legal_for(a)).unwrap_or_default(),
            scores: self.scores.clone(),
            totals: self.totals(),
            winners: (status == Status::Finished).then(|| self.winners.clone()),
            move_deadline_seconds: self.move_deadline_seconds,
            rematch_of: self.rematch_of.clone(),
            rematch: self.rematch.clone(),
            tournament: self.tournament.clone(),
            auto_start: self.auto_start,
            time_control: self.clock.as_ref().map(|c| c.control),
            clocks: self
                .clock
                .as_ref()
                .and_then(|c| c.snapshot.as_ref())
                .map(|s| s.clocks.clone()),
            clocks_at: self
                .clock
                .as_ref()
                .and_then(|c| c.snapshot.as_ref())
                .map(|s| crate::model::rfc3339_millis::format(&s.at)),
            pause: self.clock.as_ref().and_then(|c| c.pause.clone()),
            fairness: FairnessView {
                algorithm: SHUFFLE_ALGORITHM,
                commitment: self.commitment.clone(),
                seed: if self.seed_revealed {
                    self.seed().map(str::to_owned)
                } else {
                    None
                },
            },
        }
    }
}

fn face(card: Card) -> Option<CardFace> {
    NosCard::new(card.number()).map(NosCard::face)
}

fn faces(cards: crate::card::CardSet) -> Vec<CardFace> {
    cards.iter().filter_map(face).collect()
}
