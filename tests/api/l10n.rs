//! Languages: display texts and problem titles/details follow `Accept-Language` (English by
//! default, German on request); codes, ids, names and values never change with it.

use serde_json::{Value, json};

use crate::both;
use crate::support::{Api, Backend, Reply, TestServer};

fn get(api: &Api, path: &str, token: Option<&str>, language: Option<&str>) -> Reply {
    let mut req = api.http.get(api.url(path));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(l) = language {
        req = req.header("Accept-Language", l);
    }
    Reply::from_response(req.send().unwrap())
}

/// Everything in a ruleset list that is not a display text: it must be the same in every
/// language.
fn without_display_texts(list: &Value) -> Value {
    let mut list = list.clone();
    for item in list["items"].as_array_mut().unwrap() {
        let item = item.as_object_mut().unwrap();
        item.remove("title");
        item.remove("preset_labels");
        if let Some(options) = item.get_mut("options").and_then(Value::as_object_mut) {
            for option in options.values_mut() {
                let option = option.as_object_mut().unwrap();
                option.remove("label");
                option.remove("value_labels");
            }
        }
        if let Some(cards) = item.get_mut("cards").and_then(Value::as_array_mut) {
            for card in cards {
                card.as_object_mut().unwrap().remove("label");
            }
        }
    }
    list
}

