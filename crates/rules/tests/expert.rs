#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The expert bot never reads hidden state: games are played to many different moments, their
//! hidden parts (other hands, other X stacks, other selections, the cards never dealt, the
//! draw pile, the removed cards, hidden chips) are scrambled consistently, and the seat's
//! information set and the expert's choice with the same random stream must not change. A
//! change to what the seat may see (its own hand, the public table) must change the
//! information set, so the check is not vacuous.

use stammtisch_rules::bots::{self, ExpertConfig, InfoSet, Random, SplitMix, expert};
use stammtisch_rules::{
    Actor, Board, BotStrategy, Card, CardSet, ChipsOption, Command, DealOption, Dealer, Game,
    NewGame, Options, Preset, Ruleset, Setup, Status,
};

struct Shuffler(SplitMix);

impl Dealer for Shuffler {
    fn shuffle(&mut self, _round: u16, cards: &mut [Card]) {
        for i in (1..cards.len()).rev() {
            let j = self.0.below(i + 1);
            cards.swap(i, j);
        }
    }
}

fn cases() -> Vec<(&'static str, Ruleset, Options)> {
    let mut cases: Vec<(&'static str, Ruleset, Options)> = vec![
        ("standard", Ruleset::SixNimmt, Preset::Standard.options()),
        ("taktik", Ruleset::SixNimmt, Preset::Taktik.options()),
        ("logik", Ruleset::SixNimmt, Preset::Logik.options()),
        ("profi", Ruleset::SixNimmt, Preset::Profi.options()),
        (
            "11-nimmt",
            Ruleset::ElevenNimmt,
            Ruleset::ElevenNimmt.default_options(),
        ),
        (
            "x-nimmt",
            Ruleset::XNimmt,
            Ruleset::XNimmt.default_options(),
        ),
        (
            "nimm-oder-schieb",
            Ruleset::NimmOderSchieb,
            Ruleset::NimmOderSchieb.default_options(),
        ),
    ];
    cases.push((
        "nimm-oder-schieb, open chips",
        Ruleset::NimmOderSchieb,
        Options {
            chips: ChipsOption::Open,
            ..Ruleset::NimmOderSchieb.default_options()
        },
    ));
    cases
}

/// [`started`] with the ruleset's default options, ending after one deal.
fn started_for_one_deal(ruleset: Ruleset, dealer: &mut Shuffler) -> Game {
    let options = Options {
        end: stammtisch_rules::EndCondition::Rounds(1),
        ..ruleset.default_options()
    };
    started(ruleset, options, dealer)
}

/// A started game of four bot-controlled seats (the host resigned).
fn started(ruleset: Ruleset, options: Options, dealer: &mut Shuffler) -> Game {
    let events = Game::create(NewGame {
        setup: Setup {
            ruleset,
            options,
            players: 4,
        },
        name: None,
        host_account: "host",
        host_name: "host",
        deal: None,
        seed: "00".into(),
        commitment: String::new(),
    })
    .unwrap();
    let mut game = Game::from_events(&events).unwrap();
    let host = Actor::Account {
        id: "host",
        name: "host",
    };
    let commands = [
        Command::AddBot {
            strategy: BotStrategy::Heuristic,
        },
        Command::AddBot {
            strategy: BotStrategy::Heuristic,
        },
        Command::AddBot {
            strategy: BotStrategy::Heuristic,
        },
        Command::Start {},
        Command::Resign {},
    ];
    for command in &commands {
        game.execute(host, command, dealer).unwrap();
    }
    game
}

/// Plays `moves` heuristic or random moves; `None` when the game ended before.
fn advance(game: &mut Game, moves: usize, dealer: &mut Shuffler, rng: &mut SplitMix) -> Option<u8> {
    for i in 0..moves {
        let seat = game.next_bot()?;
        let strategy = if i % 3 == 0 {
            BotStrategy::Random
        } else {
            BotStrategy::Heuristic
        };
        let command = bots::choose(game, seat, strategy, rng).unwrap();
        game.execute(Actor::Bot { seat }, &command, dealer).unwrap();
    }
    (game.status() == Status::Active)
        .then(|| game.next_bot())
        .flatten()
}

