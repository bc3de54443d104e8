//! Resolution (spec "Key Principles" 4): what is available where. Always global + page + tab +
//! subtab, in that order, each name once; a tool brings its own payload type along.

use super::{
    ActionConfig, PageConfig, PayloadSource, PayloadType, Registry, SubTabConfig, TabConfig,
    ToolConfig,
};
use crate::markers::MarkerRegistry;

/// What the assistant has on one page, tab and subtab.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution<'r> {
    /// The page, when the registry knows it (otherwise only the global definitions apply).
    pub page: Option<&'r PageConfig>,
    /// The tab, when the page has it.
    pub tab: Option<&'r TabConfig>,
    /// The subtab, when the tab has it.
    pub subtab: Option<&'r SubTabConfig>,
    /// Available payload types: global, page, tab, subtab, then those of available tools.
    pub payloads: Vec<&'r PayloadType>,
    /// Available tools: global, page, tab, subtab.
    pub tools: Vec<&'r ToolConfig>,
    /// Client actions: global, then the page's.
    pub client_actions: Vec<&'r ActionConfig>,
    /// Server actions (all are global).
    pub server_actions: Vec<&'r ActionConfig>,
}

impl Registry {
    /// What is available on `page` (its `tab` and `subtab` when given).
    ///
    /// ```
    /// use stepwise_core::registry::Registry;
    /// let registry = Registry::builtin();
    /// let articles = registry.resolve("streams", Some("articles"), None);
    /// assert!(articles.payload("query_suggestion").is_some());
    /// let settings = registry.resolve("streams", Some("settings"), None);
    /// assert!(settings.payload("query_suggestion").is_none());
    /// ```
    pub fn resolve(&self, page: &str, tab: Option<&str>, subtab: Option<&str>) -> Resolution<'_> {
        let page = self.page(page);
        let tab = page.and_then(|p| tab.and_then(|name| p.tabs.iter().find(|t| t.tab == name)));
        let subtab =
            tab.and_then(|t| subtab.and_then(|name| t.subtabs.iter().find(|s| s.subtab == name)));
        let levels: Vec<(&[String], &[String])> = [
            page.map(|p| (&p.payloads[..], &p.tools[..])),
            tab.map(|t| (&t.payloads[..], &t.tools[..])),
            subtab.map(|s| (&s.payloads[..], &s.tools[..])),
        ]
        .into_iter()
        .flatten()
        .collect();

        let mut tools: Vec<&ToolConfig> = self.tools.iter().filter(|t| t.is_global).collect();
        for name in levels.iter().flat_map(|(_, tools)| tools.iter()) {
            add(&mut tools, self.tool(name));
        }
        let mut payloads: Vec<&PayloadType> =
            self.payloads.iter().filter(|p| p.is_global).collect();
        for name in levels.iter().flat_map(|(payloads, _)| payloads.iter()) {
            add(&mut payloads, self.payload(name));
        }
        for tool in &tools {
            add(
                &mut payloads,
                tool.payload_type.as_deref().and_then(|n| self.payload(n)),
            );
        }
        let mut client_actions = Vec::new();
        let page_actions = page.map(|p| &p.client_actions[..]).unwrap_or_default();
        for name in self.global_client_actions.iter().chain(page_actions) {
            add(
                &mut client_actions,
                self.client_actions.iter().find(|a| &a.name == name),
            );
        }
        Resolution {
            page,
            tab,
            subtab,
            payloads,
            tools,
            client_actions,
            server_actions: self.server_actions.iter().collect(),
        }
    }
}

fn add<'r, T: PartialEq>(list: &mut Vec<&'r T>, item: Option<&'r T>) {
    if let Some(item) = item
        && !list.iter().any(|known| std::ptr::eq(*known, item))
    {
        list.push(item);
    }
}

impl<'r> Resolution<'r> {
    /// The available payload type `name`.
    pub fn payload(&self, name: &str) -> Option<&'r PayloadType> {
        self.payloads.iter().copied().find(|p| p.name == name)
    }

    /// The available tool `name`.
    pub fn tool(&self, name: &str) -> Option<&'r ToolConfig> {
        self.tools.iter().copied().find(|t| t.name == name)
    }

    /// Whether `name` is an available client action.
    pub fn has_client_action(&self, name: &str) -> bool {
        self.client_actions.iter().any(|a| a.name == name)
    }

    /// Whether `name` is a server action.
    pub fn has_server_action(&self, name: &str) -> bool {
        self.server_actions.iter().any(|a| a.name == name)
    }

    /// The markers of the available model payloads, e.g. `["QUERY_SUGGESTION"]`: exactly what
    /// a parser of this page's answers recognizes besides the built-in markers.
    pub fn payload_markers(&self) -> Vec<&'r str> {
        self.payloads
            .iter()
            .filter(|p| p.source == PayloadSource::Llm)
            .filter_map(|p| p.parse_marker.as_deref())
            .collect()
    }

    /// A marker registry holding [`Resolution::payload_markers`].
    pub fn marker_registry(&self) -> MarkerRegistry {
        let mut registry = MarkerRegistry::new();
        for marker in self.payload_markers() {
            // A registry was checked as a whole when it loaded: its markers are valid and unique.
            let _ = registry.register_payload(marker);
        }
        registry
    }
}
