//! The German `detail` of every error. Where the English detail carries a validator's or
//! parser's own message (invalid options, a malformed body), the
//! German sentence says what is wrong and quotes that message after a colon.

use rules::RuleError;
use rules::pad::PadError;

use crate::contention::Contention;
use crate::http::errors::ApiError;

/// The German detail for `error`.
#[must_use]
pub fn detail(error: &ApiError) -> String {
    match error {
        ApiError::Unauthorized(why) => why.german().into(),
        ApiError::InvalidCredentials => "Name oder Passwort ist falsch.".into(),
        ApiError::Forbidden { code, detail } => match *code {
            "not_an_analyst" => "Dafür braucht dein Konto die Analysten-Rolle.".into(),
            "wrong_password" => "Das Passwort stimmt nicht.".into(),
            "guest_has_no_vacation" => {
                "Ein Gastkonto hat keinen Urlaub; registriere dich zuerst.".into()
            }
            _ => format!("Das darfst du nicht: {detail}"),
        },
        ApiError::NotFound(what) => format!("{} wurde nicht gefunden.", thing(what)),
        ApiError::NameTaken => "Dieser Name ist schon vergeben.".into(),
        ApiError::Conflict { code, detail } => match *code {
            "game_not_finished" => "Eine Revanche gibt es erst nach dem Ende des Spiels.".into(),
            "already_registered" => "Dieses Konto ist schon registriert.".into(),
            "not_registered" => "Ein Gastkonto hat kein Passwort; registriere dich zuerst.".into(),
            "mail_disabled" => "Dieser Server verschickt keine E-Mails.".into(),
            _ => format!("Das geht im jetzigen Zustand nicht: {detail}"),
        },
        ApiError::Contention(Contention::VersionConflict { current }) => {
            format!("Das Spiel steht inzwischen bei Version {current}.")
        }
        ApiError::Contention(Contention::Busy) => {
            "Am Spiel wird gerade viel gespielt; versuch es gleich noch einmal.".into()
        }
        ApiError::Rule(rule) => rule_detail(rule),
        ApiError::Pad(pad) => pad_detail(pad),
        ApiError::Validation(why) => format!("Die Angaben sind ungültig: {why}"),
        ApiError::Unprocessable { code, detail } => match *code {
            "idempotency_key_reused" => "Dieser Idempotency-Key wurde in den letzten 24 Stunden \
                                         für eine andere Anfrage benutzt."
                .into(),
            "invalid_url" => format!("Die URL ist ungültig: {detail}"),
            "webhook_url_not_allowed" => {
                format!("An diese Adresse darf kein Webhook gehen: {detail}")
            }
            "not_enough_vacation" => {
                format!("So viel Urlaub ist in diesem Jahr nicht mehr übrig: {detail}")
            }
            "too_many_webhooks" => "Ein Konto darf höchstens 10 Webhooks anlegen.".into(),
            "invalid_push_endpoint" => format!("Der Push-Endpunkt ist ungültig: {detail}"),
            "push_endpoint_not_allowed" => {
                format!("An diese Adresse darf keine Push-Nachricht gehen: {detail}")
            }
            "invalid_push_keys" => format!("Die Schlüssel des Push-Abos sind ungültig: {detail}"),
            "too_many_push_subscriptions" => {
                "Ein Konto darf höchstens 10 Browser für Push-Nachrichten anmelden.".into()
            }
            _ => format!("Das lässt sich nicht ausführen: {detail}"),
        },
        ApiError::BadRequest { code, detail } => match *code {
            "malformed_json" => format!("Der JSON-Text ist fehlerhaft: {detail}"),
            "invalid_query" => format!("Die Abfrageparameter sind ungültig: {detail}"),
            "invalid_if_match" => format!("Der If-Match-Header ist ungültig: {detail}"),
            "invalid_idempotency_key" => {
                format!("Der Idempotency-Key ist ungültig: {detail}")
            }
            "invalid_last_event_id" => format!("Die Last-Event-ID ist ungültig: {detail}"),
            _ => format!("Die Anfrage ist fehlerhaft: {detail}"),
        },
        ApiError::RequestTimeout => "Der Inhalt der Anfrage kam nicht rechtzeitig an.".into(),
        ApiError::PayloadTooLarge => "Der Inhalt der Anfrage ist zu groß.".into(),
        ApiError::UnsupportedMediaType => "Bitte sende application/json.".into(),
        ApiError::RateLimited {
            code, retry_after, ..
        } => {
            let what = match *code {
                "too_many_guests" => "Von dieser Adresse kamen zu viele Gastkonten",
                "too_many_open_lobbies" => "Du hast zu viele offene Spiele in der Lobby",
                "too_many_games" => "Du hast zu viele Spiele angelegt",
                "too_many_scorepads" => "Du hast zu viele Spielblöcke angelegt",
                "too_many_commands" => "Du hast zu viele Züge in kurzer Zeit geschickt",
                "too_many_streams" => "Du hast zu viele Live-Verbindungen offen",
                "rate_limited" => "Zu viele Passwortversuche",
                "too_many_accounts" => "Von dieser Adresse wurden zu viele Konten angelegt",
                "too_many_mails" => "Es wurden zu viele Bestätigungs-E-Mails verschickt",
                _ => "Zu viele Anfragen",
            };
            format!("{what}; versuch es in {retry_after} s wieder.")
        }
        ApiError::Unavailable => format!(
            "Die Datenbank ist gerade nicht erreichbar; versuch es in {} s wieder.",
            crate::http::errors::RETRY_AFTER_UNAVAILABLE
        ),
        ApiError::Overloaded => format!(
            "Der Server prüft gerade sehr viele Passwörter; versuch es in {} s wieder.",
            crate::http::errors::RETRY_AFTER_OVERLOADED
        ),
        ApiError::MailUnavailable => {
            "Die E-Mail ließ sich nicht verschicken; versuch es später noch einmal.".into()
        }
        ApiError::MethodNotAllowed { allow } => {
            format!("Diese Adresse beantwortet nur {allow}.")
        }
        ApiError::Internal(_) => "Interner Fehler.".into(),
    }
}

