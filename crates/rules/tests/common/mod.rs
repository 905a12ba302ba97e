//! Shared helpers of the scenario files for the variants and the other row games: a game and
//! its event log with every step checked for replayability, prepared deals, dealers.
//! Each test binary uses a different part of it.
#![allow(dead_code)]

use stammtisch_rules::{
    Actor, BotStrategy, Card, CardSet, Command, Deal, Dealer, Event, Game, NewGame, Options,
    RuleError, Ruleset, Setup, Side, Status,
};

pub const HOST: &str = "acc-host";

pub fn c(n: u8) -> Card {
    Card::new(n).unwrap()
}

pub fn cards(ns: impl IntoIterator<Item = u8>) -> Vec<Card> {
    ns.into_iter().map(c).collect()
}

pub fn numbers(cards: impl IntoIterator<Item = Card>) -> Vec<u8> {
    cards.into_iter().map(Card::number).collect()
}

/// A dealer that leaves the cards in ascending order.
pub struct NoShuffle;

impl Dealer for NoShuffle {
    fn shuffle(&mut self, _round: u16, _cards: &mut [Card]) {}
}

pub fn setup(ruleset: Ruleset, players: u8, options: Options) -> Setup {
    Setup {
        ruleset,
        options,
        players,
    }
}

pub fn new_game(setup: Setup, deal: Option<Deal>) -> NewGame<'static> {
    NewGame {
        setup,
        name: None,
        host_account: HOST,
        host_name: "Host",
        deal,
        seed: "00ff".into(),
        commitment: "c0ffee".into(),
    }
}

pub fn create_err(setup: Setup, deal: Option<Deal>) -> RuleError {
    Game::create(new_game(setup, deal)).expect_err("refused")
}

/// A deal of the given rows and complete hands.
pub fn deal(rows: &[u8], hands: &[&[u8]]) -> Deal {
    Deal {
        rows: rows.iter().map(|n| vec![c(*n)]).collect(),
        hands: hands.iter().map(|h| cards(h.iter().copied())).collect(),
        draw_pile: Vec::new(),
    }
}

/// A prepared deal: the given rows and hands, each hand filled up to `size` cards with the
/// highest cards of `deck` that appear nowhere else in the deal.
pub fn deal_filled(deck: CardSet, size: usize, rows: &[u8], hands: &[&[u8]]) -> Deal {
    let mut used: CardSet = rows
        .iter()
        .chain(hands.iter().copied().flatten())
        .map(|n| c(*n))
        .collect();
    let mut spare = deck.to_vec();
    spare.reverse();
    let mut spare = spare.into_iter();
    let hands = hands
        .iter()
        .map(|h| {
            let mut hand = cards(h.iter().copied());
            while hand.len() < size {
                let filler = spare
                    .find(|card| !used.contains(*card))
                    .expect("deck too small for the deal");
                used.insert(filler);
                hand.push(filler);
            }
            hand
        })
        .collect();
    Deal {
        rows: rows.iter().map(|n| vec![c(*n)]).collect(),
        hands,
        draw_pile: Vec::new(),
    }
}

pub fn host() -> Actor<'static> {
    Actor::Account {
        id: HOST,
        name: "Host",
    }
}

pub fn acct(id: &'static str) -> Actor<'static> {
    Actor::Account { id, name: id }
}

pub fn bot(seat: u8) -> Actor<'static> {
    Actor::Bot { seat }
}

pub fn play(card: u8) -> Command {
    Command::PlayCard { card: c(card) }
}

pub fn take(row: u8) -> Command {
    Command::TakeRow { row }
}

pub fn draft(card: u8) -> Command {
    Command::DraftCard { card: c(card) }
}

pub fn keep(card: u8) -> Command {
    Command::KeepCard { card: c(card) }
}

/// A game and its event log, with every step checked for replayability.
pub struct Table<D: Dealer> {
    pub game: Game,
    pub events: Vec<Event>,
    pub dealer: D,
    /// The account at each seat that is a person (seat 0: the host); bots elsewhere.
    pub humans: Vec<Option<&'static str>>,
}

impl<D: Dealer> Table<D> {
    pub fn create(new: NewGame<'_>, dealer: D) -> Self {
        let players = usize::from(new.setup.players);
        let events = Game::create(new).expect("game is created");
        let game = Game::from_events(&events).expect("starts with game_created");
        let mut humans = vec![None; players];
        humans[0] = Some(HOST);
        Self {
            game,
            events,
            dealer,
            humans,
        }
    }

    pub fn try_cmd(
        &mut self,
        actor: Actor<'_>,
        command: &Command,
    ) -> Result<Vec<Event>, RuleError> {
        let before = self.game.clone();
        let result = self.game.decide(actor, command, &mut self.dealer);
        match &result {
            Ok(events) => {
                for e in events {
                    self.game.apply(e);
                }
                self.events.extend(events.iter().cloned());
                let replayed = Game::from_events(&self.events).expect("replays");
                assert_eq!(replayed, self.game, "replay differs after {command:?}");
            }
            Err(_) => assert_eq!(before, self.game, "a refused command changed the state"),
        }
        result
    }

