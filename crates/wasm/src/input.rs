//! Reading plain JS data into core types: a small serde `Deserializer` over a `JsValue`.
//!
//! Outputs are written with serde-wasm-bindgen. Inputs are read here instead because every
//! type error in serde-wasm-bindgen's deserializer is worded through serde's `Unexpected`,
//! whose `Display` formats floats: that alone linked 18 KB of float formatting into the
//! package (a quarter of its size budget). This reader calls such a number "a number that is
//! not a safe integer" and so carries no float formatting.

use std::fmt;

use serde::de::value::StringDeserializer;
use serde::de::{self, DeserializeSeed, Expected, IntoDeserializer, Unexpected, Visitor};
use serde::forward_to_deserialize_any;
use wasm_bindgen::{JsCast, JsValue};

/// Longest string quoted in an error message, in characters.
const MAX_QUOTED: usize = 40;

/// Why a JS value did not read as the requested type.
#[derive(Debug)]
pub(crate) struct InputError(String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

impl de::Error for InputError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        InputError(message.to_string())
    }

    fn invalid_type(found: Unexpected<'_>, expected: &dyn Expected) -> Self {
        InputError(format!(
            "invalid type: {}, expected {expected}",
            Found(found)
        ))
    }

    fn invalid_value(found: Unexpected<'_>, expected: &dyn Expected) -> Self {
        InputError(format!(
            "invalid value: {}, expected {expected}",
            Found(found)
        ))
    }
}

/// Words a found value for an error message, without formatting floats.
struct Found<'a>(Unexpected<'a>);

impl fmt::Display for Found<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Unexpected::Bool(b) => write!(f, "boolean `{b}`"),
            Unexpected::Unsigned(n) => write!(f, "integer `{n}`"),
            Unexpected::Signed(n) => write!(f, "integer `{n}`"),
            Unexpected::Float(_) => f.write_str("a number that is not a safe integer"),
            Unexpected::Str(s) => write!(f, "string `{s:.MAX_QUOTED$}`"),
            Unexpected::Unit => f.write_str("null"),
            Unexpected::Seq => f.write_str("an array"),
            Unexpected::Map => f.write_str("an object"),
            Unexpected::Other(other) => f.write_str(other),
            _ => f.write_str("a value of another kind"),
        }
    }
}

/// Reads plain JS data into `T`.
pub(crate) fn read<T: de::DeserializeOwned>(value: JsValue) -> Result<T, InputError> {
    T::deserialize(JsData(value))
}

/// A JS value being read: `null`/`undefined`, booleans, numbers, strings, arrays, `Map`s and
/// plain objects (read as maps of their own enumerable string keys).
struct JsData(JsValue);

impl JsData {
    /// The value as an error message words it.
    fn found(&self) -> Unexpected<'static> {
        let value = &self.0;
        if value.is_null() || value.is_undefined() {
            Unexpected::Unit
        } else if let Some(b) = value.as_bool() {
            Unexpected::Bool(b)
        } else if let Some(n) = value.as_f64() {
            match js_sys::Number::is_safe_integer(value) {
                true if n >= 0.0 => Unexpected::Unsigned(n as u64),
                true => Unexpected::Signed(n as i64),
                false => Unexpected::Float(n),
            }
        } else if value.is_string() {
            Unexpected::Other("a string") // worded by `mismatch`, which has the text
        } else if js_sys::Array::is_array(value) {
            Unexpected::Seq
        } else if value.is_object() && !value.is_function() {
            Unexpected::Map
        } else {
            Unexpected::Other("a JS value that is not plain data")
        }
    }

    /// The error of a value of the wrong kind for `expected`.
    fn mismatch(&self, expected: &dyn Expected) -> InputError {
        match self.0.as_string() {
            Some(text) => de::Error::invalid_type(Unexpected::Str(&text), expected),
            None => de::Error::invalid_type(self.found(), expected),
        }
    }

    /// The entries of a `Map` or a plain object.
    fn entries(&self) -> Option<Entries> {
        let value = &self.0;
        let entries = if value.is_instance_of::<js_sys::Map>() {
            let map: &js_sys::Map = value.unchecked_ref();
            js_sys::Array::from(&map.entries())
        } else if value.is_object() && !value.is_function() && !js_sys::Array::is_array(value) {
            js_sys::Object::entries(value.unchecked_ref())
        } else {
            return None;
        };
        Some(Entries {
            entries,
            next: 0,
            value: None,
        })
    }
}