/// "Das Spiel", "Der Spieler", … for a resource named in English.
fn thing(what: &str) -> &'static str {
    match what {
        "game" => "Das Spiel",
        "tournament" => "Das Turnier",
        "player" => "Der Spieler",
        "webhook" => "Der Webhook",
        "push subscription" => "Das Push-Abo",
        "score pad" => "Der Spielblock",
        "invite" => "Die Einladung",
        "ruleset" => "Das Regelwerk",
        "route" => "Die Adresse",
        "verification link" => "Der Bestätigungslink (unbekannt, benutzt oder abgelaufen)",
        _ => "Das Gesuchte",
    }
}

/// The German detail of a rule's refusal.
fn rule_detail(rule: &RuleError) -> String {
    match rule {
        RuleError::InvalidOptions(why) => format!("Ungültige Optionen: {why}"),
        RuleError::UnsupportedOption(why) => {
            format!("Diese Option wird noch nicht gespielt: {why}")
        }
        RuleError::InvalidDeal(why) => format!("Ungültige vorbereitete Verteilung: {why}"),
        RuleError::NotInLobby => "Das Spiel ist nicht mehr in der Lobby.".into(),
        RuleError::GameNotActive => "Das Spiel läuft nicht.".into(),
        RuleError::AlreadySeated => "Du sitzt schon an diesem Tisch.".into(),
        RuleError::GameFull => "Alle Plätze sind besetzt.".into(),
        RuleError::NotAPlayer => "Du spielst in diesem Spiel nicht mit.".into(),
        RuleError::NotHost => "Das darf nur, wer das Spiel eröffnet hat.".into(),
        RuleError::HostCannotLeave => {
            "Wer das Spiel eröffnet hat, kann die Lobby nicht verlassen.".into()
        }
        RuleError::InvalidSeat { seat } => format!("Platz {seat} kann nicht geräumt werden."),
        RuleError::SeatsNotFilled => "Noch sind nicht alle Plätze besetzt.".into(),
        RuleError::NotYourTurn { action } => {
            format!("Du bist nicht an der Reihe ({action}).")
        }
        RuleError::CardNotInHand { card } => {
            format!("Die Karte {card} hast du nicht auf der Hand.")
        }
        RuleError::NoSuchRow { row } => format!("Eine Reihe {row} gibt es nicht."),
        RuleError::Resigned => "Du hast dieses Spiel aufgegeben.".into(),
        RuleError::CardNotTaken { card } => {
            format!("Die Karte {card} ist nicht unter den Karten, die du genommen hast.")
        }
        RuleError::CardNotAvailable { card } => {
            format!("Die Karte {card} liegt nicht in der offenen Auswahl.")
        }
        RuleError::NoChips => "Du hast keine Chips mehr: Nimm die Karte.".into(),
        RuleError::UnknownCommand { command } => {
            format!("{command} ist in diesem Spiel kein Zug.")
        }
        RuleError::InvalidTimeControl(why) => format!("Ungültige Bedenkzeit: {why}"),
        RuleError::NoTimeControl => "Dieses Spiel hat keine Uhren.".into(),
        RuleError::NotFlagged { seat } => {
            format!("Die Uhr von Platz {seat} ist nicht abgelaufen.")
        }
        RuleError::PauseNotAllowed => "Nur Fernpartien können pausiert werden.".into(),
        RuleError::PauseAlreadyProposed => "Eine Pause ist schon vorgeschlagen.".into(),
        RuleError::NoPauseProposed => "Es ist keine Pause vorgeschlagen.".into(),
        RuleError::PauseAlreadyAccepted => "Du hast der Pause schon zugestimmt.".into(),
        RuleError::NotPaused => "Die Uhren sind nicht angehalten.".into(),
        RuleError::InvalidTournament(why) => format!("Ungültiges Turnier: {why}"),
        RuleError::TournamentNotOpen => "Das Turnier nimmt niemanden mehr auf.".into(),
        RuleError::AlreadyJoined => "Du bist schon in diesem Turnier.".into(),
        RuleError::TournamentFull => "Das Turnier ist voll.".into(),
        RuleError::NotJoined => "Du bist nicht in diesem Turnier.".into(),
        RuleError::TooFewPlayers => {
            "Ein Turnier braucht mindestens zwei Personen, um zu beginnen.".into()
        }
    }
}

/// The German detail of a score pad's refusal.
fn pad_detail(pad: &PadError) -> String {
    match pad {
        PadError::InvalidPlayers(why) => format!("Ungültige Spieler: {why}"),
        PadError::InvalidEnd(why) => format!("Ungültiges Spielende: {why}"),
        PadError::WrongNumberOfScores { expected, got } => format!(
            "Eine Runde braucht {expected} Einträge, einen je Spieler; gekommen sind {got}."
        ),
        PadError::ImpossibleRound(why) => super::rounds::sentence(why, super::Lang::De),
        PadError::PadFinished => "Der Block ist abgeschlossen; nimm die letzte Runde zurück, \
                                  um sie zu korrigieren."
            .into(),
        PadError::NoRoundToTakeBack => "Es ist noch keine Runde eingetragen.".into(),
    }
}
