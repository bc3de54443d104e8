//! Crossing the JS boundary: plain data in and out through serde-wasm-bindgen, errors as JS
//! `Error`s carrying a stable `code` property.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};

/// Code of an input whose shape does not match the declared type.
pub(crate) const INVALID_INPUT: &str = "invalid_input";

/// A real JS `Error` with `code` set.
pub(crate) fn coded_error(code: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    // Setting a property on a fresh Error object cannot fail.
    let _ = js_sys::Reflect::set(&error, &JsValue::from_str("code"), &JsValue::from_str(code));
    error.into()
}

/// Reads plain JS data into a core type, or an `invalid_input` error naming what was read.
pub(crate) fn from_js<T: DeserializeOwned>(value: JsValue, what: &str) -> Result<T, JsValue> {
    read_js(value).map_err(|e| coded_error(INVALID_INPUT, &format!("{what}: {e}")))
}

/// Reads plain JS data into a core type through serde-wasm-bindgen, or says why it does not fit.
///
/// serde-wasm-bindgen looks up only the fields a struct declares, so keys a struct does not
/// know are ignored here; a type that refuses them (the workflow spec) is checked first with
/// [`unknown_key`].
pub(crate) fn read_js<T: DeserializeOwned>(value: JsValue) -> Result<T, String> {
    serde_wasm_bindgen::from_value(value).map_err(js_message)
}

/// The message of a serde-wasm-bindgen error (a JS `Error` underneath), with JS's name for
/// the value serde calls "unit value".
fn js_message(error: serde_wasm_bindgen::Error) -> String {
    let value: JsValue = error.into();
    let message: String = match value.dyn_into::<js_sys::Error>() {
        Ok(error) => error.message().into(),
        Err(value) => value
            .as_string()
            .unwrap_or_else(|| "unreadable value".into()),
    };
    message.replace("invalid type: unit value", "invalid type: null")
}

/// The first own key of `object` that the struct `T` does not declare, worded as serde words
/// it (`unknown field `color`, expected one of ...`); `None` when every key is known or
/// `object` is not an object (the read itself then says what is wrong).
pub(crate) fn unknown_key<'de, T: Deserialize<'de>>(object: &JsValue) -> Option<String> {
    if !object.is_object() || js_sys::Array::is_array(object) {
        return None;
    }
    let fields = fields_of::<T>();
    let keys = js_sys::Object::keys(object.unchecked_ref::<js_sys::Object>());
    keys.iter()
        .filter_map(|key| key.as_string())
        .find(|key| !fields.contains(&key.as_str()))
        .map(|key| {
            let expected: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
            format!(
                "unknown field `{key}`, expected one of {}",
                expected.join(", ")
            )
        })
}

/// The field names a derived `Deserialize` struct declares: asked of a deserializer that only
/// records what `deserialize_struct` is given.
fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Fields<'f>(&'f mut &'static [&'static str]);
    impl<'de> serde::Deserializer<'de> for Fields<'_> {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: serde::de::Visitor<'de>>(
            self,
            _: V,
        ) -> Result<V::Value, Self::Error> {
            Err(serde::de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(serde::de::Error::custom("fields recorded"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Fields(&mut fields));
    fields
}

/// Writes a core value as plain JS data in the wire's JSON shape: maps as objects, `None` as
/// `null`, 64-bit integers as numbers (serde-wasm-bindgen's JSON-compatible serializer).
pub(crate) fn to_js<T: Serialize + ?Sized>(value: &T) -> JsValue {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or_else(|e| wasm_bindgen::throw_str(&format!("writing a value: {e}")))
}
