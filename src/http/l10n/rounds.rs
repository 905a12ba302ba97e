//! The `detail` of `impossible_round` as a sentence a person understands, in English and in
//! German: who cannot have what, and what a round of that game with that many players can
//! give ("Anna cannot have 300 bullheads in one round: in 6 nimmt! with 4 players, one
//! player gets between 0 and 97 in a round."). The numbers come typed from the rules
//! ([`ImpossibleRound`]); the `code` stays `impossible_round`.

use rules::Ruleset;
use rules::pad::{BrokenBound, ImpossibleRound};

use crate::http::l10n::Lang;

/// The game's name as players say it.
fn game(ruleset: Ruleset) -> &'static str {
    match ruleset {
        Ruleset::SixNimmt => "6 nimmt!",
        Ruleset::ElevenNimmt => "11 nimmt!",
        Ruleset::XNimmt => "X nimmt!",
        Ruleset::NimmOderSchieb => "Nimm oder schieb",
    }
}

/// `n` with what a pad entry counts in this game: bullheads, or Nimm oder schieb's points.
fn amount(ruleset: Ruleset, n: i64, lang: Lang) -> String {
    let one = n.unsigned_abs() == 1;
    let unit = match (ruleset, lang, one) {
        (Ruleset::NimmOderSchieb, Lang::En, true) => "point",
        (Ruleset::NimmOderSchieb, Lang::En, false) => "points",
        (Ruleset::NimmOderSchieb, Lang::De, true) => "Punkt",
        (Ruleset::NimmOderSchieb, Lang::De, false) => "Punkte",
        (_, Lang::En, true) => "bullhead",
        (_, Lang::En, false) => "bullheads",
        (_, Lang::De, true) => "Hornochse",
        (_, Lang::De, false) => "Hornochsen",
    };
    format!("{n} {unit}")
}

