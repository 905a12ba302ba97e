//! Schema evolution: stored events are never rewritten; older payload versions are
//! brought up to the current one on read, by pure functions, one version at a time.
//!
//! Every event row carries its type and `schema_version`. The current version is
//! [`crate::service::EVENT_SCHEMA_VERSION`] (1). The chain below holds one link so far:
//! schema 0 of `card_placed` had no `chosen` flag (a taken row was always forced); no
//! production row has schema 0 — the link exists to keep the mechanism exercised, and a
//! test inserts such a row with raw SQL.

use serde_json::Value;

/// The payload of an event of `event_type` stored with `version`, in the current schema.
#[must_use]
pub fn upcast(event_type: &str, version: i32, mut data: Value) -> Value {
    let mut v = version;
    while v < crate::service::EVENT_SCHEMA_VERSION {
        data = step(event_type, v, data);
        v += 1;
    }
    data
}

/// One link of the chain: version `from` to `from + 1`.
fn step(event_type: &str, from: i32, mut data: Value) -> Value {
    if let (0, "card_placed", Some(object)) = (from, event_type, data.as_object_mut()) {
        object.entry("chosen").or_insert(Value::Bool(false));
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn card_placed_v0_gains_chosen_false() {
        let old = json!({ "seat": 1, "card": 7, "row": 0, "taken": [] });
        assert_eq!(upcast("card_placed", 0, old)["chosen"], json!(false));
    }

    #[test]
    fn current_payloads_pass_unchanged() {
        let now = json!({ "seat": 1, "card": 7, "row": 0, "taken": [3], "chosen": true });
        assert_eq!(upcast("card_placed", 1, now.clone()), now);
    }
}
