//! Reading a registry from JSON and checking it whole: known keys only, unique names, every
//! referenced payload, tool and action defined, schemas of the supported subset, marker names
//! that match their payload's name.

use serde_json::{Map, Value};

use super::{
    ActionConfig, PageConfig, PayloadSource, PayloadType, Registry, RegistryError, SubTabConfig,
    TabConfig, ToolConfig,
};
use crate::approval::ApprovalPolicy;
use crate::json::check_schema_form;
use crate::markers::MarkerRegistry;

/// Longest name of a payload, tool, action, page, tab or subtab.
const MAX_NAME_LEN: usize = 64;

impl Registry {
    /// Reads and checks a registry.
    ///
    /// ```
    /// use serde_json::json;
    /// use stepwise_core::registry::Registry;
    /// let error = Registry::from_value(&json!({"pages": [{"page": "home", "tools": ["nope"]}]})).unwrap_err();
    /// assert_eq!(error.to_string(), "pages[0].tools[0]: no tool is named `nope`");
    /// ```
    pub fn from_value(value: &Value) -> Result<Registry, RegistryError> {
        let root = Obj::new(value, String::new())?;
        root.only(&[
            "payloads",
            "tools",
            "client_actions",
            "global_client_actions",
            "server_actions",
            "pages",
        ])?;
        let registry = Registry {
            payloads: root.list("payloads", payload)?,
            tools: root.list("tools", tool)?,
            client_actions: root.list("client_actions", action)?,
            global_client_actions: root.names("global_client_actions")?,
            server_actions: root.list("server_actions", action)?,
            pages: root.list("pages", page)?,
        };
        registry.check_references()?;
        Ok(registry)
    }

    fn check_references(&self) -> Result<(), RegistryError> {
        unique(self.payloads.iter().map(|p| &p.name), "payloads")?;
        unique(self.tools.iter().map(|t| &t.name), "tools")?;
        unique(
            self.client_actions.iter().map(|a| &a.name),
            "client_actions",
        )?;
        unique(
            self.server_actions.iter().map(|a| &a.name),
            "server_actions",
        )?;
        unique(self.pages.iter().map(|p| &p.page), "pages")?;
        let mut markers = MarkerRegistry::new();
        for (i, payload) in self.payloads.iter().enumerate() {
            if let Some(marker) = &payload.parse_marker {
                markers
                    .register_payload(marker)
                    .map_err(|e| error(format!("payloads[{i}].parse_marker"), e.to_string()))?;
            }
        }
        for (i, tool) in self.tools.iter().enumerate() {
            if let Some(name) = &tool.payload_type {
                match self.payload(name) {
                    Some(p) if p.source == PayloadSource::Tool => {}
                    Some(_) => {
                        let why = format!("`{name}` is a model payload, not a tool payload");
                        return Err(error(format!("tools[{i}].payload_type"), why));
                    }
                    None => {
                        let why = format!("no payload type is named `{name}`");
                        return Err(error(format!("tools[{i}].payload_type"), why));
                    }
                }
            }
        }
        let known_action = |name: &String| self.client_actions.iter().any(|a| &a.name == name);
        for (i, name) in self.global_client_actions.iter().enumerate() {
            if !known_action(name) {
                let why = format!("no client action is named `{name}`");
                return Err(error(format!("global_client_actions[{i}]"), why));
            }
        }
        for (p, page) in self.pages.iter().enumerate() {
            let at = format!("pages[{p}]");
            self.check_names(&page.payloads, &page.tools, &at)?;
            for (i, name) in page.client_actions.iter().enumerate() {
                if !known_action(name) {
                    let why = format!("no client action is named `{name}`");
                    return Err(error(format!("{at}.client_actions[{i}]"), why));
                }
            }
            unique(page.tabs.iter().map(|t| &t.tab), &format!("{at}.tabs"))?;
            for (t, tab) in page.tabs.iter().enumerate() {
                let at = format!("{at}.tabs[{t}]");
                self.check_names(&tab.payloads, &tab.tools, &at)?;
                unique(
                    tab.subtabs.iter().map(|s| &s.subtab),
                    &format!("{at}.subtabs"),
                )?;
                for (s, subtab) in tab.subtabs.iter().enumerate() {
                    let at = format!("{at}.subtabs[{s}]");
                    self.check_names(&subtab.payloads, &subtab.tools, &at)?;
                }
            }
        }
        Ok(())
    }

