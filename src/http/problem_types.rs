//! The problem types: every `code` the server answers with, and its `title`.
//!
//! RFC 9457 wants a problem's `title` to summarise its *type* and to stay the same from
//! occurrence to occurrence (except for localization); what went wrong this time is the
//! `detail`. The type URI is `https://stammtisch.example/problems/<code with dashes>`, so
//! one code is one type and has one title per language here.

use super::l10n::Lang;

/// Code, English title, German title.
const TYPES: &[(&str, &str, &str)] = &[
    // Requests that cannot be read.
    ("bad_request", "Bad request", "Ungültige Anfrage"),
    ("malformed_json", "Malformed JSON", "Fehlerhaftes JSON"),
    (
        "malformed_body",
        "Malformed request body",
        "Fehlerhafter Anfrageinhalt",
    ),
    (
        "invalid_query",
        "Invalid query string",
        "Ungültige Abfrageparameter",
    ),
    (
        "invalid_if_match",
        "Invalid If-Match header",
        "Ungültiger If-Match-Header",
    ),
    (
        "invalid_idempotency_key",
        "Invalid Idempotency-Key header",
        "Ungültiger Idempotency-Key-Header",
    ),
    (
        "invalid_last_event_id",
        "Invalid Last-Event-ID header",
        "Ungültiger Last-Event-ID-Header",
    ),
    (
        "request_timeout",
        "Request body too slow",
        "Anfrageinhalt kam zu langsam",
    ),
    (
        "payload_too_large",
        "Request body too large",
        "Anfrageinhalt zu groß",
    ),
    (
        "unsupported_media_type",
        "Unsupported media type",
        "Nicht unterstütztes Format",
    ),
    (
        "method_not_allowed",
        "Method not allowed",
        "Methode nicht erlaubt",
    ),
    (
        "validation_failed",
        "Validation failed",
        "Ungültige Angaben",
    ),
    // Identity.
    ("unauthorized", "Not signed in", "Nicht angemeldet"),
    (
        "invalid_credentials",
        "Invalid name or password",
        "Name oder Passwort falsch",
    ),
    ("wrong_password", "Wrong password", "Falsches Passwort"),
    ("name_taken", "Name taken", "Name vergeben"),
    (
        "already_registered",
        "Already registered",
        "Schon registriert",
    ),
    ("not_registered", "Not registered", "Nicht registriert"),
    (
        "guest_has_no_vacation",
        "Guests have no vacation",
        "Gäste haben keinen Urlaub",
    ),
    (
        "not_enough_vacation",
        "Not enough vacation",
        "Nicht genug Urlaub",
    ),
    ("not_an_analyst", "Not an analyst", "Kein Analyse-Zugang"),
    // Resources and versions.
    ("not_found", "Not found", "Nicht gefunden"),
    ("version_conflict", "Version conflict", "Versionskonflikt"),
    (
        "idempotency_key_reused",
        "Idempotency key reused",
        "Idempotency-Key schon verwendet",
    ),
    ("busy", "Game busy", "Spiel beschäftigt"),
    (
        "game_not_finished",
        "Game not finished",
        "Spiel nicht beendet",
    ),
    // Game rules.
    ("invalid_options", "Invalid options", "Ungültige Optionen"),
    (
        "unsupported_option",
        "Unsupported option",
        "Nicht unterstützte Option",
    ),
    ("invalid_deal", "Invalid deal", "Ungültige Verteilung"),
    (
        "not_in_lobby",
        "Game not in the lobby",
        "Spiel nicht in der Lobby",
    ),
    ("game_not_active", "Game not running", "Spiel läuft nicht"),
    ("already_seated", "Already seated", "Schon am Tisch"),
    ("game_full", "Game full", "Spiel voll"),
    ("not_a_player", "Not a player", "Kein Mitspieler"),
    ("not_host", "Not the host", "Nicht der Gastgeber"),
    (
        "host_cannot_leave",
        "The host cannot leave",
        "Der Gastgeber kann nicht gehen",
    ),
    ("invalid_seat", "Invalid seat", "Ungültiger Platz"),
    (
        "seats_not_filled",
        "Seats not filled",
        "Plätze nicht besetzt",
    ),
    ("not_your_turn", "Not your turn", "Du bist nicht dran"),
    (
        "card_not_in_hand",
        "Card not in hand",
        "Karte nicht auf der Hand",
    ),
    ("no_such_row", "No such row", "Diese Reihe gibt es nicht"),
    ("resigned", "Resigned", "Aufgegeben"),
    ("card_not_taken", "Card not taken", "Karte nicht genommen"),
    (
        "card_not_available",
        "Card not available",
        "Karte nicht verfügbar",
    ),
    ("no_chips", "No chips", "Keine Chips"),
    ("unknown_command", "Unknown command", "Unbekannter Befehl"),
    (
        "invalid_time_control",
        "Invalid time control",
        "Ungültige Bedenkzeit",
    ),
    ("no_time_control", "No clocks", "Keine Uhren"),
    ("not_flagged", "Clock not run out", "Uhr nicht abgelaufen"),
    (
        "pause_not_allowed",
        "Pause not allowed",
        "Pause nicht erlaubt",
    ),
    (
        "pause_already_proposed",
        "Pause already proposed",
        "Pause schon vorgeschlagen",
    ),
    (
        "no_pause_proposed",
        "No pause proposed",
        "Keine Pause vorgeschlagen",
    ),
    (
        "pause_already_accepted",
        "Pause already accepted",
        "Pause schon angenommen",
    ),
    ("not_paused", "Not paused", "Nicht pausiert"),
    // Tournaments.
    (
        "invalid_tournament",
        "Invalid tournament",
        "Ungültiges Turnier",
    ),
    (
        "tournament_not_open",
        "Tournament not open",
        "Turnier nicht offen",
    ),
    ("already_joined", "Already joined", "Schon dabei"),
    ("tournament_full", "Tournament full", "Turnier voll"),
    ("not_joined", "Not joined", "Nicht dabei"),
    ("too_few_players", "Too few players", "Zu wenige Personen"),
    // Score pads.
    ("invalid_players", "Invalid players", "Ungültige Spieler"),
    (
        "invalid_end",
        "Invalid end condition",
        "Ungültiges Spielende",
    ),
    (
        "wrong_number_of_scores",
        "Wrong number of scores",
        "Falsche Anzahl Punkte",
    ),
    ("impossible_round", "Impossible round", "Unmögliche Runde"),
    ("pad_finished", "Score pad finished", "Block abgeschlossen"),
    (
        "no_round_to_take_back",
        "No round to take back",
        "Keine Runde zum Zurücknehmen",
    ),
    // Mail and webhooks.
    ("mail_disabled", "Mail disabled", "E-Mail abgeschaltet"),
    (
        "mail_unavailable",
        "Mail unavailable",
        "E-Mail nicht verfügbar",
    ),
    ("invalid_url", "Invalid URL", "Ungültige URL"),
    (
        "webhook_url_not_allowed",
        "Webhook URL not allowed",
        "Webhook-URL nicht erlaubt",
    ),
    (
        "too_many_webhooks",
        "Too many webhooks",
        "Zu viele Webhooks",
    ),
    // Web Push.
    (
        "invalid_push_endpoint",
        "Invalid push endpoint",
        "Ungültiger Push-Endpunkt",
    ),
    (
        "push_endpoint_not_allowed",
        "Push endpoint not allowed",
        "Push-Endpunkt nicht erlaubt",
    ),
    (
        "invalid_push_keys",
        "Invalid push keys",
        "Ungültige Push-Schlüssel",
    ),
    (
        "too_many_push_subscriptions",
        "Too many push subscriptions",
        "Zu viele Push-Abos",
    ),
    // Limits.
    ("rate_limited", "Too many attempts", "Zu viele Versuche"),
    ("too_many_accounts", "Too many accounts", "Zu viele Konten"),
    ("too_many_commands", "Too many commands", "Zu viele Befehle"),
    ("too_many_games", "Too many games", "Zu viele Spiele"),
    ("too_many_guests", "Too many guests", "Zu viele Gäste"),
    ("too_many_mails", "Too many mails", "Zu viele E-Mails"),
    (
        "too_many_open_lobbies",
        "Too many open lobbies",
        "Zu viele offene Lobbys",
    ),
    (
        "too_many_scorepads",
        "Too many score pads",
        "Zu viele Blöcke",
    ),
    ("too_many_streams", "Too many streams", "Zu viele Streams"),
    // The server.
    ("server_busy", "Server busy", "Server ausgelastet"),
    (
        "database_unavailable",
        "Database unavailable",
        "Datenbank nicht erreichbar",
    ),
    (
        "unavailable",
        "Service unavailable",
        "Vorübergehend nicht verfügbar",
    ),
    ("internal_error", "Internal error", "Interner Fehler"),
];