/// Deals the cards `seat` cannot see anew: other hands and X stacks get as many cards as
/// before from the cards hidden from the seat, other selections are chosen again, the pile
/// is reshuffled with the removed cards, hidden chips change hands.
fn scramble(game: &Game, seat: u8, rng: &mut SplitMix) -> Game {
    let mut scrambled = game.clone();
    let me = usize::from(seat);
    let players = usize::from(game.setup.players);
    let deck = game.layout.deck(game.setup.players);
    match &mut scrambled.board {
        Board::Rows(b) => {
            let open_hands = game.setup.options.deal == DealOption::Draft;
            let mut visible = b.hands[me].union(b.x_stacks.get(me).copied().unwrap_or_default());
            visible = visible.union(b.pool);
            for row in b.rows {
                visible = visible.union(row);
            }
            for sc in game.revealed() {
                visible.insert(sc.card);
            }
            if let Some((_, cards)) = b.pending_keep {
                visible = visible.union(cards);
            }
            for s in 0..players {
                visible = visible.union(b.taken[s]);
                if open_hands {
                    visible = visible.union(b.hands[s]);
                }
            }
            for x_row in b.x_rows {
                visible = visible.union(x_row);
            }
            let mut hidden: Vec<Card> = deck.difference(visible).to_vec();
            for i in (1..hidden.len()).rev() {
                hidden.swap(i, rng.below(i + 1));
            }
            let mut next = hidden.into_iter();
            for s in (0..players).filter(|s| *s != me) {
                if !open_hands {
                    let size = b.hands[s].len();
                    b.hands[s] = next.by_ref().take(size).collect();
                }
                if let Some(stack) = b.x_stacks.get_mut(s) {
                    let size = stack.len();
                    *stack = next.by_ref().take(size).collect();
                }
                if b.selected[s].is_some() {
                    b.selected[s] = b.hands[s].nth(rng.below(b.hands[s].len()));
                }
            }
        }
        Board::TakeOrPass(b) => {
            let mut seen: CardSet = b.open.into_iter().collect();
            for s in 0..players {
                seen = seen.union(b.taken[s]);
            }
            let mut unseen = deck.difference(seen).to_vec();
            for i in (1..unseen.len()).rev() {
                unseen.swap(i, rng.below(i + 1));
            }
            let drawn = usize::from(b.drawn);
            let left = 24 - drawn;
            for (slot, card) in b.pile[drawn..].iter_mut().zip(&unseen) {
                *slot = Some(*card);
            }
            b.removed = unseen[left..].iter().copied().collect();
            if game.setup.options.chips == ChipsOption::Hidden {
                let others: Vec<usize> = (0..players).filter(|s| *s != me).collect();
                for _ in 0..40 {
                    let from = others[rng.below(others.len())];
                    let to = others[rng.below(others.len())];
                    if b.chips[from] > 0 {
                        b.chips[from] -= 1;
                        b.chips[to] += 1;
                    }
                }
            }
        }
    }
    scrambled
}

/// The moments of every case at which the checks run: (label, game, seat to act).
fn moments(per_case: usize) -> Vec<(&'static str, Game, u8)> {
    let mut out = Vec::new();
    for (k, (label, ruleset, options)) in cases().into_iter().enumerate() {
        for i in 0..per_case {
            let seed = (k * 1000 + i) as u64;
            let mut dealer = Shuffler(SplitMix(seed));
            let mut rng = SplitMix(seed ^ 0xabc);
            let mut game = started(ruleset, options, &mut dealer);
            let moves = rng.below(60);
            if let Some(seat) = advance(&mut game, moves, &mut dealer, &mut rng) {
                out.push((label, game, seat));
            }
        }
    }
    out
}

#[test]
fn scrambling_hidden_state_changes_neither_the_information_set_nor_the_choice() {
    let small = ExpertConfig {
        rollouts: 48,
        ..ExpertConfig::default()
    };
    let mut changed = 0;
    let mut checked = 0;
    for (label, game, seat) in moments(12) {
        let mut rng = SplitMix(checked as u64 + 77);
        let scrambled = scramble(&game, seat, &mut rng);
        changed += usize::from(scrambled.board != game.board);
        let info = InfoSet::observe(&game, seat).unwrap();
        assert_eq!(
            InfoSet::observe(&scrambled, seat).as_ref(),
            Some(&info),
            "{label}: the information set saw hidden state"
        );
        let choice = expert::choose(&info, &small, &mut SplitMix(5));
        let again = expert::choose(
            &InfoSet::observe(&scrambled, seat).unwrap(),
            &small,
            &mut SplitMix(5),
        );
        assert_eq!(choice, again, "{label}: the choice depends on hidden state");
        let choice = choice.expect("the seat must act");
        assert!(
            game.moves_for(seat).contains(&choice),
            "{label}: {choice:?} is not legal"
        );
        checked += 1;
    }
    assert!(checked >= 70, "only {checked} moments checked");
    // Logik has no hidden hands and a moment may have no other selections: most moments
    // must still have had something to scramble.
    assert!(
        changed * 10 >= checked * 8,
        "only {changed} of {checked} scrambles changed the hidden state"
    );
}