/// The sentence for `round` in `lang`.
#[must_use]
pub fn sentence(round: &ImpossibleRound, lang: Lang) -> String {
    let ruleset = round.ruleset;
    let game = game(ruleset);
    let n = round.players;
    let who = |player: usize| {
        round.name(player).map_or_else(
            || {
                lang.pick(
                    format!("Player {}", player + 1),
                    format!("Spieler {}", player + 1),
                )
            },
            str::to_owned,
        )
    };
    let amount = |v: i64| amount(ruleset, v, lang);
    match round.broken {
        BrokenBound::PlayerCount { min, max } => match lang {
            Lang::En => format!("{game} is played by {min} to {max} players, not {n}."),
            Lang::De => format!("{game} spielen {min} bis {max} Personen, nicht {n}."),
        },
        BrokenBound::NegativeEntry { player, score } => {
            let (who, has) = (who(player), amount(score.into()));
            match lang {
                Lang::En => format!(
                    "{who} cannot have {has}: {game} counts the bullheads a player takes, \
                     so an entry is never below 0."
                ),
                Lang::De => format!(
                    "{who} kann nicht {has} haben: {game} zählt die Hornochsen, die jemand \
                     nimmt, ein Eintrag ist also nie kleiner als 0."
                ),
            }
        }
        BrokenBound::Entry {
            player,
            score,
            min,
            max,
        } => {
            let (who, has) = (who(player), amount(score.into()));
            match lang {
                Lang::En => format!(
                    "{who} cannot have {has} in one round: in {game} with {n} players, one \
                     player gets between {min} and {max} in a round."
                ),
                Lang::De => format!(
                    "{who} kann in einer Runde nicht {has} haben: In {game} mit {n} Spielern \
                     bekommt ein Spieler in einer Runde zwischen {min} und {max}."
                ),
            }
        }
        BrokenBound::Sum { sum, min, max } => {
            let all = amount(sum);
            match lang {
                Lang::En => format!(
                    "Together these entries make {all}, but in {game} with {n} players a round \
                     gives between {min} and {max} in all."
                ),
                Lang::De => format!(
                    "Zusammen ergeben diese Einträge {all}, aber in {game} mit {n} Spielern \
                     bringt eine Runde insgesamt zwischen {min} und {max}."
                ),
            }
        }
        BrokenBound::NoSplit {
            player,
            score,
            cards,
            chips,
        } => {
            let (who, has) = (who(player), amount(score.into()));
            match lang {
                Lang::En => format!(
                    "{who} cannot have {has} beside the other entries: no way of sharing the \
                     {cards} cards in play and the {chips} chips among {n} players gives all \
                     these entries at once."
                ),
                Lang::De => format!(
                    "{who} kann neben den anderen Einträgen nicht {has} haben: Keine Verteilung \
                     der {cards} Karten im Spiel und der {chips} Chips auf {n} Spieler ergibt \
                     alle diese Einträge zugleich."
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use rules::pad::PadError;

    fn refusal(ruleset: Ruleset, names: &[&str], scores: &[i32]) -> ImpossibleRound {
        let names: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
        match ruleset.check_round(scores) {
            Err(PadError::ImpossibleRound(why)) => why.named(&names),
            other => panic!("not an impossible round: {other:?}"),
        }
    }

    #[test]
    fn an_entry_out_of_bounds_reads_as_a_sentence_in_both_languages() {
        let r = refusal(Ruleset::SixNimmt, &["Anna", "Ben"], &[300, 0]);
        assert_eq!(
            sentence(&r, Lang::En),
            "Anna cannot have 300 bullheads in one round: in 6 nimmt! with 2 players, one \
             player gets between 0 and 79 in a round."
        );
        assert_eq!(
            sentence(&r, Lang::De),
            "Anna kann in einer Runde nicht 300 Hornochsen haben: In 6 nimmt! mit 2 Spielern \
             bekommt ein Spieler in einer Runde zwischen 0 und 79."
        );
        let r = refusal(Ruleset::NimmOderSchieb, &["A", "B", "Carla"], &[0, 0, 400]);
        assert_eq!(
            sentence(&r, Lang::En),
            "Carla cannot have 400 points in one round: in Nimm oder schieb with 3 players, \
             one player gets between -30 and 323 in a round."
        );
    }

    #[test]
    fn negative_entries_sums_and_splits_read_as_sentences() {
        let r = refusal(Ruleset::XNimmt, &["Anna", "Ben"], &[0, -1]);
        assert_eq!(
            sentence(&r, Lang::En),
            "Ben cannot have -1 bullhead: X nimmt! counts the bullheads a player takes, so an \
             entry is never below 0."
        );
        assert!(sentence(&r, Lang::De).starts_with("Ben kann nicht -1 Hornochse haben: "));
        let r = refusal(Ruleset::ElevenNimmt, &["Anna", "Ben"], &[3, 0]);
        assert_eq!(
            sentence(&r, Lang::En),
            "Together these entries make 3 bullheads, but in 11 nimmt! with 2 players a round \
             gives between 4 and 77 in all."
        );
        assert_eq!(
            sentence(&r, Lang::De),
            "Zusammen ergeben diese Einträge 3 Hornochsen, aber in 11 nimmt! mit 2 Spielern \
             bringt eine Runde insgesamt zwischen 4 und 77."
        );
        let r = refusal(
            Ruleset::NimmOderSchieb,
            &["Anna", "Ben", "Carla"],
            &[-11, -11, 300],
        );
        let en = sentence(&r, Lang::En);
        assert!(
            en.contains("the 24 cards in play and the 33 chips among 3 players"),
            "{en}"
        );
        let de = sentence(&r, Lang::De);
        assert!(
            de.contains("der 24 Karten im Spiel und der 33 Chips"),
            "{de}"
        );
    }

    #[test]
    fn without_names_a_player_is_counted_from_one() {
        let Err(PadError::ImpossibleRound(r)) = Ruleset::SixNimmt.check_round(&[0, 300]) else {
            panic!("an impossible round");
        };
        assert!(sentence(&r, Lang::En).starts_with("Player 2 cannot have 300 bullheads"));
        assert!(sentence(&r, Lang::De).starts_with("Spieler 2 kann in einer Runde nicht"));
        let Err(PadError::ImpossibleRound(r)) = Ruleset::XNimmt.check_round(&[0]) else {
            panic!("an impossible round");
        };
        assert_eq!(
            sentence(&r, Lang::De),
            "X nimmt! spielen 2 bis 4 Personen, nicht 1."
        );
    }
}
