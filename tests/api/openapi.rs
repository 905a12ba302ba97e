//! The committed OpenAPI document is the one the code generates, and the server serves it.

use std::process::Command;

use crate::support::{Backend, TestServer};

#[test]
fn openapi_json_is_current() {
    let out = Command::new(env!("CARGO_BIN_EXE_stammtisch"))
        .arg("openapi")
        .output()
        .unwrap();
    assert!(out.status.success());
    let generated = String::from_utf8(out.stdout).unwrap();
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json"))
            .unwrap();
    assert!(
        generated == committed,
        "openapi/openapi.json is stale: run `cargo run -- openapi > openapi/openapi.json` and commit it"
    );
}

/// OpenAPI requires a description on every response object; 29 success responses had none,
/// and client generators refused the whole document (`scripts/validate-openapi` checks the
/// rest of the specification).
#[test]
fn every_response_is_described() {
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json"))
            .unwrap(),
    )
    .unwrap();
    let mut missing = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for (status, response) in op["responses"].as_object().unwrap() {
                if response["description"].as_str().is_none_or(str::is_empty) {
                    missing.push(format!("{method} {path} {status}"));
                }
            }
            // What cannot be listed is still a Problem.
            if op["responses"]["default"]["content"]["application/problem+json"].is_null() {
                missing.push(format!("{method} {path} default"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "responses without a description, or no default Problem: {missing:?}"
    );
    // Every instant says it is one.
    let mut untyped = Vec::new();
    instants_without_format(&doc["components"]["schemas"], "", &mut untyped);
    assert!(
        untyped.is_empty(),
        "instants without format date-time: {untyped:?}"
    );
}

fn committed_document() -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json"))
            .unwrap(),
    )
    .unwrap()
}

/// What client generators make types of has a name: every event envelope is a `oneOf` of
/// named wrappers with a complete discriminator mapping (openapi-python-client dropped the
/// event pages when it was `allOf` of a union), every command's and event's `type` enum
/// and every event's `data` object is a component, no object is free-form, and enum values
/// that are not identifiers have names.
#[test]
fn generators_get_named_types() {
    let doc = committed_document();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let events = schemas["Event"]["discriminator"]["mapping"]
        .as_object()
        .unwrap();
    assert!(events.len() > 20, "{}", events.len());
    for envelope in ["EventItem", "FeedItem", "ArchivedEvent"] {
        let schema = &schemas[envelope];
        let variants = schema["oneOf"].as_array().unwrap();
        let mapping = schema["discriminator"]["mapping"].as_object().unwrap();
        assert_eq!(schema["discriminator"]["propertyName"], "type");
        assert_eq!(variants.len(), events.len(), "{envelope}");
        assert_eq!(
            mapping.keys().collect::<Vec<_>>(),
            events.keys().collect::<Vec<_>>(),
            "{envelope}"
        );
        for (tag, reference) in mapping {
            let name = reference.as_str().unwrap().rsplit('/').next().unwrap();
            let wrapper = &schemas[name];
            let parts = wrapper["allOf"].as_array().unwrap();
            assert_eq!(parts.len(), 2, "{name}");
            assert_eq!(parts[1]["$ref"], events[tag], "{name}");
            assert!(variants.iter().any(|v| v["$ref"] == *reference), "{name}");
        }
    }
    for union in ["Command", "Event"] {
        for variant in schemas[union]["oneOf"].as_array().unwrap() {
            let name = variant["$ref"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap();
            let props = &schemas[name]["properties"];
            assert!(props["type"]["$ref"].is_string(), "{name}.type is inline");
            if !props["data"].is_null() {
                assert!(props["data"]["$ref"].is_string(), "{name}.data is inline");
            }
        }
    }
    // What `awaiting` asks for is one of the command names, as an enum.
    assert_eq!(
        schemas["Awaiting"]["properties"]["action"]["$ref"],
        "#/components/schemas/CommandName"
    );
    let names = schemas["CommandName"]["enum"].as_array().unwrap();
    let commands = schemas["Command"]["discriminator"]["mapping"]
        .as_object()
        .unwrap();
    assert_eq!(names.len(), commands.len());
    assert!(
        names
            .iter()
            .all(|n| commands.contains_key(n.as_str().unwrap()))
    );
    let mut loose = Vec::new();
    free_form_objects(&doc, "", &mut loose);
    assert!(loose.is_empty(), "free-form objects: {loose:?}");
    let mut unnamed = Vec::new();
    for (name, schema) in schemas {
        let Some(values) = schema["enum"].as_array() else {
            continue;
        };
        let identifiers = values.iter().all(|v| {
            v.as_str()
                .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_alphabetic()))
        });
        let named = schema["x-enum-varnames"]
            .as_array()
            .is_some_and(|n| n.len() == values.len());
        if !identifiers && !named {
            unnamed.push(name.clone());
        }
    }
    assert!(unnamed.is_empty(), "enums with unnamed values: {unnamed:?}");
}

