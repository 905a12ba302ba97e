//! `GET /v1/rulesets`: what can be played, with options, presets and scoring tables.

use std::collections::BTreeMap;

use actix_web::{HttpResponse, get};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use rules::{Card, Options, Preset, Ruleset};

/// A ruleset's description.
#[derive(Serialize, ToSchema)]
pub struct RulesetInfo {
    /// API name.
    pub name: &'static str,
    /// Seats.
    pub players: PlayerRange,
    /// Each option with its allowed values and default.
    #[schema(value_type = Object)]
    pub options: Value,
    /// Preset name → the options it stands for.
    #[schema(value_type = Object)]
    pub presets: BTreeMap<String, Options>,
    /// Card number (string key) → bullheads.
    pub bullheads: BTreeMap<String, u32>,
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
    let bullheads = (1..=ruleset.deck_max())
        .filter_map(Card::new)
        .map(|c| (c.number().to_string(), table.bullheads(c)))
        .collect();
    RulesetInfo {
        name: ruleset.name(),
        players: PlayerRange { min, max },
        options: json!({
            "deck": { "values": ["full", "tactical"], "default": "full" },
            "deal": { "values": ["random"], "default": "random",
                      "planned": ["draft"] },
            "placement": { "values": ["right"], "default": "right",
                           "planned": ["both_ends"] },
            "end": { "values": [{ "points": "1–999" }, { "rounds": "1–50" }], "default": { "points": 66 },
                     "suggested": [{ "points": 33 }, { "points": 66 }, { "points": 100 }] }
        }),
        presets: Preset::ALL
            .into_iter()
            .map(|p| {
                (
                    serde_json::to_value(p)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    p.options(),
                )
            })
            .collect(),
        bullheads,
    }
}

/// Lists the playable rulesets.
#[utoipa::path(tag = "rulesets", security(()), responses((status = 200, body = RulesetList)))]
#[get("/v1/rulesets")]
pub async fn list_rulesets() -> HttpResponse {
    HttpResponse::Ok().json(RulesetList {
        items: Ruleset::ALL.into_iter().map(describe).collect(),
    })
}
