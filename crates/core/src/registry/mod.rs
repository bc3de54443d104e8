//! What the assistant can do, as data (chat-architecture.md "Core Concepts"): payload types and
//! tools are definitions that know nothing of pages; page configs, with their tabs and subtabs,
//! name the definitions they use. [`Registry::resolve`] gives a page's set (global, page, tab
//! and subtab) and [`system_prompt`] the prompt built from it: the page's context, the
//! payloads' instructions, the tools, and the stream's own instructions.
//!
//! The built-in registry is JSON compiled in ([`BUILTIN_JSON`]); a registry is read and checked
//! whole by [`Registry::from_value`] (every name it references exists, schemas use only what
//! [`check_schema`](crate::json::check_schema) understands, marker names are valid).

mod context;
mod prompt;
mod read;
mod resolve;

pub use context::{ChatContext, ContextError, MAX_CONTEXT_BYTES, MAX_ITEM_SUMMARIES};
pub use prompt::{MAX_PROMPT_ITEMS, StreamBrief, render_template, system_prompt};
pub use resolve::Resolution;

use serde_json::Value;
use thiserror::Error;

use crate::approval::ApprovalPolicy;

/// The built-in registry: the app's payloads, tools, actions and pages.
pub const BUILTIN_JSON: &str = include_str!("builtin.json");

/// Where a payload comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename_all = "snake_case"))]
pub enum PayloadSource {
    /// A tool returns it with its result.
    Tool,
    /// The model writes it after its marker (`QUERY_SUGGESTION: {...}`).
    Llm,
}

impl PayloadSource {
    /// The source as written in registries: `tool` or `llm`.
    pub fn as_str(self) -> &'static str {
        match self {
            PayloadSource::Tool => "tool",
            PayloadSource::Llm => "llm",
        }
    }
}

/// A kind of structured data the client renders as a card (spec §3).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "PayloadTypeJson", deny_unknown_fields)
)]
pub struct PayloadType {
    /// Its name, e.g. `query_suggestion`.
    pub name: String,
    /// What it is.
    pub description: String,
    /// Tool or model.
    pub source: PayloadSource,
    /// Available on every page (otherwise only where a page, tab or subtab names it).
    #[cfg_attr(feature = "schema", schemars(default))]
    pub is_global: bool,
    /// JSON Schema its data must match before it reaches a client.
    pub schema: Value,
    /// The marker a model writes it after (model payloads only): the name in upper case.
    pub parse_marker: Option<String>,
    /// How the model is to write it (model payloads only).
    #[cfg_attr(feature = "schema", schemars(default))]
    pub llm_instructions: String,
}

/// A tool the model may call (spec §2).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "ToolConfigJson", deny_unknown_fields)
)]
pub struct ToolConfig {
    /// Its name, e.g. `search_pubmed`.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its input (an object); calls that do not match are refused.
    pub input_schema: Value,
    /// Available on every page (the default).
    #[cfg_attr(feature = "schema", schemars(default = "global_by_default"))]
    pub is_global: bool,
    /// The payload type its results carry, if any (a tool payload).
    pub payload_type: Option<String>,
    /// A grouping for people reading the registry (`research`, `data`...).
    #[cfg_attr(feature = "schema", schemars(default))]
    pub category: String,
    /// Whether its calls wait for the owner's approval (`never`, the default; `always`;
    /// `over_cost`: when their estimated model calls exceed `approval_threshold`).
    #[cfg_attr(feature = "schema", schemars(default))]
    pub approval: ApprovalPolicy,
    /// Estimated model calls a call may make without approval (`over_cost` only).
    #[cfg_attr(feature = "schema", schemars(default))]
    pub approval_threshold: u32,
}

impl ToolConfig {
    /// Whether a call with `input` waits for the owner's approval.
    pub fn needs_approval(&self, input: &Value) -> bool {
        let calls = crate::approval::estimated_calls(&self.name, input);
        self.approval.requires(calls, self.approval_threshold)
    }
}

