//! [`JsonText`]: JSON validated once and kept as the text it was written as.

use std::fmt;

use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::{JsonCheck, JsonError};

/// A valid JSON text, exactly as written (a payload body, say). It is never rebuilt: it
/// serializes as the JSON itself, and a reader parses it into whatever type it needs.
///
/// ```
/// use stepwise_core::json::JsonText;
/// let text = JsonText::parse(r#"{"fields": [1, 2]}"#).unwrap();
/// assert_eq!(text.as_str(), r#"{"fields": [1, 2]}"#);
/// assert_eq!(serde_json::to_string(&text).unwrap(), r#"{"fields": [1, 2]}"#);
/// assert!(JsonText::parse("{\"a\": }").is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct JsonText(String);

impl JsonText {
    /// Validates `text` as one JSON value (whitespace around it allowed).
    pub fn parse(text: &str) -> Result<JsonText, JsonError> {
        let mut check = JsonCheck::default();
        check.feed(text.as_bytes());
        check.finish()?;
        Ok(JsonText(text.to_owned()))
    }

    /// The text of a JSON value.
    pub fn from_value(value: &serde_json::Value) -> JsonText {
        JsonText(value.to_string())
    }

    /// Wraps text the caller has already validated with a [`JsonCheck`].
    pub(crate) fn checked(text: String) -> JsonText {
        JsonText(text)
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The JSON text, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Writes the JSON itself (through `serde_json`'s raw values, so only serde_json writes it raw).
impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RawValue::from_string(self.0.clone())
            .map_err(S::Error::custom)?
            .serialize(serializer)
    }
}

/// Reads any JSON value as its text (with `serde_json` deserializers).
impl<'de> Deserialize<'de> for JsonText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        JsonText::parse(raw.get()).map_err(D::Error::custom)
    }
}
