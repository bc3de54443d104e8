//! The assistant's resolution in the browser: which payloads (and so which markers), tools and
//! actions a page, tab and subtab have, computed by the core's `Registry::resolve`, so the
//! browser parses exactly the payload markers the page allows.
//!
//! The registry crosses the boundary as lines of tab-separated names, written and read by the
//! package's JS entry (`resolveChat` in `js/stepwise.js`): only names are needed, and a string
//! costs the package far less code than reading nested objects.

use stepwise_core::registry::{
    ActionConfig, PageConfig, PayloadSource, PayloadType, Registry, SubTabConfig, TabConfig,
    ToolConfig,
};
use wasm_bindgen::prelude::*;

/// The resolution of `page` (its `tab` and `subtab` when given) in the registry written as
/// `lines`; answered as lines too (`payload name source marker`, `tool name`,
/// `client_action name`, `server_action name`).
#[wasm_bindgen(js_name = resolveChatLines, skip_typescript)]
pub fn resolve_chat_lines(
    lines: &str,
    page: &str,
    tab: Option<String>,
    subtab: Option<String>,
) -> String {
    let registry = read(lines);
    let resolution = registry.resolve(page, tab.as_deref(), subtab.as_deref());
    let mut out = String::new();
    for payload in &resolution.payloads {
        let marker = payload.parse_marker.as_deref().unwrap_or("");
        let source = payload.source.as_str();
        out.push_str(&format!("payload\t{}\t{source}\t{marker}\n", payload.name));
    }
    for tool in &resolution.tools {
        out.push_str(&format!("tool\t{}\n", tool.name));
    }
    for action in &resolution.client_actions {
        out.push_str(&format!("client_action\t{}\n", action.name));
    }
    for action in &resolution.server_actions {
        out.push_str(&format!("server_action\t{}\n", action.name));
    }
    out
}

/// Reads the lines `resolveChat` writes: `payload name source global marker`,
/// `tool name global payload_type`, `client_action name global`, `server_action name`,
/// `page name payloads tools client_actions`, then its `tab name payloads tools` and their
/// `subtab name payloads tools` (lists comma-separated).
fn read(lines: &str) -> Registry {
    let mut registry = Registry::default();
    let list = |text: Option<&str>| -> Vec<String> {
        text.unwrap_or("")
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    for line in lines.lines() {
        let mut parts = line.split('\t');
        let kind = parts.next().unwrap_or("");
        let name = parts.next().unwrap_or("").to_owned();
        let mut next = || parts.next();
        match kind {
            "payload" => {
                let source = next();
                let is_global = next() == Some("1");
                registry.payloads.push(PayloadType {
                    name,
                    description: String::new(),
                    source: if source == Some("tool") {
                        PayloadSource::Tool
                    } else {
                        PayloadSource::Llm
                    },
                    is_global,
                    schema: Default::default(),
                    parse_marker: next().filter(|m| !m.is_empty()).map(str::to_owned),
                    llm_instructions: String::new(),
                });
            }
            "tool" => {
                let is_global = next() != Some("0");
                registry.tools.push(ToolConfig {
                    name,
                    description: String::new(),
                    input_schema: Default::default(),
                    is_global,
                    payload_type: next().filter(|p| !p.is_empty()).map(str::to_owned),
                    category: String::new(),
                });
            }
            "client_action" => {
                if next() == Some("1") {
                    registry.global_client_actions.push(name.clone());
                }
                registry.client_actions.push(ActionConfig {
                    name,
                    description: String::new(),
                });
            }
            "server_action" => registry.server_actions.push(ActionConfig {
                name,
                description: String::new(),
            }),
            "page" => registry.pages.push(PageConfig {
                page: name,
                payloads: list(next()),
                tools: list(next()),
                client_actions: list(next()),
                ..PageConfig::default()
            }),
            "tab" => {
                if let Some(page) = registry.pages.last_mut() {
                    page.tabs.push(TabConfig {
                        tab: name,
                        payloads: list(next()),
                        tools: list(next()),
                        ..TabConfig::default()
                    });
                }
            }
            "subtab" => {
                if let Some(tab) = registry.pages.last_mut().and_then(|p| p.tabs.last_mut()) {
                    tab.subtabs.push(SubTabConfig {
                        subtab: name,
                        payloads: list(next()),
                        tools: list(next()),
                    });
                }
            }
            _ => {}
        }
    }
    registry
}
