//! The assistant registry the Worker serves: the core's built-in registry, read and checked
//! once per isolate.

use std::sync::OnceLock;

use stepwise_core::registry::{BUILTIN_JSON, Registry};

/// The registry (payload types, tools, actions, pages).
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::builtin)
}

/// The registry as JSON, as `GET /api/assistant/registry` serves it to browsers.
pub fn registry_json() -> &'static str {
    BUILTIN_JSON
}

/// The registry's page names (prompt sheets are per page).
pub fn page_names() -> Vec<&'static str> {
    registry().pages.iter().map(|p| p.page.as_str()).collect()
}