// Typed requests are answered directly, and a value of another kind is refused here: only
// `deserialize_any` calls every `visit_*` method, so each type links just those it reads.
impl<'de> de::Deserializer<'de> for JsData {
    type Error = InputError;

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, InputError> {
        match self.0.as_string() {
            Some(s) => visitor.visit_string(s),
            None => Err(self.mismatch(&visitor)),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, InputError> {
        self.deserialize_string(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, InputError> {
        self.deserialize_string(visitor)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, InputError> {
        match self.0.as_bool() {
            Some(b) => visitor.visit_bool(b),
            None => Err(self.mismatch(&visitor)),
        }
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, InputError> {
        match (self.0.as_f64(), self.found()) {
            (Some(n), Unexpected::Unsigned(_)) => visitor.visit_u64(n as u64),
            (Some(n), Unexpected::Signed(_)) => visitor.visit_i64(n as i64),
            _ => Err(self.mismatch(&visitor)),
        }
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, InputError> {
        self.deserialize_u64(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, InputError> {
        if js_sys::Array::is_array(&self.0) {
            let items: js_sys::Array = self.0.unchecked_into();
            visitor.visit_seq(Items { items, next: 0 })
        } else {
            Err(self.mismatch(&visitor))
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, InputError> {
        match self.entries() {
            Some(entries) => visitor.visit_map(entries),
            None => Err(self.mismatch(&visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, InputError> {
        self.deserialize_map(visitor)
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, InputError> {
        let value = self.0;
        if value.is_null() || value.is_undefined() {
            visitor.visit_unit()
        } else if let Some(b) = value.as_bool() {
            visitor.visit_bool(b)
        } else if let Some(n) = value.as_f64() {
            if !js_sys::Number::is_safe_integer(&value) {
                visitor.visit_f64(n)
            } else if n >= 0.0 {
                visitor.visit_u64(n as u64)
            } else {
                visitor.visit_i64(n as i64)
            }
        } else if let Some(s) = value.as_string() {
            visitor.visit_string(s)
        } else if js_sys::Array::is_array(&value) {
            let items: js_sys::Array = value.unchecked_into();
            visitor.visit_seq(Items { items, next: 0 })
        } else if value.is_instance_of::<js_sys::Map>() {
            let map: &js_sys::Map = value.unchecked_ref();
            let entries = js_sys::Array::from(&map.entries());
            visitor.visit_map(Entries {
                entries,
                next: 0,
                value: None,
            })
        } else if value.is_object() && !value.is_function() {
            let entries = js_sys::Object::entries(value.unchecked_ref());
            visitor.visit_map(Entries {
                entries,
                next: 0,
                value: None,
            })
        } else {
            Err(de::Error::invalid_type(
                Unexpected::Other("a JS value that is not plain data"),
                &visitor,
            ))
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, InputError> {
        if self.0.is_null() || self.0.is_undefined() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, InputError> {
        // Only unit variants cross the boundary, written as their name.
        match self.0.as_string() {
            Some(name) => {
                let name: StringDeserializer<InputError> = name.into_deserializer();
                visitor.visit_enum(name)
            }
            None => Err(self.mismatch(&visitor)),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, InputError> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u128 f32 f64 char bytes byte_buf
        unit unit_struct newtype_struct tuple tuple_struct
    }
}

/// The items of a JS array, read in order.
struct Items {
    items: js_sys::Array,
    next: u32,
}

impl<'de> de::SeqAccess<'de> for Items {
    type Error = InputError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, InputError> {
        if self.next >= self.items.length() {
            return Ok(None);
        }
        let item = self.items.get(self.next);
        self.next += 1;
        seed.deserialize(JsData(item)).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some((self.items.length() - self.next) as usize)
    }
}

/// The `[key, value]` pairs of `Object.entries`, read in order.
struct Entries {
    entries: js_sys::Array,
    next: u32,
    value: Option<JsValue>,
}

impl<'de> de::MapAccess<'de> for Entries {
    type Error = InputError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, InputError> {
        if self.next >= self.entries.length() {
            return Ok(None);
        }
        let pair: js_sys::Array = self.entries.get(self.next).unchecked_into();
        self.next += 1;
        self.value = Some(pair.get(1));
        seed.deserialize(JsData(pair.get(0))).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, InputError> {
        let value = self.value.take().unwrap_or(JsValue::UNDEFINED);
        seed.deserialize(JsData(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some((self.entries.length() - self.next) as usize)
    }
}