    fn check_names(
        &self,
        payloads: &[String],
        tools: &[String],
        at: &str,
    ) -> Result<(), RegistryError> {
        for (i, name) in payloads.iter().enumerate() {
            if self.payload(name).is_none() {
                let why = format!("no payload type is named `{name}`");
                return Err(error(format!("{at}.payloads[{i}]"), why));
            }
        }
        for (i, name) in tools.iter().enumerate() {
            if self.tool(name).is_none() {
                return Err(error(
                    format!("{at}.tools[{i}]"),
                    format!("no tool is named `{name}`"),
                ));
            }
        }
        Ok(())
    }
}

fn payload(obj: &Obj<'_>) -> Result<PayloadType, RegistryError> {
    obj.only(&[
        "name",
        "description",
        "source",
        "is_global",
        "schema",
        "parse_marker",
        "llm_instructions",
    ])?;
    let name = obj.name("name")?;
    let source = match obj.text("source")?.as_str() {
        "tool" => PayloadSource::Tool,
        "llm" => PayloadSource::Llm,
        _ => return Err(obj.error("source", "must be `tool` or `llm`")),
    };
    let parse_marker = obj.optional_text("parse_marker")?;
    let llm_instructions = obj.optional_text("llm_instructions")?.unwrap_or_default();
    match (source, &parse_marker) {
        (PayloadSource::Llm, None) => {
            return Err(obj.error("parse_marker", "a model payload needs its marker"));
        }
        (PayloadSource::Llm, Some(marker)) if marker.to_ascii_lowercase() != name => {
            let why = format!(
                "must be the payload's name in upper case (`{}`)",
                name.to_ascii_uppercase()
            );
            return Err(obj.error("parse_marker", &why));
        }
        (PayloadSource::Llm, _) if llm_instructions.trim().is_empty() => {
            return Err(obj.error(
                "llm_instructions",
                "a model payload needs instructions for the model",
            ));
        }
        (PayloadSource::Tool, Some(_)) => {
            return Err(obj.error("parse_marker", "a tool payload has no marker"));
        }
        _ => {}
    }
    Ok(PayloadType {
        description: obj.text("description")?,
        source,
        is_global: obj.flag("is_global", false)?,
        schema: obj.schema("schema")?,
        parse_marker,
        llm_instructions,
        name,
    })
}

fn tool(obj: &Obj<'_>) -> Result<ToolConfig, RegistryError> {
    obj.only(&[
        "name",
        "description",
        "input_schema",
        "is_global",
        "payload_type",
        "category",
        "approval",
        "approval_threshold",
    ])?;
    let approval = match obj.optional_text("approval")? {
        None => ApprovalPolicy::Never,
        Some(text) => ApprovalPolicy::parse(&text)
            .ok_or_else(|| obj.error("approval", "must be `never`, `always` or `over_cost`"))?,
    };
    let input_schema = obj.schema("input_schema")?;
    if input_schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(obj.error("input_schema", "must be a schema of type `object`"));
    }
    Ok(ToolConfig {
        name: obj.name("name")?,
        description: obj.text("description")?,
        input_schema,
        is_global: obj.flag("is_global", true)?,
        payload_type: obj.optional_text("payload_type")?,
        category: obj.optional_text("category")?.unwrap_or_default(),
        approval,
        approval_threshold: obj.count("approval_threshold")?,
    })
}

fn action(obj: &Obj<'_>) -> Result<ActionConfig, RegistryError> {
    obj.only(&["name", "description"])?;
    Ok(ActionConfig {
        name: obj.name("name")?,
        description: obj.text("description")?,
    })
}

fn page(obj: &Obj<'_>) -> Result<PageConfig, RegistryError> {
    obj.only(&[
        "page",
        "context_template",
        "payloads",
        "tools",
        "client_actions",
        "tabs",
    ])?;
    Ok(PageConfig {
        page: obj.name("page")?,
        context_template: obj.optional_text("context_template")?.unwrap_or_default(),
        payloads: obj.names("payloads")?,
        tools: obj.names("tools")?,
        client_actions: obj.names("client_actions")?,
        tabs: obj.list("tabs", tab)?,
    })
}

fn tab(obj: &Obj<'_>) -> Result<TabConfig, RegistryError> {
    obj.only(&["tab", "context_template", "payloads", "tools", "subtabs"])?;
    Ok(TabConfig {
        tab: obj.name("tab")?,
        context_template: obj.optional_text("context_template")?.unwrap_or_default(),
        payloads: obj.names("payloads")?,
        tools: obj.names("tools")?,
        subtabs: obj.list("subtabs", subtab)?,
    })
}