    pub fn cmd(&mut self, actor: Actor<'_>, command: &Command) -> Vec<Event> {
        self.try_cmd(actor, command)
            .unwrap_or_else(|e| panic!("{command:?} by {actor:?} refused: {e}"))
    }

    pub fn err(&mut self, actor: Actor<'_>, command: &Command) -> RuleError {
        match self.try_cmd(actor, command) {
            Ok(events) => panic!("{command:?} by {actor:?} was accepted: {events:?}"),
            Err(e) => e,
        }
    }

    /// Who sends commands for `seat`: its person, or the server for a bot.
    pub fn actor(&self, seat: u8) -> Actor<'static> {
        match self.humans[usize::from(seat)] {
            Some(id) if !self.game.seats[usize::from(seat)].resigned => acct_or_host(id),
            _ => bot(seat),
        }
    }

    /// `command` sent for `seat`.
    pub fn by(&mut self, seat: u8, command: &Command) -> Vec<Event> {
        let actor = self.actor(seat);
        self.cmd(actor, command)
    }

    /// `command` sent for `seat`, which must be refused.
    pub fn err_by(&mut self, seat: u8, command: &Command) -> RuleError {
        let actor = self.actor(seat);
        self.err(actor, command)
    }

    /// Plays one turn's selections: `cards[s]` for seat `s`. Resolution may pause.
    pub fn turn(&mut self, cards: &[u8]) -> Vec<Event> {
        let mut events = Vec::new();
        for (seat, card) in cards.iter().enumerate() {
            let seat = u8::try_from(seat).unwrap();
            events.extend(self.by(seat, &play(*card)));
        }
        events
    }

    pub fn rows(&self) -> Vec<Vec<u8>> {
        self.game.rows().into_iter().map(numbers).collect()
    }

    pub fn hand(&self, seat: u8) -> Vec<u8> {
        numbers(self.game.hand(seat).iter())
    }

    /// Plays the first legal move of whoever is awaited until `done` holds (or the game ends).
    pub fn play_first_moves_until(&mut self, done: impl Fn(&Game) -> bool) {
        let mut guard = 0;
        while self.game.status() == Status::Active && !done(&self.game) {
            guard += 1;
            assert!(guard < 10_000, "no progress");
            let seat = self.game.awaiting()[0].seat;
            let command = self.game.moves_for(seat)[0].clone();
            self.by(seat, &command);
        }
    }
}

fn acct_or_host(id: &'static str) -> Actor<'static> {
    if id == HOST { host() } else { acct(id) }
}

/// A started game with a prepared first deal: the host at seat 0, the persons of `humans` at
/// the seats after it (joining in order), bots at the others.
pub fn started<D: Dealer>(
    setup: Setup,
    deal: Option<Deal>,
    dealer: D,
    humans: &[&'static str],
) -> Table<D> {
    let players = setup.players;
    let mut t = Table::create(new_game(setup, deal), dealer);
    for seat in 1..players {
        match humans.get(usize::from(seat) - 1) {
            Some(id) => {
                t.cmd(acct(id), &Command::Join {});
                t.humans[usize::from(seat)] = Some(id);
            }
            None => {
                t.cmd(
                    host(),
                    &Command::AddBot {
                        strategy: BotStrategy::Random,
                    },
                );
            }
        }
    }
    t.cmd(host(), &Command::Start {});
    assert_eq!(t.game.status(), Status::Active);
    t
}

/// A placement as `(seat, card, row, taken, chosen, side)`.
pub type Placed = (u8, u8, u8, Vec<u8>, bool, Side);

pub fn placed(events: &[Event]) -> Vec<Placed> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::CardPlaced {
                seat,
                card,
                row,
                taken,
                chosen,
                side,
            } => Some((
                *seat,
                card.number(),
                *row,
                numbers(taken.iter().copied()),
                *chosen,
                *side,
            )),
            _ => None,
        })
        .collect()
}

/// A keep as `(seat, card, stacked, to_hand)`.
pub type Kept = (u8, u8, Vec<u8>, Vec<u8>);

pub fn kept(events: &[Event]) -> Vec<Kept> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::CardKept {
                seat,
                card,
                stacked,
                to_hand,
            } => Some((
                *seat,
                card.number(),
                numbers(stacked.iter().copied()),
                numbers(to_hand.iter().copied()),
            )),
            _ => None,
        })
        .collect()
}

pub fn types(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(Event::type_name).collect()
}

pub fn count(events: &[Event], type_name: &str) -> usize {
    events.iter().filter(|e| e.type_name() == type_name).count()
}

pub fn round_ended(events: &[Event]) -> Vec<(u16, Vec<u32>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::RoundEnded { round, scores } => Some((*round, scores.clone())),
            _ => None,
        })
        .collect()
}

/// Row-game scores (bullheads, `u32`) as the signed totals and scores of the game.
pub fn signed(scores: &[u32]) -> Vec<i32> {
    scores.iter().map(|s| i32::try_from(*s).unwrap()).collect()
}
