//! Shapes the generated OpenAPI document for client generators.
//!
//! [`ProblemResponses`] declares every error an operation can answer as
//! `application/problem+json`, adding the ones every operation of a kind shares (a body's
//! 400/408/413/415/422, a query's 400, a token's 401, the database's 503) so the document
//! lists every status the server sends.
//!
//! utoipa writes a tagged enum as an unnamed `oneOf` of inline objects, which generators
//! turn into `any` or into numbered names (`Type1`, `Data12`). [`NamedVariants`] names every
//! part a client generator makes a type of, so the generated names read like the API:
//!
//! - each variant of `Command` and `Event` becomes a component (`PlayCardCommand`,
//!   `CardPlacedEvent`), its one-value `type` enum one too (`PlayCardCommandType`), and an
//!   event's `data` object one more (`CardPlacedData`); the unions get a `discriminator` on
//!   `type` with an explicit mapping;
//! - the envelopes that carry an event (`EventItem`, `FeedItem`, `ArchivedEvent`) become a
//!   `oneOf` of one wrapper per event type, each `allOf` of the envelope's own fields
//!   (`EventItemBase`) and the event (`CardPlacedEventItem`), again with a mapping; a
//!   generator that cannot take `allOf` of a union (openapi-python-client) types them all;
//! - enum values that are not identifiers (`6-nimmt`) get names (`x-enum-varnames`).

use serde_json::{Map, Value, json};
use utoipa::Modify;

/// The [`Modify`] that names the parts of unions and enums; see the module docs.
pub struct NamedVariants;

/// The envelopes that carry an event, each with the name of its own fields' schema.
const ENVELOPES: [(&str, &str); 3] = [
    ("EventItem", "EventItemBase"),
    ("FeedItem", "FeedItemBase"),
    ("ArchivedEvent", "ArchivedEventBase"),
];

/// Names for enum values that are not identifiers, in the order of the values.
const ENUM_VALUE_NAMES: [(&str, &[&str]); 1] = [(
    "Ruleset",
    &["SIX_NIMMT", "ELEVEN_NIMMT", "X_NIMMT", "NIMM_ODER_SCHIEB"],
)];

impl Modify for NamedVariants {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let Ok(mut doc) = serde_json::to_value(&*openapi) else {
            return;
        };
        if let Some(schemas) = doc
            .pointer_mut("/components/schemas")
            .and_then(Value::as_object_mut)
        {
            name_variants(schemas, "Command", "Command", true, "");
            name_variants(schemas, "Event", "Event", false, "");
            // Tournament events share tags with game events (`round_started`): their payloads
            // get names of their own.
            name_variants(
                schemas,
                "TournamentEvent",
                "TournamentEvent",
                false,
                "Tournament",
            );
            name_command_names(schemas);
            document_extras(schemas);
            for (envelope, base) in ENVELOPES {
                wrap_events(schemas, envelope, base, "Event");
            }
            for (envelope, base) in [
                ("TournamentEventItem", "TournamentEventItemBase"),
                ("TournamentFeedItem", "TournamentFeedItemBase"),
            ] {
                wrap_events(schemas, envelope, base, "TournamentEvent");
            }
            for (name, names) in ENUM_VALUE_NAMES {
                name_enum_values(schemas, name, names);
            }
            name_keyed_variants(schemas);
        }
        // A document that does not read back unchanged is left as utoipa made it; the
        // committed-file test shows the difference.
        if let Ok(shaped) = serde_json::from_value(doc) {
            *openapi = shaped;
        }
    }
}

/// The [`Modify`] that declares problem responses; see the module docs.
pub struct ProblemResponses;

impl Modify for ProblemResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let Ok(mut doc) = serde_json::to_value(&*openapi) else {
            return;
        };
        if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
            for (path, item) in paths.iter_mut() {
                let Some(operations) = item.as_object_mut() else {
                    continue;
                };
                for operation in operations.values_mut() {
                    declare_problems(path, operation);
                }
            }
        }
        if let Ok(shaped) = serde_json::from_value(doc) {
            *openapi = shaped;
        }
    }
}

