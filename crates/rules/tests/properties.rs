#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Property tests: thousands of random games of every ruleset and option combination
//! (6-nimmt standard / taktik / logik / profi and the two remaining combinations, 11-nimmt,
//! x-nimmt), played to the end by random legal moves or by the built-in bots, with the rules'
//! invariants checked after every command and every event; and all-bot matches of
//! nimm-oder-schieb (3–7 players, chips hidden or open, 1–3 games) with its own invariants.

use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;
use stammtisch_rules::bots::{self, Random};
use stammtisch_rules::nos_cards::{self, NosCard};
use stammtisch_rules::options::ChipsOption;
use stammtisch_rules::{
    Actor, Audience, Awaiting, BotStrategy, Card, CardSet, Command, Deal, DealOption, Dealer,
    DeckOption, EndCondition, Event, Game, Layout, NewGame, Options, PlacementOption, Preset,
    RowBoard, RuleError, Ruleset, ScoreTable, SeatCard, Setup, Side, Status, deal_from_order,
};

/// SplitMix64: a small, seedable, deterministic generator.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % u64::try_from(n).unwrap()).unwrap()
    }

    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

impl Random for SplitMix {
    fn below(&mut self, n: usize) -> usize {
        Self::below(self, n)
    }
}

fn shuffle(seed: u64, cards: &mut [Card]) {
    let mut rng = SplitMix(seed);
    for i in (1..cards.len()).rev() {
        let j = rng.below(i + 1);
        cards.swap(i, j);
    }
}

/// Fisher–Yates with SplitMix, a fresh stream per round.
#[derive(Clone)]
struct SeededDealer {
    seed: u64,
    rounds: Vec<u16>,
}

impl Dealer for SeededDealer {
    fn shuffle(&mut self, round: u16, cards: &mut [Card]) {
        assert!(
            cards.windows(2).all(|w| w[0] < w[1]),
            "the dealer is handed the deck ascending"
        );
        self.rounds.push(round);
        shuffle(
            self.seed ^ u64::from(round).wrapping_mul(0xD6E8_FEB8_6659_FD93),
            cards,
        );
    }
}

/// Every ruleset and option combination the rules allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    /// 6-nimmt with deck, deal and placement (a valid combination).
    Six {
        deck: DeckOption,
        deal: DealOption,
        placement: PlacementOption,
    },
    Eleven,
    X,
}

impl Variant {
    fn preset(preset: Preset) -> Self {
        let o = preset.options();
        Self::Six {
            deck: o.deck,
            deal: o.deal,
            placement: o.placement,
        }
    }

    /// The four presets, the two other valid 6-nimmt combinations, 11-nimmt and x-nimmt.
    fn all() -> Vec<Self> {
        let mut all: Vec<Self> = Preset::ALL.into_iter().map(Self::preset).collect();
        all.push(Self::Six {
            deck: DeckOption::Tactical,
            deal: DealOption::Random,
            placement: PlacementOption::BothEnds,
        });
        all.push(Self::Six {
            deck: DeckOption::Tactical,
            deal: DealOption::Draft,
            placement: PlacementOption::BothEnds,
        });
        all.push(Self::Eleven);
        all.push(Self::X);
        all
    }

    fn ruleset(self) -> Ruleset {
        match self {
            Self::Six { .. } => Ruleset::SixNimmt,
            Self::Eleven => Ruleset::ElevenNimmt,
            Self::X => Ruleset::XNimmt,
        }
    }

    fn options(self, end: EndCondition) -> Options {
        match self {
            Self::Six {
                deck,
                deal,
                placement,
            } => Options {
                deck,
                deal,
                placement,
                end,
                chips: ChipsOption::Hidden,
            },
            Self::Eleven | Self::X => Options {
                end,
                ..Options::default()
            },
        }
    }

    fn draft(self) -> bool {
        matches!(
            self,
            Self::Six {
                deal: DealOption::Draft,
                ..
            }
        )
    }

    fn both_ends(self) -> bool {
        matches!(
            self,
            Self::Six {
                placement: PlacementOption::BothEnds,
                ..
            }
        )
    }
}

/// Who chooses the moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mover {
    /// A uniformly random move of `moves_for`, now and then replacing a selection, with
    /// illegal commands tried in between.
    AnyMove,
    /// `bots::choose` with one strategy for every seat.
    Bots(BotStrategy),
    /// `bots::choose`: random strategy at even seats, heuristic at odd ones.
    MixedBots,
}

impl Mover {
    fn strategy(self, seat: u8) -> BotStrategy {
        match self {
            Self::Bots(s) => s,
            Self::AnyMove | Self::MixedBots if seat.is_multiple_of(2) => BotStrategy::Random,
            Self::AnyMove | Self::MixedBots => BotStrategy::Heuristic,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Params {
    seed: u64,
    variant: Variant,
    players: u8,
    end: EndCondition,
    prepared: bool,
    host_resigns: bool,
    mover: Mover,
}

impl Params {
    /// Fits the raw draw to the variant: player range, x-nimmt's end by rounds, no prepared
    /// draft deal.
    fn new(
        seed: u64,
        variant: Variant,
        players: u8,
        end: EndCondition,
        prepared: bool,
        host_resigns: bool,
        mover: Mover,
    ) -> Self {
        let (min, max) = variant.ruleset().players();
        let players = min + players % (max - min + 1);
        let end = match (variant, end) {
            (Variant::X, EndCondition::Points(p)) => EndCondition::Rounds(1 + p % 3),
            _ => end,
        };
        Self {
            seed,
            variant,
            players,
            end,
            prepared: prepared && !variant.draft(),
            host_resigns,
            mover,
        }
    }
}

fn params() -> impl Strategy<Value = Params> {
    let end = prop_oneof![
        (1u16..=3).prop_map(EndCondition::Rounds),
        (1u16..=80).prop_map(EndCondition::Points),
    ];
    let variant = proptest::sample::select(Variant::all());
    let mover = prop_oneof![
        2 => Just(Mover::AnyMove),
        1 => Just(Mover::Bots(BotStrategy::Random)),
        1 => Just(Mover::Bots(BotStrategy::Heuristic)),
        1 => Just(Mover::MixedBots),
    ];
    (
        any::<u64>(),
        variant,
        any::<u8>(),
        end,
        any::<bool>(),
        any::<bool>(),
        mover,
    )
        .prop_map(|(seed, variant, players, end, prepared, resigns, mover)| {
            Params::new(seed, variant, players, end, prepared, resigns, mover)
        })
}

const HOST: &str = "host";

fn host() -> Actor<'static> {
    Actor::Account {
        id: HOST,
        name: "Host",
    }
}

/// One game being played, with everything the checks need.
struct Run {
    p: Params,
    layout: Layout,
    table: ScoreTable,
    deck: CardSet,
    game: Game,
    events: Vec<Event>,
    dealer: SeededDealer,
    rng: SplitMix,
    /// The cards in play in the current round (dealt, or lying open for the draft).
    dealt: CardSet,
    dealt_round: u16,
    commands: usize,
    /// `take_row` choices since the last reveal.
    chosen_this_turn: usize,
    stats: Stats,
}

/// What the random games exercised, to show the properties are not vacuous.
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    games: usize,
    rounds: usize,
    commands: usize,
    bot_moves: usize,
    placements: usize,
    full_row_takes: usize,
    chosen_takes: usize,
    turns_with_two_choices: usize,
    left_placements: usize,
    left_takes: usize,
    replaced_selections: usize,
    shared_wins: usize,
    illegal_refused: usize,
    drafted: usize,
    kept_by_choice: usize,
    kept_automatically: usize,
    x_rows_stacked: usize,
    cards_to_hand: usize,
}

impl Stats {
    fn add(&mut self, o: &Self) {
        self.games += o.games;
        self.rounds += o.rounds;
        self.commands += o.commands;
        self.bot_moves += o.bot_moves;
        self.placements += o.placements;
        self.full_row_takes += o.full_row_takes;
        self.chosen_takes += o.chosen_takes;
        self.turns_with_two_choices += o.turns_with_two_choices;
        self.left_placements += o.left_placements;
        self.left_takes += o.left_takes;
        self.replaced_selections += o.replaced_selections;
        self.shared_wins += o.shared_wins;
        self.illegal_refused += o.illegal_refused;
        self.drafted += o.drafted;
        self.kept_by_choice += o.kept_by_choice;
        self.kept_automatically += o.kept_automatically;
        self.x_rows_stacked += o.x_rows_stacked;
        self.cards_to_hand += o.cards_to_hand;
    }
}

/// A seat's X row (empty outside x-nimmt).
fn x_row(t: &RowBoard, seat: usize) -> CardSet {
    t.x_rows.get(seat).copied().unwrap_or_default()
}

/// A seat's X stack (empty outside x-nimmt).
fn x_stack(t: &RowBoard, seat: usize) -> CardSet {
    t.x_stacks.get(seat).copied().unwrap_or_default()
}

/// Where a card goes by RULES.md, computed independently of the rules crate: the smallest
/// difference to a right end below it or (both ends) a left end above it; a tie goes right.
fn reference_target(rows: &[Vec<Card>], card: Card, both_ends: bool) -> Option<(usize, Side)> {
    let mut candidates = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let (first, last) = (*row.first().unwrap(), *row.last().unwrap());
        if last < card {
            candidates.push((card.number() - last.number(), 0, i, Side::Right));
        }
        if both_ends && first > card {
            candidates.push((first.number() - card.number(), 1, i, Side::Left));
        }
    }
    candidates
        .into_iter()
        .min_by_key(|(diff, side_rank, row, _)| (*diff, *side_rank, *row))
        .map(|(_, _, row, side)| (row, side))
}

