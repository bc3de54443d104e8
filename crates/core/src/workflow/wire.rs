//! Reading `UserAction` and `FieldValue` off the wire with hand-written serde visitors.
//!
//! Derived tagged and untagged enums buffer their input through serde's private `Content`
//! type, generic code that is instantiated once per deserializer and was the largest part of
//! reading an action in the wasm package. These readers take one pass and are shared by the
//! Worker and the browser. They reject what the derive rejected (unknown types, missing fields,
//! a field of another type, wrong value types), with the same kind of message. Where the derive
//! had a quirk they choose: `text_input` and `confirm` ignore the other action keys (the spec
//! marks them all optional) but reject keys no action has, which the derive let through; the
//! derive's array form (`["skip_step", "a"]`) is not read.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{FieldValue, UserAction};

impl<'de> Deserialize<'de> for FieldValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(FieldValueVisitor)
    }
}

struct FieldValueVisitor;

impl<'de> Visitor<'de> for FieldValueVisitor {
    type Value = FieldValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string or a list of strings")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<FieldValue, E> {
        Ok(FieldValue::Text(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<FieldValue, E> {
        Ok(FieldValue::Text(value))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FieldValue, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element::<String>()? {
            items.push(item);
        }
        Ok(FieldValue::List(items))
    }
}

/// The keys an action object may carry; which ones a given `type` accepts is checked after.
const ACTION_KEYS: &[&str] = &[
    "type",
    "target_field",
    "selected_value",
    "selected_values",
    "value",
    "step",
];

/// The action types, in the order of `UserAction`'s variants.
const ACTION_TYPES: &[&str] = &[
    "option_selected",
    "options_selected",
    "text_input",
    "skip_step",
    "field_edit",
    "confirm",
    "go_to_step",
];

impl<'de> Deserialize<'de> for UserAction {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ActionVisitor)
    }
}

struct ActionVisitor;

/// Every field an action may carry, as read; `UserAction` is then built from the ones its
/// `type` needs, and any other present field is an error.
#[derive(Default)]
struct ActionFields {
    kind: Option<String>,
    target_field: Option<String>,
    selected_value: Option<String>,
    selected_values: Option<Vec<String>>,
    value: Option<FieldValue>,
    step: Option<String>,
}

fn once<E: de::Error, T>(slot: &mut Option<T>, key: &'static str, value: T) -> Result<(), E> {
    if slot.replace(value).is_some() {
        return Err(E::duplicate_field(key));
    }
    Ok(())
}

impl<'de> Visitor<'de> for ActionVisitor {
    type Value = UserAction;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a user action object with a `type`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UserAction, A::Error> {
        let mut fields = ActionFields::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "type" => once(&mut fields.kind, "type", map.next_value()?)?,
                "target_field" => {
                    once(&mut fields.target_field, "target_field", map.next_value()?)?
                }
                "selected_value" => once(
                    &mut fields.selected_value,
                    "selected_value",
                    map.next_value()?,
                )?,
                "selected_values" => once(
                    &mut fields.selected_values,
                    "selected_values",
                    map.next_value()?,
                )?,
                "value" => once(&mut fields.value, "value", map.next_value()?)?,
                "step" => once(&mut fields.step, "step", map.next_value()?)?,
                other => return Err(de::Error::unknown_field(other, ACTION_KEYS)),
            }
        }
        fields.into_action()
    }
}

/// Builds the action of one `type` from the fields read.
type Build<E> = fn(ActionFields) -> Result<UserAction, E>;

