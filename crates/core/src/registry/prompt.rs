//! The assistant's system prompt (spec "Key Principles" 4): the page's context (its template,
//! then everything on screen), the instructions of the available model payloads and of
//! suggestions, the tools, and the stream's own instructions when a stream is in view.
//!
//! Values from the client are written as JSON (quoted, escaped, one line each), so nothing a
//! client sends can pose as a line of the prompt; what the owner wrote (the stream's
//! instructions, texts on screen) is redacted on the way in, ids excepted.

use serde_json::Value;

use crate::handshake::redact;

use super::{ChatContext, PayloadSource, Resolution};

/// Item summaries written into the prompt at most (the rest are counted).
pub const MAX_PROMPT_ITEMS: usize = 100;
/// Longest item summary written, in characters of JSON (longer ones are cut).
const MAX_ITEM_CHARS: usize = 600;

/// The stream in view, when the context names one the caller owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamBrief<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its `chat_instructions` (may be empty).
    pub chat_instructions: &'a str,
}

const ROLE: &str = "You are the Stepwise assistant, an expert colleague who can see the page the user is on.
Two roles. Guide: when the user wants something done (a query, a filter, a change of settings, a research job), do the work and return it as one of the payloads below, which the user can Accept or Dismiss; never claim you applied it yourself. Enhance: when the user asks about the data on screen, answer from it (the summaries below), and call a tool for details you do not have.
Be concise. Never invent articles, identifiers or results: only tools and the screen are sources.";