impl Run {
    fn new(p: Params) -> Self {
        let ruleset = p.variant.ruleset();
        let options = p.variant.options(p.end);
        let setup = Setup {
            ruleset,
            options,
            players: p.players,
        };
        let layout = Layout::new(ruleset, options);
        let deck = layout.deck(p.players);
        let deal = p.prepared.then(|| {
            let mut order = deck.to_vec();
            shuffle(!p.seed, &mut order);
            deal_from_order(&order, p.players, &layout)
        });
        let events = Game::create(NewGame {
            setup,
            name: None,
            host_account: HOST,
            host_name: "Host",
            deal,
            seed: format!("{:016x}", p.seed),
            commitment: "commitment".into(),
        })
        .unwrap_or_else(|e| panic!("valid options and deal refused: {e} ({p:?})"));
        let game = Game::from_events(&events).expect("game_created first");
        assert_eq!(game.layout, layout);
        Self {
            p,
            layout,
            table: ruleset.score_table(),
            deck,
            game,
            events,
            dealer: SeededDealer {
                seed: p.seed,
                rounds: Vec::new(),
            },
            rng: SplitMix(p.seed.rotate_left(17) ^ 0x5555),
            dealt: CardSet::empty(),
            dealt_round: 0,
            commands: 0,
            chosen_this_turn: 0,
            stats: Stats::default(),
        }
    }

    fn x(&self) -> bool {
        self.layout.x_rows
    }

