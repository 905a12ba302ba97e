#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The corpus of recorded games: every `tests/corpus/*.json` holds the exported event log of
//! a finished game and the state it ended in. Replaying the log with the current rules must
//! rebuild exactly that state — status, round, scores, totals, winners and the complete
//! spectator view — so a change to the rules can never silently change a game already
//! played. `write_corpus_when_asked` records new games (`STAMMTISCH_WRITE_CORPUS=1`); see
//! `tests/corpus/README.md`.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use stammtisch_rules::bots::{self, SplitMix};
use stammtisch_rules::{
    Actor, BotStrategy, Card, ChipsOption, Command, Dealer, EndCondition, Event, Game, NewGame,
    Options, Preset, RULES_VERSION, Ruleset, Setup, Status,
};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Every recorded game, by file name, sorted.
fn corpus_files() -> Vec<(String, Value)> {
    let mut files: Vec<(String, Value)> = fs::read_dir(corpus_dir())
        .expect("tests/corpus exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = fs::read_to_string(&path).expect("readable file");
            let value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{name} is not valid JSON: {e}"));
            (name, value)
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

fn events_of(name: &str, file: &Value) -> Vec<Event> {
    file["events"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: `events` is a list"))
        .iter()
        .enumerate()
        .map(|(i, e)| {
            // Through the same upcasters as the server's reads; a file's events carry no
            // schema version and were written with version 1.
            let version = e["schema_version"]
                .as_i64()
                .and_then(|v| i32::try_from(v).ok())
                .unwrap_or(1);
            stammtisch_rules::upcast::decode(
                e["type"].as_str().unwrap_or_default(),
                version,
                e["data"].clone(),
            )
            .unwrap_or_else(|err| panic!("{name}: event {i} no longer deserialises: {err}"))
        })
        .collect()
}

fn options_of(name: &str, file: &Value) -> (Ruleset, Options) {
    let ruleset: Ruleset = serde_json::from_value(file["ruleset"].clone())
        .unwrap_or_else(|e| panic!("{name}: unknown ruleset: {e}"));
    let options: Options = serde_json::from_value(file["options"].clone())
        .unwrap_or_else(|e| panic!("{name}: invalid options: {e}"));
    (ruleset, options)
}

/// The state a replay must arrive at, in the corpus's form.
fn expected_of(game: &Game) -> Value {
    json!({
        "status": game.status(),
        "round": game.round(),
        "scores": game.scores,
        "totals": game.totals(),
        "winners": game.winners,
        "view": game.view_for(None),
    })
}

#[test]
fn every_recorded_game_replays_to_its_final_state() {
    let files = corpus_files();
    assert!(!files.is_empty(), "the corpus is empty");
    for (name, file) in &files {
        let events = events_of(name, file);
        let (ruleset, options) = options_of(name, file);
        let game = Game::from_events(&events)
            .unwrap_or_else(|| panic!("{name}: the log does not start with game_created"));

        // The header agrees with the log it describes.
        assert_eq!(game.setup.ruleset, ruleset, "{name}: ruleset");
        assert_eq!(game.setup.options, options, "{name}: options");
        assert_eq!(
            file["rules_version"],
            json!(game.rules_version),
            "{name}: rules_version of the header and of game_created"
        );
        assert!(
            matches!(events.last(), Some(Event::GameFinished { .. })),
            "{name}: a corpus game is a finished game"
        );

        let expected = &people_unnamed(&file["expected"]);
        let actual = expected_of(&game);
        assert_eq!(game.status(), Status::Finished, "{name}: status");
        for key in ["status", "round", "scores", "totals", "winners"] {
            assert_eq!(actual[key], expected[key], "{name}: {key} after the replay");
        }
        assert_view_eq(name, &expected["view"], &actual["view"]);
        assert_eq!(&actual, expected, "{name}: final state after the replay");

        // Folding event by event gives the same state as the replay in one go.
        let mut stepwise = Game::new_from(&events[0]).unwrap();
        for event in &events[1..] {
            stepwise.apply(event);
        }
        assert_eq!(stepwise, game, "{name}: apply one by one");
    }
}

/// The recorded final state as the rules show it since `seat_taken` schema 2: a person's
/// seat has no name in the rules' view (the log names people by account id only; the
/// server adds their current names). The recorded files keep the names they were written
/// with; everything else must match exactly.
fn people_unnamed(expected: &Value) -> Value {
    let mut expected = expected.clone();
    if let Some(seats) = expected["view"]["seats"].as_array_mut() {
        for seat in seats.iter_mut().filter(|s| !s["account_id"].is_null()) {
            seat["name"] = Value::Null;
        }
    }
    expected
}

/// Compares two views, naming the first path at which they differ.
fn assert_view_eq(name: &str, expected: &Value, actual: &Value) {
    fn first_difference(path: &str, a: &Value, b: &Value) -> Option<String> {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
                keys.sort();
                keys.dedup();
                keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => first_difference(&format!("{path}.{k}"), p, q),
                    (p, q) => Some(format!("{path}.{k}: expected {p:?}, got {q:?}")),
                })
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
                .iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| first_difference(&format!("{path}[{i}]"), p, q)),
            _ if a == b => None,
            _ => Some(format!("{path}: expected {a}, got {b}")),
        }
    }
    if let Some(diff) = first_difference("view", expected, actual) {
        panic!("{name}: the spectator view changed: {diff}");
    }
}

