//! Shapes the generated OpenAPI document for client generators.
//!
//! utoipa writes a tagged enum as an unnamed `oneOf` of inline objects, which generators
//! turn into `any` or into anonymous types. Here every variant of `Command` and `Event`
//! becomes a named component schema (`PlayCardCommand`, `CardPlacedEvent`, …) and the
//! `oneOf` gets a `discriminator` on `type` with an explicit mapping. The envelopes that carry
//! an event (`EventItem`, `FeedItem`, `ArchivedEvent`) become `allOf` of their own fields
//! and `Event`, so `type` and `data` are typed together.

use serde_json::{Map, Value, json};
use utoipa::Modify;

/// The [`Modify`] that names tagged-enum variants; see the module docs.
pub struct NamedVariants;

impl Modify for NamedVariants {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let Ok(mut doc) = serde_json::to_value(&*openapi) else {
            return;
        };
        if let Some(schemas) = doc
            .pointer_mut("/components/schemas")
            .and_then(Value::as_object_mut)
        {
            name_variants(schemas, "Command", "Command");
            name_variants(schemas, "Event", "Event");
            for envelope in ["EventItem", "FeedItem", "ArchivedEvent"] {
                type_envelope(schemas, envelope, "Event");
            }
        }
        // A document that does not read back unchanged is left as utoipa made it; the
        // committed-file test shows the difference.
        if let Ok(shaped) = serde_json::from_value(doc) {
            *openapi = shaped;
        }
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
/// own and adds the discriminator.
fn name_variants(schemas: &mut Map<String, Value>, name: &str, suffix: &str) {
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
        let reference = format!("#/components/schemas/{variant}");
        if let Some(object) = item.as_object_mut() {
            object.insert("title".into(), Value::String(variant.clone()));
        }
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

/// Replaces the untyped `type` and `data` of the object schema `name` by `allOf` with
/// the union `union`.
fn type_envelope(schemas: &mut Map<String, Value>, name: &str, union: &str) {
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
    let mut schema = json!({
        "allOf": [own, { "$ref": format!("#/components/schemas/{union}") }]
    });
    if let (Some(object), Value::String(text)) = (schema.as_object_mut(), description) {
        object.insert("description".into(), Value::String(text));
    }
    schemas.insert(name.to_owned(), schema);
}

#[cfg(test)]
mod tests {
    use super::pascal;

    #[test]
    fn tags_become_pascal_case() {
        assert_eq!(pascal("play_card"), "PlayCard");
        assert_eq!(pascal("take"), "Take");
        assert_eq!(pascal("nos_game_ended"), "NosGameEnded");
    }
}