    fn actor(&self, seat: u8) -> Actor<'static> {
        if seat == 0 && !self.game.seats[0].resigned {
            host()
        } else {
            Actor::Bot { seat }
        }
    }

    /// Decides and applies a command that must be accepted, checking every event on the way.
    fn exec(&mut self, actor: Actor<'_>, command: &Command) {
        // `execute` (decide and apply in one) must agree with `decide` + `apply`.
        let mut executed = self.game.clone();
        let mut dealer = self.dealer.clone();
        let executed_events = executed.execute(actor, command, &mut dealer);
        let events = self
            .game
            .decide(actor, command, &mut self.dealer)
            .unwrap_or_else(|e| {
                panic!("legal {command:?} by {actor:?} refused: {e} ({:?})", self.p)
            });
        assert_eq!(
            executed_events.as_ref(),
            Ok(&events),
            "execute emits what decide does"
        );
        assert!(!events.is_empty(), "{command:?} caused nothing");
        let mut round_ended = false;
        for event in &events {
            self.check_event(event);
            self.count(event);
            self.game.apply(event);
            round_ended |= matches!(event, Event::RoundEnded { .. });
        }
        self.events.extend(events);
        assert_eq!(
            executed, self.game,
            "execute leaves the state decide + apply do"
        );
        self.commands += 1;
        self.stats.commands += 1;
        self.check_state();
        // Replaying the whole log after every command is quadratic over a game, but cheap
        // enough at these sizes.
        self.check_replay();
        if round_ended {
            self.stats.rounds += 1;
        }
    }

    fn count(&mut self, event: &Event) {
        let s = &mut self.stats;
        match event {
            Event::CardsRevealed { .. } => self.chosen_this_turn = 0,
            Event::CardPlaced {
                chosen,
                taken,
                side,
                ..
            } => {
                s.placements += 1;
                if *chosen {
                    s.chosen_takes += 1;
                    self.chosen_this_turn += 1;
                    assert!(
                        self.chosen_this_turn <= 1,
                        "a second take_row in one turn ({:?})",
                        self.p
                    );
                    if self.chosen_this_turn == 2 {
                        s.turns_with_two_choices += 1;
                    }
                } else {
                    s.full_row_takes += usize::from(!taken.is_empty());
                }
                if *side == Side::Left {
                    s.left_placements += 1;
                    s.left_takes += usize::from(!taken.is_empty());
                }
            }
            Event::CardDrafted { .. } => s.drafted += 1,
            Event::CardKept {
                stacked, to_hand, ..
            } => {
                if to_hand.is_empty() {
                    s.kept_automatically += 1;
                } else {
                    s.kept_by_choice += 1;
                }
                s.x_rows_stacked += usize::from(!stacked.is_empty());
                s.cards_to_hand += to_hand.len();
            }
            Event::GameFinished { winners, .. } => {
                s.games += 1;
                s.shared_wins += usize::from(winners.len() > 1);
            }
            _ => {}
        }
    }

    fn refuse(&mut self, actor: Actor<'_>, command: &Command) -> RuleError {
        let before = self.game.clone();
        let e = self
            .game
            .decide(actor, command, &mut self.dealer)
            .expect_err("an illegal command is refused");
        assert_eq!(before, self.game);
        let mut executed = self.game.clone();
        let mut dealer = self.dealer.clone();
        let mut out = vec![Event::GameStarted {}];
        let e2 = executed
            .execute_into(actor, command, &mut dealer, &mut out)
            .expect_err("execute refuses it too");
        assert_eq!(e2, e);
        assert_eq!(executed, self.game, "a refused execute changes nothing");
        assert_eq!(out, vec![Event::GameStarted {}], "nor its output buffer");
        self.stats.illegal_refused += 1;
        e
    }

    fn check_replay(&self) {
        let replayed = Game::from_events(&self.events).expect("replays");
        assert_eq!(replayed, self.game, "replay differs ({:?})", self.p);
    }

    /// The seat whose draft pick it is, by RULES.md: seat order from the round's first
    /// player, who is seat (round − 1) mod players.
    fn draft_seat(&self) -> u8 {
        let g = &self.game;
        let picks = self.deck.len() - g.board.rows().unwrap().pool.len();
        let first = usize::from(g.round() - 1);
        u8::try_from((first + picks) % usize::from(self.p.players)).unwrap()
    }

    /// Checks an event against the state it is about to be applied to.
    #[expect(clippy::too_many_lines, reason = "one arm per event")]
    fn check_event(&self, event: &Event) {
        let g = &self.game;
        let t = g.board.rows().unwrap();
        let players = self.p.players;
        match event {
            Event::CardsRevealed { cards } => {
                assert!(g.revealed().is_empty());
                assert!(!t.drafting && t.pending_keep.is_none());
                assert_eq!(cards.len(), usize::from(players), "every seat reveals");
                assert!(
                    cards.windows(2).all(|w| w[0].card < w[1].card),
                    "revealed ascending"
                );
                for sc in cards {
                    assert_eq!(
                        g.selection(sc.seat),
                        Some(sc.card),
                        "the reveal shows the selection"
                    );
                    assert!(g.hand(sc.seat).contains(sc.card));
                }
            }
            Event::CardPlaced {
                seat,
                card,
                row,
                taken,
                chosen,
                side,
            } => {
                assert!(t.pending_keep.is_none(), "placed while a keep is pending");
                assert_eq!(
                    g.revealed().first(),
                    Some(&SeatCard {
                        seat: *seat,
                        card: *card
                    }),
                    "lowest card first"
                );
                let r = usize::from(*row);
                assert!(r < self.layout.rows);
                let rows = g.rows();
                let lying = &rows[r];
                let target = reference_target(&rows, *card, self.p.variant.both_ends());
                if *chosen {
                    assert_eq!(
                        target, None,
                        "a row is chosen only for a card that fits no row"
                    );
                    assert_eq!(taken.as_slice(), lying, "the chosen row is taken whole");
                    assert_eq!(*side, Side::Right);
                } else {
                    assert_eq!(
                        target,
                        Some((r, *side)),
                        "{card} goes to the nearest end ({rows:?})"
                    );
                    if lying.len() == self.layout.max_lying[r] {
                        assert_eq!(
                            taken.as_slice(),
                            lying,
                            "the card after the last that fits takes"
                        );
                    } else {
                        assert!(lying.len() < self.layout.max_lying[r], "row over its max");
                        assert!(taken.is_empty(), "a row with room is not taken");
                        // The row stays ascending.
                        match side {
                            Side::Right => assert!(card > lying.last().unwrap()),
                            Side::Left => assert!(card < lying.first().unwrap()),
                        }
                    }
                }
                if !self.p.variant.both_ends() {
                    assert_eq!(*side, Side::Right, "left ends only with both_ends");
                }
            }
            Event::CardKept {
                seat,
                card,
                stacked,
                to_hand,
            } => {
                assert!(self.x(), "keep_card outside x-nimmt");
                let (keeper, cards) = t.pending_keep.expect("a keep is pending");
                assert_eq!(*seat, keeper);
                assert!(cards.contains(*card), "the kept card was taken");
                let mut rest = cards;
                rest.remove(*card);
                assert_eq!(
                    to_hand.as_slice(),
                    rest.to_vec(),
                    "the other taken cards go to the hand"
                );
                let x_row = x_row(t, usize::from(*seat));
                if x_row.max().is_none_or(|last| *card > last) {
                    assert!(stacked.is_empty(), "a higher card is appended");
                } else {
                    assert_eq!(
                        stacked.as_slice(),
                        x_row.to_vec(),
                        "a lower card stacks the X row"
                    );
                }
            }
            Event::DraftStarted {
                round,
                pool,
                first_seat,
            } => {
                assert!(self.p.variant.draft());
                assert_eq!(*round, g.round() + 1);
                assert_eq!(pool, &self.deck.to_vec(), "the whole deck lies open");
                assert_eq!(
                    usize::from(*first_seat),
                    usize::from(*round - 1) % usize::from(players)
                );
            }
            Event::CardDrafted { seat, card } => {
                assert!(t.drafting);
                assert_eq!(*seat, self.draft_seat(), "picks go in seat order");
                assert!(t.pool.contains(*card));
                assert!(g.hand(*seat).len() < self.layout.hand_size);
            }
            Event::RoundStarted { round, rows } => {
                assert_eq!(rows.len(), self.layout.rows);
                if self.p.variant.draft() {
                    assert_eq!(*round, g.round(), "the draft began the round");
                    assert_eq!(
                        rows.iter().copied().collect::<CardSet>(),
                        t.pool,
                        "the cards left start the rows"
                    );
                    assert!(
                        (0..players).all(|s| g.hand(s).len() == self.layout.hand_size),
                        "the draft ends when every hand is full"
                    );
                } else {
                    assert_eq!(*round, g.round() + 1);
                }
                if let EndCondition::Rounds(k) = self.p.end {
                    assert!(*round <= k);
                }
            }
            Event::RoundEnded { round, scores } => {
                assert_eq!(*round, g.round());
                assert!(g.revealed().is_empty());
                assert!(t.pending_keep.is_none() && !t.drafting);
                let hands: Vec<CardSet> = (0..players).map(|s| g.hand(s)).collect();
                let on_rows = self.table.sum(g.rows().iter().flatten());
                let dealt = self.table.sum_set(self.dealt);
                if self.x() {
                    assert!(
                        hands.iter().any(|h| h.is_empty()),
                        "the round ends with an empty hand"
                    );
                    let expected: Vec<u32> = (0..usize::from(players))
                        .map(|s| {
                            self.table.sum_set(t.hands[s]) + 2 * self.table.sum_set(x_stack(t, s))
                        })
                        .collect();
                    assert_eq!(scores, &expected, "score = hand + 2 × X stack");
                    let kept: u32 = (0..usize::from(players))
                        .map(|s| {
                            self.table.sum_set(t.hands[s])
                                + self.table.sum_set(x_stack(t, s))
                                + self.table.sum_set(x_row(t, s))
                        })
                        .sum();
                    assert_eq!(kept + on_rows, dealt, "no bullhead is lost");
                } else {
                    assert!(
                        hands.iter().all(|h| h.is_empty()),
                        "the round ends with empty hands"
                    );
                    let expected: Vec<u32> =
                        (0..players).map(|s| self.table.sum(&g.taken(s))).collect();
                    assert_eq!(scores, &expected, "score = bullheads taken");
                    assert_eq!(
                        scores.iter().sum::<u32>() + on_rows,
                        dealt,
                        "no bullhead is lost"
                    );
                }
            }
            Event::GameFinished { winners, seed } => {
                let totals = g.totals();
                let min = *totals.iter().min().unwrap();
                let expected: Vec<u8> = (0..players)
                    .filter(|s| totals[usize::from(*s)] == min)
                    .collect();
                assert_eq!(
                    winners, &expected,
                    "winners are the seats of the lowest total"
                );
                assert_eq!(seed, &format!("{:016x}", self.p.seed));
                match self.p.end {
                    EndCondition::Rounds(k) => assert_eq!(g.scores.len(), usize::from(k)),
                    EndCondition::Points(limit) => {
                        assert!(
                            totals.iter().any(|t| *t >= i32::from(limit)),
                            "someone reached the limit"
                        );
                        let before_last: Vec<i32> = (0..usize::from(players))
                            .map(|s| g.scores[..g.scores.len() - 1].iter().map(|r| r[s]).sum())
                            .collect();
                        assert!(
                            before_last.iter().all(|t| *t < i32::from(limit)),
                            "the game did not end late"
                        );
                    }
                }
            }
            _ => {}
        }
    }

    /// Every card in play, wherever it is, once per place it occupies.
    fn places(&self) -> Vec<Card> {
        let g = &self.game;
        let t = g.board.rows().unwrap();
        let mut places: Vec<Card> = g.rows().iter().flatten().copied().collect();
        places.extend(g.revealed().iter().map(|sc| sc.card));
        places.extend(t.pool.iter());
        if let Some((_, cards)) = t.pending_keep {
            places.extend(cards.iter());
        }
        for s in 0..self.p.players {
            let i = usize::from(s);
            places.extend(g.hand(s).iter());
            places.extend(g.taken(s));
            places.extend(x_row(t, i).iter());
            places.extend(x_stack(t, i).iter());
        }
        places
    }

    fn check_new_round(&mut self) {
        let g = &self.game;
        let t = g.board.rows().unwrap();
        let players = usize::from(self.p.players);
        assert_eq!(g.round(), self.dealt_round + 1);
        self.dealt_round = g.round();
        let places = self.places();
        let dealt: CardSet = places.iter().copied().collect();
        assert_eq!(places.len(), dealt.len(), "a card dealt twice");
        assert!(
            dealt.iter().all(|c| self.deck.contains(c)),
            "only deck cards are dealt"
        );
        if self.p.variant.draft() {
            assert!(t.drafting);
            assert_eq!(t.pool, self.deck, "the draft starts with every card open");
            assert!(g.rows().iter().all(Vec::is_empty));
        } else {
            assert!(!t.drafting);
            assert_eq!(
                dealt.len(),
                players * self.layout.hand_size + self.layout.rows
            );
            assert!(g.rows().iter().all(|r| r.len() == 1));
            for s in 0..self.p.players {
                assert_eq!(g.hand(s).len(), self.layout.hand_size);
            }
            if g.round() > 1 || !self.p.prepared {
                assert_eq!(
                    self.dealer.rounds.last(),
                    Some(&g.round()),
                    "this round was shuffled"
                );
            }
        }
        if self.layout.options.deck == DeckOption::Tactical {
            assert_eq!(dealt, self.deck, "the tactical deck is dealt completely");
        }
        self.dealt = dealt;
    }

    #[expect(clippy::too_many_lines, reason = "one block per invariant")]
    fn check_state(&mut self) {
        let g = &self.game;
        let players = usize::from(self.p.players);
        assert_eq!(g.totals().len(), players);
        if g.status() == Status::Lobby {
            assert_eq!(g.round(), 0);
            assert!(g.rows().iter().all(Vec::is_empty));
            assert!((0..self.p.players).all(|s| g.hand(s).is_empty()));
            return;
        }
        if g.round() != self.dealt_round {
            self.check_new_round();
        }
        let g = &self.game;
        let t = g.board.rows().unwrap();

        // Every card in play is in exactly one place.
        let places = self.places();
        let set: CardSet = places.iter().copied().collect();
        assert_eq!(
            places.len(),
            self.dealt.len(),
            "cards conserved ({:?})",
            self.p
        );
        assert_eq!(set, self.dealt, "the cards in play are the dealt ones");

        // Rows: as many as the layout says, one card up to the most that may lie.
        let rows = g.rows();
        assert_eq!(rows.len(), self.layout.rows);
        for (r, row) in rows.iter().enumerate() {
            if t.drafting {
                assert!(row.is_empty());
            } else {
                assert!(
                    (1..=self.layout.max_lying[r]).contains(&row.len()),
                    "row {r} of {} cards",
                    row.len()
                );
            }
            assert!(
                row.windows(2).all(|w| w[0] < w[1]),
                "row not ascending: {row:?}"
            );
        }

        // Hands: equal sizes outside a resolution in 6-nimmt and 11-nimmt; never empty when
        // a turn is over and the round goes on; selections are hand cards.
        let settled = g.status() == Status::Active
            && !t.drafting
            && g.revealed().is_empty()
            && t.pending_keep.is_none();
        if settled {
            assert!(
                (0..self.p.players).all(|s| !g.hand(s).is_empty()),
                "an empty hand after a turn ends the round"
            );
            if !self.x() {
                let size = g.hand(0).len();
                assert!((1..=self.layout.hand_size).contains(&size));
                assert!((0..self.p.players).all(|s| g.hand(s).len() == size));
            }
        }
        if t.drafting {
            // Seat s holds exactly the picks that fell to it in seat order.
            let picks = self.deck.len() - t.pool.len();
            let first = usize::from(g.round() - 1);
            for s in 0..self.p.players {
                let own = (0..picks)
                    .filter(|j| (first + j) % players == usize::from(s))
                    .count();
                assert_eq!(g.hand(s).len(), own, "seat {s} after {picks} picks");
            }
        }
        for s in 0..self.p.players {
            if let Some(card) = g.selection(s) {
                assert!(g.hand(s).contains(card));
                assert!(g.revealed().is_empty());
            }
        }
        if !self.x() {
            assert!((0..players).all(|s| x_row(t, s).is_empty() && x_stack(t, s).is_empty()));
            assert!(t.pending_keep.is_none());
        }
        if self.x() {
            assert!((0..self.p.players).all(|s| g.taken(s).is_empty()));
        }

        // Scores: one line per finished round, totals are their sums.
        let finished_rounds = if g.status() == Status::Finished {
            g.round()
        } else {
            g.round() - 1
        };
        assert_eq!(g.scores.len(), usize::from(finished_rounds));
        for (s, total) in g.totals().iter().enumerate() {
            assert_eq!(*total, g.scores.iter().map(|r| r[s]).sum::<i32>());
        }

        // The view shows the public state and the viewer's own X stack only.
        if self.commands.is_multiple_of(7) || g.status() == Status::Finished {
            let view = g.view_for(Some(HOST));
            for (s, seat) in view.seats.iter().enumerate() {
                let i = u8::try_from(s).unwrap();
                assert_eq!(seat.hand_size, g.hand(i).len());
                assert_eq!(seat.round_bullheads, Some(self.table.sum(&g.taken(i))));
                if self.x() {
                    assert_eq!(seat.x_row.as_ref(), Some(&x_row(t, s).to_vec()));
                    assert_eq!(seat.x_stack_size, Some(x_stack(t, s).len()));
                } else {
                    assert_eq!((&seat.x_row, seat.x_stack_size), (&None, None));
                }
            }
            let you = view.you.expect("the host is seated");
            assert_eq!(you.x_stack, self.x().then(|| x_stack(t, 0).to_vec()));
        }

        // Awaiting agrees with the draft, the pending keep and the pending take; the moves
        // agree with awaiting; the bots choose a legal move exactly for awaited seats.
        let awaiting = g.awaiting();
        if t.drafting {
            assert_eq!(awaiting.len(), 1);
            assert_eq!(
                (awaiting[0].seat, awaiting[0].action),
                (self.draft_seat(), "draft_card")
            );
        } else if let Some((seat, _)) = t.pending_keep {
            assert_eq!(awaiting.len(), 1);
            assert_eq!((awaiting[0].seat, awaiting[0].action), (seat, "keep_card"));
        } else if let Some(p) = g.pending_take() {
            assert_eq!(awaiting.len(), 1);
            assert_eq!((awaiting[0].seat, awaiting[0].action), (p.seat, "take_row"));
            assert_eq!(g.target_row(p.card), None);
        } else if g.status() == Status::Active {
            assert!(!awaiting.is_empty(), "an active game waits for someone");
            assert!(
                awaiting
                    .iter()
                    .all(|a| a.action == "play_card" && g.selection(a.seat).is_none())
            );
        } else {
            assert!(awaiting.is_empty());
        }
        let first_bot = (0..self.p.players)
            .find(|s| g.seats[usize::from(*s)].bot_controlled() && g.is_awaited(*s));
        assert_eq!(
            g.next_bot(),
            first_bot,
            "next_bot is the first awaited bot seat"
        );
        if g.status() == Status::Active {
            // A resigned person may send nothing; otherwise the moves and `resign`.
            let mut legal = Vec::new();
            if !g.seats[0].resigned {
                legal = g.moves_for(0);
                legal.push(Command::Resign {});
            }
            assert_eq!(g.legal_for(HOST), legal, "legal = moves + resign");
        }
        let mut rng = SplitMix(self.commands as u64);
        for seat in 0..self.p.players {
            let moves = g.moves_for(seat);
            let awaited = g.is_awaited(seat);
            assert_eq!(
                awaiting.iter().any(|a| a.seat == seat),
                awaited,
                "awaiting and is_awaited agree for seat {seat}"
            );
            if g.selection(seat).is_some() {
                // RULES.md: a selection may be replaced until the last selection arrives, so
                // every hand card stays a legal move.
                let replacements: Vec<Command> = g
                    .hand(seat)
                    .iter()
                    .map(|card| Command::PlayCard { card })
                    .collect();
                assert_eq!(moves, replacements, "seat {seat} may replace its selection");
            } else {
                assert_eq!(!moves.is_empty(), awaited, "moves only for an awaited seat");
            }
            for strategy in [BotStrategy::Random, BotStrategy::Heuristic] {
                match bots::choose(g, seat, strategy, &mut rng) {
                    Some(command) => {
                        assert!(awaited, "a bot moves only for an awaited seat");
                        assert!(
                            moves.contains(&command),
                            "bot chose {command:?}, not among {moves:?}"
                        );
                    }
                    None => assert!(!awaited, "a bot has no move for an awaited seat {seat}"),
                }
            }
        }
    }

    /// One move: a random legal one (sometimes an illegal one first, which must be refused),
    /// or the bot's choice.
    fn step(&mut self) {
        let awaiting = self.game.awaiting();
        let first = *self.rng.pick(&awaiting);
        let mut seat = first.seat;
        if self.p.mover == Mover::AnyMove && first.action == "play_card" && self.rng.one_in(8) {
            // Now and then a seat that already selected replaces its selection instead.
            let selected: Vec<u8> = (0..self.p.players)
                .filter(|s| self.game.selection(*s).is_some())
                .collect();
            if !selected.is_empty() {
                seat = *self.rng.pick(&selected);
            }
        }
        // A seat replacing its selection has every hand card as a move, too.
        let moves = self.game.moves_for(seat);
        assert!(!moves.is_empty(), "an awaited seat has moves");
        if self.rng.one_in(16) {
            self.try_illegal(seat);
        }
        let command = match self.p.mover {
            Mover::AnyMove => self.rng.pick(&moves).clone(),
            mover => {
                self.stats.bot_moves += 1;
                let command = bots::choose(&self.game, seat, mover.strategy(seat), &mut self.rng)
                    .expect("a bot moves for an awaited seat");
                assert!(
                    moves.contains(&command),
                    "bot chose {command:?}, not among {moves:?}"
                );
                command
            }
        };
        let fits = matches!(
            (&command, first.action),
            (Command::PlayCard { .. }, "play_card")
                | (Command::TakeRow { .. }, "take_row")
                | (Command::DraftCard { .. }, "draft_card")
                | (Command::KeepCard { .. }, "keep_card")
        );
        assert!(fits, "moves_for gave {command:?} while awaiting {first:?}");
        if self.game.selection(seat).is_some() {
            self.stats.replaced_selections += 1;
        }
        let actor = self.actor(seat);
        self.exec(actor, &command);
    }

    fn try_illegal(&mut self, seat: u8) {
        let actor = self.actor(seat);
        let other = self.actor((seat + 1) % self.p.players);
        let hand = self.game.hand(seat);
        let rows = u8::try_from(self.layout.rows).unwrap();
        let draft = self.p.variant.draft();
        let x = self.x();
        let t = *self.game.board.rows().unwrap();
        let some_card = self.deck.min().unwrap();
        // A command of another game is unknown, whatever the moment.
        if !draft {
            let e = self.refuse(actor, &Command::DraftCard { card: some_card });
            assert_eq!(
                e,
                RuleError::UnknownCommand {
                    command: "draft_card"
                }
            );
        }
        if !x {
            let e = self.refuse(actor, &Command::KeepCard { card: some_card });
            assert_eq!(
                e,
                RuleError::UnknownCommand {
                    command: "keep_card"
                }
            );
        }
        if t.drafting {
            let open = t.pool.min().unwrap();
            let e = self.refuse(other, &Command::DraftCard { card: open });
            assert_eq!(
                e,
                RuleError::NotYourTurn {
                    action: "draft_card"
                }
            );
            if let Some(gone) = self.deck.difference(t.pool).min() {
                let e = self.refuse(actor, &Command::DraftCard { card: gone });
                assert_eq!(
                    e,
                    RuleError::CardNotAvailable {
                        card: gone.number()
                    }
                );
            }
            let e = self.refuse(actor, &Command::TakeRow { row: 0 });
            assert_eq!(e, RuleError::NotYourTurn { action: "take_row" });
            if let Some(card) = hand.min() {
                let e = self.refuse(actor, &Command::PlayCard { card });
                assert_eq!(
                    e,
                    RuleError::NotYourTurn {
                        action: "play_card"
                    }
                );
            }
        } else if let Some((_, cards)) = t.pending_keep {
            let e = self.refuse(
                other,
                &Command::KeepCard {
                    card: cards.min().unwrap(),
                },
            );
            assert_eq!(
                e,
                RuleError::NotYourTurn {
                    action: "keep_card"
                }
            );
            if let Some(card) = self.deck.difference(cards).min() {
                let e = self.refuse(actor, &Command::KeepCard { card });
                assert_eq!(
                    e,
                    RuleError::CardNotTaken {
                        card: card.number()
                    }
                );
            }
            let e = self.refuse(actor, &Command::TakeRow { row: 0 });
            assert_eq!(e, RuleError::NotYourTurn { action: "take_row" });
        } else if let Some(p) = self.game.pending_take() {
            let e = self.refuse(
                self.actor((p.seat + 1) % self.p.players),
                &Command::TakeRow { row: 0 },
            );
            assert_eq!(e, RuleError::NotYourTurn { action: "take_row" });
            let e = self.refuse(actor, &Command::TakeRow { row: rows });
            assert_eq!(e, RuleError::NoSuchRow { row: rows });
            if let Some(card) = hand.min() {
                let e = self.refuse(actor, &Command::PlayCard { card });
                assert_eq!(
                    e,
                    RuleError::NotYourTurn {
                        action: "play_card"
                    }
                );
            }
        } else {
            let outside: Vec<Card> = self.deck.difference(hand).to_vec();
            let card = *self.rng.pick(&outside);
            let e = self.refuse(actor, &Command::PlayCard { card });
            assert_eq!(
                e,
                RuleError::CardNotInHand {
                    card: card.number()
                }
            );
            let e = self.refuse(actor, &Command::TakeRow { row: 0 });
            assert_eq!(e, RuleError::NotYourTurn { action: "take_row" });
            if x {
                let e = self.refuse(actor, &Command::KeepCard { card });
                assert_eq!(
                    e,
                    RuleError::NotYourTurn {
                        action: "keep_card"
                    }
                );
            }
            if draft {
                let e = self.refuse(actor, &Command::DraftCard { card });
                assert_eq!(
                    e,
                    RuleError::NotYourTurn {
                        action: "draft_card"
                    }
                );
            }
        }
    }

    fn play(mut self) -> Self {
        for seat in 1..self.p.players {
            let strategy = self.p.mover.strategy(seat);
            self.exec(host(), &Command::AddBot { strategy });
        }
        assert_eq!(self.game.status(), Status::Lobby);
        self.exec(host(), &Command::Start {});
        if self.p.host_resigns {
            self.exec(host(), &Command::Resign {});
            assert!(
                self.game
                    .seats
                    .iter()
                    .all(stammtisch_rules::Seat::bot_controlled)
            );
        }
        while self.game.status() == Status::Active {
            assert!(
                self.commands < 20_000,
                "the game does not end ({:?})",
                self.p
            );
            self.step();
        }
        assert_eq!(self.game.status(), Status::Finished);
        assert!(self.game.awaiting().is_empty());
        assert!((0..self.p.players).all(|s| self.game.moves_for(s).is_empty()));
        assert_eq!(self.game.next_bot(), None);
        self
    }
}

