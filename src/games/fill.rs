//! `stammtisch fill`: a database filled with a year of played history, for the data-volume
//! benchmark (`bench-api volume`, docs/scaling.md "A year of data").
//!
//! Every game is played by the rules themselves: made by [`Service::new_game`], its seats
//! taken and its moves made through [`Service::decide_on`] — the path of every command, bots
//! answering in the same step — with the persons' moves chosen by the rules' bots. So its
//! events are the ones a game played over HTTP writes. Only the writing differs: a game's
//! whole stream goes in through the store's create path at once, a batch of games per
//! transaction, and the transactions' time moves along the year (a clock that starts in the
//! past), so the events' `recorded_at` spreads over it as a year of play would.

use std::io::Write;

use chrono::{DateTime, Duration as TimeDelta, Utc};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::store::{AccountRow, WebhookRow};

/// What to fill.
#[derive(Debug, Clone)]
pub struct FillOptions {
    /// Games to write.
    pub games: usize,
    /// Registered accounts to play them (default: one per 15 games, at least 40).
    pub accounts: Option<usize>,
    /// Days of history; finished games spread over them, running games and open lobbies
    /// fall in the last two.
    pub days: u32,
    /// Games per transaction.
    pub batch: usize,
    /// Seeds every choice of the fill (rulesets, seats, fates, the persons' moves).
    pub seed: u64,
    /// The Argon2 hash of the password of every account the fill makes (their names are
    /// `fill-<seed>-<n>`).
    pub password_hash: String,
}

/// What a fill wrote.
#[derive(Debug, Default, Clone)]
pub struct FillSummary {
    /// Accounts made.
    pub accounts: usize,
    /// Games by status.
    pub finished: usize,
    /// Games still being played (some person is asked).
    pub active: usize,
    /// Public games still waiting for players.
    pub lobby: usize,
    /// Events written.
    pub events: usize,
    /// Webhooks registered.
    pub webhooks: usize,
    /// `game_finished` webhook notifications written (by `webhooks::enqueue`) and recorded
    /// as delivered.
    pub deliveries: usize,
}

/// How a generated game ends up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Played to the end.
    Finished,
    /// Played to the end after one person resigned (a bot took the seat).
    Resigned,
    /// Stopped part-way, at a person's turn.
    Active,
    /// A public lobby with a free seat.
    Lobby,
}

/// The persons' moves: the rules' bots, seeded.
struct FillDice(ChaCha8Rng);

impl rules::bots::Random for FillDice {
    fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n.max(1))
    }
}

/// A registered account of the fill.
struct Person {
    id: String,
    name: String,
}

/// A game generated in memory, ready to be written.
struct Played {
    row: GameRow,
    /// Its index after the last event (also the source of `row.free_seats`).
    index: GameIndex,
    /// The game as it was created (the "before" of its webhook notifications).
    opened: Game,
    game: Game,
    events: Vec<NewEvent>,
}

/// Accounts that play in about one game in a hundred each, whatever the size: their
/// inboxes, profiles and histories grow with the database, so the benchmark sees whether
/// those reads stay bounded.
const REGULARS: usize = 10;

