//! Crossing the JS boundary: plain data in and out through serde-wasm-bindgen, errors as JS
//! `Error`s carrying a stable `code` property.

use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;

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

/// Reads plain JS data into a core type (serde-wasm-bindgen), or says why it does not fit.
pub(crate) fn read_js<T: DeserializeOwned>(value: JsValue) -> Result<T, String> {
    serde_wasm_bindgen::from_value(value).map_err(|e| e.to_string())
}

/// Writes a core value as plain JS data in the wire's JSON shape: maps as objects, `None` as
/// `null`, 64-bit integers as numbers (serde-wasm-bindgen's JSON-compatible serializer).
pub(crate) fn to_js<T: Serialize + ?Sized>(value: &T) -> JsValue {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or_else(|e| wasm_bindgen::throw_str(&format!("writing a value: {e}")))
}