// 2000 random games of every variant (6-nimmt's six option combinations, 11-nimmt, x-nimmt;
// 2 to 10 players, up to 80 points or 3 rounds; random moves or the bots), each command
// followed by a full replay: about 12 s in a debug build. `failure_persistence: None` keeps
// proptest from writing regression files next to the tests.
proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_games_keep_the_invariants(p in params()) {
        let run = Run::new(p).play();
        let g = &run.game;
        prop_assert!(!g.winners.is_empty());
        prop_assert!(g.seed_revealed);
        // Each round's line and the number of rounds agree with the events.
        let ended: Vec<Vec<i32>> = run
            .events
            .iter()
            .filter_map(|e| match e {
                Event::RoundEnded { scores, .. } => {
                    Some(scores.iter().map(|s| i32::try_from(*s).unwrap()).collect())
                }
                _ => None,
            })
            .collect();
        prop_assert_eq!(&ended, &g.scores);
        prop_assert_eq!(run.events.iter().filter(|e| matches!(e, Event::GameFinished { .. })).count(), 1);
        let last_is_finish = matches!(run.events.last(), Some(Event::GameFinished { .. }));
        prop_assert!(last_is_finish, "game_finished is the last event");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_same_seed_plays_the_same_game(p in params()) {
        let mut p = p;
        p.players = p.players.min(4);
        p.end = EndCondition::Rounds(1);
        let a = Run::new(p).play();
        let b = Run::new(p).play();
        prop_assert_eq!(a.events, b.events);
        prop_assert_eq!(a.game, b.game);
    }
}

