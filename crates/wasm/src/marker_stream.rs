//! `MarkerStream`: the incremental marker parser for tokens streaming into the browser.

use stepwise_core::markers::{Event, Marker, MarkerParser, MarkerRegistry};
use wasm_bindgen::prelude::*;

use crate::error::{coded_error, to_js};

/// Parses marker lines while model output streams in.
///
/// ```js
/// const stream = new MarkerStream(["SCHEMA_PROPOSAL"]);
/// for await (const chunk of tokens) {
///   for (const event of stream.feed(chunk)) {
///     if (event.type === "text") show(event.text);
///     else if (event.type === "marker" && event.kind === "suggestions") renderChips(event.value);
///   }
/// }
/// const parsed = stream.finish(); // { message, suggestions, options, extracted, ... }
/// ```
#[wasm_bindgen]
pub struct MarkerStream {
    parser: MarkerParser,
    /// A UTF-16 high surrogate that ended the last chunk, waiting for its low half: JS strings
    /// may be split inside a surrogate pair, Rust strings may not.
    pending_high: Option<js_sys::JsString>,
    /// The JS form of every payload emitted so far, reused by `finish`.
    payloads: Vec<JsValue>,
}

#[wasm_bindgen]
impl MarkerStream {
    /// A stream recognizing the built-in markers plus the given payload marker names
    /// (e.g. `["SCHEMA_PROPOSAL"]`); throws `invalid_marker_name`, `duplicate_marker` or
    /// `too_many_markers`.
    #[wasm_bindgen(constructor)]
    pub fn new(payload_markers: Option<Vec<String>>) -> Result<MarkerStream, JsValue> {
        let mut registry = MarkerRegistry::new();
        for name in payload_markers.unwrap_or_default() {
            registry
                .register_payload(&name)
                .map_err(|e| coded_error(e.code(), &e.to_string()))?;
        }
        Ok(MarkerStream {
            parser: MarkerParser::with_registry(registry),
            pending_high: None,
            payloads: Vec::new(),
        })
    }

    /// Parses the next chunk; returns the events it completed (display text, markers,
    /// diagnostics). Chunks may be split anywhere, even inside a surrogate pair.
    ///
    /// ```js
    /// stream.feed("Hello\nSUGG"); // [{ type: "text", text: "Hello\n" }]
    /// ```
    #[wasm_bindgen(unchecked_return_type = "MarkerEvent[]")]
    pub fn feed(&mut self, chunk: js_sys::JsString) -> JsValue {
        let mut chunk = match self.pending_high.take() {
            Some(high) => high.concat(&chunk),
            None => chunk,
        };
        let len = chunk.length();
        if len > 0 && (0xD800..0xDC00).contains(&(chunk.char_code_at(len - 1) as u32)) {
            self.pending_high = Some(chunk.slice(len - 1, len));
            chunk = chunk.slice(0, len - 1);
        }
        let text = String::from(&chunk);
        let events = self.parser.feed(&text);
        events_to_js(events, Some((&text, &chunk)), &mut self.payloads).into()
    }

    /// Ends the stream and returns the last events (held text, a final marker).
    ///
    /// ```js
    /// stream.end(); // [{ type: "marker", kind: "suggestions", value: ["a"] }]
    /// ```
    #[wasm_bindgen(unchecked_return_type = "MarkerEvent[]")]
    pub fn end(&mut self) -> JsValue {
        if let Some(high) = self.pending_high.take() {
            // A lone high surrogate at the very end is not text; it becomes U+FFFD.
            self.parser.feed(&String::from(high));
        }
        let events = self.parser.end();
        events_to_js(events, None, &mut self.payloads).into()
    }

    /// Ends the stream and returns the whole parse; the stream cannot be used afterwards.
    ///
    /// ```js
    /// const { message, suggestions, options, extracted } = stream.finish();
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Parsed")]
    pub fn finish(mut self) -> JsValue {
        self.end();
        let mut parsed = self.parser.finish();
        parsed.payloads.clear(); // already converted, in order, as their events were emitted
        let object = to_js(&parsed);
        let payloads: js_sys::Array = self.payloads.iter().collect();
        // Setting a property on a plain object just created cannot fail.
        let _ = js_sys::Reflect::set(&object, &JsValue::from_str("payloads"), &payloads);
        object
    }
}

/// Builds events in one call each: far cheaper than creating the objects field by field across
/// the boundary, which dominates the cost of small deltas and large payloads.
#[wasm_bindgen(
    inline_js = "export function textEvent(text) { return { type: 'text', text }; }
export function oneEvent(event) { return [event]; }
export function payloadValue(type, json) { return { type, data: JSON.parse(json) }; }
export function payloadEvent(value) { return { type: 'marker', kind: 'payload', value }; }"
)]
extern "C" {
    #[wasm_bindgen(js_name = textEvent)]
    fn text_event(text: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = oneEvent)]
    fn one_event(event: &JsValue) -> js_sys::Array;
    #[wasm_bindgen(js_name = payloadValue)]
    fn payload_value(payload_type: &str, json: &str) -> JsValue;
    #[wasm_bindgen(js_name = payloadEvent)]
    fn payload_event(value: &JsValue) -> JsValue;
}

/// The events as a JS array. A text event whose text is exactly the chunk just fed (the
/// common case for small deltas) reuses the caller's string instead of copying it back. A
/// payload's JSON text, already validated by the core, is handed to the engine's `JSON.parse`,
/// which builds a large object many times faster than field-by-field conversion; its JS value
/// is kept in `payloads` for `finish`.
fn events_to_js(
    events: std::vec::Drain<'_, Event>,
    fed: Option<(&str, &js_sys::JsString)>,
    payloads: &mut Vec<JsValue>,
) -> js_sys::Array {
    let mut convert = |event: Event| match event {
        Event::Text { text } => match fed {
            Some((rust, js)) if rust == text => text_event(js),
            _ => text_event(&JsValue::from_str(&text)),
        },
        Event::Marker(Marker::Payload(payload)) => {
            let value = payload_value(&payload.payload_type, payload.data.get());
            payloads.push(value.clone());
            payload_event(&value)
        }
        other => to_js(&other),
    };
    let mut events = events;
    match (events.next(), events.len()) {
        (None, _) => js_sys::Array::new(),
        (Some(first), 0) => one_event(&convert(first)),
        (Some(first), _) => {
            let array = js_sys::Array::of1(&convert(first));
            for event in events {
                array.push(&convert(event));
            }
            array
        }
    }
}
