//! Marker events as JS objects, built by small JS constructors: the one hand-built path left
//! in the package (everything else crosses through serde-wasm-bindgen, `error.rs`).
//!
//! `feed` runs once per streamed token, so its result is on the hot path: each event is one
//! call into a constructor below (a few more for list items). Measured in one run by
//! `node bench/events.bench.mjs` against the same package built with feature `serde-events`
//! (this file's events and parse written by serde-wasm-bindgen): serde took 0.84x to 1.30x the
//! hand-built time (noise-level on replies, up to 1.30x with a marker every other line at 4 B
//! chunks), and it made the package 97,762 B gzip instead of 89,567 B (+8,195 B, 542 B under
//! the 96 KB budget): the figures in bench/README.md, "Marker events: hand-built or
//! serde-wasm-bindgen". A payload's data is `JSON.parse`d from its validated text in both
//! builds: serde cannot carry the core's raw JSON text (`JsonText`) as a value. `finish` builds the whole parse from the
//! same constructors. The objects have exactly the shape `MarkerEvent` declares, and the
//! shared vectors check them against the core's serde output.

use stepwise_core::markers::{
    Event, ExtractedField, Marker, Parsed, SuggestedAction, SuggestedValue,
};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = "
export function text(text) { return { type: 'text', text }; }
export function marker(kind, value) { return { type: 'marker', kind, value }; }
export function diagnostic(code, message, line) { return { type: 'diagnostic', code, message, line }; }
export function diagnosticData(code, message, line) { return { code, message, line }; }
export function parsed(message, suggestions, options, extracted, proposed_message, target_field, suggested_values, suggested_actions, payloads, diagnostics) {
  return { message, suggestions, options, extracted, proposed_message, target_field, suggested_values, suggested_actions, payloads, diagnostics };
}
export function object2(k1, v1, k2, v2) { return { [k1]: v1, [k2]: v2 }; }
export function action(label, action, handler, target) { return target === undefined ? { label, action, handler } : { label, action, handler, target }; }
export function payload(type, json) { return { type, data: JSON.parse(json) }; }
export function payloadLater(type) { return { type, data: null }; }
")]
extern "C" {
    /// `{ type: "text", text }`.
    fn text(text: &JsValue) -> JsValue;
    fn marker(kind: &str, value: &JsValue) -> JsValue;
    fn diagnostic(code: &str, message: &str, line: u32) -> JsValue;
    #[wasm_bindgen(js_name = diagnosticData)]
    fn diagnostic_data(code: &str, message: &str, line: u32) -> JsValue;
    #[allow(clippy::too_many_arguments)]
    fn parsed(
        message: &str,
        suggestions: JsValue,
        options: JsValue,
        extracted: JsValue,
        proposed_message: JsValue,
        target_field: JsValue,
        suggested_values: JsValue,
        suggested_actions: JsValue,
        payloads: JsValue,
        diagnostics: JsValue,
    ) -> JsValue;
    fn object2(k1: &str, v1: &str, k2: &str, v2: &str) -> JsValue;
    fn action(label: &str, action: &str, handler: &str, target: Option<String>) -> JsValue;
    /// A payload's value. Its JSON text was validated by the core; the engine's `JSON.parse`
    /// builds a large object many times faster than field-by-field conversion.
    fn payload(payload_type: &str, json: &str) -> JsValue;
    /// A payload whose data the JS entry reads from the chunks it kept (`takeSpans`).
    #[wasm_bindgen(js_name = payloadLater)]
    fn payload_later(payload_type: &str) -> JsValue;
}

/// Appends the events to `array` as JS objects. A payload's value is also kept in `payloads`,
/// in order, so `finish` can reuse it instead of parsing the body again. The payloads have the
/// body `windowed` (UTF-16 offsets into the chunks the JS entry kept), in order, or none: a
/// windowed payload's value is pushed to `spans` with its offsets, for the entry to fill in.
pub(crate) fn push_events(
    array: &js_sys::Array,
    events: std::vec::Drain<'_, Event>,
    payloads: &mut Vec<JsValue>,
    windowed: &[(u64, u64)],
    spans: &js_sys::Array,
) {
    let mut windowed = windowed.iter();
    for event in events {
        array.push(&event_to_js(&event, payloads, &mut windowed, spans));
    }
}