impl ActionFields {
    fn into_action<E: de::Error>(mut self) -> Result<UserAction, E> {
        let Some(kind) = self.kind.take() else {
            return Err(E::missing_field("type"));
        };
        let (allowed, action): (&[&str], Build<E>) = match kind.as_str() {
            "option_selected" => (&["target_field", "selected_value"], |f| {
                Ok(UserAction::OptionSelected {
                    target_field: required(f.target_field, "target_field")?,
                    selected_value: required(f.selected_value, "selected_value")?,
                })
            }),
            "options_selected" => (&["target_field", "selected_values"], |f| {
                Ok(UserAction::OptionsSelected {
                    target_field: required(f.target_field, "target_field")?,
                    selected_values: required(f.selected_values, "selected_values")?,
                })
            }),
            // The spec's `UserAction` lists every key as optional, so a sender may add
            // `target_field` to free text or a confirmation: known keys are ignored there.
            "text_input" => (ACTION_KEYS, |_| Ok(UserAction::TextInput)),
            "skip_step" => (&["target_field"], |f| {
                Ok(UserAction::SkipStep {
                    target_field: required(f.target_field, "target_field")?,
                })
            }),
            "field_edit" => (&["target_field", "value"], |f| {
                Ok(UserAction::FieldEdit {
                    target_field: required(f.target_field, "target_field")?,
                    value: required(f.value, "value")?,
                })
            }),
            "confirm" => (ACTION_KEYS, |_| Ok(UserAction::Confirm)),
            "go_to_step" => (&["step"], |f| {
                Ok(UserAction::GoToStep {
                    step: required(f.step, "step")?,
                })
            }),
            other => return Err(E::unknown_variant(other, ACTION_TYPES)),
        };
        let present = [
            ("target_field", self.target_field.is_some()),
            ("selected_value", self.selected_value.is_some()),
            ("selected_values", self.selected_values.is_some()),
            ("value", self.value.is_some()),
            ("step", self.step.is_some()),
        ];
        if let Some((key, _)) = present
            .iter()
            .find(|(key, is_set)| *is_set && !allowed.contains(key))
        {
            return Err(E::unknown_field(key, allowed));
        }
        action(self)
    }
}

fn required<E: de::Error, T>(value: Option<T>, key: &'static str) -> Result<T, E> {
    value.ok_or_else(|| E::missing_field(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: serde_json::Value) -> Result<UserAction, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    #[test]
    fn every_action_type_reads_as_its_variant_and_writes_back_the_same() {
        for value in [
            json!({"type": "option_selected", "target_field": "a", "selected_value": "x"}),
            json!({"type": "options_selected", "target_field": "a", "selected_values": ["x"]}),
            json!({"type": "text_input"}),
            json!({"type": "skip_step", "target_field": "a"}),
            json!({"type": "field_edit", "target_field": "a", "value": ["x", "y"]}),
            json!({"type": "field_edit", "target_field": "a", "value": "x"}),
            json!({"type": "confirm"}),
            json!({"type": "go_to_step", "step": "s"}),
        ] {
            let action = read(value.clone()).unwrap();
            assert_eq!(serde_json::to_value(&action).unwrap(), value);
        }
    }

    #[test]
    fn malformed_actions_are_rejected_with_the_offending_key_named() {
        for (value, needle) in [
            (json!({"target_field": "a"}), "missing field `type`"),
            (json!({"type": "jump"}), "unknown variant `jump`"),
            (json!({"type": "skip_step"}), "missing field `target_field`"),
            (
                json!({"type": "go_to_step", "step": "s", "target_field": "a"}),
                "unknown field `target_field`",
            ),
            (
                json!({"type": "skip_step", "target_field": "a", "value": "x"}),
                "unknown field `value`",
            ),
            (
                json!({"type": "text_input", "extra": 1}),
                "unknown field `extra`",
            ),
            (
                json!({"type": "skip_step", "target_field": 3}),
                "invalid type",
            ),
            (
                json!({"type": "field_edit", "target_field": "a", "value": 3}),
                "a string or a list of strings",
            ),
            (json!(["option_selected"]), "invalid type"),
        ] {
            let error = read(value.clone()).unwrap_err();
            assert!(error.contains(needle), "{value}: {error}");
        }
    }

    #[test]
    fn free_text_and_confirm_ignore_the_other_known_action_keys() {
        let text = json!({"type": "text_input", "target_field": "purpose"});
        assert_eq!(read(text).unwrap(), UserAction::TextInput);
        let confirm = json!({"type": "confirm", "step": "review", "selected_values": []});
        assert_eq!(read(confirm).unwrap(), UserAction::Confirm);
    }

    #[test]
    fn a_repeated_key_is_rejected() {
        let error = serde_json::from_str::<UserAction>(r#"{"type":"confirm","type":"confirm"}"#)
            .unwrap_err();
        assert!(
            error.to_string().contains("duplicate field `type`"),
            "{error}"
        );
    }
}