fn subtab(obj: &Obj<'_>) -> Result<SubTabConfig, RegistryError> {
    obj.only(&["subtab", "payloads", "tools"])?;
    Ok(SubTabConfig {
        subtab: obj.name("subtab")?,
        payloads: obj.names("payloads")?,
        tools: obj.names("tools")?,
    })
}

fn error(path: String, message: impl Into<String>) -> RegistryError {
    RegistryError {
        path: if path.is_empty() {
            "registry".into()
        } else {
            path
        },
        message: message.into(),
    }
}

fn unique<'a>(names: impl Iterator<Item = &'a String>, at: &str) -> Result<(), RegistryError> {
    let names: Vec<&String> = names.collect();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(error(
                format!("{at}[{i}]"),
                format!("`{name}` is defined twice"),
            ));
        }
    }
    Ok(())
}

/// A JSON object being read, with its path for errors.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: String,
}

impl<'a> Obj<'a> {
    fn new(value: &'a Value, path: String) -> Result<Self, RegistryError> {
        match value.as_object() {
            Some(map) => Ok(Obj { map, path }),
            None => Err(error(path, "must be an object")),
        }
    }

    fn at(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn error(&self, key: &str, message: &str) -> RegistryError {
        error(self.at(key), message)
    }

    fn only(&self, keys: &[&str]) -> Result<(), RegistryError> {
        match self.map.keys().find(|k| !keys.contains(&k.as_str())) {
            Some(key) => Err(error(self.path.clone(), format!("unknown key `{key:.64}`"))),
            None => Ok(()),
        }
    }

    fn optional_text(&self, key: &str) -> Result<Option<String>, RegistryError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(self.error(key, "must be a string")),
        }
    }

    fn text(&self, key: &str) -> Result<String, RegistryError> {
        self.optional_text(key)?
            .ok_or_else(|| self.error(key, "is required"))
    }

    fn name(&self, key: &str) -> Result<String, RegistryError> {
        let name = self.text(key)?;
        check_name(&name).map_err(|why| self.error(key, why))?;
        Ok(name)
    }

    fn flag(&self, key: &str, default: bool) -> Result<bool, RegistryError> {
        match self.map.get(key) {
            None => Ok(default),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(_) => Err(self.error(key, "must be true or false")),
        }
    }

    fn count(&self, key: &str) -> Result<u32, RegistryError> {
        match self.map.get(key) {
            None => Ok(0),
            Some(value) => value
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| self.error(key, "must be a whole number from 0")),
        }
    }

    fn schema(&self, key: &str) -> Result<Value, RegistryError> {
        let schema = self
            .map
            .get(key)
            .ok_or_else(|| self.error(key, "is required"))?;
        check_schema_form(schema).map_err(|why| self.error(key, &why))?;
        Ok(schema.clone())
    }

    fn items(&self, key: &str) -> Result<&'a [Value], RegistryError> {
        match self.map.get(key) {
            None => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(_) => Err(self.error(key, "must be a list")),
        }
    }

    fn names(&self, key: &str) -> Result<Vec<String>, RegistryError> {
        let mut names = Vec::new();
        for (i, item) in self.items(key)?.iter().enumerate() {
            let at = format!("{}[{i}]", self.at(key));
            let name = item
                .as_str()
                .ok_or_else(|| error(at.clone(), "must be a name"))?;
            if names.iter().any(|n| n == name) {
                return Err(error(at, format!("`{name}` is listed twice")));
            }
            names.push(name.to_owned());
        }
        Ok(names)
    }

    fn list<T>(
        &self,
        key: &str,
        read: fn(&Obj<'_>) -> Result<T, RegistryError>,
    ) -> Result<Vec<T>, RegistryError> {
        let mut list = Vec::new();
        for (i, item) in self.items(key)?.iter().enumerate() {
            list.push(read(&Obj::new(item, format!("{}[{i}]", self.at(key)))?)?);
        }
        Ok(list)
    }
}

/// Names are 1-64 characters of `a-z`, `0-9` and `_`, starting with a letter.
fn check_name(name: &str) -> Result<(), &'static str> {
    let fine = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if fine {
        Ok(())
    } else {
        Err("must be 1-64 characters of a-z, 0-9 and _, starting with a letter")
    }
}