/// The syntax of the headers several operations share, so a generated request is a valid
/// one (and a client generator can check it).
fn constrain_shared_headers(operation: &mut Value) {
    let Some(params) = operation
        .get_mut("parameters")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for param in params {
        let pattern = match (param["in"].as_str(), param["name"].as_str()) {
            (Some("header"), Some("If-Match")) => "^(\"[0-9]{1,9}\"|[0-9]{1,9}|\\*)$",
            (Some("header"), Some("Idempotency-Key")) => "^[!-~]{1,200}$",
            (Some("header"), Some("Last-Event-ID")) => "^[0-9]{1,9}$",
            _ => continue,
        };
        param["schema"] = json!({ "type": "string", "pattern": pattern });
    }
}

/// Adds the shared error responses of `operation` and makes every error problem+json.
/// OpenAPI requires a `description` on every response; utoipa leaves it out where a
/// success response names only its body. Those get the status's meaning and the body's
/// schema ("Created: `GuestToken`").
fn describe_responses(operation: &mut Value) {
    let Some(responses) = operation
        .get_mut("responses")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for (status, response) in responses.iter_mut() {
        let Some(response) = response.as_object_mut() else {
            continue;
        };
        if response
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| !d.is_empty())
        {
            continue;
        }
        let meaning = status
            .parse::<u16>()
            .ok()
            .and_then(|s| actix_web::http::StatusCode::from_u16(s).ok())
            .and_then(|s| s.canonical_reason())
            .unwrap_or("The answer");
        let body = response
            .get("content")
            .and_then(Value::as_object)
            .and_then(|c| c.values().next())
            .and_then(|m| m["schema"]["$ref"].as_str())
            .and_then(|r| r.rsplit('/').next())
            .map(str::to_owned);
        let text = match body {
            Some(name) => format!("{meaning}: `{name}`"),
            None => meaning.to_owned(),
        };
        response.insert("description".into(), Value::String(text));
    }
}

/// A `text/event-stream` body is a sequence of messages. Each is described the way
/// OpenAPI 3.2's `itemSchema` does (and schemathesis checks each message against `schema`):
/// an object of the message's fields, whose `data` is JSON text holding an `EventItem`
/// (`contentMediaType` and `contentSchema`), so a client decodes it with the generated type.
/// `x-item-schema` names that type for tools that look no further.
fn type_event_streams(operation: &mut Value) {
    let Some(responses) = operation
        .get_mut("responses")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for response in responses.values_mut() {
        if let Some(media) = response.pointer_mut("/content/text~1event-stream")
            && let Some(media) = media.as_object_mut()
        {
            media.insert(
                "schema".into(),
                json!({
                    "type": "object",
                    "description": "One server-sent event: `id: <seq>`, `event: <type>`, `data: <EventItem as JSON>`.",
                    "required": ["id", "event", "data"],
                    "properties": {
                        "id": { "type": "string", "description": "The event's `seq`: send it back as `Last-Event-ID` to resume." },
                        "event": { "type": "string", "description": "The event's `type`." },
                        "data": {
                            "type": "string",
                            "description": "The event as JSON.",
                            "contentMediaType": "application/json",
                            "contentSchema": component_ref("EventItem")
                        }
                    }
                }),
            );
            media.insert("x-item-schema".into(), component_ref("EventItem"));
        }
    }
}

