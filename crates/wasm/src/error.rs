//! Crossing the JS boundary: data in (`input.rs`; out: `events.rs`, `plain.rs`), errors as JS
//! `Error`s carrying a stable `code` property.

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

/// Reads plain JS data into a core type, or says why it does not fit.
pub(crate) fn read_js<T: DeserializeOwned>(value: JsValue) -> Result<T, String> {
    crate::input::read(value).map_err(|e| e.to_string())
}