/// The title of the problem type `code` in `lang`. A code missing from the table (the
/// `every_code_has_a_title` test keeps that from happening) is titled by the code itself.
#[must_use]
pub fn title(code: &str, lang: Lang) -> &str {
    TYPES
        .iter()
        .find(|(c, _, _)| *c == code)
        .map_or(code, |(_, en, de)| lang.pick(en, de))
}

/// Whether `code` is a known problem type.
#[must_use]
pub fn is_known(code: &str) -> bool {
    TYPES.iter().any(|(c, _, _)| *c == code)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeSet;
    use std::path::Path;

    use super::{TYPES, is_known};

    /// The string literals in the crates' sources that are used as problem codes: after
    /// `code: `, in `exceeded(`, in a `…_CODE` constant, and the arms of the `code()`
    /// functions of the error types.
    fn codes_in(dir: &Path, found: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                codes_in(&path, found);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("problem_types.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let mut in_code_fn = false;
            for line in text.lines() {
                let line = line.trim();
                if line.starts_with("pub fn code(") || line.starts_with("fn code(") {
                    in_code_fn = true;
                } else if line == "}" {
                    in_code_fn = false;
                }
                let markers: &[&str] = if in_code_fn {
                    &["=> \"", "code: \"", "exceeded(\"", "_CODE: &str = \""]
                } else {
                    &["code: \"", "exceeded(\"", "_CODE: &str = \""]
                };
                for marker in markers {
                    for piece in line.split(marker).skip(1) {
                        if let Some(code) = piece.split('"').next()
                            && !code.is_empty()
                            && code.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                        {
                            found.insert(code.to_owned());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_code_has_a_title() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut found = BTreeSet::new();
        codes_in(&root.join("src"), &mut found);
        codes_in(&root.join("crates/rules/src"), &mut found);
        // The scan must see the codes of every kind, or it proves nothing.
        for sample in [
            "card_not_in_hand",
            "impossible_round",
            "too_many_commands",
            "not_found",
        ] {
            assert!(found.contains(sample), "the scan missed {sample}");
        }
        let missing: Vec<&String> = found.iter().filter(|c| !is_known(c)).collect();
        assert!(missing.is_empty(), "codes without a title: {missing:?}");
    }

    #[test]
    fn titles_are_unique_per_language() {
        let mut seen = BTreeSet::new();
        for (code, en, de) in TYPES {
            assert!(seen.insert(*code), "{code} twice");
            assert!(!en.is_empty() && !de.is_empty(), "{code}");
        }
        let english: BTreeSet<_> = TYPES.iter().map(|t| t.1).collect();
        let german: BTreeSet<_> = TYPES.iter().map(|t| t.2).collect();
        assert_eq!(
            english.len(),
            TYPES.len(),
            "two types share an English title"
        );
        assert_eq!(german.len(), TYPES.len(), "two types share a German title");
    }
}