#[test]
fn the_random_games_exercise_every_rule() {
    let mut rng = SplitMix(2024);
    let mut total = Stats::default();
    for variant in Variant::all() {
        let (min, max) = variant.ruleset().players();
        let mut stats = Stats::default();
        let mut games = 0;
        for players in min..=max {
            let n = if variant == Variant::X { 24 } else { 6 };
            for i in 0..n {
                let mover = [
                    Mover::AnyMove,
                    Mover::Bots(BotStrategy::Random),
                    Mover::Bots(BotStrategy::Heuristic),
                    Mover::MixedBots,
                ][i % 4];
                let end = if i % 3 == 0 {
                    EndCondition::Points(66)
                } else {
                    EndCondition::Rounds(2)
                };
                let p = Params::new(
                    rng.next(),
                    variant,
                    players - min,
                    end,
                    i % 3 == 1,
                    i % 5 == 0,
                    mover,
                );
                assert_eq!(p.players, players);
                stats.add(&Run::new(p).play().stats);
                games += 1;
            }
        }
        println!("{variant:?}: {stats:?}");
        assert_eq!(stats.games, games);
        assert!(stats.rounds > stats.games, "{variant:?}: several rounds");
        assert!(stats.chosen_takes > 20, "{variant:?}: rows chosen");
        assert!(stats.full_row_takes > 20, "{variant:?}: full rows taken");
        assert!(stats.bot_moves > 1000, "{variant:?}: bots played");
        assert!(stats.illegal_refused > 20, "{variant:?}: illegal refused");
        if variant.both_ends() {
            assert!(stats.left_placements > 50, "{variant:?}: left ends");
            assert!(stats.left_takes > 0, "{variant:?}: a left end taken");
        } else {
            assert_eq!(stats.left_placements, 0);
        }
        // At most one take_row per turn, in every variant: the row just taken holds only the
        // chooser's card, which is below every later card of the turn (cards resolve lowest
        // first), so each later card fits at least at that row's right end. (RULES.md says more
        // than one take_row can happen with both_ends; by its own resolution rule it cannot.)
        assert_eq!(stats.turns_with_two_choices, 0, "{variant:?}");
        if variant.draft() {
            assert!(stats.drafted > 1000, "{variant:?}: drafted");
        } else {
            assert_eq!(stats.drafted, 0);
        }
        if variant == Variant::X {
            assert!(stats.kept_by_choice > 20, "x-nimmt: keep chosen");
            assert!(stats.kept_automatically > 20, "x-nimmt: keep automatic");
            assert!(stats.x_rows_stacked > 20, "x-nimmt: X rows stacked");
        } else {
            assert_eq!(stats.kept_by_choice + stats.kept_automatically, 0);
        }
        total.add(&stats);
    }
    assert!(total.replaced_selections > 50);
    assert!(total.shared_wins > 0);
    assert!(total.cards_to_hand > 0);
}