impl Service {
    /// Writes `options.games` games of every ruleset (and the accounts and webhooks that go
    /// with them) into the store, printing progress to `progress`. The ratings projection
    /// is not run: `stammtisch rebuild-ratings` (or a server's start) brings it up.
    ///
    /// The service's clock must be one that [`crate::clock::Clock::test_from`] set to the
    /// start of the history, and the store's the same clock.
    ///
    /// # Errors
    /// Storage failure, a rule refusing a generated command (a bug of the fill).
    pub fn fill(
        &self,
        options: &FillOptions,
        progress: &mut dyn Write,
    ) -> Result<FillSummary, ServiceError> {
        let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
        let mut dice = FillDice(ChaCha8Rng::seed_from_u64(options.seed ^ 0x5eed));
        let mut summary = FillSummary::default();
        let accounts = options
            .accounts
            .unwrap_or_else(|| (options.games / 15).max(40))
            .max(REGULARS + 10);
        let hash = &options.password_hash;
        let people: Vec<Person> = (0..accounts)
            .map(|n| Person {
                id: uuid::Uuid::new_v4().to_string(),
                name: format!("fill-{}-{n}", options.seed),
            })
            .collect();
        // The accounts, and a webhook for one in fifty, at the start of the history.
        let hooked: HashMap<&str, String> = people
            .iter()
            .step_by(50)
            .map(|p| (p.id.as_str(), uuid::Uuid::new_v4().to_string()))
            .collect();
        for chunk in people.chunks(5_000) {
            self.store.write(|tx| {
                let now = tx.now();
                for p in chunk {
                    tx.insert_account(&AccountRow {
                        id: p.id.clone(),
                        name: p.name.clone(),
                        password_hash: Some(hash.clone()),
                        guest: false,
                        roles: String::new(),
                        created_at: now,
                        token_version: 0,
                        deleted_at: None,
                        registered_at: Some(now),
                    })?;
                    if let Some(id) = hooked.get(p.id.as_str()) {
                        tx.insert_webhook(&WebhookRow {
                            id: id.clone(),
                            account_id: p.id.clone(),
                            url: format!("https://hooks.example.com/{}", p.name),
                            secret: hex::encode(rand::random::<[u8; 16]>()),
                            created_at: now,
                        })?;
                    }
                }
                Ok::<_, ServiceError>(())
            })?;
        }
        summary.accounts = people.len();
        summary.webhooks = hooked.len();

        // The fates in the order of time: finished games over the year, then the running
        // games and the open lobbies of the last two days.
        let mut fates: Vec<Fate> = (0..options.games)
            .map(|_| match rng.random_range(0..100) {
                0..86 => Fate::Finished,
                86..90 => Fate::Resigned,
                90..99 => Fate::Active,
                _ => Fate::Lobby,
            })
            .collect();
        fates.sort_by_key(|f| matches!(f, Fate::Active | Fate::Lobby));
        let finished = fates
            .iter()
            .filter(|f| matches!(f, Fate::Finished | Fate::Resigned))
            .count();
        let year = TimeDelta::days(i64::from(options.days.max(3)) - 2);
        let recent = TimeDelta::days(2);
        let started = std::time::Instant::now();
        let mut written = 0usize;
        let mut at = self.clock.now();
        let begin = at;
        for batch in fates.chunks(options.batch.max(1)) {
            let played = batch
                .iter()
                .map(|&fate| self.play_one(fate, &people, &mut rng, &mut dice))
                .collect::<Result<Vec<_>, _>>()?;
            self.store.write(|tx| {
                for p in &played {
                    tx.create_game(&p.row, &p.index, &p.events)?;
                    summary.deliveries += notify_finished(tx, p, &hooked)?;
                }
                Ok::<_, ServiceError>(())
            })?;
            for p in &played {
                summary.events += p.events.len();
                match p.game.status() {
                    Status::Finished => summary.finished += 1,
                    Status::Active => summary.active += 1,
                    Status::Lobby => summary.lobby += 1,
                }
            }
            written += batch.len();
            // The next batch's time: its share of the year, or of the last two days.
            let next = if written < finished {
                begin + year * i32::try_from(written).unwrap_or(i32::MAX) / finished_i32(finished)
            } else {
                begin
                    + year
                    + recent * i32::try_from(written - finished).unwrap_or(i32::MAX)
                        / finished_i32(options.games - finished)
            };
            if next > at {
                let step = (next - at).to_std().unwrap_or_default();
                at = self.clock.advance(step).unwrap_or(next);
            }
            if written % (options.batch.max(1) * 20) < batch.len() || written == options.games {
                let seconds = started.elapsed().as_secs_f64().max(0.001);
                let _ = writeln!(
                    progress,
                    "  … {written} of {} games, {} events ({:.0} games/s, {:.0} events/s), \
                     history at {}",
                    options.games,
                    summary.events,
                    written as f64 / seconds,
                    summary.events as f64 / seconds,
                    at.format("%Y-%m-%d %H:%M"),
                );
            }
        }
        self.store.analyze()?;
        Ok(summary)
    }

