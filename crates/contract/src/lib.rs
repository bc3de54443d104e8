//! The HTTP contract and the browser package's TypeScript declarations, written from
//! stepwise-core's wire types: their JSON Schemas (schemars, through the core's `schema`
//! feature, which no build of the Worker or the browser package turns on) and the schemas of the
//! few answers the Worker builds as JSON ([`handwritten`]) become `openapi.yaml`'s
//! `components.schemas` ([`openapi`]) and `crates/wasm/js/wire.d.ts` ([`typescript`]).
//! `cargo run -p stepwise-contract` writes both; its test fails when either differs from what
//! the types say.

pub mod handwritten;
pub mod openapi;
pub mod typescript;

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};
use stepwise_core::agent::AssistantResponse;
use stepwise_core::answers::{Health, Me};
use stepwise_core::conversation::{ConversationEvent, Entry};
use stepwise_core::interop::agui::RunAgentInput;
use stepwise_core::markers::{Event, Parsed};
use stepwise_core::protocol::{
    AssistantActionRequest, AssistantRequest, ChatRequest, ChatResponse, ContextRequired,
    ErrorBody, StreamEvent, TurnAnswer,
};
use stepwise_core::pubmed::{Abstract, ArticleSummary};
use stepwise_core::registry::{ChatContext, Registry};
use stepwise_core::research::{
    ConfirmRequest, DraftRequest, ResearchEvent, ResearchView, StartRequest,
};
use stepwise_core::streams::{StreamChange, StreamView};
use stepwise_core::workflow::{UserAction, WorkflowSpec, WorkflowState};

/// Where schemas live in the contract (and where `$ref`s point).
pub const SCHEMAS_PATH: &str = "#/components/schemas/";

/// Every schema of the contract by name: the wire types' (what the server sends as it
/// serializes it, what it reads as it deserializes it) and the hand-written ones.
pub fn schemas() -> Map<String, Value> {
    let generator = |settings: SchemaSettings| {
        settings
            .with(|s| {
                s.definitions_path = "/components/schemas".into();
                s.meta_schema = None;
            })
            .into_generator()
    };
    // What clients read.
    let mut sent = generator(SchemaSettings::draft2020_12().for_serialize());
    sent.subschema_for::<ChatResponse>();
    sent.subschema_for::<StreamEvent>();
    sent.subschema_for::<TurnAnswer>();
    sent.subschema_for::<ContextRequired>();
    sent.subschema_for::<AssistantResponse>();
    sent.subschema_for::<ResearchView<'static>>();
    sent.subschema_for::<ResearchEvent>();
    sent.subschema_for::<StreamView<'static>>();
    sent.subschema_for::<ArticleSummary>();
    sent.subschema_for::<Abstract>();
    sent.subschema_for::<Entry>();
    sent.subschema_for::<ConversationEvent>();
    sent.subschema_for::<Event>();
    sent.subschema_for::<Parsed>();
    sent.subschema_for::<WorkflowSpec>();
    sent.subschema_for::<WorkflowState>();
    sent.subschema_for::<Health>();
    sent.subschema_for::<Me>();
    sent.subschema_for::<stepwise_core::spend::SpendReport>();
    sent.subschema_for::<ErrorBody>();
    // What the server reads.
    let mut read = generator(SchemaSettings::draft2020_12().for_deserialize());
    read.subschema_for::<ChatRequest>();
    read.subschema_for::<UserAction>();
    read.subschema_for::<WorkflowState>();
    read.subschema_for::<WorkflowSpec>();
    read.subschema_for::<AssistantRequest>();
    read.subschema_for::<AssistantActionRequest>();
    read.subschema_for::<ChatContext>();
    // The registry is served as the JSON its reader accepts.
    read.subschema_for::<Registry>();
    read.subschema_for::<StreamChange>();
    read.subschema_for::<DraftRequest>();
    read.subschema_for::<StartRequest>();
    read.subschema_for::<ConfirmRequest>();
    read.subschema_for::<RunAgentInput>();
    let mut all = merge(sent.take_definitions(true), read.take_definitions(true));
    for schema in all.values_mut() {
        plain_links(schema);
    }
    for (name, schema) in handwritten::schemas() {
        assert!(
            all.insert(name.clone(), schema).is_none(),
            "{name} is both a wire type and hand-written"
        );
    }
    all
}