fn declare_problems(path: &str, operation: &mut Value) {
    constrain_shared_headers(operation);
    describe_responses(operation);
    type_event_streams(operation);
    let public = operation
        .get("security")
        .and_then(Value::as_array)
        .is_some_and(|s| s.iter().any(|r| r.as_object().is_some_and(Map::is_empty)));
    let has_body = operation.get("requestBody").is_some();
    let params = operation
        .get("parameters")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let has_query = params.iter().any(|p| p["in"] == "query");
    let has_path = params.iter().any(|p| p["in"] == "path");
    let api = path.starts_with("/v1/");
    let mut shared: Vec<(&str, &str)> = Vec::new();
    if has_body {
        shared.extend([
            (
                "400",
                "`malformed_json`, `malformed_body`: the body is not the JSON it should be",
            ),
            ("408", "`request_timeout`: the body did not arrive in time"),
            ("413", "`payload_too_large`"),
            ("415", "`unsupported_media_type`: send `application/json`"),
            (
                "422",
                "`validation_failed`: well-formed JSON with invalid content",
            ),
        ]);
    }
    if has_query {
        shared.push(("400", "`invalid_query`: the query string does not parse"));
        shared.push(("422", "`validation_failed`: a query value out of range"));
    }
    if has_path {
        shared.push(("404", "`not_found`"));
    }
    if api && !public {
        shared.push((
            "401",
            "`unauthorized`: no, a bad or an expired token, or its account is gone",
        ));
    }
    if api {
        shared.push((
            "503",
            "`database_unavailable`: the database does not answer; retry after `Retry-After`",
        ));
    }
    let Some(responses) = operation
        .get_mut("responses")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for (status, description) in shared {
        match responses.get_mut(status) {
            Some(existing) => {
                // Keep the operation's own description; add the shared code unless named.
                let code = description.split('`').nth(1).unwrap_or(description);
                if let Some(own) = existing.get("description").and_then(Value::as_str)
                    && !own.contains(code)
                {
                    let merged = format!("{own}; {description}");
                    existing["description"] = Value::String(merged);
                }
            }
            None => {
                responses.insert(status.to_owned(), json!({ "description": description }));
            }
        }
    }
    if !responses.contains_key("default") {
        // What cannot be listed (a new limit, a proxy's answer): still a Problem.
        responses.insert(
            "default".to_owned(),
            json!({ "description": "any other problem, as `application/problem+json`" }),
        );
    }
    for (status, response) in responses.iter_mut() {
        if !(status.starts_with('4') || status.starts_with('5') || status == "default") {
            continue;
        }
        let schema = json!({ "$ref": "#/components/schemas/Problem" });
        response["content"] = json!({ "application/problem+json": { "schema": schema } });
    }
}