/// Objects below `schema` that say nothing of their fields (no `properties`, no
/// `additionalProperties`, no composition).
fn free_form_objects(schema: &serde_json::Value, at: &str, out: &mut Vec<String>) {
    match schema {
        serde_json::Value::Object(map) => {
            let object = map.get("type").is_some_and(|t| {
                t == "object"
                    || t.as_array()
                        .is_some_and(|a| a.iter().any(|t| t == "object"))
            });
            let shaped = [
                "properties",
                "additionalProperties",
                "allOf",
                "oneOf",
                "anyOf",
            ]
            .iter()
            .any(|k| map.contains_key(*k));
            if object && !shaped {
                out.push(at.to_owned());
            }
            for (key, value) in map {
                free_form_objects(value, &format!("{at}/{key}"), out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                free_form_objects(item, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Properties named like instants (`*_at`, `at`, `member_since`) whose schema lacks
/// `format: date-time`, anywhere below `schema`.
fn instants_without_format(schema: &serde_json::Value, at: &str, out: &mut Vec<String>) {
    match schema {
        serde_json::Value::Object(map) => {
            if let Some(props) = map.get("properties").and_then(|p| p.as_object()) {
                for (name, prop) in props {
                    let instant = name.ends_with("_at") || name == "at" || name == "member_since";
                    if instant && prop["format"] != "date-time" {
                        out.push(format!("{at}.{name}"));
                    }
                }
            }
            for (key, value) in map {
                instants_without_format(value, &format!("{at}/{key}"), out);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                instants_without_format(item, at, out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_server_serves_its_description_and_docs() {
    let server = TestServer::start(Backend::Sqlite);
    let api = server.client();
    let doc = api.get("/openapi.json", None);
    assert_eq!(doc.status, 200);
    for path in [
        "/v1/games",
        "/v1/games/{id}/commands",
        "/v1/guests",
        "/v1/tokens",
        "/v1/rulesets",
    ] {
        assert!(doc.body["paths"][path].is_object(), "{path} is documented");
    }
    let docs = api.get("/docs/", None);
    assert_eq!(docs.status, 200);
    assert!(
        docs.text.to_lowercase().contains("swagger"),
        "the docs page is Swagger UI"
    );
    assert_eq!(api.get("/healthz", None).status, 200);
    assert_eq!(api.get("/readyz", None).body["status"], "ready");
    let rulesets = api.get("/v1/rulesets", None);
    assert_eq!(rulesets.status, 200);
    let six = &rulesets.body["items"][0];
    assert_eq!(six["name"], "6-nimmt");
    assert_eq!(six["bullheads"]["55"], 7);
    assert_eq!(six["bullheads"]["104"], 1);
    let total: u64 = six["bullheads"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(total, 171);
    assert_eq!(api.get("/v1/nope", None).body["code"], "not_found");
}
