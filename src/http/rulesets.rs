//! `GET /v1/rulesets`: what can be played, with options, presets and scoring tables.

use std::collections::BTreeMap;

use actix_web::{HttpResponse, get};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use rules::nos_cards::{CardFace, NosCard, starting_chips};
use rules::{Card, Layout, Options, Preset, Ruleset};

/// A ruleset's description.
#[derive(Serialize, ToSchema)]
pub struct RulesetInfo {
    /// API name.
    pub name: &'static str,
    /// Seats.
    pub players: PlayerRange,
    /// Row games: hand cards dealt per player and round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hand_size: Option<usize>,
    /// Row games: the centre rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<RowShape>>,
    /// Each option with its allowed values and default.
    #[schema(value_type = Object)]
    pub options: Value,
    /// Preset name → the options it stands for.
    #[schema(value_type = Object)]
    pub presets: BTreeMap<String, Options>,
    /// Row games: card number (string key) → bullheads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bullheads: Option<BTreeMap<String, u32>>,
    /// nimm-oder-schieb: the 33 cards as drawn (`{value, suit, rank, label}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cards: Option<Vec<CardFace>>,
    /// nimm-oder-schieb: chips each player starts with, by number of players.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starting_chips: Option<BTreeMap<String, u8>>,
}

/// A centre row's shape.
#[derive(Serialize, ToSchema)]
pub struct RowShape {
    /// Capacity as the game names it (see the game view's `table.rows`).
    pub capacity: usize,
    /// Most cards that can lie in the row.
    pub max_cards: usize,
}

/// Fewest and most players.
#[derive(Serialize, ToSchema)]
pub struct PlayerRange {
    /// Fewest.
    pub min: u8,
    /// Most.
    pub max: u8,
}

/// The list of rulesets.
#[derive(Serialize, ToSchema)]
pub struct RulesetList {
    /// Rulesets.
    pub items: Vec<RulesetInfo>,
}

fn describe(ruleset: Ruleset) -> RulesetInfo {
    let (min, max) = ruleset.players();
    let table = ruleset.score_table();
    let layout = Layout::new(ruleset, ruleset.default_options());
    let bullheads = (1..=ruleset.deck_max())
        .filter_map(Card::new)
        .map(|c| (c.number().to_string(), table.bullheads(c)))
        .collect();
    let points_end = json!({
        "values": [{ "points": "1–999" }, { "rounds": "1–50" }], "default": { "points": 66 },
        "suggested": [{ "points": 33 }, { "points": 66 }, { "points": 100 }]
    });
    let options = match ruleset {
        Ruleset::SixNimmt => json!({
            "deck": { "values": ["full", "tactical"], "default": "full" },
            "deal": { "values": ["random", "draft"], "default": "random", "note": "draft needs deck: tactical" },
            "placement": { "values": ["right", "both_ends"], "default": "right" },
            "end": points_end
        }),
        Ruleset::ElevenNimmt => json!({ "end": points_end }),
        Ruleset::XNimmt => json!({ "deals": { "values": "1–50", "default": 2 } }),
        Ruleset::NimmOderSchieb => json!({
            "chips": { "values": ["hidden", "open"], "default": "hidden" },
            "games": { "values": "1–50", "default": 1 }
        }),
    };
    let nos = ruleset == Ruleset::NimmOderSchieb;
    let presets = if ruleset == Ruleset::SixNimmt {
        Preset::ALL
            .into_iter()
            .map(|p| {
                let name = serde_json::to_value(p)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned));
                (name.unwrap_or_default(), p.options())
            })
            .collect()
    } else {
        BTreeMap::new()
    };
    RulesetInfo {
        name: ruleset.name(),
        players: PlayerRange { min, max },
        hand_size: (!nos).then_some(layout.hand_size),
        rows: (!nos).then(|| {
            (0..layout.rows)
                .map(|r| RowShape {
                    capacity: layout.capacity[r],
                    max_cards: layout.max_lying[r],
                })
                .collect()
        }),
        options,
        presets,
        bullheads: (!nos).then_some(bullheads),
        cards: nos.then(|| NosCard::all().map(NosCard::face).collect()),
        starting_chips: nos.then(|| {
            (min..=max)
                .map(|p| (p.to_string(), starting_chips(p)))
                .collect()
        }),
    }
}

/// Lists the playable rulesets.
#[utoipa::path(operation_id = "list_rulesets", tag = "rulesets", security(()), responses((status = 200, body = RulesetList)))]
#[get("/v1/rulesets")]
pub async fn list_rulesets() -> HttpResponse {
    HttpResponse::Ok().json(RulesetList {
        items: Ruleset::ALL.into_iter().map(describe).collect(),
    })
}