/// `play_card` → `PlayCard`.
fn pascal(tag: &str) -> String {
    tag.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

/// Moves each inline variant of the `oneOf` schema `name` into a component schema of its
/// own, names its `type` enum and its `data` object, and adds the discriminator.
fn name_variants(
    schemas: &mut Map<String, Value>,
    name: &str,
    suffix: &str,
    closed: bool,
    data_prefix: &str,
) {
    let Some(items) = schemas
        .get_mut(name)
        .and_then(|s| s.get_mut("oneOf"))
        .and_then(Value::as_array_mut)
        .map(std::mem::take)
    else {
        return;
    };
    let mut refs = Vec::new();
    let mut mapping = Map::new();
    for mut item in items {
        let tag = item
            .pointer("/properties/type/enum/0")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let Some(tag) = tag else {
            refs.push(item);
            continue;
        };
        let variant = format!("{}{suffix}", pascal(&tag));
        if let Some(object) = item.as_object_mut() {
            object.insert("title".into(), Value::String(variant.clone()));
            if closed {
                // Commands refuse unknown fields. (Events stay open: their envelopes add
                // fields through `allOf`, and deadline moves add `cause`.)
                object.insert("additionalProperties".into(), Value::Bool(false));
            }
        }
        if let Some(properties) = item.get_mut("properties").and_then(Value::as_object_mut) {
            let type_name = format!("{variant}Type");
            if let Some(own) = properties.insert("type".into(), component_ref(&type_name)) {
                schemas.insert(type_name, own);
            }
            let data_name = format!("{data_prefix}{}Data", pascal(&tag));
            let inline_data = properties
                .get("data")
                .is_some_and(|d| d.get("$ref").is_none());
            if inline_data
                && let Some(mut data) = properties.insert("data".into(), component_ref(&data_name))
            {
                if let Some(object) = data.as_object_mut() {
                    object.insert("title".into(), Value::String(data_name.clone()));
                    // `{}` (a game started): an object without fields, not any object.
                    if !object.contains_key("properties") {
                        object.insert("additionalProperties".into(), Value::Bool(false));
                    }
                }
                schemas.insert(data_name, data);
            }
        }
        let reference = format!("#/components/schemas/{variant}");
        schemas.insert(variant, item);
        mapping.insert(tag, Value::String(reference.clone()));
        refs.push(json!({ "$ref": reference }));
    }
    if let Some(schema) = schemas.get_mut(name).and_then(Value::as_object_mut) {
        schema.insert("oneOf".into(), Value::Array(refs));
        schema.insert(
            "discriminator".into(),
            json!({ "propertyName": "type", "mapping": mapping }),
        );
    }
}

/// The properties that hold a command's name (what is asked of a seat), as (schema,
/// property, whether it is a list).
const COMMAND_NAME_FIELDS: [(&str, &str, bool); 3] = [
    ("Awaiting", "action", false),
    ("SeatDeadline", "action", false),
    ("GameSummary", "your_actions", true),
];

/// Adds `CommandName`, the enum of the `Command` union's `type` values, and makes the
/// fields that name a command use it, so a client can switch over them.
fn name_command_names(schemas: &mut Map<String, Value>) {
    let names: Vec<Value> = schemas
        .get("Command")
        .and_then(|c| c.pointer("/discriminator/mapping"))
        .and_then(Value::as_object)
        .map(|m| m.keys().map(|k| Value::String(k.clone())).collect())
        .unwrap_or_default();
    if names.is_empty() {
        return;
    }
    schemas.insert(
        "CommandName".into(),
        json!({
            "type": "string",
            "description": "A command's `type`: what `awaiting` and deadlines ask of a seat.",
            "enum": names,
        }),
    );
    for (schema, field, list) in COMMAND_NAME_FIELDS {
        let Some(property) = schemas
            .get_mut(schema)
            .and_then(|s| s.pointer_mut(&format!("/properties/{field}")))
        else {
            continue;
        };
        let description = property.get("description").cloned();
        let mut typed = if list {
            json!({ "type": "array", "items": component_ref("CommandName") })
        } else {
            component_ref("CommandName")
        };
        if let (Some(object), Some(text)) = (typed.as_object_mut(), description) {
            object.insert("description".into(), text);
        }
        *property = typed;
    }
}

/// `{"$ref": "#/components/schemas/<name>"}`.
fn component_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// What the wire carries beyond the rules' types: `join` takes the `invite_code` of a
/// private game (the HTTP layer reads it), and events made for a seat whose deadline passed
/// carry `"cause": "deadline"` in their data.
fn document_extras(schemas: &mut Map<String, Value>) {
    if let Some(props) = schemas
        .get_mut("JoinCommand")
        .and_then(|j| j.get_mut("properties"))
        .and_then(Value::as_object_mut)
    {
        props.insert(
            "invite_code".into(),
            json!({ "type": "string", "description": "The invite code of a private game." }),
        );
    }
    let data: Vec<String> = event_mapping(schemas)
        .keys()
        .map(|tag| format!("{}Data", pascal(tag)))
        .collect();
    for name in data {
        if let Some(props) = schemas
            .get_mut(&name)
            .and_then(|s| s.get_mut("properties"))
            .and_then(Value::as_object_mut)
            .filter(|p| !p.is_empty())
        {
            props.insert(
                "cause".into(),
                json!({
                    "type": "string",
                    "enum": ["deadline"],
                    "description": "Present when the server made the move for a seat whose deadline passed."
                }),
            );
        }
    }
}

/// The `Event` union's discriminator mapping: event type → the event's schema reference.
fn event_mapping(schemas: &Map<String, Value>) -> Map<String, Value> {
    schemas
        .get("Event")
        .and_then(|e| e.pointer("/discriminator/mapping"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Turns the object schema `name` (its own fields plus an untyped `type` and `data`) into a
/// `oneOf` of one wrapper per variant of `union`: `<Type><name>` is `allOf` of `base` (the
/// envelope's own fields) and the variant, so `type` and `data` are typed together.
fn wrap_events(schemas: &mut Map<String, Value>, name: &str, base: &str, union: &str) {
    let Some(mut own) = schemas.remove(name) else {
        return;
    };
    if let Some(properties) = own.get_mut("properties").and_then(Value::as_object_mut) {
        properties.remove("type");
        properties.remove("data");
    }
    if let Some(required) = own.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|r| r != "type" && r != "data");
    }
    let description = own
        .as_object_mut()
        .and_then(|o| o.remove("description"))
        .unwrap_or(Value::Null);
    if let Some(object) = own.as_object_mut() {
        object.insert("title".into(), Value::String(base.to_owned()));
        object.insert(
            "description".into(),
            Value::String(format!("The fields every `{name}` has besides the event.")),
        );
    }
    schemas.insert(base.to_owned(), own);
    let variants = schemas
        .get(union)
        .and_then(|e| e.pointer("/discriminator/mapping"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut refs = Vec::new();
    let mut mapping = Map::new();
    for (tag, variant) in variants {
        let wrapper = format!("{}{name}", pascal(&tag));
        let summary = variant
            .as_str()
            .and_then(|r| r.rsplit('/').next())
            .and_then(|v| schemas.get(v))
            .and_then(|v| v.get("description"))
            .cloned()
            .unwrap_or(Value::Null);
        let mut schema = json!({
            "title": wrapper,
            "allOf": [component_ref(base), { "$ref": variant }],
        });
        if let (Some(object), Value::String(text)) = (schema.as_object_mut(), summary) {
            object.insert("description".into(), Value::String(text));
        }
        schemas.insert(wrapper.clone(), schema);
        let reference = format!("#/components/schemas/{wrapper}");
        mapping.insert(tag, Value::String(reference.clone()));
        refs.push(json!({ "$ref": reference }));
    }
    let mut schema = json!({
        "oneOf": refs,
        "discriminator": { "propertyName": "type", "mapping": mapping },
    });
    if let (Some(object), Value::String(text)) = (schema.as_object_mut(), description) {
        object.insert("description".into(), Value::String(text));
    }
    schemas.insert(name.to_owned(), schema);
}

/// Names the inline one-field object variants of every `oneOf` component after their field
/// (`EndCondition`'s `{points}` is `PointsEndCondition`), which generators would number.
fn name_keyed_variants(schemas: &mut Map<String, Value>) {
    let unions: Vec<String> = schemas
        .iter()
        .filter(|(_, s)| s.get("oneOf").is_some() && s.get("discriminator").is_none())
        .map(|(name, _)| name.clone())
        .collect();
    for union in unions {
        let mut named = Vec::new();
        if let Some(variants) = schemas
            .get_mut(&union)
            .and_then(|s| s.get_mut("oneOf"))
            .and_then(Value::as_array_mut)
        {
            for variant in variants.iter_mut() {
                let key = variant
                    .get("properties")
                    .and_then(Value::as_object)
                    .filter(|p| p.len() == 1 && variant["type"] == "object")
                    .and_then(|p| p.keys().next().cloned());
                if let Some(key) = key {
                    let name = format!("{}{union}", pascal(&key));
                    let mut schema = std::mem::replace(variant, component_ref(&name));
                    schema["title"] = Value::String(name.clone());
                    named.push((name, schema));
                }
            }
        }
        for (name, schema) in named {
            schemas.entry(name).or_insert(schema);
        }
    }
}

/// Adds `x-enum-varnames` (read by openapi-generator, openapi-python-client and others) to
/// the enum `name`, whose values would otherwise become `VALUE_0`, `VALUE_1`, ….
fn name_enum_values(schemas: &mut Map<String, Value>, name: &str, names: &[&str]) {
    let Some(schema) = schemas.get_mut(name).and_then(Value::as_object_mut) else {
        return;
    };
    let count = schema
        .get("enum")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    // A value added without a name leaves the enum unnamed (and the test that every such
    // enum is named fails) rather than misnamed.
    if count == names.len() {
        schema.insert("x-enum-varnames".into(), json!(names));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::pascal;
    use std::path::Path;

    /// The `Option` fields of the types the server sends (deriving `Serialize` and
    /// `ToSchema`) that the document would get wrong: one always sent (no
    /// `skip_serializing_if`) but not marked `required = true` — utoipa leaves every
    /// `Option` out of `required` — or one only ever left out but not `nullable = false`.
    fn misdeclared_options(dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                misdeclared_options(&path, out);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let mut derives = String::new();
            let mut in_type = false;
            let mut attributes: Vec<&str> = Vec::new();
            for (number, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.starts_with("#[derive") || line.starts_with("#[cfg_attr(feature") {
                    derives.push_str(line);
                }
                if !in_type {
                    if line.starts_with("pub struct ") || line.starts_with("struct ") {
                        in_type = derives.contains("Serialize")
                            && derives.contains("ToSchema")
                            && line.ends_with('{');
                        derives.clear();
                        attributes.clear();
                    } else if !line.starts_with("#[") && !line.starts_with("///") {
                        derives.clear();
                    }
                    continue;
                }
                if line.starts_with('}') {
                    in_type = false;
                    continue;
                }
                if line.starts_with("#[") {
                    attributes.push(line);
                    continue;
                }
                if line.starts_with("//") || line.is_empty() {
                    continue;
                }
                let skipped = attributes.iter().any(|a| a.contains("skip_serializing_if"));
                let required = attributes.iter().any(|a| a.contains("required = true"));
                let not_null = attributes.iter().any(|a| a.contains("nullable = false"));
                let option = line.contains(": Option<") && !line.contains(": Option<Option<");
                if option && !skipped && !required {
                    out.push(format!(
                        "{}:{}: always sent, not required",
                        path.display(),
                        number + 1
                    ));
                }
                if option && skipped && !not_null {
                    out.push(format!(
                        "{}:{}: never null, but nullable",
                        path.display(),
                        number + 1
                    ));
                }
                attributes.clear();
            }
        }
    }

    #[test]
    fn optional_fields_are_declared_as_sent() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        misdeclared_options(&root.join("src"), &mut out);
        misdeclared_options(&root.join("crates/rules/src"), &mut out);
        assert!(out.is_empty(), "{out:#?}");
    }

    #[test]
    fn tags_become_pascal_case() {
        assert_eq!(pascal("play_card"), "PlayCard");
        assert_eq!(pascal("take"), "Take");
        assert_eq!(pascal("nos_game_ended"), "NosGameEnded");
    }
}

/// Every event type a build knows is classified for its audience, and the classification
/// is the one reviewed here: a new event type fails this test until it is added below.
#[cfg(test)]
mod audience {
    #![allow(clippy::unwrap_used)]

    use rules::{Audience, Event};
    use serde_json::json;

    #[test]
    fn every_event_type_has_a_reviewed_audience() {
        let s = Audience::Seat(2);
        let p = Audience::Public;
        let x = Audience::Server;
        let card = json!(7);
        let table = [
            (
                "game_created",
                p,
                json!({"ruleset": "6-nimmt", "options": {"deck": "full", "deal": "random", "placement": "right", "end": {"points": 66}, "chips": "hidden"}, "players": 2, "name": null, "rules_version": 1, "prepared_deal": false, "commitment": "00"}),
            ),
            ("move_deadline_set", p, json!({"seconds": 60})),
            ("deadlines_set", p, json!({"deadlines": []})),
            ("seed_recorded", x, json!({"seed": "00"})),
            ("deal_prepared", x, json!({"deal": {}})),
            (
                "seat_taken",
                p,
                json!({"seat": 2, "account": "a", "name": "n"}),
            ),
            ("seat_left", p, json!({"seat": 2})),
            (
                "bot_added",
                p,
                json!({"seat": 2, "strategy": "random", "name": "n"}),
            ),
            ("seat_removed", p, json!({"seat": 2})),
            ("game_started", p, json!({})),
            ("round_started", p, json!({"round": 1, "rows": [card]})),
            ("hand_dealt", s, json!({"seat": 2, "cards": [card]})),
            ("card_selected", s, json!({"seat": 2, "card": card})),
            ("selection_made", p, json!({"seat": 2})),
            ("cards_revealed", p, json!({"cards": []})),
            (
                "card_placed",
                p,
                json!({"seat": 2, "card": card, "row": 0, "taken": [], "chosen": false}),
            ),
            (
                "draft_started",
                p,
                json!({"round": 1, "pool": [card], "first_seat": 0}),
            ),
            ("card_drafted", p, json!({"seat": 2, "card": card})),
            (
                "nos_game_started",
                p,
                json!({"game": 1, "first_seat": 0, "chips": 11}),
            ),
            (
                "draw_pile_set",
                x,
                json!({"pile": [card], "removed": [card]}),
            ),
            ("card_revealed", p, json!({"card": card})),
            ("passed", p, json!({"seat": 2})),
            (
                "card_taken",
                p,
                json!({"seat": 2, "card": card, "chips": 0}),
            ),
            (
                "nos_game_ended",
                p,
                json!({"game": 1, "scores": [], "chips": [], "removed": []}),
            ),
            (
                "card_kept",
                p,
                json!({"seat": 2, "card": card, "stacked": [], "to_hand": []}),
            ),
            ("round_ended", p, json!({"round": 1, "scores": []})),
            ("game_finished", p, json!({"winners": [], "seed": "00"})),
            ("seat_resigned", p, json!({"seat": 2})),
            ("visibility_set", p, json!({"public": true})),
            ("reservations_released", p, json!({})),
            ("rematch_created", p, json!({"game": "g"})),
            (
                "time_control_set",
                p,
                json!({"time_control": {"kind": "live", "initial_seconds": 180, "increment_seconds": 2}}),
            ),
            (
                "clocks_set",
                p,
                json!({"at": "2026-12-01T10:00:00.000Z", "clocks": [{"seat": 2, "remaining_ms": 1000, "running": true, "flagged": false}], "paused": false}),
            ),
            ("clock_ran_out", p, json!({"seat": 2, "timeouts": 1})),
            (
                "seat_handed_to_bot",
                p,
                json!({"seat": 2, "cause": "timeouts"}),
            ),
            ("vacation_spent", p, json!({"seat": 2, "hours": 1})),
            ("pause_proposed", p, json!({"seat": 2})),
            ("pause_accepted", p, json!({"seat": 2})),
            ("pause_declined", p, json!({"seat": 2})),
            ("clocks_paused", p, json!({})),
            ("clocks_resumed", p, json!({"seat": 2})),
            ("seed_revealed", p, json!({})),
        ];
        let doc = serde_json::to_value(crate::http::openapi()).unwrap();
        let mut known: Vec<&str> =
            doc["components"]["schemas"]["Event"]["discriminator"]["mapping"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
        let mut reviewed: Vec<&str> = table.iter().map(|(t, _, _)| *t).collect();
        known.sort_unstable();
        reviewed.sort_unstable();
        assert_eq!(
            known, reviewed,
            "classify every event type here (who may read it?) before it can be stored"
        );
        for (kind, audience, data) in table {
            let event: Event = serde_json::from_value(json!({"type": kind, "data": data}))
                .unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(event.type_name(), kind);
            assert_eq!(event.audience(), audience, "{kind}");
            // Reading a stored row (by its type name) and writing agree on the schema.
            assert_eq!(
                Event::schema_version_of(kind),
                Some(event.schema_version()),
                "{kind}"
            );
        }
    }
}
