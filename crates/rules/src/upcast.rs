//! Event schemas: the payload version of each event type that this build writes, and the
//! upcasters that bring older stored payloads up to it.
//!
//! Stored events are never rewritten. Every stored event carries its type and the schema
//! version it was written with; reading goes through [`decode`], which applies one pure
//! link per version ([`upcast`]) and then deserialises. The server, the analysts' feed and
//! archive and the corpus replay all read through this one chain.
//!
//! To change an event's payload: bump its number in [`Event::schema_version_of`], add the
//! link from the old version in `step` (with a test), and keep the old form readable.
//! The links so far: schema 0 of `card_placed` had no `chosen` flag (a taken row was
//! always forced; no stored row has schema 0, the link keeps the mechanism exercised), and
//! schema 1 of `seat_taken` carried the person's display name, which schema 2 dropped:
//! events refer to people by account id only, so a renamed or deleted account's name is
//! never read from the log (the stored rows of schema 1 keep it; nothing serves it).

use serde_json::Value;

use crate::model::Event;

impl Event {
    /// The payload schema this build writes for events of type `type_name`, or `None` for
    /// a type it does not know.
    #[must_use]
    pub fn schema_version_of(type_name: &str) -> Option<i32> {
        Some(match type_name {
            // 0: no `chosen` flag.
            "card_placed" => 1,
            // 1: carried the person's display `name` (events name accounts by id only).
            "seat_taken" => 2,
            "game_created"
            | "move_deadline_set"
            | "deadlines_set"
            | "seed_recorded"
            | "deal_prepared"
            | "seat_left"
            | "bot_added"
            | "seat_removed"
            | "game_started"
            | "round_started"
            | "hand_dealt"
            | "card_selected"
            | "selection_made"
            | "cards_revealed"
            | "draft_started"
            | "card_drafted"
            | "card_kept"
            | "nos_game_started"
            | "draw_pile_set"
            | "card_revealed"
            | "passed"
            | "card_taken"
            | "nos_game_ended"
            | "round_ended"
            | "game_finished"
            | "seat_resigned"
            | "visibility_set"
            | "reservations_released"
            | "rematch_created"
            | "seed_revealed"
            | "time_control_set"
            | "clocks_set"
            | "clock_ran_out"
            | "seat_handed_to_bot"
            | "vacation_spent"
            | "pause_proposed"
            | "pause_accepted"
            | "pause_declined"
            | "clocks_paused"
            | "clocks_resumed" => 1,
            _ => return None,
        })
    }

    /// The payload schema this build writes for this event. The match names every event
    /// type, so a new one does not compile until it has a version; the server's audience
    /// test checks that [`Event::schema_version_of`] says the same for every type.
    #[must_use]
    pub fn schema_version(&self) -> i32 {
        match self {
            Self::CardPlaced { .. } => 1,
            Self::SeatTaken { .. } => 2,
            Self::GameCreated(_)
            | Self::MoveDeadlineSet { .. }
            | Self::DeadlinesSet { .. }
            | Self::SeedRecorded { .. }
            | Self::DealPrepared { .. }
            | Self::SeatLeft { .. }
            | Self::BotAdded { .. }
            | Self::SeatRemoved { .. }
            | Self::GameStarted {}
            | Self::RoundStarted { .. }
            | Self::HandDealt { .. }
            | Self::CardSelected { .. }
            | Self::SelectionMade { .. }
            | Self::CardsRevealed { .. }
            | Self::DraftStarted { .. }
            | Self::CardDrafted { .. }
            | Self::CardKept { .. }
            | Self::NosGameStarted { .. }
            | Self::DrawPileSet { .. }
            | Self::CardRevealed { .. }
            | Self::Passed { .. }
            | Self::CardTaken { .. }
            | Self::NosGameEnded { .. }
            | Self::RoundEnded { .. }
            | Self::GameFinished { .. }
            | Self::SeatResigned { .. }
            | Self::VisibilitySet { .. }
            | Self::ReservationsReleased {}
            | Self::RematchCreated { .. }
            | Self::SeedRevealed {}
            | Self::TimeControlSet { .. }
            | Self::ClocksSet(_)
            | Self::ClockRanOut { .. }
            | Self::SeatHandedToBot { .. }
            | Self::VacationSpent { .. }
            | Self::PauseProposed { .. }
            | Self::PauseAccepted { .. }
            | Self::PauseDeclined { .. }
            | Self::ClocksPaused {}
            | Self::ClocksResumed { .. } => 1,
        }
    }
}

/// The payload of an event of `event_type` stored with `version`, in the current schema.
#[must_use]
pub fn upcast(event_type: &str, version: i32, mut data: Value) -> Value {
    let current = Event::schema_version_of(event_type).unwrap_or(version);
    let mut v = version;
    while v < current {
        data = step(event_type, v, data);
        v += 1;
    }
    data
}

