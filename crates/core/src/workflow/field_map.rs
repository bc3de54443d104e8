//! [`Config`]: the collected fields, a small map kept as a vector sorted by field name.
//!
//! A config holds one entry per workflow field (a spec has at most [`super::MAX_STEPS`]), so a
//! sorted vector is as fast as a tree and much smaller in the browser package.

use std::fmt;
use std::ops::Index;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::FieldValue;

/// Most fields a config read from the wire may hold.
pub const MAX_CONFIG_FIELDS: usize = 256;

/// The collected fields, by field name, in name order (so its JSON is stable).
///
/// ```
/// use stepwise_core::workflow::{Config, FieldValue};
/// let mut config = Config::new();
/// config.insert("purpose".into(), FieldValue::Text("Track rivals".into()));
/// config.insert("goals".into(), FieldValue::List(vec!["Launches".into()]));
/// assert_eq!(config.keys().collect::<Vec<_>>(), ["goals", "purpose"]);
/// assert_eq!(serde_json::to_string(&config).unwrap(), r#"{"goals":["Launches"],"purpose":"Track rivals"}"#);
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Config {
    entries: Vec<(String, FieldValue)>,
}

impl Config {
    /// An empty config.
    pub fn new() -> Self {
        Config::default()
    }

    fn find(&self, field: &str) -> Result<usize, usize> {
        self.entries
            .binary_search_by(|(name, _)| name.as_str().cmp(field))
    }

    /// The value of `field`.
    pub fn get(&self, field: &str) -> Option<&FieldValue> {
        self.find(field).ok().map(|at| &self.entries[at].1)
    }

    /// Whether `field` has a value.
    pub fn contains_key(&self, field: &str) -> bool {
        self.find(field).is_ok()
    }

    /// Sets `field`, returning its previous value.
    pub fn insert(&mut self, field: String, value: FieldValue) -> Option<FieldValue> {
        match self.find(&field) {
            Ok(at) => Some(std::mem::replace(&mut self.entries[at].1, value)),
            Err(at) => {
                self.entries.insert(at, (field, value));
                None
            }
        }
    }

    /// Removes `field`, returning its value.
    pub fn remove(&mut self, field: &str) -> Option<FieldValue> {
        self.find(field).ok().map(|at| self.entries.remove(at).1)
    }

    /// How many fields have a value.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no field has a value.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The fields and their values, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &FieldValue)> {
        self.entries.iter().map(|(field, value)| (field, value))
    }

    /// The field names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.entries.iter().map(|(field, _)| field)
    }
}

impl Index<&str> for Config {
    type Output = FieldValue;

    /// The value of `field`; panics when it has none (use [`Config::get`] otherwise).
    fn index(&self, field: &str) -> &FieldValue {
        self.get(field).expect("the config has the field")
    }
}

impl<'a> IntoIterator for &'a Config {
    type Item = (&'a String, &'a FieldValue);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, FieldValue)>,
        fn(&'a (String, FieldValue)) -> (&'a String, &'a FieldValue),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(field, value)| (field, value))
    }
}

impl IntoIterator for Config {
    type Item = (String, FieldValue);
    type IntoIter = std::vec::IntoIter<(String, FieldValue)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl FromIterator<(String, FieldValue)> for Config {
    /// Collects pairs; a later value for the same field wins.
    fn from_iter<I: IntoIterator<Item = (String, FieldValue)>>(pairs: I) -> Self {
        let mut config = Config::new();
        config.extend(pairs);
        config
    }
}

impl Extend<(String, FieldValue)> for Config {
    fn extend<I: IntoIterator<Item = (String, FieldValue)>>(&mut self, pairs: I) {
        for (field, value) in pairs {
            self.insert(field, value);
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Written as a JSON object, fields in name order.
impl Serialize for Config {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (field, value) in &self.entries {
            map.serialize_entry(field, value)?;
        }
        map.end()
    }
}

/// Read from an object of at most [`MAX_CONFIG_FIELDS`] fields; a repeated field's last value wins.
impl<'de> Deserialize<'de> for Config {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ConfigVisitor)
    }
}

struct ConfigVisitor;

impl<'de> Visitor<'de> for ConfigVisitor {
    type Value = Config;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of field values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Config, A::Error> {
        let mut config = Config::new();
        while let Some((field, value)) = map.next_entry::<String, FieldValue>()? {
            config.insert(field, value);
            if config.len() > MAX_CONFIG_FIELDS {
                let message = format!("a config holds at most {MAX_CONFIG_FIELDS} fields");
                return Err(A::Error::custom(message));
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &str) -> FieldValue {
        FieldValue::Text(value.into())
    }

    #[test]
    fn behaves_as_a_sorted_map() {
        let mut config: Config = [("b".into(), text("1")), ("a".into(), text("2"))]
            .into_iter()
            .collect();
        assert_eq!(config.insert("b".into(), text("3")), Some(text("1")));
        assert_eq!(config.insert("c".into(), text("4")), None);
        assert_eq!(config.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(config["b"], text("3"));
        assert_eq!(config.remove("a"), Some(text("2")));
        assert_eq!(config.remove("a"), None);
        assert!(!config.contains_key("a") && config.contains_key("c"));
        assert_eq!(config.len(), 2);
        assert_eq!(format!("{config:?}"), r#"{"b": Text("3"), "c": Text("4")}"#);
    }

    #[test]
    fn reads_objects_with_the_last_repeat_winning_and_a_field_limit() {
        let config: Config = serde_json::from_str(r#"{"z":"1","a":["x"],"z":"2"}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&config).unwrap(),
            r#"{"a":["x"],"z":"2"}"#
        );
        let fields: Vec<String> = (0..=MAX_CONFIG_FIELDS)
            .map(|i| format!("\"f{i}\":\"v\""))
            .collect();
        let error = serde_json::from_str::<Config>(&format!("{{{}}}", fields.join(",")))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("a config holds at most 256 fields"),
            "{error}"
        );
        assert!(serde_json::from_str::<Config>("[]").is_err());
    }
}
