//! A variant of a study: a named set of options (below both the study and its summary).

use rules::{Options, Preset};
use serde::Serialize;

/// A named set of options.
#[derive(Clone, Debug, Serialize)]
pub struct Variant {
    /// The name in the report, e.g. `standard`.
    pub label: String,
    /// The options.
    pub options: Options,
}

impl Variant {
    /// A 6-nimmt preset, with the default end.
    #[must_use]
    pub fn preset(preset: Preset) -> Self {
        let label = serde_json::to_value(preset)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        Self {
            label,
            options: preset.options(),
        }
    }
}
