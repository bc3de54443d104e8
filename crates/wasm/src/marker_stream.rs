//! `MarkerStream`: the incremental marker parser for tokens streaming into the browser.

use serde::Serializer as _;
use stepwise_core::markers::{MarkerParser, MarkerRegistry};
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
pub struct MarkerStream(MarkerParser);

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
        Ok(MarkerStream(MarkerParser::with_registry(registry)))
    }

    /// Parses the next chunk; returns the events it completed (display text, markers,
    /// diagnostics).
    ///
    /// ```js
    /// stream.feed("Hello\nSUGG"); // [{ type: "text", text: "Hello\n" }]
    /// ```
    #[wasm_bindgen(unchecked_return_type = "MarkerEvent[]")]
    pub fn feed(&mut self, chunk: &str) -> JsValue {
        serialize_events(self.0.feed(chunk))
    }

    /// Ends the stream and returns the last events (held text, a final marker).
    ///
    /// ```js
    /// stream.end(); // [{ type: "marker", kind: "suggestions", value: ["a"] }]
    /// ```
    #[wasm_bindgen(unchecked_return_type = "MarkerEvent[]")]
    pub fn end(&mut self) -> JsValue {
        serialize_events(self.0.end())
    }

    /// Ends the stream and returns the whole parse; the stream cannot be used afterwards.
    ///
    /// ```js
    /// const { message, suggestions, options, extracted } = stream.finish();
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Parsed")]
    pub fn finish(self) -> JsValue {
        to_js(&self.0.finish())
    }
}

fn serialize_events(events: std::vec::Drain<'_, stepwise_core::markers::Event>) -> JsValue {
    serde_wasm_bindgen::Serializer::json_compatible()
        .collect_seq(events)
        .expect("events serialize to JS")
}
