//! `MarkerStream`: the incremental marker parser for tokens streaming into the browser.

use stepwise_core::markers::{Event, MarkerParser, MarkerRegistry};
use wasm_bindgen::prelude::*;

use crate::error::{coded_error, from_js};
use crate::events::{one_text, parsed_to_js, push_events};

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
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "string[]")] payload_markers: Option<
            js_sys::Array,
        >,
    ) -> Result<MarkerStream, JsValue> {
        let names: Vec<String> = match payload_markers {
            Some(names) => from_js(names.into(), "payload markers")?,
            None => Vec::new(),
        };
        let mut registry = MarkerRegistry::new();
        for name in names {
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
        let mut text = String::from(&chunk);
        // A lone surrogate reads as U+FFFD, so only a chunk ending in U+FFFD may end inside a
        // surrogate pair: only then is the JS string itself inspected (two more calls).
        if text.ends_with('\u{FFFD}') {
            let len = chunk.length();
            if (0xD800..0xDC00).contains(&(chunk.char_code_at(len - 1) as u32)) {
                self.pending_high = Some(chunk.slice(len - 1, len));
                chunk = chunk.slice(0, len - 1);
                text.truncate(text.len() - '\u{FFFD}'.len_utf8());
            }
        }
        let events = self.parser.feed(&text);
        if events.len() == 1
            && let Some(Event::Text { text: shown }) = events.as_slice().first()
            && *shown == text
            && !text.contains('\u{FFFD}')
        {
            // The common small delta: plain text, handed back as the caller's string (unless it
            // may hold a lone surrogate, which the event must carry as U+FFFD).
            return one_text(&chunk).into();
        }
        let array = js_sys::Array::new();
        push_events(&array, events, &mut self.payloads);
        array.into()
    }

    /// Ends the stream and returns the last events (held text, a final marker).
    ///
    /// ```js
    /// stream.end(); // [{ type: "marker", kind: "suggestions", value: ["a"] }]
    /// ```
    #[wasm_bindgen(unchecked_return_type = "MarkerEvent[]")]
    pub fn end(&mut self) -> JsValue {
        let array = js_sys::Array::new();
        if let Some(high) = self.pending_high.take() {
            // A lone high surrogate at the very end is not text; it becomes U+FFFD.
            let events = self.parser.feed(&String::from(high));
            push_events(&array, events, &mut self.payloads);
        }
        push_events(&array, self.parser.end(), &mut self.payloads);
        array.into()
    }

    /// Ends the stream and returns the whole parse; the stream cannot be used afterwards.
    ///
    /// ```js
    /// const { message, suggestions, options, extracted } = stream.finish();
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Parsed")]
    pub fn finish(mut self) -> JsValue {
        self.end();
        // Payloads were converted, in order, as their events were emitted.
        parsed_to_js(&self.parser.finish(), &self.payloads)
    }
}
