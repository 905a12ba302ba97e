//! Score-pad use cases: create a pad, show it, record a round, take the last round back.
//! Load the pad's events → decide → append with a compare-and-set on its version; a lost race
//! is decided again unless the client pinned a version with `If-Match`.
//!
//! Pads belong to the account that created them: to anyone else a pad does not exist.
//! Blocking: call from `web::block`. Knows no HTTP; returns [`PadServiceError`].

use serde::Serialize;
use serde_json::Value;

use rules::pad::{NewPad, Pad, PadCommand, PadError, PadEvent, PadView};

use crate::contention::Contention;
use crate::store::{NewPadEvent, PadRow, Store, StoreError, StoredPadEvent, Tx};

/// Schema version of every pad event payload written by this build.
pub const PAD_EVENT_SCHEMA_VERSION: i32 = 1;

/// How often a command without `If-Match` is decided again after losing a race.
const MAX_ATTEMPTS: u32 = 16;

/// Why a score-pad use case failed.
#[derive(Debug, thiserror::Error)]
pub enum PadServiceError {
    /// No such pad, or not the caller's.
    #[error("score pad not found")]
    NotFound,
    /// The pad refuses the command.
    #[error(transparent)]
    Pad(#[from] PadError),
    /// Another write came first (`If-Match` named another version, or retries ran out).
    #[error(transparent)]
    Contention(#[from] Contention),
    /// Over a rate limit (pads per hour, commands per minute).
    #[error(transparent)]
    Limit(#[from] crate::limits::LimitError),
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An event could not be encoded for the store.
    #[error("a score-pad event could not be encoded")]
    Encode(#[source] serde_json::Error),
    /// A stored event could not be read.
    #[error("stored event {seq} of score pad {pad} is unreadable: {source}")]
    Corrupt {
        /// The score pad's id.
        pad: String,
        /// The event's position in the pad's stream.
        seq: i32,
        /// Why its payload did not decode.
        source: serde_json::Error,
    },
}

/// A score pad as its owner sees it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PadBody {
    /// The score pad's id (a UUID), as in `/v1/scorepads/{id}`.
    pub id: String,
    /// Number of events in the pad's stream (also the `ETag`).
    pub version: i32,
    /// Creation time (UTC, RFC 3339).
    #[schema(format = DateTime)]
    pub created_at: String,
    /// Players, rounds, totals, standings, `finished`, `winners`.
    #[serde(flatten)]
    pub view: PadView,
}

/// Encodes a pad event for the store: its type name and its `data` object.
fn encode(event: &PadEvent) -> Result<NewPadEvent, PadServiceError> {
    let mut value = serde_json::to_value(event).map_err(PadServiceError::Encode)?;
    let data = value
        .get_mut("data")
        .map(Value::take)
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    Ok(NewPadEvent {
        event_type: event.type_name().to_owned(),
        schema_version: PAD_EVENT_SCHEMA_VERSION,
        data,
    })
}

fn encode_all(events: &[PadEvent]) -> Result<Vec<NewPadEvent>, PadServiceError> {
    events.iter().map(encode).collect()
}

/// Decodes a stored pad event (schema version 1 is the only one so far).
fn decode(stored: &StoredPadEvent) -> Result<PadEvent, PadServiceError> {
    let value = serde_json::json!({ "type": stored.event_type, "data": stored.data.0 });
    serde_json::from_value(value).map_err(|source| PadServiceError::Corrupt {
        pad: stored.pad_id.clone(),
        seq: stored.seq,
        source,
    })
}

fn version_of(stored: &[StoredPadEvent]) -> i32 {
    stored.last().map_or(0, |e| e.seq)
}

fn body(row: &PadRow, pad: &Pad, version: i32) -> PadBody {
    PadBody {
        id: row.id.clone(),
        version,
        created_at: row.created_at.and_utc().to_rfc3339(),
        view: pad.view(),
    }
}

/// The caller's pad: its row, its state and its version. Another owner's pad is
/// [`PadServiceError::NotFound`], exactly like a missing one.
fn load(tx: &mut Tx<'_>, id: &str, caller: &str) -> Result<(PadRow, Pad, i32), PadServiceError> {
    let row = tx
        .pad(id)?
        .filter(|r| r.owner == caller)
        .ok_or(PadServiceError::NotFound)?;
    let stored = tx.load_pad_events(id)?;
    let events = stored.iter().map(decode).collect::<Result<Vec<_>, _>>()?;
    let pad = Pad::from_events(&events).ok_or_else(|| {
        tracing::error!(pad = id, "score pad stream does not start with pad_created");
        PadServiceError::NotFound
    })?;
    Ok((row, pad, version_of(&stored)))
}

/// The score-pad service.
#[derive(Clone)]
pub struct Pads {
    store: Store,
    limits: crate::limits::Limits,
    /// Where a new pad's creation time comes from.
    clock: crate::clock::Clock,
}

impl Pads {
    /// The service over a store, without limits.
    #[must_use]
    pub fn new(store: Store) -> Self {
        Self {
            limits: crate::limits::Limits::new(store.clone(), crate::limits::LimitConfig::NONE),
            clock: crate::clock::Clock::system(),
            store,
        }
    }

    /// The same service reading the time from `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: crate::clock::Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The same service counting new pads ([`crate::limits::Limits::pad`]) and rounds
    /// recorded or taken back ([`crate::limits::Limits::command`]) against `limits`.
    #[must_use]
    pub fn with_limits(mut self, limits: crate::limits::Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Creates a pad owned by `owner`.
    ///
    /// # Errors
    /// Invalid players or end, over the limit, storage failure.
    pub fn create(&self, owner: &str, new: NewPad) -> Result<PadBody, PadServiceError> {
        let store = &self.store;
        let ruleset = new.ruleset;
        let events = Pad::create(new)?;
        self.limits.pad(owner)?;
        let pad = Pad::from_events(&events).ok_or(PadServiceError::NotFound)?;
        let encoded = encode_all(&events)?;
        let row = PadRow {
            id: uuid::Uuid::now_v7().to_string(),
            owner: owner.to_owned(),
            ruleset: ruleset.name().to_owned(),
            version: i32::try_from(encoded.len()).unwrap_or(i32::MAX),
            // Microseconds: what PostgreSQL's TIMESTAMP keeps, so the answer to the creation
            // shows the same time as every later read.
            created_at: chrono::SubsecRound::trunc_subsecs(self.clock.naive(), 6),
        };
        store.write(|tx| tx.create_pad(&row, &encoded).map_err(PadServiceError::from))?;
        Ok(body(&row, &pad, row.version))
    }

    /// The caller's pad.
    ///
    /// # Errors
    /// Unknown pad (or another account's), storage failure.
    pub fn view(&self, id: &str, caller: &str) -> Result<PadBody, PadServiceError> {
        self.store.read(|tx| {
            let (row, pad, version) = load(tx, id, caller)?;
            Ok(body(&row, &pad, version))
        })
    }

    /// Runs a command on the caller's pad; retried on a lost race when `if_match` is `None`.
    /// Each call counts as one of the caller's commands.
    ///
    /// # Errors
    /// Over the command limit, unknown pad, a refused command, a version conflict, storage
    /// failure.
    pub fn execute(
        &self,
        id: &str,
        caller: &str,
        command: &PadCommand,
        if_match: Option<i32>,
    ) -> Result<PadBody, PadServiceError> {
        self.limits.command(caller)?;
        let store = &self.store;
        for attempt in 0..MAX_ATTEMPTS {
            match store.write(|tx| attempt_command(tx, id, caller, command, if_match)) {
                Err(PadServiceError::Store(StoreError::Conflict)) => {
                    if let Some(expected) = if_match {
                        let current = store
                            .read(|tx| load(tx, id, caller).map(|(_, _, v)| v))
                            .unwrap_or(expected);
                        return Err(Contention::VersionConflict { current }.into());
                    }
                    tracing::debug!(pad = id, attempt, "lost a race; deciding again");
                    let jitter = rand::random_range(1..=4u64) * u64::from(attempt + 1);
                    std::thread::sleep(std::time::Duration::from_millis(jitter));
                }
                other => return other,
            }
        }
        Err(Contention::Busy.into())
    }
}

fn attempt_command(
    tx: &mut Tx<'_>,
    id: &str,
    caller: &str,
    command: &PadCommand,
    if_match: Option<i32>,
) -> Result<PadBody, PadServiceError> {
    let (row, mut pad, version) = load(tx, id, caller)?;
    if let Some(expected) = if_match
        && expected != version
    {
        return Err(Contention::VersionConflict { current: version }.into());
    }
    let events = pad.decide(command)?;
    events.iter().for_each(|e| pad.apply(e));
    let encoded = encode_all(&events)?;
    tx.append_pad(id, version, &encoded)?;
    let new_version = version + i32::try_from(encoded.len()).unwrap_or(i32::MAX);
    Ok(body(&row, &pad, new_version))
}
