//! The assistant's resolution in the browser: which payloads (and so which markers), tools and
//! actions a page, tab and subtab have, computed by the core's `Registry::resolve` over the
//! registry the Worker serves, so the browser parses exactly the payload markers the page allows.

use serde::Serialize;
use stepwise_core::registry::Registry;
use wasm_bindgen::prelude::*;

use crate::error::{coded_error, from_js, to_js};

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
/// `GET /api/assistant/registry` serves it; it is checked whole first and refused with code
/// `invalid_registry` (or `invalid_input` when it is not an object of JSON values).
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
    let value: serde_json::Value = from_js(registry, "registry")?;
    let registry =
        Registry::from_value(&value).map_err(|e| coded_error(e.code(), &e.to_string()))?;
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