#[test]
fn the_corpus_covers_every_ruleset_and_option_set() {
    let files = corpus_files();
    let recorded: Vec<(Ruleset, Options)> = files
        .iter()
        .map(|(name, file)| options_of(name, file))
        .collect();
    let has = |what: &str, pred: &dyn Fn(&(Ruleset, Options)) -> bool| {
        assert!(
            recorded.iter().any(pred),
            "the corpus has no finished game of {what}"
        );
    };
    // The presets are the option sets apart from `end`.
    for preset in Preset::ALL {
        let preset_options = preset.options();
        has(&format!("6-nimmt {preset:?}"), &|(r, o)| {
            *r == Ruleset::SixNimmt
                && Options {
                    end: preset_options.end,
                    ..*o
                } == preset_options
        });
    }
    has("11-nimmt", &|(r, _)| *r == Ruleset::ElevenNimmt);
    has("x-nimmt", &|(r, _)| *r == Ruleset::XNimmt);
    for chips in [ChipsOption::Hidden, ChipsOption::Open] {
        has(&format!("nimm-oder-schieb, chips {chips:?}"), &|(r, o)| {
            *r == Ruleset::NimmOderSchieb && o.chips == chips
        });
    }
    has("a 2-game nimm-oder-schieb match", &|(r, o)| {
        *r == Ruleset::NimmOderSchieb && o.end == EndCondition::Rounds(2)
    });
    // Every file of a match records every game of it.
    for (name, file) in &files {
        let (_, options) = options_of(name, file);
        if let EndCondition::Rounds(k) = options.end {
            let scores = file["expected"]["scores"].as_array().unwrap();
            assert_eq!(scores.len(), usize::from(k), "{name}: rounds recorded");
        }
        assert_eq!(file["rules_version"], json!(RULES_VERSION), "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// The generator
// ---------------------------------------------------------------------------------------------

/// Fisher–Yates with SplitMix64 (the server shuffles with ChaCha20; see src/fairness.rs).
struct TestDealer(SplitMix);

impl Dealer for TestDealer {
    fn shuffle(&mut self, _round: u16, cards: &mut [Card]) {
        for i in (1..cards.len()).rev() {
            let j = bots::Random::below(&mut self.0, i + 1);
            cards.swap(i, j);
        }
    }
}

/// One game of the corpus: written to `<file>.json`.
struct Case {
    file: &'static str,
    ruleset: Ruleset,
    options: Options,
    /// One per seat; seat 0 is the host, who resigns after the start (a heuristic bot then).
    strategies: &'static [BotStrategy],
    seed: u64,
}

const H: BotStrategy = BotStrategy::Heuristic;
const R: BotStrategy = BotStrategy::Random;

fn ends_after(options: Options, rounds: u16) -> Options {
    Options {
        end: EndCondition::Rounds(rounds),
        ..options
    }
}

fn cases() -> Vec<Case> {
    let six = |file, preset: Preset, rounds, strategies, seed| Case {
        file,
        ruleset: Ruleset::SixNimmt,
        options: ends_after(preset.options(), rounds),
        strategies,
        seed,
    };
    let nos = |file, chips, rounds, strategies, seed| Case {
        file,
        ruleset: Ruleset::NimmOderSchieb,
        options: Options {
            chips,
            ..ends_after(Ruleset::NimmOderSchieb.default_options(), rounds)
        },
        strategies,
        seed,
    };
    vec![
        six("6-nimmt-standard", Preset::Standard, 2, &[H, R, H, R], 1),
        six("6-nimmt-taktik", Preset::Taktik, 1, &[H, R, R, H, R], 2),
        six("6-nimmt-logik", Preset::Logik, 1, &[H, R, H], 3),
        six("6-nimmt-profi", Preset::Profi, 1, &[H, R, R, R], 4),
        Case {
            file: "11-nimmt",
            ruleset: Ruleset::ElevenNimmt,
            options: ends_after(Ruleset::ElevenNimmt.default_options(), 1),
            strategies: &[H, R, H, R],
            seed: 5,
        },
        Case {
            file: "x-nimmt",
            ruleset: Ruleset::XNimmt,
            options: ends_after(Ruleset::XNimmt.default_options(), 2),
            strategies: &[H, R, R],
            seed: 6,
        },
        nos(
            "nimm-oder-schieb-chips-hidden",
            ChipsOption::Hidden,
            1,
            &[H, R, H, R],
            7,
        ),
        nos(
            "nimm-oder-schieb-chips-open",
            ChipsOption::Open,
            1,
            &[H, R, R],
            8,
        ),
        nos(
            "nimm-oder-schieb-match",
            ChipsOption::Hidden,
            2,
            &[H, R, H],
            9,
        ),
    ]
}

/// Plays a case to the end through the public API; returns every event, creation included.
fn record(case: &Case) -> (Vec<Event>, Game) {
    let mut dealer = TestDealer(SplitMix(case.seed));
    let mut rng = SplitMix(case.seed.wrapping_mul(0x9E37_79B9).wrapping_add(1));
    let players = u8::try_from(case.strategies.len()).unwrap();
    let mut log = Game::create(NewGame {
        setup: Setup {
            ruleset: case.ruleset,
            options: case.options,
            players,
        },
        name: Some(format!("corpus {}", case.file)),
        host_account: "acc-corpus-host",
        host_name: "Host",
        deal: None,
        seed: format!("{:016x}", case.seed),
        commitment: format!("commitment-of-{:016x}", case.seed),
    })
    .expect("valid options");
    let mut game = Game::from_events(&log).unwrap();
    let host = Actor::Account {
        id: "acc-corpus-host",
        name: "Host",
    };
    let mut run = |game: &mut Game, log: &mut Vec<Event>, actor, cmd: &Command| {
        let events = game
            .execute(actor, cmd, &mut dealer)
            .unwrap_or_else(|e| panic!("{}: {cmd:?} refused: {e}", case.file));
        log.extend(events);
    };
    for strategy in &case.strategies[1..] {
        let cmd = Command::AddBot {
            strategy: *strategy,
        };
        run(&mut game, &mut log, host, &cmd);
    }
    run(&mut game, &mut log, host, &Command::Start {});
    run(&mut game, &mut log, host, &Command::Resign {});
    let mut moves = 0;
    while game.status() == Status::Active {
        let seat = game.next_bot().expect("every seat is a bot");
        let strategy = case.strategies[usize::from(seat)];
        let cmd = bots::choose(&game, seat, strategy, &mut rng).expect("a bot's move");
        run(&mut game, &mut log, Actor::Bot { seat }, &cmd);
        moves += 1;
        assert!(moves < 10_000, "{}: the game does not end", case.file);
    }
    (log, game)
}

/// The corpus file of a recorded game: one event per line, so diffs stay readable.
fn render(case: &Case, events: &[Event], game: &Game) -> String {
    let compact = |v: &Value| serde_json::to_string(v).unwrap();
    let expected = expected_of(game);
    let mut out = String::from("{\n");
    out += &format!("  \"ruleset\": {},\n", compact(&json!(case.ruleset)));
    out += &format!("  \"options\": {},\n", compact(&json!(case.options)));
    out += &format!("  \"rules_version\": {},\n", game.rules_version);
    out += "  \"events\": [\n";
    let lines: Vec<String> = events
        .iter()
        .map(|e| format!("    {}", compact(&serde_json::to_value(e).unwrap())))
        .collect();
    out += &lines.join(",\n");
    out += "\n  ],\n  \"expected\": {\n";
    let keys = ["status", "round", "scores", "totals", "winners", "view"];
    let lines: Vec<String> = keys
        .iter()
        .map(|k| format!("    \"{k}\": {}", compact(&expected[*k])))
        .collect();
    out += &lines.join(",\n");
    out += "\n  }\n}\n";
    out
}

#[test]
fn write_corpus_when_asked() {
    let cases = cases();
    if std::env::var("STAMMTISCH_WRITE_CORPUS").as_deref() != Ok("1") {
        // Not asked: every game the generator knows is in the committed corpus.
        let names: Vec<String> = corpus_files().into_iter().map(|(n, _)| n).collect();
        assert!(!names.is_empty(), "the corpus directory is empty");
        for case in &cases {
            let file = format!("{}.json", case.file);
            assert!(
                names.contains(&file),
                "{file} is missing: run with STAMMTISCH_WRITE_CORPUS=1"
            );
        }
        return;
    }
    fs::create_dir_all(corpus_dir()).unwrap();
    for case in &cases {
        let path = corpus_dir().join(format!("{}.json", case.file));
        if path.exists() {
            // Recorded games are never rewritten: they must keep replaying unchanged.
            continue;
        }
        let (events, game) = record(case);
        assert_eq!(game.status(), Status::Finished, "{}", case.file);
        // The file must replay to what was recorded.
        let text = render(case, &events, &game);
        let parsed: Value = serde_json::from_str(&text).unwrap();
        let replayed = Game::from_events(&events_of(case.file, &parsed)).unwrap();
        assert_eq!(replayed, game, "{}: the recorded log replays", case.file);
        fs::write(&path, text).unwrap();
    }
}