fn event_to_js(
    event: &Event,
    payloads: &mut Vec<JsValue>,
    windowed: &mut std::slice::Iter<'_, (u64, u64)>,
    spans: &js_sys::Array,
) -> JsValue {
    #[cfg(feature = "serde-events")]
    if !matches!(event, Event::Marker(Marker::Payload(_))) {
        return crate::error::to_js(event);
    }
    match event {
        Event::Text { text: body } => text(&JsValue::from_str(body)),
        Event::Diagnostic(d) => diagnostic(d.code.as_str(), &d.message, d.line),
        Event::Marker(m) => {
            let value = match m {
                Marker::Suggestions(items) | Marker::Options(items) => strings(items),
                Marker::ExtractedData(f) => extracted_field(f),
                Marker::ProposedMessage(s) | Marker::TargetField(s) => JsValue::from_str(s),
                Marker::SuggestedValues(values) => array(values, suggested_value),
                Marker::SuggestedActions(actions) => array(actions, suggested_action),
                Marker::Payload(p) => {
                    let value = match windowed.next() {
                        Some(&(start, end)) => {
                            let value = payload_later(&p.payload_type);
                            spans.push(&value);
                            spans.push(&JsValue::from_f64(start as f64));
                            spans.push(&JsValue::from_f64(end as f64));
                            value
                        }
                        None => payload(&p.payload_type, p.data.as_str()),
                    };
                    payloads.push(value.clone());
                    value
                }
            };
            marker(m.kind(), &value)
        }
    }
}

/// The whole parse as the `Parsed` object, written by serde-wasm-bindgen but for its payloads.
#[cfg(feature = "serde-events")]
pub(crate) fn parsed_to_js(parse: &Parsed, payloads: &[JsValue]) -> JsValue {
    let object = crate::error::to_js(&SerdeParsed(parse));
    let array: js_sys::Array = payloads.iter().collect();
    let _ = js_sys::Reflect::set(&object, &JsValue::from_str("payloads"), &array);
    object
}

/// The whole parse as the `Parsed` object; `payloads` are the JS values its events carried.
#[cfg(not(feature = "serde-events"))]
pub(crate) fn parsed_to_js(parse: &Parsed, payloads: &[JsValue]) -> JsValue {
    parsed(
        &parse.message,
        strings(&parse.suggestions),
        strings(&parse.options),
        array(&parse.extracted, extracted_field),
        optional(parse.proposed_message.as_deref()),
        optional(parse.target_field.as_deref()),
        array(&parse.suggested_values, suggested_value),
        array(&parse.suggested_actions, suggested_action),
        payloads.iter().collect::<js_sys::Array>().into(),
        array(&parse.diagnostics, |d| {
            diagnostic_data(d.code.as_str(), &d.message, d.line)
        }),
    )
}

/// A string, or `null` when absent (as serde writes `None`).
#[cfg(not(feature = "serde-events"))]
fn optional(value: Option<&str>) -> JsValue {
    value.map_or(JsValue::NULL, JsValue::from_str)
}

fn array<T>(items: &[T], to_js: impl Fn(&T) -> JsValue) -> JsValue {
    items.iter().map(to_js).collect::<js_sys::Array>().into()
}

fn strings(items: &[String]) -> JsValue {
    array(items, |item| JsValue::from_str(item))
}

fn extracted_field(f: &ExtractedField) -> JsValue {
    object2("field", &f.field, "value", &f.value)
}

fn suggested_value(v: &SuggestedValue) -> JsValue {
    object2("label", &v.label, "value", &v.value)
}

fn suggested_action(a: &SuggestedAction) -> JsValue {
    action(&a.label, &a.action, a.handler.as_str(), a.target.clone())
}

/// The parse without its payloads (their values are the JS ones the events carried): the
/// `serde-events` build's `finish`.
#[cfg(feature = "serde-events")]
struct SerdeParsed<'p>(&'p Parsed);

#[cfg(feature = "serde-events")]
impl serde::Serialize for SerdeParsed<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let p = self.0;
        let mut s = serializer.serialize_struct("Parsed", 9)?;
        s.serialize_field("message", &p.message)?;
        s.serialize_field("suggestions", &p.suggestions)?;
        s.serialize_field("options", &p.options)?;
        s.serialize_field("extracted", &p.extracted)?;
        s.serialize_field("proposed_message", &p.proposed_message)?;
        s.serialize_field("target_field", &p.target_field)?;
        s.serialize_field("suggested_values", &p.suggested_values)?;
        s.serialize_field("suggested_actions", &p.suggested_actions)?;
        s.serialize_field("diagnostics", &p.diagnostics)?;
        s.end()
    }
}
