#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Property tests: thousands of random games of bots, played to the end by random legal
//! moves, with the rules' invariants checked after every command and every event.

use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;
use stammtisch_rules::{
    Actor, BotStrategy, Card, CardSet, Command, DealOption, Dealer, DeckOption, EndCondition,
    Event, Game, NewGame, Options, PlacementOption, RuleError, Ruleset, ScoreTable, SeatCard,
    Setup, Status, deal_from_order,
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

fn shuffle(seed: u64, cards: &mut [Card]) {
    let mut rng = SplitMix(seed);
    for i in (1..cards.len()).rev() {
        let j = rng.below(i + 1);
        cards.swap(i, j);
    }
}

/// Fisher–Yates with SplitMix, a fresh stream per round.
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

#[derive(Clone, Copy, Debug)]
struct Params {
    seed: u64,
    players: u8,
    deck: DeckOption,
    end: EndCondition,
    prepared: bool,
    host_resigns: bool,
}

fn params() -> impl Strategy<Value = Params> {
    let end = prop_oneof![
        (1u16..=4).prop_map(EndCondition::Rounds),
        (1u16..=80).prop_map(EndCondition::Points),
    ];
    let deck = prop_oneof![Just(DeckOption::Full), Just(DeckOption::Tactical)];
    (
        any::<u64>(),
        2u8..=10,
        deck,
        end,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(seed, players, deck, end, prepared, host_resigns)| Params {
                seed,
                players,
                deck,
                end,
                prepared,
                host_resigns,
            },
        )
}

const HOST: &str = "host";

/// One game being played, with everything the checks need.
struct Run {
    p: Params,
    table: ScoreTable,
    deck: CardSet,
    game: Game,
    events: Vec<Event>,
    dealer: SeededDealer,
    rng: SplitMix,
    /// The cards dealt in the current round.
    dealt: CardSet,
    dealt_round: u16,
    commands: usize,
    stats: Stats,
}

/// What the random games exercised, to show the properties are not vacuous.
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    games: usize,
    rounds: usize,
    commands: usize,
    placements: usize,
    sixth_card_takes: usize,
    chosen_takes: usize,
    replaced_selections: usize,
    shared_wins: usize,
    illegal_refused: usize,
}

impl Stats {
    fn count(&mut self, event: &Event) {
        match event {
            Event::CardPlaced { chosen: true, .. } => {
                self.placements += 1;
                self.chosen_takes += 1;
            }
            Event::CardPlaced { taken, .. } => {
                self.placements += 1;
                self.sixth_card_takes += usize::from(!taken.is_empty());
            }
            Event::GameFinished { winners, .. } => {
                self.games += 1;
                self.shared_wins += usize::from(winners.len() > 1);
            }
            _ => {}
        }
    }

    fn add(&mut self, other: &Self) {
        self.games += other.games;
        self.rounds += other.rounds;
        self.commands += other.commands;
        self.placements += other.placements;
        self.sixth_card_takes += other.sixth_card_takes;
        self.chosen_takes += other.chosen_takes;
        self.replaced_selections += other.replaced_selections;
        self.shared_wins += other.shared_wins;
        self.illegal_refused += other.illegal_refused;
    }
}