const SUGGESTIONS: &str = "## Suggestions
To offer replies the user can click, end your answer with one line:
SUGGESTED_VALUES: [{\"label\": \"short text\", \"value\": \"the message sent when clicked\"}]
To offer buttons, end your answer with one line:
SUGGESTED_ACTIONS: [{\"label\": \"button text\", \"action\": \"<action>\", \"handler\": \"client\" or \"server\", \"target\": \"<id or value the action needs>\"}]
Use only these actions (others are dropped):";

/// Builds the system prompt for a page of `resolution` with `context`.
///
/// ```
/// use stepwise_core::registry::{ChatContext, Registry, StreamBrief, system_prompt};
/// let registry = Registry::builtin();
/// let context = ChatContext::from_value(serde_json::json!({"current_page": "streams", "active_tab": "articles", "stream_id": "s1"})).unwrap();
/// let resolution = registry.resolve("streams", Some("articles"), None);
/// let stream = StreamBrief { name: "Oncology watch", chat_instructions: "Focus on trial outcomes." };
/// let prompt = system_prompt(&resolution, &context, Some(&stream));
/// assert!(prompt.contains("QUERY_SUGGESTION"));
/// assert!(prompt.ends_with("Focus on trial outcomes."));
/// ```
pub fn system_prompt(
    resolution: &Resolution<'_>,
    context: &ChatContext,
    stream: Option<&StreamBrief<'_>>,
) -> String {
    let mut prompt = String::from(ROLE);
    prompt.push_str("\n\n## The page\n");
    let templates = [
        resolution.page.map(|p| p.context_template.as_str()),
        resolution.tab.map(|t| t.context_template.as_str()),
    ];
    let mut described = false;
    for template in templates.into_iter().flatten() {
        let text = render_template(template, context);
        if !text.is_empty() {
            prompt.push_str(&text);
            prompt.push('\n');
            described = true;
        }
    }
    if !described {
        prompt.push_str("A page of the Stepwise app.\n");
    }
    if let Some(stream) = stream {
        prompt.push_str(&format!("The stream in view is {}.\n", quoted(stream.name)));
    }
    screen_state(&mut prompt, context);

    let model_payloads: Vec<_> = resolution
        .payloads
        .iter()
        .filter(|p| p.source == PayloadSource::Llm)
        .collect();
    if !model_payloads.is_empty() {
        prompt.push_str("\n## Payloads you can return\nWrite a payload as its marker at the start of a line, followed by its JSON object, at most one per answer:\n");
        for payload in model_payloads {
            prompt.push_str(&format!("\n{}\n", payload.llm_instructions.trim()));
        }
    }
    prompt.push('\n');
    prompt.push_str(SUGGESTIONS);
    for action in &resolution.client_actions {
        prompt.push_str(&format!(
            "\n- {} (client): {}",
            action.name, action.description
        ));
    }
    for action in &resolution.server_actions {
        prompt.push_str(&format!(
            "\n- {} (server): {}",
            action.name, action.description
        ));
    }
    prompt.push('\n');

    if !resolution.tools.is_empty() {
        prompt.push_str("\n## Tools\nCall a tool when you need data you do not have; its result comes back to you.\n");
        for tool in &resolution.tools {
            prompt.push_str(&format!(
                "- {}: {} Input: {}\n",
                tool.name, tool.description, tool.input_schema
            ));
        }
    }
    if let Some(stream) = stream.filter(|s| !s.chat_instructions.trim().is_empty()) {
        prompt.push_str("\n## Instructions for this stream\n");
        prompt.push_str(&redact(stream.chat_instructions.trim()));
    }
    prompt.trim_end().to_owned()
}

/// Renders a context template: `{{path}}` is replaced by the context's value at that dotted
/// path (strings quoted as JSON, other values as compact JSON); a line with a placeholder
/// whose value is not set is left out, so templates need no conditionals. Values are redacted
/// (ids excepted), like everything the page shows.
///
/// ```
/// use stepwise_core::registry::{ChatContext, render_template};
/// let context = ChatContext::from_value(serde_json::json!({"current_page": "research", "report_id": "r1"})).unwrap();
/// let text = render_template("The Research page.\nViewing job {{report_id}}.\nTab {{active_tab}}.", &context);
/// assert_eq!(text, "The Research page.\nViewing job \"r1\".");
/// ```
pub fn render_template(template: &str, context: &ChatContext) -> String {
    let mut lines = Vec::new();
    'lines: for line in template.lines() {
        let mut out = String::new();
        let mut rest = line;
        while let Some(start) = rest.find("{{") {
            let Some(len) = rest[start + 2..].find("}}") else {
                break;
            };
            let path = rest[start + 2..start + 2 + len].trim();
            let Some(value) = context.get(path) else {
                continue 'lines;
            };
            out.push_str(&rest[..start]);
            let key = path.rsplit('.').next().unwrap_or(path);
            out.push_str(&as_json(&redacted(key, value)));
            rest = &rest[start + 2 + len + 2..];
        }
        out.push_str(rest);
        lines.push(out);
    }
    lines.join("\n").trim().to_owned()
}

/// Everything on screen, one key a line, then the item summaries.
fn screen_state(prompt: &mut String, context: &ChatContext) {
    prompt.push_str("\n## What is on the screen\n");
    for (key, value) in context.state() {
        if key != "item_summaries" && !value.is_null() {
            // Keys come from the page too: one that is not a plain name is written quoted, so
            // it can never start a line of its own.
            let plain = !key.is_empty()
                && key
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if plain {
                prompt.push_str(key);
            } else {
                prompt.push_str(&as_json(&serde_json::Value::String(key.clone())));
            }
            prompt.push_str(&format!(": {}\n", as_json(&redacted(key, value))));
        }
    }
    let items = context.item_summaries();
    if !items.is_empty() {
        prompt.push_str(&format!(
            "Items on screen ({}; summaries only: call retrieve_items with their ids for full details):\n",
            items.len()
        ));
        for item in items.iter().take(MAX_PROMPT_ITEMS) {
            let mut line = redacted("", item).to_string();
            if line.chars().count() > MAX_ITEM_CHARS {
                line = line.chars().take(MAX_ITEM_CHARS).collect::<String>() + "…";
            }
            prompt.push_str(&line);
            prompt.push('\n');
        }
        if items.len() > MAX_PROMPT_ITEMS {
            prompt.push_str(&format!(
                "({} more not shown)\n",
                items.len() - MAX_PROMPT_ITEMS
            ));
        }
    }
}

/// `value` with its strings redacted (what the page shows may hold what the owner wrote: a
/// stream's instructions, a synthesis), except those under id keys (`id`, `*_id`, `*_ids`,
/// `pmid`), which name things and look like keys.
fn redacted(key: &str, value: &Value) -> Value {
    let names = key == "id" || key == "pmid" || key.ends_with("_id") || key.ends_with("_ids");
    match value {
        Value::String(text) if !names => Value::String(redact(text)),
        Value::Array(items) if !names => items.iter().map(|v| redacted("", v)).collect(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.clone(), redacted(k, v)))
            .collect(),
        other => other.clone(),
    }
}

fn as_json(value: &Value) -> String {
    value.to_string()
}

fn quoted(text: &str) -> String {
    Value::String(text.into()).to_string()
}
