//! Tournament tables: a round's game for one table, created seated and started in the
//! transaction that records the round (`crate::tournaments`).

use super::*;
use lobby::{CreateRequest, insert_game};

/// One table of a tournament round, as the tournament seats it.
pub struct TableSpec<'a> {
    /// Where the game belongs.
    pub link: rules::TournamentLink,
    /// The game's setup (ruleset, options, `players` = seats).
    pub setup: Setup,
    /// The game's name.
    pub name: String,
    /// Per seat: the account and its current name, or `None` for a bot (`heuristic`).
    /// The first seat holds a person (the game's host).
    pub seats: &'a [Option<(String, String)>],
    /// The tables' clocks.
    pub time_control: rules::TimeControl,
    /// The seed to deal from (a duplicate round's tables share one), else a fresh one.
    pub seed: Option<String>,
    /// Listed and open to spectators.
    pub public: bool,
}

impl Service {
    /// Creates a table's game inside `tx`: the people take their seats in order, bots fill
    /// the rest, the host starts it, the bots answer and the clocks start, and "your turn"
    /// goes out to the people asked to move, as for any started game. Returns the game's id
    /// and its seed commitment.
    ///
    /// # Errors
    /// A table without a person at its first seat, invalid options, storage failure.
    pub fn open_table(
        &self,
        tx: &mut Tx<'_>,
        spec: &TableSpec<'_>,
    ) -> Result<(String, String), ServiceError> {
        let Some(Some((host, host_name))) = spec.seats.first() else {
            return Err(ServiceError::Rule(rules::RuleError::InvalidTournament(
                "a table's first seat must hold a person".into(),
            )));
        };
        let (row, mut game, mut events) = self.new_game(
            CreateRequest {
                account: host,
                name: host_name,
                setup: spec.setup.clone(),
                game_name: Some(spec.name.clone()),
                deal: None,
                move_deadline_seconds: None,
                time_control: Some(spec.time_control),
                public: spec.public,
            },
            rules::Extras {
                tournament: Some(spec.link.clone()),
                seed: spec.seed.clone(),
                ..rules::Extras::default()
            },
        )?;
        let mut dealer = SeededDealer::new(game.seed().unwrap_or_default());
        let mut decide = |game: &mut Game, actor: Actor<'_>, command: &Command| {
            let made = game.decide(actor, command, &mut dealer)?;
            made.iter().for_each(|e| game.apply(e));
            events.extend(made);
            Ok::<_, ServiceError>(())
        };
        for seat in &spec.seats[1..] {
            match seat {
                Some((account, name)) => decide(
                    &mut game,
                    Actor::Account { id: account, name },
                    &Command::Join {},
                )?,
                None => decide(
                    &mut game,
                    Actor::Account {
                        id: host,
                        name: host_name,
                    },
                    &Command::AddBot {
                        strategy: BotStrategy::Heuristic,
                    },
                )?,
            }
        }
        let lobby = game.clone();
        decide(
            &mut game,
            Actor::Account {
                id: host,
                name: host_name,
            },
            &Command::Start {},
        )?;
        play_bots(&mut game, &mut dealer, &mut events, self.stand_in)?;
        let now = self.clock.now();
        if let Some(deadlines) = refresh_deadlines(&game, None, now) {
            game.apply(&deadlines);
            events.push(deadlines);
        }
        if let Some(clocks) = game.next_clocks(None, now) {
            game.apply(&clocks);
            events.push(clocks);
        }
        let version = i32::try_from(events.len()).unwrap_or(i32::MAX);
        let row = GameRow {
            version,
            status: status_text(game.status()).to_owned(),
            free_seats: 0,
            ..row
        };
        insert_game(tx, &row, &game, &events)?;
        self.notify_outbox(tx, &row.id, version, &lobby, &game)?;
        Ok((row.id, game.commitment.clone()))
    }
}

impl Service {
    /// A table's game as it stands, read in `tx` (the tournament's worker records finished
    /// tables and reads a duplicate round's seed with it).
    ///
    /// # Errors
    /// Unknown game, storage failure.
    pub fn table_game(&self, tx: &mut Tx<'_>, game_id: &str) -> Result<Game, ServiceError> {
        self.load(tx, game_id).map(|(_, game)| game)
    }
}
