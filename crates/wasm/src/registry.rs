//! The assistant's resolution in the browser: which payloads (and so which markers), tools and
//! actions a page, tab and subtab have, computed by the core's `Registry::resolve` over the
//! registry the Worker serves, so the browser parses exactly the payload markers the page allows.
//!
//! The registry crosses the boundary through serde-wasm-bindgen as the names resolution needs
//! (its descriptions, schemas and instructions are not read): the Worker checked it whole
//! before serving it, and the core's whole-registry reader would cost the package 16 KB.

use serde::{Deserialize, Serialize};
use stepwise_core::registry::{
    ActionConfig, PageConfig, PayloadSource, PayloadType, Registry, SubTabConfig, TabConfig,
    ToolConfig,
};
use wasm_bindgen::prelude::*;

use crate::error::{from_js, to_js};

/// The names of a registry (`ChatRegistryJson`), as resolution reads them.
#[derive(Deserialize, Default)]
#[serde(default)]
struct RegistryNames {
    payloads: Vec<PayloadNames>,
    tools: Vec<ToolNames>,
    client_actions: Vec<Named>,
    global_client_actions: Vec<String>,
    server_actions: Vec<Named>,
    pages: Vec<PageNames>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PayloadNames {
    name: String,
    source: String,
    is_global: bool,
    parse_marker: Option<String>,
}

#[derive(Deserialize)]
struct ToolNames {
    name: String,
    #[serde(default = "global")]
    is_global: bool,
    #[serde(default)]
    payload_type: Option<String>,
}

fn global() -> bool {
    true
}

#[derive(Deserialize)]
struct Named {
    name: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PageNames {
    page: String,
    payloads: Vec<String>,
    tools: Vec<String>,
    client_actions: Vec<String>,
    tabs: Vec<TabNames>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TabNames {
    tab: String,
    payloads: Vec<String>,
    tools: Vec<String>,
    subtabs: Vec<SubTabNames>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SubTabNames {
    subtab: String,
    payloads: Vec<String>,
    tools: Vec<String>,
}

impl RegistryNames {
    /// The core's registry with these names (and nothing else: resolution needs no more).
    fn into_registry(self) -> Registry {
        let action = |a: Named| ActionConfig {
            name: a.name,
            description: String::new(),
        };
        Registry {
            payloads: self
                .payloads
                .into_iter()
                .map(|p| PayloadType {
                    name: p.name,
                    description: String::new(),
                    source: if p.source == "tool" {
                        PayloadSource::Tool
                    } else {
                        PayloadSource::Llm
                    },
                    is_global: p.is_global,
                    schema: Default::default(),
                    parse_marker: p.parse_marker.filter(|m| !m.is_empty()),
                    llm_instructions: String::new(),
                })
                .collect(),
            tools: self
                .tools
                .into_iter()
                .map(|t| ToolConfig {
                    name: t.name,
                    description: String::new(),
                    input_schema: Default::default(),
                    is_global: t.is_global,
                    payload_type: t.payload_type,
                    category: String::new(),
                    approval: Default::default(),
                    approval_threshold: 0,
                })
                .collect(),
            client_actions: self.client_actions.into_iter().map(action).collect(),
            global_client_actions: self.global_client_actions,
            server_actions: self.server_actions.into_iter().map(action).collect(),
            pages: self
                .pages
                .into_iter()
                .map(|page| PageConfig {
                    page: page.page,
                    payloads: page.payloads,
                    tools: page.tools,
                    client_actions: page.client_actions,
                    tabs: page
                        .tabs
                        .into_iter()
                        .map(|tab| TabConfig {
                            tab: tab.tab,
                            payloads: tab.payloads,
                            tools: tab.tools,
                            subtabs: tab
                                .subtabs
                                .into_iter()
                                .map(|sub| SubTabConfig {
                                    subtab: sub.subtab,
                                    payloads: sub.payloads,
                                    tools: sub.tools,
                                })
                                .collect(),
                            ..TabConfig::default()
                        })
                        .collect(),
                    ..PageConfig::default()
                })
                .collect(),
        }
    }
}

/// What the assistant has on a page (`ChatResolution` in the package's declarations).
#[derive(Serialize)]
struct ChatResolution<'r> {
    payloads: Vec<ResolvedPayload<'r>>,
    markers: Vec<&'r str>,
    tools: Vec<&'r str>,
    client_actions: Vec<&'r str>,
    server_actions: Vec<&'r str>,
}

#[derive(Serialize)]
struct ResolvedPayload<'r> {
    name: &'r str,
    source: &'static str,
    marker: Option<&'r str>,
}

/// Resolves what the assistant has on `page` (its `tab` and `subtab`): global, then page, tab
/// and subtab definitions. `registry` is the registry's JSON as the Worker's
/// `GET /api/assistant/registry` serves it; a registry of the wrong shape is refused with code
/// `invalid_input`.
///
/// ```js
/// const { markers } = resolveChat(registry, "streams", "articles");
/// const stream = new MarkerStream(markers);
/// ```
#[wasm_bindgen(js_name = resolveChat, unchecked_return_type = "ChatResolution")]
pub fn resolve_chat(
    #[wasm_bindgen(unchecked_param_type = "ChatRegistryJson")] registry: JsValue,
    page: &str,
    tab: Option<String>,
    subtab: Option<String>,
) -> Result<JsValue, JsValue> {
    let names: RegistryNames = from_js(registry, "registry")?;
    let registry = names.into_registry();
    let resolution = registry.resolve(page, tab.as_deref(), subtab.as_deref());
    let answer = ChatResolution {
        payloads: resolution
            .payloads
            .iter()
            .map(|p| ResolvedPayload {
                name: &p.name,
                source: p.source.as_str(),
                marker: p.parse_marker.as_deref(),
            })
            .collect(),
        markers: resolution
            .payloads
            .iter()
            .filter_map(|p| p.parse_marker.as_deref())
            .collect(),
        tools: resolution.tools.iter().map(|t| t.name.as_str()).collect(),
        client_actions: resolution
            .client_actions
            .iter()
            .map(|a| a.name.as_str())
            .collect(),
        server_actions: resolution
            .server_actions
            .iter()
            .map(|a| a.name.as_str())
            .collect(),
    };
    Ok(to_js(&answer))
}