    /// One game of `fate`, played in memory.
    fn play_one(
        &self,
        fate: Fate,
        people: &[Person],
        rng: &mut ChaCha8Rng,
        dice: &mut FillDice,
    ) -> Result<Played, ServiceError> {
        let setup = random_setup(rng)?;
        let players = usize::from(setup.players);
        // The persons at the table: the host first, then others; the rest are bots. A
        // regular sits at about one table in a hundred.
        let persons = if players == 2 {
            rng.random_range(1..=2)
        } else {
            rng.random_range(1..=players.min(5))
        };
        let persons = if fate == Fate::Lobby {
            persons.min(players - 1)
        } else {
            persons
        };
        let mut seated: Vec<&Person> = Vec::with_capacity(persons);
        while seated.len() < persons {
            let candidate = if rng.random_range(0..100) == 0 {
                &people[rng.random_range(0..REGULARS)]
            } else {
                &people[rng.random_range(REGULARS..people.len())]
            };
            if !seated.iter().any(|p| p.id == candidate.id) {
                seated.push(candidate);
            }
        }
        let host = seated[0];
        let public = fate == Fate::Lobby || rng.random_range(0..10) < 7;
        let (row, mut game, first) = self.new_game(
            CreateRequest {
                account: &host.id,
                name: &host.name,
                setup,
                game_name: (rng.random_range(0..4) == 0)
                    .then(|| format!("{} am Stammtisch", host.name)),
                deal: None,
                move_deadline_seconds: None,
                time_control: None,
                public,
            },
            Extras::default(),
        )?;
        let opened = game.clone();
        let mut events = encode_all(&first)?;
        let mut send = |game: &mut Game, who: &Person, command: Command| {
            let version = i32::try_from(events.len()).unwrap_or(i32::MAX);
            let req = CommandRequest {
                game: &row.id,
                account: &who.id,
                name: &who.name,
                command,
                if_match: None,
                idempotency_key: None,
                invite_code: row.invite_code.as_deref(),
                token_version: None,
                announced: None,
            };
            let (new, after) = self.decide_on(&row, version, game, &req)?;
            events.extend(new);
            *game = after;
            Ok::<_, ServiceError>(())
        };
        for person in &seated[1..] {
            send(&mut game, person, Command::Join {})?;
        }
        if fate == Fate::Lobby {
            return Ok(finish_row(row, opened, game, events));
        }
        for _ in persons..players {
            let strategy = if rng.random_range(0..3) == 0 {
                BotStrategy::Random
            } else {
                BotStrategy::Heuristic
            };
            send(&mut game, host, Command::AddBot { strategy })?;
        }
        send(&mut game, host, Command::Start {})?;
        // A running game stops at a person's turn somewhere in its first stretch; a
        // resigning person gives up at some turn.
        let stop_after = rng.random_range(1..40);
        let resign_at = rng.random_range(1..30);
        let mut moves = 0;
        while game.status() == Status::Active {
            let Some((seat, account)) = game
                .person_asks()
                .first()
                .map(|a| (a.seat, a.account.to_owned()))
            else {
                break;
            };
            if fate == Fate::Active && moves >= stop_after {
                break;
            }
            let Some(who) = seated.iter().find(|p| p.id == account) else {
                break;
            };
            let command = if fate == Fate::Resigned && moves == resign_at {
                Command::Resign {}
            } else {
                let Some(command) = rules::bots::choose(&game, seat, BotStrategy::Heuristic, dice)
                else {
                    break;
                };
                command
            };
            send(&mut game, who, command)?;
            moves += 1;
        }
        Ok(finish_row(row, opened, game, events))
    }
}