fn rulesets_follow_accept_language(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let english = get(&api, "/v1/rulesets", None, None);
    assert_eq!(english.status, 200);
    assert_eq!(english.header("content-language").as_deref(), Some("en"));
    assert!(
        english
            .header("vary")
            .is_some_and(|v| v.contains("Accept-Language"))
    );
    let german = get(&api, "/v1/rulesets", None, Some("de-DE, en;q=0.5"));
    assert_eq!(german.status, 200);
    assert_eq!(german.header("content-language").as_deref(), Some("de"));

    let titles = |r: &Reply| -> Vec<String> {
        r.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["title"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        titles(&german),
        vec!["6 nimmt!", "11 nimmt!", "X nimmt!", "Nimm oder schieb"]
    );
    assert_eq!(titles(&english)[0], "6 nimmt!");
    let six_de = &german.body["items"][0];
    let six_en = &english.body["items"][0];
    assert_eq!(six_de["options"]["deck"]["label"], "Kartensatz");
    assert_eq!(six_en["options"]["deck"]["label"], "Deck");
    assert_eq!(
        six_de["options"]["placement"]["value_labels"]["both_ends"],
        "An beiden Enden (Profi)"
    );
    assert_eq!(six_de["preset_labels"]["taktik"], "Taktik");
    assert_eq!(six_en["preset_labels"]["taktik"], "Taktik (tactical)");
    // The card labels: a jack is a Bube, a queen a Dame; value, suit and rank stay codes.
    let card = |r: &Reply, value: u64| -> Value {
        r.body["items"][3]["cards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["value"] == value)
            .unwrap()
            .clone()
    };
    assert_eq!(
        card(&english, 11),
        json!({ "value": 11, "suit": "clubs", "rank": "J", "label": "J♣" })
    );
    assert_eq!(
        card(&german, 11),
        json!({ "value": 11, "suit": "clubs", "rank": "J", "label": "B♣" })
    );
    assert_eq!(card(&german, 25)["label"], "D♦");
    // A German label is understood where labels are accepted.
    let guest = api.guest("rechner");
    let score = api.post(
        "/v1/rulesets/nimm-oder-schieb/score",
        Some(&guest.token),
        &json!({ "cards": ["B♣", "D♣"], "chips": 0 }),
    );
    assert_eq!(score.status, 200, "{}", score.text);
    assert_eq!(score.body["card_points"], 11);
    // Nothing but display texts differs.
    assert_eq!(
        without_display_texts(&english.body),
        without_display_texts(&german.body)
    );

    // Quality values and fallbacks: the best offered language wins; unknown ones give English.
    for (header, expected) in [
        ("fr-CH, fr;q=0.9, de;q=0.8, en;q=0.7", "de"),
        ("fr, en;q=0.9, de;q=0.8", "en"),
        ("de;q=0.1, en;q=0.9", "en"),
        ("it", "en"),
        ("*", "en"),
        ("de-AT", "de"),
        ("not a language ;;; q=x", "en"),
    ] {
        let r = get(&api, "/v1/rulesets", None, Some(header));
        assert_eq!(r.status, 200, "{header}: {}", r.text);
        assert_eq!(
            r.header("content-language").as_deref(),
            Some(expected),
            "Accept-Language: {header}"
        );
    }
}

fn problems_follow_accept_language(backend: Backend) {
    let server = TestServer::start(backend);
    let api = server.client();
    let guest = api.guest("sprachen");

    // 404 for a game: same code and type, German title and detail.
    let path = "/v1/games/00000000-0000-7000-8000-000000000000";
    let en = get(&api, path, Some(&guest.token), None);
    en.assert_problem(404, "not_found");
    assert_eq!(en.header("content-language").as_deref(), Some("en"));
    // The title names the problem type (RFC 9457), not the HTTP status.
    assert_eq!(en.body["title"], "Not found");
    assert_eq!(en.body["detail"], "game not found");
    let de = get(&api, path, Some(&guest.token), Some("de"));
    de.assert_problem(404, "not_found");
    assert_eq!(de.header("content-language").as_deref(), Some("de"));
    assert_eq!(de.body["title"], "Nicht gefunden");
    assert_eq!(de.body["detail"], "Das Spiel wurde nicht gefunden.");
    assert_eq!(de.body["type"], en.body["type"]);

    // 401 without a token.
    let de = get(&api, "/v1/me", None, Some("de"));
    de.assert_problem(401, "unauthorized");
    assert_eq!(de.body["title"], "Nicht angemeldet");
    assert!(de.header("www-authenticate").is_some());

    // A rule's refusal with its numbers: a card not in the hand.
    let host = api.guest("gastgeber");
    let game = api.create_game(&host, &json!({ "ruleset": "6-nimmt", "players": 2 }));
    let id = game["id"].as_str().unwrap().to_owned();
    let r = api.post(
        &format!("/v1/games/{id}/commands"),
        Some(&host.token),
        &json!({ "type": "add_bot", "strategy": "random" }),
    );
    assert!(r.status < 300, "{}", r.text);
    let r = api.post(
        &format!("/v1/games/{id}/commands"),
        Some(&host.token),
        &json!({ "type": "start" }),
    );
    assert!(r.status < 300, "{}", r.text);
    let view = api.view(&host, &id);
    let hand: Vec<u64> = view["you"]["hand"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    let missing = (1..=104).find(|c| !hand.contains(c)).unwrap();
    let r = api.post_with(
        &format!("/v1/games/{id}/commands"),
        Some(&host.token),
        &json!({ "type": "play_card", "card": missing }),
        &[("Accept-Language", "de")],
    );
    r.assert_problem(422, "card_not_in_hand");
    assert_eq!(r.body["title"], "Karte nicht auf der Hand");
    // Another 422 of another type has another title; the same type the same one.
    let other = api.post_with(
        &format!("/v1/games/{id}/commands"),
        Some(&host.token),
        &json!({ "type": "take_row", "row": 9 }),
        &[("Accept-Language", "de")],
    );
    assert_eq!(other.status, 422, "{}", other.text);
    assert_ne!(other.body["code"], "card_not_in_hand", "{}", other.text);
    assert_ne!(other.body["title"], r.body["title"], "{}", other.text);
    let again = api.post_with(
        &format!("/v1/games/{id}/commands"),
        Some(&host.token),
        &json!({ "type": "play_card", "card": missing }),
        &[("Accept-Language", "de")],
    );
    assert_eq!(again.body["title"], r.body["title"]);
    assert_eq!(
        r.body["detail"],
        format!("Die Karte {missing} hast du nicht auf der Hand.")
    );
    // The German detail never adds what the English one does not say (no hidden cards).
    for c in &hand {
        assert!(
            !r.body["detail"]
                .as_str()
                .unwrap()
                .contains(&format!(" {c} ")),
            "{}",
            r.text
        );
    }

    // A refusal made by actix itself (unknown route) is German too, and problem+json.
    let r = get(&api, "/v1/no-such-thing", None, Some("de"));
    r.assert_problem(404, "not_found");
    assert_eq!(r.body["title"], "Nicht gefunden");
    // Malformed JSON: German sentence, the parser's own words after the colon.
    let r = api
        .http
        .post(api.url("/v1/guests"))
        .header("content-type", "application/json")
        .header("Accept-Language", "de")
        .body("{not json")
        .send()
        .unwrap();
    let r = Reply::from_response(r);
    r.assert_problem(400, "malformed_json");
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap()
            .starts_with("Der JSON-Text ist fehlerhaft: "),
        "{}",
        r.text
    );
    assert_eq!(r.header("content-language").as_deref(), Some("de"));
}

both!(
    rulesets_follow_accept_language,
    problems_follow_accept_language
);
