//! The page context a client sends with each assistant message (spec §1): where the user is and
//! everything dynamic on the screen, data items as summaries only. Read from JSON and checked;
//! pages may add keys of their own, which reach the prompt like the rest.

use serde_json::{Map, Value};
use thiserror::Error;

/// Most item summaries a context may carry.
pub const MAX_ITEM_SUMMARIES: usize = 200;
/// Largest context, as compact JSON, in bytes.
pub const MAX_CONTEXT_BYTES: usize = 48 * 1024;
/// Longest page, tab or id value.
const MAX_NAME_CHARS: usize = 64;

/// Why a context was refused (code `invalid_context`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{path}: {message}")]
pub struct ContextError {
    /// Where, e.g. `context.item_summaries`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// What the user sees, as the client describes it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatContext {
    /// The page (`chat`, `streams`, `research`...).
    pub current_page: String,
    /// Its active tab.
    pub active_tab: Option<String>,
    /// The active subtab of that tab.
    pub active_subtab: Option<String>,
    /// The saved stream shown, if any.
    pub stream_id: Option<String>,
    /// The research job shown, if any.
    pub report_id: Option<String>,
    /// The whole context as sent (the fields above included).
    state: Map<String, Value>,
}

impl ChatContext {
    /// A context of `page` with nothing else on screen.
    pub fn page(page: &str) -> Self {
        let mut state = Map::new();
        state.insert("current_page".into(), Value::String(page.into()));
        ChatContext {
            current_page: page.into(),
            state,
            ..ChatContext::default()
        }
    }

    /// Reads and checks a context; errors have the code `invalid_context`.
    ///
    /// ```
    /// use serde_json::json;
    /// use stepwise_core::registry::ChatContext;
    /// let context = ChatContext::from_value(json!({"current_page": "streams", "active_tab": "articles",
    ///     "results": {"total": 120, "loaded": 20}})).unwrap();
    /// assert_eq!(context.get("results.total"), Some(&json!(120)));
    /// assert!(ChatContext::from_value(json!({"active_tab": "x"})).is_err());
    /// ```
    pub fn from_value(value: Value) -> Result<Self, ContextError> {
        let Value::Object(state) = value else {
            return Err(invalid("context", "must be an object"));
        };
        let name = |key: &str, required: bool| -> Result<Option<String>, ContextError> {
            match state.get(key) {
                None | Some(Value::Null) if !required => Ok(None),
                Some(Value::String(text))
                    if !text.is_empty()
                        && text.chars().count() <= MAX_NAME_CHARS
                        && text
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') =>
                {
                    Ok(Some(text.clone()))
                }
                _ => Err(invalid(
                    &format!("context.{key}"),
                    "must be 1-64 characters of letters, digits, `_` and `-`",
                )),
            }
        };
        let context = ChatContext {
            current_page: name("current_page", true)?.unwrap_or_default(),
            active_tab: name("active_tab", false)?,
            active_subtab: name("active_subtab", false)?,
            stream_id: name("stream_id", false)?,
            report_id: name("report_id", false)?,
            state,
        };
        match context.state.get("item_summaries") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) if items.len() > MAX_ITEM_SUMMARIES => {
                let why = format!(
                    "at most {MAX_ITEM_SUMMARIES} summaries (send summaries of what is on screen)"
                );
                return Err(invalid("context.item_summaries", &why));
            }
            Some(Value::Array(items)) if items.iter().all(Value::is_object) => {}
            Some(_) => {
                return Err(invalid(
                    "context.item_summaries",
                    "must be a list of objects",
                ));
            }
        }
        if Value::Object(context.state.clone()).to_string().len() > MAX_CONTEXT_BYTES {
            let why = format!("is larger than {MAX_CONTEXT_BYTES} bytes of JSON");
            return Err(invalid("context", &why));
        }
        Ok(context)
    }

    /// The value at a dotted path (`search_form.query`, `results.total`), if set and not null.
    pub fn get(&self, path: &str) -> Option<&Value> {
        let mut parts = path.split('.');
        let mut value = self.state.get(parts.next()?)?;
        for part in parts {
            value = match value {
                Value::Object(map) => map.get(part)?,
                Value::Array(items) => items.get(part.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(value).filter(|v| !v.is_null())
    }

    /// The summaries of the data items on screen.
    pub fn item_summaries(&self) -> &[Value] {
        match self.state.get("item_summaries") {
            Some(Value::Array(items)) => items,
            _ => &[],
        }
    }

    /// Every key and value, as sent.
    pub fn state(&self) -> &Map<String, Value> {
        &self.state
    }

    /// The context as JSON.
    pub fn to_value(&self) -> Value {
        Value::Object(self.state.clone())
    }
}

fn invalid(path: &str, message: &str) -> ContextError {
    ContextError {
        path: path.into(),
        message: message.into(),
    }
}