#[test]
fn the_server_entry_point_with_its_default_budget_ignores_hidden_state_too() {
    for (label, game, seat) in moments(2) {
        let mut rng = SplitMix(9);
        let scrambled = scramble(&game, seat, &mut rng);
        let a = bots::choose(&game, seat, BotStrategy::Expert, &mut SplitMix(3));
        let b = bots::choose(&scrambled, seat, BotStrategy::Expert, &mut SplitMix(3));
        assert_eq!(a, b, "{label}");
        assert!(
            a.is_some_and(|c| game.moves_for(seat).contains(&c)),
            "{label}"
        );
    }
}

#[test]
fn what_the_seat_may_see_is_in_the_information_set() {
    for (label, game, seat) in moments(3) {
        let info = InfoSet::observe(&game, seat).unwrap();
        let me = usize::from(seat);
        let mut changed = game.clone();
        match &mut changed.board {
            // Its own hand (x-nimmt's selection phase may find it empty: then a row).
            Board::Rows(b) if !b.hands[me].is_empty() => {
                let card = b.hands[me].min().unwrap();
                b.hands[me].remove(card);
            }
            Board::Rows(b) => {
                let card = b.rows[0].max().unwrap();
                b.rows[0].remove(card);
            }
            // Its own chips, and the pot.
            Board::TakeOrPass(b) => b.pot += 1,
        }
        assert_ne!(
            InfoSet::observe(&changed, seat).unwrap(),
            info,
            "{label}: a visible change went unseen"
        );
    }
}

#[test]
fn expert_plays_whole_games_of_every_ruleset_with_legal_moves() {
    let config = ExpertConfig {
        rollouts: 24,
        ..ExpertConfig::default()
    };
    for (label, ruleset, options) in cases() {
        let options = Options {
            end: stammtisch_rules::EndCondition::Rounds(1),
            ..options
        };
        let mut dealer = Shuffler(SplitMix(1));
        let mut rng = SplitMix(2);
        let mut game = started(ruleset, options, &mut dealer);
        let mut moves = 0;
        while let Some(seat) = game.next_bot() {
            let info = InfoSet::observe(&game, seat).unwrap();
            let command = expert::choose(&info, &config, &mut rng).unwrap();
            assert!(game.moves_for(seat).contains(&command), "{label}");
            game.execute(Actor::Bot { seat }, &command, &mut dealer)
                .unwrap_or_else(|e| panic!("{label}: {command:?} refused: {e}"));
            moves += 1;
        }
        assert_eq!(game.status(), Status::Finished, "{label}");
        assert!(moves > 10, "{label}: {moves} moves");
    }
}

#[test]
fn add_bot_accepts_the_expert_strategy_by_its_wire_name() {
    let command: Command =
        serde_json::from_str(r#"{"type": "add_bot", "strategy": "expert"}"#).unwrap();
    assert_eq!(
        command,
        Command::AddBot {
            strategy: BotStrategy::Expert
        }
    );
    assert_eq!(
        serde_json::to_value(BotStrategy::Expert).unwrap(),
        serde_json::json!("expert")
    );
    // A game with an expert bot seated plays it through `bots::choose`.
    let mut dealer = Shuffler(SplitMix(4));
    let mut game = started_for_one_deal(Ruleset::XNimmt, &mut dealer);
    let seat = game.next_bot().unwrap();
    let choice = bots::choose(&game, seat, BotStrategy::Expert, &mut SplitMix(1)).unwrap();
    game.execute(Actor::Bot { seat }, &choice, &mut dealer)
        .unwrap();
}

#[test]
fn bots_choose_hands_its_generator_on_to_the_expert_unchanged() {
    // `bots::choose` is generic over the generator and hands it to the expert as `dyn
    // Random` through a borrow: the expert must draw the same numbers as when it is called
    // with the generator itself, so both choose the same card for the same seed.
    let mut dealer = Shuffler(SplitMix(11));
    let game = started_for_one_deal(Ruleset::SixNimmt, &mut dealer);
    let seat = game.next_bot().unwrap();
    let info = InfoSet::observe(&game, seat).unwrap();
    for seed in 0..8 {
        let mut through = SplitMix(seed);
        let mut direct = SplitMix(seed);
        let a = bots::choose(&game, seat, BotStrategy::Expert, &mut through);
        let b = expert::choose(&info, &ExpertConfig::default(), &mut direct);
        assert_eq!(a, b, "seed {seed}");
        assert_eq!(through.0, direct.0, "seed {seed}: the same numbers drawn");
    }
    // And the borrow forwards each draw.
    let mut plain = SplitMix(5);
    let mut inner = SplitMix(5);
    let mut borrowed = &mut inner;
    for n in 1..40 {
        assert_eq!(plain.below(n), Random::below(&mut borrowed, n));
    }
}