// ---------------------------------------------------------------------------------------------
// nimm-oder-schieb: all-bot games (3–7 players, chips hidden or open, matches of 1–3 games)
// ---------------------------------------------------------------------------------------------

/// The 33 values of nimm-oder-schieb, 3–35.
fn nos_deck() -> CardSet {
    CardSet::range(35).difference(CardSet::range(2))
}

#[derive(Clone, Copy, Debug)]
struct NosParams {
    seed: u64,
    players: u8,
    chips: ChipsOption,
    games: u16,
    prepared: bool,
    host_resigns: bool,
    /// `Bots(Random)`, `Bots(Heuristic)` or `MixedBots` (the host's seat is played by the
    /// same strategy through its account until it resigns).
    mover: Mover,
}

fn nos_params(chips: ChipsOption) -> impl Strategy<Value = NosParams> {
    let mover = prop_oneof![
        Just(Mover::Bots(BotStrategy::Random)),
        Just(Mover::Bots(BotStrategy::Heuristic)),
        Just(Mover::MixedBots),
    ];
    (
        any::<u64>(),
        3u8..=7,
        1u16..=3,
        any::<bool>(),
        any::<bool>(),
        mover,
    )
        .prop_map(
            move |(seed, players, games, prepared, host_resigns, mover)| NosParams {
                seed,
                players,
                chips,
                games,
                prepared,
                host_resigns,
                mover,
            },
        )
}

/// What the nimm-oder-schieb games exercised.
#[derive(Clone, Copy, Debug, Default)]
struct NosStats {
    matches: usize,
    games: usize,
    passes: usize,
    takes: usize,
    takes_with_chips: usize,
    forced_takes: usize,
    no_chips_refused: usize,
    illegal_refused: usize,
    negative_scores: usize,
    shared_wins: usize,
    chip_tie_breaks: usize,
}

impl NosStats {
    fn add(&mut self, o: &Self) {
        self.matches += o.matches;
        self.games += o.games;
        self.passes += o.passes;
        self.takes += o.takes;
        self.takes_with_chips += o.takes_with_chips;
        self.forced_takes += o.forced_takes;
        self.no_chips_refused += o.no_chips_refused;
        self.illegal_refused += o.illegal_refused;
        self.negative_scores += o.negative_scores;
        self.shared_wins += o.shared_wins;
        self.chip_tie_breaks += o.chip_tie_breaks;
    }
}

/// One nimm-oder-schieb match being played by bots, with everything the checks need.
struct NosRun {
    p: NosParams,
    game: Game,
    events: Vec<Event>,
    dealer: SeededDealer,
    rng: SplitMix,
    prepared_pile: Option<Vec<Card>>,
    start_chips: u8,
    /// Chips left at the end of each game, summed per seat, from `nos_game_ended`.
    chips_kept: Vec<u32>,
    commands: usize,
    stats: NosStats,
}

impl NosRun {
    fn new(p: NosParams) -> Self {
        let mut options = Ruleset::NimmOderSchieb.default_options();
        options.end = EndCondition::Rounds(p.games);
        options.chips = p.chips;
        let setup = Setup {
            ruleset: Ruleset::NimmOderSchieb,
            options,
            players: p.players,
        };
        let prepared_pile = p.prepared.then(|| {
            let mut order = nos_deck().to_vec();
            shuffle(!p.seed, &mut order);
            order.truncate(24);
            order
        });
        let deal = prepared_pile.clone().map(|draw_pile| Deal {
            rows: Vec::new(),
            hands: Vec::new(),
            draw_pile,
        });
        let events = Game::create(NewGame {
            setup,
            name: None,
            host_account: HOST,
            host_name: "Host",
            deal,
            seed: format!("{:016x}", p.seed),
            commitment: "commitment".into(),
        })
        .unwrap_or_else(|e| panic!("valid options and pile refused: {e} ({p:?})"));
        let game = Game::from_events(&events).expect("game_created first");
        assert!(game.layout.take_or_pass());
        Self {
            p,
            game,
            events,
            dealer: SeededDealer {
                seed: p.seed,
                rounds: Vec::new(),
            },
            rng: SplitMix(p.seed.rotate_left(29) ^ 0xAAAA),
            prepared_pile,
            start_chips: match p.players {
                3..=5 => 11,
                6 => 9,
                _ => 7,
            },
            chips_kept: vec![0; usize::from(p.players)],
            commands: 0,
            stats: NosStats::default(),
        }
    }