/// The index row of a generated game as its last append would leave it.
fn finish_row(mut row: GameRow, opened: Game, game: Game, events: Vec<NewEvent>) -> Played {
    let index = index_of(&game, &row.id);
    row.status = index.status.clone();
    row.version = i32::try_from(events.len()).unwrap_or(i32::MAX);
    row.free_seats = index.free_seats;
    Played {
        row,
        index,
        opened,
        game,
        events,
    }
}

fn finished_i32(n: usize) -> i32 {
    i32::try_from(n.max(1)).unwrap_or(i32::MAX)
}

/// A ruleset, its table size and options, in the mix a year of play might have: mostly
/// 6 nimmt! (its four variants), the others about one game in six each. Most tables play a
/// short game (one to three rounds or deals), a third play the full game.
fn random_setup(rng: &mut ChaCha8Rng) -> Result<Setup, ServiceError> {
    use rules::{EndCondition, OptionsInput, Preset, Ruleset};
    let ruleset = match rng.random_range(0..100) {
        0..50 => Ruleset::SixNimmt,
        50..67 => Ruleset::ElevenNimmt,
        67..84 => Ruleset::XNimmt,
        _ => Ruleset::NimmOderSchieb,
    };
    let (min, max) = ruleset.players();
    // Mostly three to five at a table.
    let players = rng.random_range(min.max(3)..=max.min(5)).max(min);
    let players = if rng.random_range(0..10) == 0 {
        rng.random_range(min..=max)
    } else {
        players
    };
    let full = rng.random_range(0..3) == 0;
    let short = u16::try_from(rng.random_range(1..=3)).unwrap_or(1);
    let (preset, input) = match ruleset {
        Ruleset::SixNimmt => (
            Some(match rng.random_range(0..10) {
                0..7 => Preset::Standard,
                7 => Preset::Taktik,
                8 => Preset::Logik,
                _ => Preset::Profi,
            }),
            OptionsInput {
                end: (!full).then_some(EndCondition::Rounds(short)),
                ..OptionsInput::default()
            },
        ),
        Ruleset::ElevenNimmt => (
            None,
            OptionsInput {
                end: (!full).then_some(EndCondition::Rounds(short)),
                ..OptionsInput::default()
            },
        ),
        Ruleset::XNimmt => (
            None,
            OptionsInput {
                deals: (!full).then_some(short.min(2)),
                ..OptionsInput::default()
            },
        ),
        Ruleset::NimmOderSchieb => (None, OptionsInput::default()),
    };
    Ok(Setup::from_input(ruleset, players, preset, Some(input))?)
}

/// The `game_finished` webhook notifications of a finished game whose persons include one
/// with a webhook, written as a command's append writes them (`webhooks::enqueue`) and then
/// recorded as delivered: a year's outbox with nothing left to send. Returns how many.
fn notify_finished(
    tx: &mut Tx<'_>,
    p: &Played,
    hooked: &HashMap<&str, String>,
) -> Result<usize, StoreError> {
    let hooked_seat = p
        .game
        .seats
        .iter()
        .filter_map(rules::Seat::account)
        .any(|a| hooked.contains_key(a));
    if p.game.status() != Status::Finished || !hooked_seat {
        return Ok(0);
    }
    let now = tx.now();
    let news = crate::outbox::Announcements::of(&p.opened, &p.game);
    crate::webhooks::enqueue(tx, &p.row.id, p.row.version, &p.game, &news, now)?;
    tx.settle_game_deliveries(&p.row.id, now)
}

/// The start of a history of `days` days ending now, for [`crate::clock::Clock::test_from`].
#[must_use]
pub fn history_start(now: DateTime<Utc>, days: u32) -> DateTime<Utc> {
    now - TimeDelta::days(i64::from(days))
}
