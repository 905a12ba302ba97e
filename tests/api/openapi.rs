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