    fn actor(&self, seat: u8) -> Actor<'static> {
        if seat == 0 && !self.game.seats[0].resigned {
            host()
        } else {
            Actor::Bot { seat }
        }
    }

    /// Decides and applies a command that must be accepted, checking every event on the way.
    fn exec(&mut self, actor: Actor<'_>, command: &Command) {
        let mut executed = self.game.clone();
        let mut dealer = self.dealer.clone();
        let executed_events = executed.execute(actor, command, &mut dealer);
        let events = self
            .game
            .decide(actor, command, &mut self.dealer)
            .unwrap_or_else(|e| {
                panic!("legal {command:?} by {actor:?} refused: {e} ({:?})", self.p)
            });
        assert_eq!(
            executed_events.as_ref(),
            Ok(&events),
            "execute emits what decide does"
        );
        assert!(!events.is_empty(), "{command:?} caused nothing");
        for event in &events {
            self.check_event(event);
            self.game.apply(event);
        }
        self.events.extend(events);
        assert_eq!(
            executed, self.game,
            "execute leaves the state decide + apply do"
        );
        self.commands += 1;
        self.check_state();
        let replayed = Game::from_events(&self.events).expect("replays");
        assert_eq!(replayed, self.game, "replay differs ({:?})", self.p);
    }

    fn refuse(&mut self, actor: Actor<'_>, command: &Command) -> RuleError {
        let before = self.game.clone();
        let e = self
            .game
            .decide(actor, command, &mut self.dealer)
            .expect_err("an illegal command is refused");
        assert_eq!(before, self.game);
        let mut executed = self.game.clone();
        let mut dealer = self.dealer.clone();
        let e2 = executed
            .execute(actor, command, &mut dealer)
            .expect_err("execute refuses it too");
        assert_eq!(e2, e);
        assert_eq!(executed, self.game, "a refused execute changes nothing");
        self.stats.illegal_refused += 1;
        e
    }

    /// Checks an event against the state it is about to be applied to.
    #[expect(clippy::too_many_lines, reason = "one arm per event")]
    fn check_event(&mut self, event: &Event) {
        let g = &self.game;
        let t = g.board.take_or_pass().unwrap();
        let players = self.p.players;
        let server_only = matches!(
            event,
            Event::SeedRecorded { .. } | Event::DealPrepared { .. } | Event::DrawPileSet { .. }
        );
        assert_eq!(
            event.audience() == Audience::Server,
            server_only,
            "audience of {event:?}"
        );
        match event {
            Event::NosGameStarted {
                game,
                first_seat,
                chips,
            } => {
                assert_eq!(*game, g.round() + 1);
                assert!(*game <= self.p.games, "no game beyond the match");
                assert_eq!(
                    usize::from(*first_seat),
                    usize::from(*game - 1) % usize::from(players),
                    "game g (0-based) is started by seat g mod players"
                );
                assert_eq!(*chips, self.start_chips);
            }
            Event::DrawPileSet { pile, removed } => {
                assert_eq!(pile.len(), 24);
                assert_eq!(removed.len(), 9);
                let pile_set: CardSet = pile.iter().copied().collect();
                let removed_set: CardSet = removed.iter().copied().collect();
                assert_eq!(pile_set.len(), 24, "the pile holds distinct cards");
                assert_eq!(removed_set.len(), 9, "distinct removed cards");
                assert_eq!(pile_set.union(removed_set), nos_deck());
                assert!(pile_set.intersection(removed_set).is_empty());
                if g.round() == 1 && self.p.prepared {
                    assert_eq!(Some(pile), self.prepared_pile.as_ref(), "the prepared pile");
                    assert!(
                        self.dealer.rounds.is_empty(),
                        "a prepared game is not shuffled"
                    );
                } else {
                    assert_eq!(
                        self.dealer.rounds.last(),
                        Some(&g.round()),
                        "this game was shuffled"
                    );
                }
            }
            Event::CardRevealed { card } => {
                assert_eq!(t.open, None, "one open card at a time");
                assert_eq!(t.pot, 0);
                assert_eq!(
                    t.pile.get(usize::from(t.drawn)).copied().flatten(),
                    Some(*card),
                    "the top card of the pile is revealed"
                );
            }
            Event::Passed { seat } => {
                assert_eq!(*seat, t.to_act);
                assert!(t.open.is_some());
                assert!(t.chips[usize::from(*seat)] > 0, "a pass without chips");
                self.stats.passes += 1;
            }
            Event::CardTaken { seat, card, chips } => {
                assert_eq!(*seat, t.to_act);
                assert_eq!(t.open, Some(*card), "the open card is taken");
                assert_eq!(*chips, t.pot, "with every chip on it");
                self.stats.takes += 1;
                self.stats.takes_with_chips += usize::from(*chips > 0);
                self.stats.forced_takes += usize::from(t.chips[usize::from(*seat)] == 0);
            }
            Event::NosGameEnded(end) => {
                let stammtisch_rules::NosGameEnd {
                    game,
                    scores,
                    chips,
                    removed,
                } = end.as_ref();
                assert_eq!(*game, g.round());
                assert_eq!(usize::from(t.drawn), 24, "every card was drawn");
                assert_eq!(t.open, None, "the last card was taken");
                let taken: usize = (0..players).map(|s| g.taken(s).len()).sum();
                assert_eq!(taken, 24, "all 24 cards are taken");
                assert_eq!(chips, &t.chips[..usize::from(players)].to_vec());
                assert_eq!(
                    removed,
                    &t.removed.to_vec(),
                    "the removed cards are revealed"
                );
                for s in 0..players {
                    let cards: Vec<NosCard> = g
                        .taken(s)
                        .iter()
                        .map(|c| NosCard::new(c.number()).unwrap())
                        .collect();
                    let score = nos_cards::score(&cards, u32::from(chips[usize::from(s)]));
                    assert_eq!(
                        scores[usize::from(s)],
                        score.total,
                        "seat {s}: runs − chips"
                    );
                    self.stats.negative_scores += usize::from(score.total < 0);
                }
                for (kept, c) in self.chips_kept.iter_mut().zip(chips) {
                    *kept += u32::from(*c);
                }
                self.stats.games += 1;
            }
            Event::GameFinished { winners, seed } => {
                assert_eq!(g.round(), self.p.games, "the match plays every game");
                assert_eq!(g.scores.len(), usize::from(self.p.games));
                let totals = g.totals();
                let min = *totals.iter().min().unwrap();
                let lowest: Vec<usize> = (0..usize::from(players))
                    .filter(|s| totals[*s] == min)
                    .collect();
                let most = lowest.iter().map(|s| self.chips_kept[*s]).max().unwrap();
                let expected: Vec<u8> = lowest
                    .iter()
                    .filter(|s| self.chips_kept[**s] == most)
                    .map(|s| u8::try_from(*s).unwrap())
                    .collect();
                assert_eq!(
                    winners, &expected,
                    "lowest total, then most chips, else shared ({totals:?}, {:?})",
                    self.chips_kept
                );
                assert_eq!(seed, &format!("{:016x}", self.p.seed));
                self.stats.matches += 1;
                self.stats.shared_wins += usize::from(winners.len() > 1);
                self.stats.chip_tie_breaks += usize::from(winners.len() < lowest.len());
            }
            Event::RoundStarted { .. }
            | Event::HandDealt { .. }
            | Event::CardSelected { .. }
            | Event::SelectionMade { .. }
            | Event::CardsRevealed { .. }
            | Event::CardPlaced { .. }
            | Event::DraftStarted { .. }
            | Event::CardDrafted { .. }
            | Event::CardKept { .. }
            | Event::RoundEnded { .. } => panic!("{event:?} in a nimm-oder-schieb game"),
            _ => {}
        }
    }

    fn check_state(&self) {
        let g = &self.game;
        let t = g.board.take_or_pass().unwrap();
        let players = self.p.players;
        let n = usize::from(players);
        assert_eq!(g.totals().len(), n);
        if g.status() == Status::Lobby {
            assert_eq!(g.round(), 0);
            return;
        }

        // The 33 cards: taken + open + not yet drawn + removed, each exactly once.
        let mut places: Vec<Card> = (0..players).flat_map(|s| g.taken(s)).collect();
        places.extend(t.open);
        places.extend(t.pile[usize::from(t.drawn)..].iter().flatten());
        places.extend(t.removed.iter());
        let set: CardSet = places.iter().copied().collect();
        assert_eq!(places.len(), 33, "cards conserved ({:?})", self.p);
        assert_eq!(set, nos_deck(), "the 33 cards are 3–35");
        let taken: usize = (0..players).map(|s| g.taken(s).len()).sum();
        assert_eq!(
            taken + usize::from(t.open.is_some()),
            usize::from(t.drawn),
            "every card drawn is open or taken"
        );

        // Chips: the seats' and the pot's add up to the chips handed out.
        let chips: u32 = t.chips[..n].iter().map(|c| u32::from(*c)).sum();
        assert_eq!(
            chips + u32::from(t.pot),
            u32::from(players) * u32::from(self.start_chips),
            "chips conserved ({:?})",
            self.p
        );
        if t.open.is_none() {
            assert_eq!(t.pot, 0);
        }

        // Scores: one line per finished game; totals are their sums.
        let finished = if g.status() == Status::Finished {
            g.round()
        } else {
            g.round() - 1
        };
        assert_eq!(g.scores.len(), usize::from(finished));
        for (s, total) in g.totals().iter().enumerate() {
            assert_eq!(*total, g.scores.iter().map(|r| r[s]).sum::<i32>());
        }

        // Awaiting, moves, legal, bots.
        let active = g.status() == Status::Active;
        if active {
            assert!(t.open.is_some(), "a running game has an open card");
            let seat = t.to_act;
            // `awaiting` is public: it never tells whether the seat has chips left.
            let expected = vec![
                Awaiting {
                    seat,
                    action: "pass",
                },
                Awaiting {
                    seat,
                    action: "take",
                },
            ];
            assert_eq!(g.awaiting(), expected);
            let mut legal = Vec::new();
            if !g.seats[0].resigned {
                legal = g.moves_for(0);
                legal.push(Command::Resign {});
            }
            assert_eq!(g.legal_for(HOST), legal, "legal = moves + resign");
        } else {
            assert!(g.awaiting().is_empty());
            assert_eq!(g.next_bot(), None);
        }
        let mut rng = SplitMix(self.commands as u64);
        for seat in 0..players {
            let moves = g.moves_for(seat);
            let awaited = active && seat == t.to_act;
            assert_eq!(g.is_awaited(seat), awaited);
            let expected = match (awaited, t.chips[usize::from(seat)] > 0) {
                (false, _) => Vec::new(),
                (true, true) => vec![Command::Pass {}, Command::Take {}],
                (true, false) => vec![Command::Take {}],
            };
            assert_eq!(moves, expected, "moves of seat {seat}");
            for strategy in [BotStrategy::Random, BotStrategy::Heuristic] {
                match bots::choose(g, seat, strategy, &mut rng) {
                    Some(command) => assert!(
                        moves.contains(&command),
                        "bot chose {command:?}, not among {moves:?}"
                    ),
                    None => assert!(!awaited, "a bot has no move for the awaited seat {seat}"),
                }
            }
        }
        let bot_to_act = active && g.seats[usize::from(t.to_act)].bot_controlled();
        assert_eq!(g.next_bot(), bot_to_act.then_some(t.to_act));

        // The view: chips only where open or one's own; the pile's size; removed at the end.
        if self.commands.is_multiple_of(5) || !active {
            let open = self.p.chips == ChipsOption::Open;
            for viewer in [None, Some(HOST)] {
                let view = g.view_for(viewer);
                for (s, seat) in view.seats.iter().enumerate() {
                    let own = viewer.is_some() && s == 0;
                    assert_eq!(seat.chips, (open || own).then_some(t.chips[s]));
                    let values: Vec<u8> = seat
                        .cards
                        .as_ref()
                        .expect("taken cards are public")
                        .iter()
                        .map(|f| f.value)
                        .collect();
                    assert_eq!(
                        values,
                        g.taken(u8::try_from(s).unwrap())
                            .iter()
                            .map(|c| c.number())
                            .collect::<Vec<_>>()
                    );
                    assert_eq!((&seat.taken, seat.round_bullheads), (&None, None));
                }
                assert_eq!(view.you.map(|y| y.chips), viewer.map(|_| Some(t.chips[0])));
                assert_eq!(view.table.draw_pile_size, Some(24 - usize::from(t.drawn)));
                assert_eq!(
                    view.table.open_card.map(|o| o.map(|f| f.value)),
                    Some(t.open.map(Card::number))
                );
                assert_eq!(view.table.pot, Some(t.pot));
                assert_eq!(
                    view.table.removed.is_some(),
                    !active,
                    "removed cards only once finished"
                );
                assert_eq!(view.totals, g.totals());
            }
        }
    }

    /// Commands that must be refused now: another seat's pass or take, a pass without
    /// chips, a row-game command.
    fn try_illegal(&mut self, seat: u8) {
        let actor = self.actor(seat);
        let other = self.actor((seat + 1) % self.p.players);
        let e = self.refuse(other, &Command::Pass {});
        assert_eq!(e, RuleError::NotYourTurn { action: "pass" });
        let e = self.refuse(other, &Command::Take {});
        assert_eq!(e, RuleError::NotYourTurn { action: "take" });
        let e = self.refuse(actor, &Command::TakeRow { row: 0 });
        assert_eq!(e.code(), "unknown_command");
        if self.game.board.take_or_pass().unwrap().chips[usize::from(seat)] == 0 {
            let e = self.refuse(actor, &Command::Pass {});
            assert_eq!(e, RuleError::NoChips);
            self.stats.no_chips_refused += 1;
        }
    }

    fn step(&mut self) {
        let seat = self.game.board.take_or_pass().unwrap().to_act;
        let moves = self.game.moves_for(seat);
        assert!(!moves.is_empty(), "the awaited seat has moves");
        if self.game.board.take_or_pass().unwrap().chips[usize::from(seat)] == 0
            || self.rng.one_in(16)
        {
            self.try_illegal(seat);
        }
        let command = bots::choose(&self.game, seat, self.p.mover.strategy(seat), &mut self.rng)
            .expect("a bot moves for the awaited seat");
        assert!(
            moves.contains(&command),
            "bot chose {command:?}, not among {moves:?}"
        );
        let actor = self.actor(seat);
        self.exec(actor, &command);
    }

    fn play(mut self) -> Self {
        for seat in 1..self.p.players {
            let strategy = self.p.mover.strategy(seat);
            self.exec(host(), &Command::AddBot { strategy });
        }
        self.exec(host(), &Command::Start {});
        if self.p.host_resigns {
            self.exec(host(), &Command::Resign {});
        }
        while self.game.status() == Status::Active {
            assert!(
                self.commands < 5_000,
                "the match does not end ({:?})",
                self.p
            );
            self.step();
        }
        assert_eq!(self.game.status(), Status::Finished);
        assert!(self.game.seed_revealed);
        assert!(!self.game.winners.is_empty());
        self
    }
}

