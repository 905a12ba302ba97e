//! The hand calculator of Nimm oder schieb: the score of a hand at the end of a game,
//! for tables that play with real cards.

use actix_web::{HttpResponse, post};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use rules::nos_cards::{self, CardFace, HIGHEST, LOWEST, NosCard};
use rules::pad::NOS_CARDS_IN_PLAY;

use super::Body;
use super::caller::Caller;
use super::errors::{ApiError, Problem};

/// Most chips one player can hold: all chips of a five-player game (5 × 11).
pub const MAX_CHIPS: i64 = 55;

/// A card as a client may name it: its value or its label.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum CardInput {
    /// The value, 3–35.
    Value(u8),
    /// The label: rank and suit, e.g. `10♦`, `K♣`, `A♥` (also `10D`, `KC`, `AH`).
    Label(String),
}

/// A hand to score.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScoreHand {
    /// The cards taken, as values (3–35) or labels (`"10♦"`); each at most once, at most 24.
    #[schema(value_type = Vec<CardInput>, max_items = 24)]
    pub cards: Vec<Value>,
    /// Chips left, 0–55.
    #[schema(value_type = i64, minimum = 0, maximum = 55)]
    pub chips: Value,
}

/// The score of a hand.
#[derive(Debug, Serialize, ToSchema)]
pub struct HandScoreBody {
    /// Runs of consecutive values, ascending (across suits: K♣ → A♦, K♦ → A♥); each run
    /// counts only its lowest card.
    pub runs: Vec<Vec<CardFace>>,
    /// Sum of the runs' lowest values.
    pub card_points: i32,
    /// Chips left; each is one point off.
    pub chips: i32,
    /// `card_points − chips`; lower is better.
    pub total: i32,
}

/// Reads one entry of `cards`.
fn card_at(index: usize, item: &Value) -> Result<NosCard, ApiError> {
    let bad = |what: String| ApiError::Validation(format!("cards[{index}]: {what}"));
    match item {
        Value::Number(n) => match n.as_i64() {
            Some(v) => u8::try_from(v).ok().and_then(NosCard::new).ok_or_else(|| {
                bad(format!(
                    "value {v} is out of range: card values are {LOWEST} to {HIGHEST}"
                ))
            }),
            None => Err(bad(format!("{n} is not a whole number"))),
        },
        Value::String(label) => NosCard::from_label(label).ok_or_else(|| {
            bad(format!(
                "unknown label {label:?}: the cards are ♣ 3–K, ♦ A–K and ♥ A–9, \
                 written like \"10♦\", \"K♣\" or \"A♥\""
            ))
        }),
        _ => Err(bad(
            "a card is a value (3–35) or a label such as \"10♦\"".into()
        )),
    }
}

/// Reads the hand: at most 24 distinct cards.
fn hand(items: &[Value]) -> Result<Vec<NosCard>, ApiError> {
    let most = usize::from(NOS_CARDS_IN_PLAY);
    if items.len() > most {
        return Err(ApiError::Validation(format!(
            "a hand has at most {most} cards (the cards in play), got {}",
            items.len()
        )));
    }
    let mut cards: Vec<NosCard> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let card = card_at(i, item)?;
        if let Some(j) = cards.iter().position(|c| *c == card) {
            let face = card.face();
            return Err(ApiError::Validation(format!(
                "cards[{i}]: duplicate card {} ({}), also given as cards[{j}]",
                face.label, face.value
            )));
        }
        cards.push(card);
    }
    Ok(cards)
}

/// Scores a Nimm oder schieb hand: runs of consecutive values count their lowest card,
/// each chip left is one point off (seed example: 6, 8 9 10, 13 14 15, 23 24, 33 with 6 chips
/// = 83 − 6 = 77).
#[utoipa::path(
    operation_id = "score_nimm_oder_schieb",
    tag = "scorepads",
    request_body = ScoreHand,
    responses(
        (status = 200, body = HandScoreBody),
        (status = 400, description = "malformed body", body = Problem),
        (status = 401, description = "`unauthorized`", body = Problem),
        (status = 422, description = "`validation_failed`: an unknown label, a value out of range, a duplicate card, more than 24 cards, chips out of range", body = Problem)
    )
)]
#[post("/v1/rulesets/nimm-oder-schieb/score")]
pub async fn score_nimm_oder_schieb(
    _caller: Caller,
    body: Body<ScoreHand>,
) -> Result<HttpResponse, ApiError> {
    let req = body.0;
    let cards = hand(&req.cards)?;
    let chips = req
        .chips
        .as_i64()
        .filter(|c| (0..=MAX_CHIPS).contains(c))
        .and_then(|c| u32::try_from(c).ok())
        .ok_or_else(|| {
            ApiError::Validation(format!(
                "chips must be a whole number from 0 to {MAX_CHIPS}, got {}",
                req.chips
            ))
        })?;
    let score = nos_cards::score(&cards, chips);
    let runs = score
        .runs
        .iter()
        .map(|run| {
            run.iter()
                .filter_map(|v| NosCard::new(*v))
                .map(NosCard::face)
                .collect()
        })
        .collect();
    Ok(HttpResponse::Ok().json(HandScoreBody {
        runs,
        card_points: score.card_points,
        chips: score.chips,
        total: score.total,
    }))
}