/// A tool is on every page unless the registry says otherwise (the schema's default).
#[cfg(feature = "schema")]
fn global_by_default() -> bool {
    true
}

/// An action a suggested-action button may trigger (spec §4): handled in the browser (client
/// actions) or by `POST /api/assistant/actions` (server actions).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "ActionConfigJson", deny_unknown_fields)
)]
pub struct ActionConfig {
    /// Its name, e.g. `open_stream`.
    pub name: String,
    /// What it does and what its `target` is, for the model.
    pub description: String,
}

/// The payloads and tools a subtab adds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "SubTabConfigJson", deny_unknown_fields)
)]
pub struct SubTabConfig {
    /// Its name.
    pub subtab: String,
    /// Payload types it adds, by name.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub payloads: Vec<String>,
    /// Tools it adds, by name.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub tools: Vec<String>,
}

/// The payloads and tools a tab adds, its context, and its subtabs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "TabConfigJson", deny_unknown_fields)
)]
pub struct TabConfig {
    /// Its name.
    pub tab: String,
    /// Context template of the tab, after the page's (see [`render_template`]).
    #[cfg_attr(feature = "schema", schemars(default))]
    pub context_template: String,
    /// Payload types it adds, by name.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub payloads: Vec<String>,
    /// Tools it adds, by name.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub tools: Vec<String>,
    /// Its subtabs.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub subtabs: Vec<SubTabConfig>,
}

/// A page of the app and what the assistant has there (spec §1).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "PageConfigJson", deny_unknown_fields)
)]
pub struct PageConfig {
    /// Its name, as clients send it in `current_page`.
    pub page: String,
    /// Context template (see [`render_template`]): what the page is, with placeholders for
    /// what is on it.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub context_template: String,
    /// Payload types available on every tab, by name.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub payloads: Vec<String>,
    /// Tools available on every tab, by name.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub tools: Vec<String>,
    /// Client actions the page handles besides the global ones, by name.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub client_actions: Vec<String>,
    /// Its tabs.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub tabs: Vec<TabConfig>,
}

/// Payload types, tools, actions and pages, checked as a whole.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "ChatRegistryJson", deny_unknown_fields)
)]
pub struct Registry {
    /// Every payload type.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub payloads: Vec<PayloadType>,
    /// Every tool.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub tools: Vec<ToolConfig>,
    /// Client actions: the global ones (listed in `global_client_actions`) and those pages add.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub client_actions: Vec<ActionConfig>,
    /// Names of the client actions available on every page.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub global_client_actions: Vec<String>,
    /// Server actions (`POST /api/assistant/actions`), available on every page.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub server_actions: Vec<ActionConfig>,
    /// Every page.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub pages: Vec<PageConfig>,
}

/// Why a registry was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{path}: {message}")]
pub struct RegistryError {
    /// Where, e.g. `pages[1].tabs[0].payloads[2]`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl RegistryError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        "invalid_registry"
    }
}

impl Registry {
    /// The built-in registry.
    ///
    /// ```
    /// let registry = stepwise_core::registry::Registry::builtin();
    /// assert!(registry.tool("search_pubmed").is_some_and(|t| t.is_global));
    /// ```
    pub fn builtin() -> Registry {
        let value: Value =
            serde_json::from_str(BUILTIN_JSON).expect("the built-in registry is JSON");
        Registry::from_value(&value).expect("the built-in registry is valid")
    }

    /// The payload type named `name`.
    pub fn payload(&self, name: &str) -> Option<&PayloadType> {
        self.payloads.iter().find(|p| p.name == name)
    }

    /// The tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&ToolConfig> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The page named `name`.
    pub fn page(&self, name: &str) -> Option<&PageConfig> {
        self.pages.iter().find(|p| p.page == name)
    }

    /// The server action named `name`.
    pub fn server_action(&self, name: &str) -> Option<&ActionConfig> {
        self.server_actions.iter().find(|a| a.name == name)
    }
}
