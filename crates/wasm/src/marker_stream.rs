//! `MarkerStream`: the incremental marker parser for tokens streaming into the browser.

use stepwise_core::markers::{Event, MarkerParser, MarkerRegistry};
use wasm_bindgen::prelude::*;

use crate::error::{coded_error, from_js};
use crate::events::{parsed_to_js, push_events};

/// `feedChunk`: the chunk completed no event.
pub const NO_EVENTS: u32 = 0;
/// `feedChunk`: the chunk completed exactly one event, `{ type: "text", text: chunk }`.
pub const CHUNK_AS_TEXT: u32 = 1;
/// `feedChunk`: the events are ready for `takeEvents`.
pub const EVENTS_READY: u32 = 2;

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
    /// The events of the last `feedChunk`, until `takeEvents`.
    ready: js_sys::Array,
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
            ready: js_sys::Array::new(),
            payloads: Vec::new(),
        })
    }

    /// The parsing half of the package's `feed` (defined in `js/stepwise.js`, which holds back
    /// a trailing high surrogate so that `chunk` never ends inside a surrogate pair). Returns
    /// how the events are to be built: [`NO_EVENTS`], [`CHUNK_AS_TEXT`] (one text event that
    /// is the chunk itself, reused as the caller's string) or [`EVENTS_READY`] (`takeEvents`).
    /// A number crosses the boundary much faster than an array of fresh objects, and most
    /// streamed deltas are plain text.
    #[wasm_bindgen(js_name = feedChunk, skip_typescript)]
    pub fn feed_chunk(&mut self, chunk: &str) -> u32 {
        // A lone surrogate in the JS chunk reads as U+FFFD here, and so must reach the event.
        // (U+FFFD is EF BF BD in UTF-8: a byte search rules it out in one fast pass.)
        let as_is = memchr::memchr(0xEF, chunk.as_bytes()).is_none() || !chunk.contains('\u{FFFD}');
        if as_is && self.parser.feed_plain(chunk) {
            return CHUNK_AS_TEXT;
        }
        let events = self.parser.feed(chunk);
        if events.len() == 0 {
            return NO_EVENTS;
        }
        if events.len() == 1
            && let Some(Event::Text { text }) = events.as_slice().first()
            && text == chunk
            && as_is
        {
            return CHUNK_AS_TEXT;
        }
        push_events(&self.ready, events, &mut self.payloads);
        EVENTS_READY
    }

    /// The events of the last `feedChunk` that returned [`EVENTS_READY`].
    #[wasm_bindgen(js_name = takeEvents, skip_typescript)]
    pub fn take_events(&mut self) -> js_sys::Array {
        std::mem::replace(&mut self.ready, js_sys::Array::new())
    }

    /// Ends the stream and returns the last events (held text, a final marker).
    ///
    /// ```js
    /// stream.end(); // [{ type: "marker", kind: "suggestions", value: ["a"] }]
    /// ```
    #[wasm_bindgen(unchecked_return_type = "MarkerEvent[]")]
    pub fn end(&mut self) -> JsValue {
        let array = js_sys::Array::new();
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
