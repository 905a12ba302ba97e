//! Store operations of the score pads, written once and compiled for both connection types,
//! and the [`Store`] entry points that hand them out.
//!
//! A pad is an index row in `scorepads` (owner, ruleset, version) and an append-only stream
//! in `scorepad_events`, appended with the same compare-and-set on the version as games.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::StoreError;
use super::json::JsonValue;
use super::schema::{scorepad_events, scorepads};
use super::tx::{Tx, conflict_or, on};

/// A pad's index row.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = scorepads)]
pub struct PadRow {
    /// Id (UUID text).
    pub id: String,
    /// The account that created the pad and alone may see it.
    pub owner: String,
    /// Ruleset name.
    pub ruleset: String,
    /// Number of events.
    pub version: i32,
    /// Creation time (UTC).
    pub created_at: NaiveDateTime,
}

/// A pad event to append.
#[derive(Debug, Clone)]
pub struct NewPadEvent {
    /// Type name.
    pub event_type: String,
    /// Payload schema version.
    pub schema_version: i32,
    /// The event's payload, at `schema_version`.
    pub data: serde_json::Value,
}

/// A pad event as stored.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = scorepad_events)]
pub struct StoredPadEvent {
    /// Global position.
    pub position: i64,
    /// The score pad's id.
    pub pad_id: String,
    /// Position in the pad's stream, from 1.
    pub seq: i32,
    /// Type name.
    pub event_type: String,
    /// Payload schema version.
    pub schema_version: i32,
    /// The payload as written, at `schema_version`.
    pub data: JsonValue,
    /// Time of the append (UTC).
    pub recorded_at: NaiveDateTime,
}

#[derive(Insertable)]
#[diesel(table_name = scorepad_events)]
struct PadEventInsert<'a> {
    pad_id: &'a str,
    seq: i32,
    event_type: &'a str,
    schema_version: i32,
    data: JsonValue,
    recorded_at: NaiveDateTime,
}

fn rows<'a>(
    pad: &'a str,
    expected: i32,
    events: &'a [NewPadEvent],
    at: NaiveDateTime,
) -> Vec<PadEventInsert<'a>> {
    events
        .iter()
        .zip(expected + 1..)
        .map(|(e, seq)| PadEventInsert {
            pad_id: pad,
            seq,
            event_type: &e.event_type,
            schema_version: e.schema_version,
            data: JsonValue(e.data.clone()),
            recorded_at: at,
        })
        .collect()
}

impl Tx<'_> {
    /// Creates a pad's index row and appends its first events.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the id exists, database failure.
    pub fn create_pad(&mut self, row: &PadRow, events: &[NewPadEvent]) -> Result<(), StoreError> {
        on!(self, |c| {
            diesel::insert_into(scorepads::table)
                .values(row.clone())
                .execute(c)
                .map_err(conflict_or)?;
            diesel::insert_into(scorepad_events::table)
                .values(rows(&row.id, 0, events, self.now))
                .execute(c)
                .map_err(conflict_or)?;
            Ok(())
        })
    }

    /// The pad's index row.
    ///
    /// # Errors
    /// Database failure.
    pub fn pad(&mut self, id: &str) -> Result<Option<PadRow>, StoreError> {
        on!(self, |c| {
            Ok(scorepads::table
                .find(id)
                .select(PadRow::as_select())
                .first(c)
                .optional()?)
        })
    }

    /// All events of a pad in order.
    ///
    /// # Errors
    /// Database failure.
    pub fn load_pad_events(&mut self, id: &str) -> Result<Vec<StoredPadEvent>, StoreError> {
        on!(self, |c| {
            Ok(scorepad_events::table
                .filter(scorepad_events::pad_id.eq(id))
                .order(scorepad_events::seq.asc())
                .select(StoredPadEvent::as_select())
                .load(c)?)
        })
    }

    /// Appends events at `expected + 1 …` if the pad is still at version `expected`.
    /// [`StoreError::Conflict`] when another write came first; nothing is written then.
    ///
    /// # Errors
    /// Conflict, database failure.
    pub fn append_pad(
        &mut self,
        id: &str,
        expected: i32,
        events: &[NewPadEvent],
    ) -> Result<(), StoreError> {
        on!(self, |c| {
            let new_version = expected + i32::try_from(events.len()).unwrap_or(i32::MAX);
            // Compare-and-set on the index row before any event is written, as for games:
            // a concurrent writer holds the row lock until commit, after which this
            // update matches nothing.
            let updated = diesel::update(
                scorepads::table
                    .find(id)
                    .filter(scorepads::version.eq(expected)),
            )
            .set(scorepads::version.eq(new_version))
            .execute(c)?;
            if updated != 1 {
                return Err(StoreError::Conflict);
            }
            diesel::insert_into(scorepad_events::table)
                .values(rows(id, expected, events, self.now))
                .execute(c)
                .map_err(conflict_or)?;
            Ok(())
        })
    }
}