// 2 × 500 all-bot matches of nimm-oder-schieb, each command followed by a full replay: about
// 3 s in a debug build.
proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn nimm_oder_schieb_bot_games_keep_the_invariants_with_hidden_chips(p in nos_params(ChipsOption::Hidden)) {
        let run = NosRun::new(p).play();
        prop_assert_eq!(run.stats.matches, 1);
        prop_assert_eq!(run.stats.games, usize::from(p.games));
    }

    #[test]
    fn nimm_oder_schieb_bot_games_keep_the_invariants_with_open_chips(p in nos_params(ChipsOption::Open)) {
        let run = NosRun::new(p).play();
        prop_assert_eq!(run.stats.matches, 1);
        prop_assert_eq!(run.stats.games, usize::from(p.games));
    }
}

#[test]
fn the_nimm_oder_schieb_games_exercise_every_rule() {
    let mut rng = SplitMix(33);
    let mut total = NosStats::default();
    let mut runs = 0;
    for players in (3..=7).cycle().take(20) {
        for chips in [ChipsOption::Hidden, ChipsOption::Open] {
            for (i, mover) in [
                Mover::Bots(BotStrategy::Random),
                Mover::Bots(BotStrategy::Heuristic),
                Mover::MixedBots,
            ]
            .into_iter()
            .enumerate()
            {
                let p = NosParams {
                    seed: rng.next(),
                    players,
                    chips,
                    games: 1 + u16::try_from(i).unwrap(),
                    prepared: rng.one_in(2),
                    host_resigns: rng.one_in(3),
                    mover,
                };
                let a = NosRun::new(p).play();
                if runs % 10 == 0 {
                    // The same seed plays the same match.
                    let b = NosRun::new(p).play();
                    assert_eq!(a.events, b.events);
                }
                total.add(&a.stats);
                runs += 1;
            }
        }
    }
    println!("nimm-oder-schieb: {total:?}");
    assert_eq!(total.matches, runs);
    assert_eq!(total.games, 20 * 2 * (1 + 2 + 3));
    assert!(total.passes > 1000, "passes");
    assert!(total.takes_with_chips > 500, "takes with chips");
    assert!(total.forced_takes > 0, "takes without chips");
    assert!(total.no_chips_refused > 0, "passes without chips refused");
    assert!(total.illegal_refused > 100, "illegal commands refused");
    assert!(total.negative_scores > 0, "negative scores");
    assert!(
        total.shared_wins + total.chip_tie_breaks > 0,
        "ties on the lowest total"
    );
}