/// One link of the chain: version `from` to `from + 1`.
fn step(event_type: &str, from: i32, mut data: Value) -> Value {
    match (from, event_type, data.as_object_mut()) {
        (0, "card_placed", Some(object)) => {
            object.entry("chosen").or_insert(Value::Bool(false));
        }
        (1, "seat_taken", Some(object)) => {
            object.remove("name");
        }
        _ => {}
    }
    data
}

/// A stored event, upcast and deserialised.
///
/// # Errors
/// A payload that does not deserialise even after upcasting (an unknown type included).
pub fn decode(event_type: &str, version: i32, data: Value) -> Result<Event, serde_json::Error> {
    let data = upcast(event_type, version, data);
    tagged(event_type, &data)
}

/// [`decode`] of a borrowed payload: a payload at the current version is deserialised
/// where it lies, without a copy (an older one is copied to be upcast).
///
/// # Errors
/// As [`decode`].
pub fn decode_ref(
    event_type: &str,
    version: i32,
    data: &Value,
) -> Result<Event, serde_json::Error> {
    if Event::schema_version_of(event_type).is_none_or(|current| version >= current) {
        tagged(event_type, data)
    } else {
        decode(event_type, version, data.clone())
    }
}

/// Deserialises the event of type `event_type` from its payload: as the sequence
/// `[type, data]`, which serde's adjacently tagged enums also read. Read that way the tag
/// comes first and the payload is deserialised straight into its variant; read from a map
/// `{"data", "type"}` (in that order: `serde_json`'s maps sort their keys) serde first
/// buffers the whole payload until it knows the type.
fn tagged(event_type: &str, data: &Value) -> Result<Event, serde_json::Error> {
    use serde::Deserialize;
    use serde::de::value::SeqAccessDeserializer;
    Event::deserialize(SeqAccessDeserializer::new(TypeThenData {
        event_type: Some(event_type),
        data: Some(data),
    }))
}

/// The sequence `[type, data]` of one event (see [`tagged`]).
struct TypeThenData<'a> {
    event_type: Option<&'a str>,
    data: Option<&'a Value>,
}

impl<'de> serde::de::SeqAccess<'de> for TypeThenData<'de> {
    type Error = serde_json::Error;

    fn next_element_seed<T: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        use serde::de::IntoDeserializer;
        if let Some(event_type) = self.event_type.take() {
            return seed.deserialize(event_type.into_deserializer()).map(Some);
        }
        match self.data.take() {
            Some(data) => seed.deserialize(data).map(Some),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    /// Read as `[type, data]` (borrowed or owned), every event of the recorded games is
    /// what the `{"type", "data"}` form it is serialised as reads back to; an unknown type
    /// and a payload of the wrong shape are refused either way.
    #[test]
    fn events_read_as_type_then_data_are_what_their_serialised_form_reads() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        let mut read = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let file: Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            for e in file["events"].as_array().unwrap() {
                let event: Event =
                    serde_json::from_value(json!({ "type": e["type"], "data": e["data"] }))
                        .unwrap();
                let serialised = serde_json::to_value(&event).unwrap();
                let (kind, data) = (serialised["type"].as_str().unwrap(), &serialised["data"]);
                let current = Event::schema_version_of(kind).unwrap();
                assert_eq!(decode_ref(kind, current, data).unwrap(), event);
                assert_eq!(decode(kind, current, data.clone()).unwrap(), event);
                read += 1;
            }
        }
        assert!(read > 1_000, "{read} events");
        assert!(decode_ref("no_such_event", 1, &json!({})).is_err());
        assert!(decode_ref("card_placed", 1, &json!({ "seat": "one" })).is_err());
    }

    #[test]
    fn card_placed_v0_gains_chosen_false() {
        let old = json!({ "seat": 1, "card": 7, "row": 0, "taken": [] });
        assert_eq!(
            upcast("card_placed", 0, old.clone())["chosen"],
            json!(false)
        );
        let event = decode("card_placed", 0, old).unwrap();
        assert!(matches!(event, Event::CardPlaced { chosen: false, .. }));
    }

    #[test]
    fn seat_taken_v1_loses_the_name() {
        let old = json!({ "seat": 2, "account": "a-1", "name": "Anna" });
        assert_eq!(
            upcast("seat_taken", 1, old.clone()),
            json!({ "seat": 2, "account": "a-1" })
        );
        let event = decode("seat_taken", 1, old).unwrap();
        assert_eq!(
            event,
            Event::SeatTaken {
                seat: 2,
                account: "a-1".into()
            }
        );
        assert_eq!(Event::schema_version_of("seat_taken"), Some(2));
    }

    #[test]
    fn current_payloads_pass_unchanged() {
        let now = json!({ "seat": 1, "card": 7, "row": 0, "taken": [3], "chosen": true });
        assert_eq!(upcast("card_placed", 1, now.clone()), now);
    }

    #[test]
    fn every_event_written_names_its_schema() {
        let event = Event::SelectionMade { seat: 0 };
        assert_eq!(event.schema_version(), 1);
        assert_eq!(Event::schema_version_of("no_such_event"), None);
    }
}
