//! `GET /v1/rulesets`: what can be played, with options, presets and scoring tables.

use std::collections::BTreeMap;

use actix_web::http::header;
use actix_web::{HttpResponse, get};
use serde::Serialize;
use utoipa::ToSchema;

use rules::nos_cards::{CardFace, NosCard, starting_chips};
use rules::{Card, EndCondition, Layout, Options, Preset, Ruleset};

use super::l10n::Lang;

/// A ruleset's description. Display texts (`title`, option `label`s and `value_labels`,
/// `preset_labels`, card `label`s) follow `Accept-Language` (English or German); names,
/// option values and card values never do.
#[derive(Serialize, ToSchema)]
pub struct RulesetInfo {
    /// The name the API uses: `6-nimmt`, `11-nimmt`, `x-nimmt` or `nimm-oder-schieb`.
    pub name: &'static str,
    /// The game's name as players know it, e.g. `6 nimmt!`, `Nimm oder schieb`.
    pub title: &'static str,
    /// How many players a game may seat.
    pub players: PlayerRange,
    /// Row games: hand cards dealt per player and round.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub hand_size: Option<usize>,
    /// Row games: the centre rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub rows: Option<Vec<RowShape>>,
    /// Each option the ruleset takes at creation, with its allowed values and default, a
    /// `label` and, for options with named values, `value_labels` (value → label).
    pub options: RulesetOptions,
    /// Preset name → the options it stands for.
    pub presets: BTreeMap<String, Options>,
    /// Preset name → its label (`Taktik`, …).
    pub preset_labels: BTreeMap<String, &'static str>,
    /// Row games: card number (string key) → bullheads.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub bullheads: Option<BTreeMap<String, u32>>,
    /// nimm-oder-schieb: the 33 cards as drawn (`{value, suit, rank, label}`; the label in
    /// the language asked for: `J♣` in English is `B♣` in German, `Q` is `D`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub cards: Option<Vec<CardFace>>,
    /// nimm-oder-schieb: chips each player starts with, by number of players.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub starting_chips: Option<BTreeMap<String, u8>>,
}

/// The options a ruleset takes at creation (`POST /v1/games` `options`), each described.
/// Only the ruleset's own are present.
#[derive(Default, Serialize, ToSchema)]
pub struct RulesetOptions {
    /// 6-nimmt: which cards are in play.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub deck: Option<RulesetOption>,
    /// 6-nimmt: how hands are dealt.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub deal: Option<RulesetOption>,
    /// 6-nimmt: where a card may be laid.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub placement: Option<RulesetOption>,
    /// 6-nimmt, 11-nimmt: when the game ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub end: Option<RulesetOption>,
    /// x-nimmt: the number of deals.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub deals: Option<RulesetOption>,
    /// nimm-oder-schieb: who sees chip counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub chips: Option<RulesetOption>,
    /// nimm-oder-schieb: the number of games of the match.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub games: Option<RulesetOption>,
}

/// One option of a ruleset: what it may be, what it is when left out, and its labels.
#[derive(Serialize, ToSchema)]
pub struct RulesetOption {
    /// The allowed values.
    pub values: OptionValues,
    /// The value a game gets when the option is left out.
    pub default: OptionValue,
    /// Values worth offering first.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub suggested: Option<Vec<OptionValue>>,
    /// What the value needs of the other options, e.g. `draft needs deck: tactical`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub note: Option<&'static str>,
    /// The option's label, in the language asked for.
    pub label: &'static str,
    /// Value → its label, for options with named values.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub value_labels: Option<BTreeMap<&'static str, &'static str>>,
}