impl Run {
    fn new(p: Params) -> Self {
        let options = Options {
            deck: p.deck,
            deal: DealOption::Random,
            placement: PlacementOption::Right,
            end: p.end,
        };
        let setup = Setup {
            ruleset: Ruleset::SixNimmt,
            options,
            players: p.players,
        };
        let deck = options.deck(Ruleset::SixNimmt, p.players);
        let deal = p.prepared.then(|| {
            let mut order = deck.to_vec();
            shuffle(!p.seed, &mut order);
            deal_from_order(&order, p.players)
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
        .expect("valid options and deal");
        let game = Game::from_events(&events).expect("game_created first");
        Self {
            p,
            table: Ruleset::SixNimmt.score_table(),
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
            stats: Stats::default(),
        }
    }

    fn actor(&self, seat: u8) -> Actor<'static> {
        if seat == 0 && !self.game.seats[0].resigned {
            Actor::Account {
                id: HOST,
                name: "Host",
            }
        } else {
            Actor::Bot { seat }
        }
    }

    /// Decides and applies a command that must be accepted, checking every event on the way.
    fn exec(&mut self, actor: Actor<'_>, command: &Command) {
        let events = self
            .game
            .decide(actor, command, &mut self.dealer)
            .unwrap_or_else(|e| {
                panic!("legal {command:?} by {actor:?} refused: {e} ({:?})", self.p)
            });
        assert!(!events.is_empty(), "{command:?} caused nothing");
        let mut round_ended = false;
        for event in &events {
            self.stats.count(event);
            self.check_event(event);
            self.game.apply(event);
            round_ended |= matches!(event, Event::RoundEnded { .. });
        }
        self.events.extend(events);
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

    fn refuse(&mut self, actor: Actor<'_>, command: &Command) -> RuleError {
        let before = self.game.clone();
        let e = self
            .game
            .decide(actor, command, &mut self.dealer)
            .expect_err("an illegal command is refused");
        assert_eq!(before, self.game);
        self.stats.illegal_refused += 1;
        e
    }

    fn check_replay(&self) {
        let replayed = Game::from_events(&self.events).expect("replays");
        assert_eq!(replayed, self.game, "replay differs ({:?})", self.p);
    }

    /// Checks an event against the state it is about to be applied to.
    fn check_event(&self, event: &Event) {
        let g = &self.game;
        match event {
            Event::CardsRevealed { cards } => {
                assert!(g.revealed.is_empty());
                assert_eq!(
                    cards.len(),
                    usize::from(self.p.players),
                    "every seat reveals"
                );
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
            } => {
                assert_eq!(
                    g.revealed.first(),
                    Some(&SeatCard {
                        seat: *seat,
                        card: *card
                    }),
                    "lowest card first"
                );
                let lying = &g.rows[usize::from(*row)];
                // The reference rule: the row whose end is the highest one below the card.
                let target = g
                    .rows
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| *r.last().unwrap() < *card)
                    .max_by_key(|(_, r)| *r.last().unwrap())
                    .map(|(i, _)| i);
                if *chosen {
                    assert_eq!(
                        target, None,
                        "a row is chosen only for a card below every row"
                    );
                    assert_eq!(taken, lying, "the chosen row is taken whole");
                } else {
                    assert_eq!(
                        target,
                        Some(usize::from(*row)),
                        "{card} goes to the nearest lower end"
                    );
                    if lying.len() == 5 {
                        assert_eq!(taken, lying, "the sixth card takes the five");
                    } else {
                        assert!(taken.is_empty(), "a row under five cards is not taken");
                    }
                }
            }
            Event::RoundEnded { round, scores } => {
                assert_eq!(*round, g.round);
                assert!(g.revealed.is_empty());
                assert!(
                    (0..self.p.players).all(|s| g.hand(s).is_empty()),
                    "the round ends with empty hands"
                );
                let expected: Vec<u32> = g.taken.iter().map(|t| self.table.sum(t)).collect();
                assert_eq!(scores, &expected, "score = bullheads taken");
                let on_rows = self.table.sum(g.rows.iter().flatten());
                let dealt = self.table.sum(&self.dealt.to_vec());
                assert_eq!(
                    scores.iter().sum::<u32>() + on_rows,
                    dealt,
                    "no bullhead is lost"
                );
            }
            Event::GameFinished { winners, seed } => {
                let min = *g.totals.iter().min().unwrap();
                let expected: Vec<u8> = (0..self.p.players)
                    .filter(|s| g.totals[usize::from(*s)] == min)
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
                            g.totals.iter().any(|t| *t >= u32::from(limit)),
                            "someone reached the limit"
                        );
                        let before_last: Vec<u32> = (0..usize::from(self.p.players))
                            .map(|s| g.scores[..g.scores.len() - 1].iter().map(|r| r[s]).sum())
                            .collect();
                        assert!(
                            before_last.iter().all(|t| *t < u32::from(limit)),
                            "the game did not end late"
                        );
                    }
                }
            }
            Event::RoundStarted { round, rows } => {
                assert_eq!(*round, g.round + 1);
                assert_eq!(rows.len(), 4);
                if let EndCondition::Rounds(k) = self.p.end {
                    assert!(*round <= k);
                }
            }
            _ => {}
        }
    }

    fn check_state(&mut self) {
        let g = &self.game;
        let players = usize::from(self.p.players);
        assert_eq!(g.taken.len(), players);
        if g.status == Status::Lobby {
            assert_eq!(g.round, 0);
            assert!(g.rows.is_empty());
            assert!((0..self.p.players).all(|s| g.hand(s).is_empty()));
            return;
        }
        if g.round != self.dealt_round {
            // A new deal: remember what was dealt and check it against the deck.
            assert_eq!(g.round, self.dealt_round + 1);
            self.dealt_round = g.round;
            let mut dealt = CardSet::empty();
            for card in g.rows.iter().flatten() {
                assert!(dealt.insert(*card));
            }
            for s in 0..self.p.players {
                assert_eq!(g.hand(s).len(), 10);
                for card in g.hand(s).iter() {
                    assert!(dealt.insert(card), "card {card} dealt twice");
                }
            }
            assert_eq!(dealt.len(), players * 10 + 4);
            assert!(
                dealt.iter().all(|c| self.deck.contains(c)),
                "only deck cards are dealt"
            );
            if self.p.deck == DeckOption::Tactical {
                assert_eq!(dealt, self.deck, "the tactical deck is dealt completely");
            }
            if g.round > 1 || !self.p.prepared {
                assert_eq!(
                    self.dealer.rounds.last(),
                    Some(&g.round),
                    "this round was shuffled"
                );
            }
            self.dealt = dealt;
        }
        let g = &self.game;

        // Every dealt card is in exactly one place.
        let mut places: Vec<Card> = g.rows.iter().flatten().copied().collect();
        places.extend(g.taken.iter().flatten());
        places.extend(g.revealed.iter().map(|sc| sc.card));
        for s in 0..self.p.players {
            places.extend(g.hand(s).iter());
        }
        let set: CardSet = places.iter().copied().collect();
        assert_eq!(
            places.len(),
            players * 10 + 4,
            "cards conserved ({:?})",
            self.p
        );
        assert_eq!(set, self.dealt, "the cards in play are the dealt ones");

        // Rows: four, ascending, one to five cards.
        assert_eq!(g.rows.len(), 4);
        for row in &g.rows {
            assert!((1..=5).contains(&row.len()), "row of {} cards", row.len());
            assert!(
                row.windows(2).all(|w| w[0] < w[1]),
                "row not ascending: {row:?}"
            );
        }

        // Hands: equal sizes outside a resolution; selections are hand cards.
        if g.revealed.is_empty() && g.status == Status::Active {
            let size = g.hand(0).len();
            assert!((1..=10).contains(&size));
            assert!((0..self.p.players).all(|s| g.hand(s).len() == size));
        }
        for s in 0..self.p.players {
            if let Some(card) = g.selection(s) {
                assert!(g.hand(s).contains(card));
                assert!(g.revealed.is_empty());
            }
        }

        // Scores: one line per finished round, totals are their sums.
        let finished_rounds = if g.status == Status::Finished {
            g.round
        } else {
            g.round - 1
        };
        assert_eq!(g.scores.len(), usize::from(finished_rounds));
        for (s, total) in g.totals.iter().enumerate() {
            assert_eq!(*total, g.scores.iter().map(|r| r[s]).sum::<u32>());
        }
        for (s, taken) in g.taken.iter().enumerate() {
            if g.status == Status::Active {
                assert_eq!(
                    g.round_bullheads(u8::try_from(s).unwrap()),
                    self.table.sum(taken)
                );
            }
        }

        // Awaiting agrees with the pending take.
        let awaiting = g.awaiting();
        match g.pending_take() {
            Some(p) => {
                assert_eq!(awaiting.len(), 1);
                assert_eq!((awaiting[0].seat, awaiting[0].action), (p.seat, "take_row"));
                assert_eq!(g.target_row(p.card), None);
            }
            None if g.status == Status::Active => {
                assert!(!awaiting.is_empty(), "an active game waits for someone");
                assert!(
                    awaiting
                        .iter()
                        .all(|a| a.action == "play_card" && g.selection(a.seat).is_none())
                );
            }
            None => assert!(awaiting.is_empty()),
        }
    }

    /// One random legal move (sometimes an illegal one first, which must be refused).
    fn step(&mut self) {
        let awaiting = self.game.awaiting();
        let first = *self.rng.pick(&awaiting);
        let mut seat = first.seat;
        // Now and then a seat that already selected replaces its selection instead.
        if first.action == "play_card" && self.rng.one_in(8) {
            let selected: Vec<u8> = (0..self.p.players)
                .filter(|s| self.game.selection(*s).is_some())
                .collect();
            if !selected.is_empty() {
                seat = *self.rng.pick(&selected);
            }
        }
        let moves = self.game.moves_for(seat);
        assert!(!moves.is_empty(), "an awaited seat has moves");
        if self.rng.one_in(16) {
            self.try_illegal(seat);
        }
        let command = self.rng.pick(&moves).clone();
        match (&command, first.action) {
            (Command::PlayCard { .. }, "play_card") | (Command::TakeRow { .. }, "take_row") => {}
            _ => panic!("moves_for gave {command:?} while awaiting {first:?}"),
        }
        if self.game.selection(seat).is_some() {
            self.stats.replaced_selections += 1;
        }
        let actor = self.actor(seat);
        self.exec(actor, &command);
    }

    fn try_illegal(&mut self, seat: u8) {
        let actor = self.actor(seat);
        if let Some(p) = self.game.pending_take() {
            let other = (p.seat + 1) % self.p.players;
            let e = self.refuse(self.actor(other), &Command::TakeRow { row: 0 });
            assert_eq!(e, RuleError::NotYourTurn { action: "take_row" });
            let e = self.refuse(actor, &Command::TakeRow { row: 4 });
            assert_eq!(e, RuleError::NoSuchRow { row: 4 });
            let card = self.game.hand(seat).iter().next();
            if let Some(card) = card {
                let e = self.refuse(actor, &Command::PlayCard { card });
                assert_eq!(
                    e,
                    RuleError::NotYourTurn {
                        action: "play_card"
                    }
                );
            }
        } else {
            let hand = self.game.hand(seat);
            let outside: Vec<Card> = self.deck.iter().filter(|c| !hand.contains(*c)).collect();
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
        }
    }

    fn play(mut self) -> Self {
        for _ in 1..self.p.players {
            self.exec(
                Actor::Account {
                    id: HOST,
                    name: "Host",
                },
                &Command::AddBot {
                    strategy: BotStrategy::Random,
                },
            );
        }
        assert_eq!(self.game.status, Status::Lobby);
        self.exec(
            Actor::Account {
                id: HOST,
                name: "Host",
            },
            &Command::Start {},
        );
        if self.p.host_resigns {
            self.exec(
                Actor::Account {
                    id: HOST,
                    name: "Host",
                },
                &Command::Resign {},
            );
            assert!(
                self.game
                    .seats
                    .iter()
                    .all(stammtisch_rules::Seat::bot_controlled)
            );
        }
        while self.game.status == Status::Active {
            assert!(
                self.commands < 20_000,
                "the game does not end ({:?})",
                self.p
            );
            self.step();
        }
        assert_eq!(self.game.status, Status::Finished);
        assert!(self.game.awaiting().is_empty());
        assert!((0..self.p.players).all(|s| self.game.moves_for(s).is_empty()));
        self
    }
}

