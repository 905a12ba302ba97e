//! Who is asked to act: the one place that turns [`Game::awaiting`] into the persons the
//! server must tell (the inbox, deadlines, notifications). Bots and resigned seats answer
//! in the same request and are never asked.

use crate::game::Game;

/// A person asked to act: their seat, account and the commands asked of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersonAsk<'a> {
    /// The seat the person holds (0-based).
    pub seat: u8,
    /// The person's account.
    pub account: &'a str,
    /// The commands asked (`play_card`, or `pass` and `take`, …), in `awaiting` order.
    pub actions: Vec<&'static str>,
}

impl Game {
    /// The persons (seats with an account that no bot plays) asked to act now.
    #[must_use]
    pub fn person_asks(&self) -> Vec<PersonAsk<'_>> {
        let awaiting = self.awaiting();
        self.seats
            .iter()
            .enumerate()
            .filter(|(_, seat)| !seat.bot_controlled())
            .filter_map(|(i, seat)| {
                let seat_no = u8::try_from(i).ok()?;
                let account = seat.account()?;
                let actions: Vec<&'static str> = awaiting
                    .iter()
                    .filter(|a| a.seat == seat_no)
                    .map(|a| a.action)
                    .collect();
                (!actions.is_empty()).then_some(PersonAsk {
                    seat: seat_no,
                    account,
                    actions,
                })
            })
            .collect()
    }
}