/// An option's allowed values: names (`["full", "tactical"]`), the forms of a structured
/// value with each field's range (`[{"points": "1–999"}, {"rounds": "1–50"}]`), or a range
/// of numbers (`"1–50"`).
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum OptionValues {
    /// The values by name.
    Names(Vec<&'static str>),
    /// Each form: field → its range.
    Forms(Vec<OptionForm>),
    /// The range, e.g. `1–50`.
    Range(&'static str),
}

/// One form of a structured option value: field → its range, e.g. `{"points": "1–999"}`.
#[derive(Serialize, ToSchema)]
#[serde(transparent)]
pub struct OptionForm(BTreeMap<&'static str, &'static str>);

/// An option's value: a name, a number or an end condition.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum OptionValue {
    /// A named value, e.g. `full`.
    Name(&'static str),
    /// A number, e.g. the deals of x-nimmt.
    Number(u32),
    /// An end condition.
    End(EndCondition),
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
    /// Fewest players, e.g. 2 for `6-nimmt`.
    pub min: u8,
    /// Most players, e.g. 10 for `6-nimmt`.
    pub max: u8,
}

/// The list of rulesets.
#[derive(Serialize, ToSchema)]
pub struct RulesetList {
    /// Every ruleset the server offers.
    pub items: Vec<RulesetInfo>,
}

/// The name players know a ruleset by.
fn title(ruleset: Ruleset, lang: Lang) -> &'static str {
    match ruleset {
        Ruleset::SixNimmt => "6 nimmt!",
        Ruleset::ElevenNimmt => "11 nimmt!",
        Ruleset::XNimmt => "X nimmt!",
        Ruleset::NimmOderSchieb => lang.pick("Nimm oder schieb (take or pass)", "Nimm oder schieb"),
    }
}

/// An option with its label and its values' labels, in `lang`.
fn labelled(
    values: OptionValues,
    default: OptionValue,
    label: &'static str,
    named: &[(&'static str, &'static str, &'static str)],
    lang: Lang,
) -> RulesetOption {
    RulesetOption {
        values,
        default,
        suggested: None,
        note: None,
        label,
        value_labels: (!named.is_empty()).then(|| {
            named
                .iter()
                .map(|(value, en, de)| (*value, lang.pick(*en, *de)))
                .collect()
        }),
    }
}

/// A preset's label.
fn preset_label(preset: Preset, lang: Lang) -> &'static str {
    match preset {
        Preset::Standard => "Standard",
        Preset::Taktik => lang.pick("Taktik (tactical)", "Taktik"),
        Preset::Logik => lang.pick("Logik (logic)", "Logik"),
        Preset::Profi => lang.pick("Profi (pro)", "Profi"),
    }
}

/// A card's face with its label in `lang` (German: Bube, Dame, König, Ass).
fn localized_face(card: NosCard, lang: Lang) -> CardFace {
    let mut face = card.face();
    if lang == Lang::De {
        let rank = match face.rank.as_str() {
            "J" => "B",
            "Q" => "D",
            other => other,
        };
        let symbol = face
            .label
            .chars()
            .last()
            .map(String::from)
            .unwrap_or_default();
        face.label = format!("{rank}{symbol}");
    }
    face
}

fn describe(ruleset: Ruleset, lang: Lang) -> RulesetInfo {
    let (min, max) = ruleset.players();
    let table = ruleset.score_table();
    let layout = Layout::new(ruleset, ruleset.default_options());
    let bullheads = (1..=ruleset.deck_max())
        .filter_map(Card::new)
        .map(|c| (c.number().to_string(), table.bullheads(c)))
        .collect();
    let points_end = RulesetOption {
        suggested: Some(
            [33, 66, 100]
                .map(|p| OptionValue::End(EndCondition::Points(p)))
                .into(),
        ),
        ..labelled(
            OptionValues::Forms(vec![
                OptionForm(BTreeMap::from([("points", "1–999")])),
                OptionForm(BTreeMap::from([("rounds", "1–50")])),
            ]),
            OptionValue::End(EndCondition::Points(66)),
            lang.pick(
                "End: at a penalty total or after a number of rounds",
                "Ende: bei einer Hornochsen-Summe oder nach einer Anzahl Runden",
            ),
            &[],
            lang,
        )
    };
    let options = match ruleset {
        Ruleset::SixNimmt => RulesetOptions {
            deck: Some(labelled(
                OptionValues::Names(vec!["full", "tactical"]),
                OptionValue::Name("full"),
                lang.pick("Deck", "Kartensatz"),
                &[
                    ("full", "All 104 cards", "Alle 104 Karten"),
                    (
                        "tactical",
                        "Tactical: only cards 1 to 10 per player plus 4",
                        "Taktik: nur die Karten 1 bis 10 je Spieler plus 4",
                    ),
                ],
                lang,
            )),
            deal: Some(RulesetOption {
                note: Some("draft needs deck: tactical"),
                ..labelled(
                    OptionValues::Names(vec!["random", "draft"]),
                    OptionValue::Name("random"),
                    lang.pick("Deal", "Verteilen"),
                    &[
                        ("random", "Shuffled", "Gemischt"),
                        ("draft", "Open draft (Logik)", "Offene Auswahl (Logik)"),
                    ],
                    lang,
                )
            }),
            placement: Some(labelled(
                OptionValues::Names(vec!["right", "both_ends"]),
                OptionValue::Name("right"),
                lang.pick("Placement", "Anlegen"),
                &[
                    ("right", "Right end only", "Nur rechts"),
                    ("both_ends", "Both ends (Profi)", "An beiden Enden (Profi)"),
                ],
                lang,
            )),
            end: Some(points_end),
            ..RulesetOptions::default()
        },
        Ruleset::ElevenNimmt => RulesetOptions {
            end: Some(points_end),
            ..RulesetOptions::default()
        },
        Ruleset::XNimmt => RulesetOptions {
            deals: Some(labelled(
                OptionValues::Range("1–50"),
                OptionValue::Number(2),
                lang.pick("Deals", "Durchgänge"),
                &[],
                lang,
            )),
            ..RulesetOptions::default()
        },
        Ruleset::NimmOderSchieb => RulesetOptions {
            chips: Some(labelled(
                OptionValues::Names(vec!["hidden", "open"]),
                OptionValue::Name("hidden"),
                lang.pick("Chips", "Chips"),
                &[("hidden", "Hidden", "Verdeckt"), ("open", "Open", "Offen")],
                lang,
            )),
            games: Some(labelled(
                OptionValues::Range("1–50"),
                OptionValue::Number(1),
                lang.pick("Games", "Partien"),
                &[],
                lang,
            )),
            ..RulesetOptions::default()
        },
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
    let preset_labels = if ruleset == Ruleset::SixNimmt {
        Preset::ALL
            .into_iter()
            .filter_map(|p| {
                let name = serde_json::to_value(p).ok()?.as_str()?.to_owned();
                Some((name, preset_label(p, lang)))
            })
            .collect()
    } else {
        BTreeMap::new()
    };
    RulesetInfo {
        name: ruleset.name(),
        title: title(ruleset, lang),
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
        preset_labels,
        bullheads: (!nos).then_some(bullheads),
        cards: nos.then(|| NosCard::all().map(|c| localized_face(c, lang)).collect()),
        starting_chips: nos.then(|| {
            (min..=max)
                .map(|p| (p.to_string(), starting_chips(p)))
                .collect()
        }),
    }
}

/// Lists the playable rulesets. Display texts follow `Accept-Language` (`en`, the default,
/// or `de`; the answer's `Content-Language` says which).
#[utoipa::path(
    operation_id = "list_rulesets",
    tag = "rulesets",
    security(()),
    params(("Accept-Language" = Option<String>, Header, description = "`de` for German display texts; English otherwise")),
    responses((status = 200, body = RulesetList, headers(("Content-Language" = String, description = "`en` or `de`"))))
)]
#[get("/v1/rulesets")]
pub async fn list_rulesets(lang: Lang) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_LANGUAGE, lang.tag()))
        .json(RulesetList {
            items: Ruleset::ALL
                .into_iter()
                .map(|r| describe(r, lang))
                .collect(),
        })
}