/// The schemas of both directions in one map. A type whose schema differs with the direction
/// (defaults make fields optional to read but present when written) keeps its name for what
/// is sent; what is read is named `<Name>Input`, and the references to it follow.
fn merge(mut sent: Map<String, Value>, read: Map<String, Value>) -> Map<String, Value> {
    let mut differing: Vec<String> = read
        .iter()
        .filter(|(name, schema)| sent.get(*name).is_some_and(|other| other != *schema))
        .map(|(name, _)| name.clone())
        .collect();
    // A type that refers to one read otherwise is read otherwise too.
    loop {
        let more: Vec<String> = read
            .iter()
            .filter(|(name, schema)| {
                sent.contains_key(*name)
                    && !differing.contains(name)
                    && differing.iter().any(|d| refers_to(schema, d))
            })
            .map(|(name, _)| name.clone())
            .collect();
        if more.is_empty() {
            break;
        }
        differing.extend(more);
    }
    for (name, mut schema) in read {
        rename_references(&mut schema, &differing);
        if differing.contains(&name) {
            sent.insert(format!("{name}Input"), schema);
        } else {
            sent.entry(name).or_insert(schema);
        }
    }
    sent
}

fn refers_to(schema: &Value, name: &str) -> bool {
    match schema {
        Value::Object(object) => {
            object.get("$ref").and_then(Value::as_str) == Some(&format!("{SCHEMAS_PATH}{name}"))
                || object.values().any(|value| refers_to(value, name))
        }
        Value::Array(items) => items.iter().any(|value| refers_to(value, name)),
        _ => false,
    }
}

fn rename_references(schema: &mut Value, renamed: &[String]) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get_mut("$ref")
                && let Some(name) = reference.strip_prefix(SCHEMAS_PATH)
                && renamed.iter().any(|r| r == name)
            {
                *reference = format!("{SCHEMAS_PATH}{name}Input");
            }
            object
                .values_mut()
                .for_each(|value| rename_references(value, renamed));
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|value| rename_references(value, renamed)),
        _ => {}
    }
}

/// The TypeScript declarations of every schema, as `crates/wasm/js/wire.d.ts` holds them.
pub fn declarations() -> String {
    format!(
        "// The HTTP API's wire types, written by `cargo run -p stepwise-contract` from\n\
         // stepwise-core's Rust types (the same schemas as openapi.yaml). Do not edit.\n\n{}",
        typescript::declarations(&schemas())
    )
}

/// The files the contract writes, relative to the repository `root`, with their text.
pub fn generated(root: &std::path::Path) -> Vec<(&'static str, String)> {
    let schemas = schemas();
    let document = std::fs::read_to_string(root.join(OPENAPI)).expect("openapi.yaml is readable");
    let contract =
        openapi::with_schemas(&document, &schemas).expect("openapi.yaml has its schemas section");
    vec![(OPENAPI, contract), (DECLARATIONS, declarations())]
}

/// The contract, from the repository root.
pub const OPENAPI: &str = "openapi.yaml";
/// The browser package's wire types, from the repository root.
pub const DECLARATIONS: &str = "crates/wasm/js/wire.d.ts";

/// Descriptions are Rust doc comments: their intra-doc links (`` [`Type`] ``) read as code.
fn plain_links(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::String(text)) = object.get_mut("description") {
                *text = text.replace("[`", "`").replace("`]", "`");
            }
            object.values_mut().for_each(plain_links);
        }
        Value::Array(items) => items.iter_mut().for_each(plain_links),
        _ => {}
    }
}