// 3000 games (2–10 players, up to 80 points or 4 rounds), each command followed by a full
// replay: about 10 s in a debug build. `failure_persistence: None` keeps proptest from
// writing regression files next to the tests.
proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_games_keep_the_invariants(p in params()) {
        let run = Run::new(p).play();
        let g = &run.game;
        prop_assert!(!g.winners.is_empty());
        prop_assert!(g.seed_revealed);
        // Each round's line and the number of rounds agree with the events.
        let ended: Vec<Vec<u32>> = run
            .events
            .iter()
            .filter_map(|e| match e {
                Event::RoundEnded { scores, .. } => Some(scores.clone()),
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
    let mut total = Stats::default();
    let mut rng = SplitMix(2024);
    for players in 2..=10 {
        for i in 0..40 {
            let p = Params {
                seed: rng.next(),
                players,
                deck: if i % 2 == 0 {
                    DeckOption::Full
                } else {
                    DeckOption::Tactical
                },
                end: if i % 4 < 2 {
                    EndCondition::Points(66)
                } else {
                    EndCondition::Rounds(1)
                },
                prepared: i % 3 == 0,
                host_resigns: i % 5 == 0,
            };
            total.add(&Run::new(p).play().stats);
        }
    }
    println!("{total:?}");
    assert_eq!(total.games, 9 * 40);
    assert!(total.rounds > total.games, "several rounds per game");
    assert!(total.sixth_card_takes > 100);
    assert!(total.chosen_takes > 100);
    assert!(total.replaced_selections > 100);
    assert!(total.shared_wins > 0);
    assert!(total.illegal_refused > 100);
}
