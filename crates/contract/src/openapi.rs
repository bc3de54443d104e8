//! `openapi.yaml`'s `components.schemas`, written in place: everything between the line
//! `  schemas:` and `paths:` is the generated section, one schema a line (JSON, which YAML reads
//! as flow style); the rest of the file (info, security, paths) is written by hand.

use serde_json::{Map, Value};

/// The line that opens the schemas.
const START: &str = "  schemas:\n";
/// The line after them.
const END: &str = "paths:\n";

/// `document` with its schemas replaced by `schemas`; `None` when it has no schemas section.
pub fn with_schemas(document: &str, schemas: &Map<String, Value>) -> Option<String> {
    let start = document.find(START)? + START.len();
    let end = start + document[start..].find(END)?;
    let mut out = String::with_capacity(document.len());
    out.push_str(&document[..start]);
    out.push_str(
        "    # Written by `cargo run -p stepwise-contract` from stepwise-core's wire types (and the\n    # \
         few answers the Worker assembles itself: crates/contract/src/handwritten.rs). Do not edit.\n",
    );
    let mut names: Vec<&String> = schemas.keys().collect();
    names.sort();
    for name in names {
        out.push_str(&format!("    {name}: {}\n", schemas[name]));
    }
    out.push_str(&document[end..]);
    Some(out)
}
