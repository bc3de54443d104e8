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
/// `feedChunk` flag: keep this chunk in the window (a JSON body is open in it or ended in it).
pub const WINDOW_ADD: u32 = 4;
/// `feedChunk` flag: a JSON body is still open after this chunk: keep the window.
pub const WINDOW_OPEN: u32 = 8;
/// `feedChunk` flag: payloads of these events take their data from the window (`takeSpans`).
pub const SPANS_READY: u32 = 16;

/// The chunks the JS entry keeps while a JSON body streams in, so a finished body is read from
/// the caller's own strings (one `JSON.parse` of a slice) instead of being copied out of wasm
/// memory and decoded again.
#[derive(Debug, Default)]
struct Window {
    /// UTF-16 offset from the start of the stream where the window's first chunk starts.
    start16: u64,
    /// Whether the JS entry holds a window.
    open: bool,
    /// A chunk in the window held a lone surrogate (read here as U+FFFD): bodies are then
    /// read from the core's text, as the core saw them.
    replaced: bool,
    /// Where the open body starts (UTF-16, from the start of the stream).
    body_start16: Option<u64>,
}

/// UTF-16 code units of `text`: a code unit for each UTF-8 sequence, two for a 4-byte one.
fn utf16_len(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let continuations = bytes.iter().filter(|&&b| (b as i8) < -64).count();
    let four_byte_leads = bytes.iter().filter(|&&b| b >= 0xF0).count();
    (bytes.len() - continuations + four_byte_leads) as u64
}

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
    /// UTF-16 code units fed so far.
    fed16: u64,
    /// The window of chunks a streaming JSON body is read from.
    window: Window,
    /// Payloads whose data the JS entry reads from the window: `[value, start, end, ...]`.
    spans: js_sys::Array,
    /// The window offsets of the bodies of the last chunk's payloads (reused).
    windowed: Vec<(u64, u64)>,
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
            fed16: 0,
            window: Window::default(),
            spans: js_sys::Array::new(),
            windowed: Vec::new(),
        })
    }

    /// The parsing half of the package's `feed` (defined in `js/stepwise.js`, which holds back
    /// a trailing high surrogate so that `chunk` never ends inside a surrogate pair; `len16` is
    /// the chunk's length in UTF-16 units, its JS `length`). Returns how the events are to be
    /// built, in the low two bits: [`NO_EVENTS`], [`CHUNK_AS_TEXT`] (one text event that is the
    /// chunk itself, reused as the caller's string) or [`EVENTS_READY`] (`takeEvents`); and the
    /// window's flags above them: [`WINDOW_ADD`], [`WINDOW_OPEN`], [`SPANS_READY`]
    /// (`takeSpans`). A number crosses the boundary much faster than an array of fresh objects,
    /// and most streamed deltas are plain text.
    #[wasm_bindgen(js_name = feedChunk, skip_typescript)]
    pub fn feed_chunk(&mut self, chunk: &str, len16: u32) -> u32 {
        // A lone surrogate in the JS chunk reads as U+FFFD here, and so must reach the event.
        // (U+FFFD is EF BF BD in UTF-8: a byte search rules it out in one fast pass.)
        let as_is = memchr::memchr(0xEF, chunk.as_bytes()).is_none() || !chunk.contains('\u{FFFD}');
        // The caller's string length: UTF-16 units, counted by the engine for free.
        let chunk_start16 = self.fed16;
        self.fed16 += u64::from(len16);
        if as_is && self.parser.feed_plain(chunk) {
            return CHUNK_AS_TEXT;
        }
        let chunk_start = self.parser.fed();
        self.parser.parse(chunk);
        let body_open = self.parser.open_body_start();
        let flags = if body_open.is_some() || self.window.open || self.parser.has_body_spans() {
            self.track_window(chunk, chunk_start, chunk_start16, body_open, as_is)
        } else {
            self.windowed.clear();
            0
        };
        let mut events = self.parser.take_events();
        if events.len() == 0 {
            return NO_EVENTS | flags;
        }
        if events.len() == 1
            && let Some(Event::Text { text }) = events.as_slice().first()
            && text == chunk
            && as_is
        {
            events.next();
            return CHUNK_AS_TEXT | flags;
        }
        push_events(
            &self.ready,
            events,
            &mut self.payloads,
            &self.windowed,
            &self.spans,
        );
        EVENTS_READY | flags
    }

    /// The payloads of the last events whose data the JS entry reads from its window:
    /// `[value, start, end, ...]`, UTF-16 offsets into the window's joined chunks.
    #[wasm_bindgen(js_name = takeSpans, skip_typescript)]
    pub fn take_spans(&mut self) -> js_sys::Array {
        std::mem::replace(&mut self.spans, js_sys::Array::new())
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
        push_events(
            &array,
            self.parser.end(),
            &mut self.payloads,
            &[],
            &self.spans,
        );
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

impl MarkerStream {
    /// Keeps the window of a chunk that opens, continues or closes JSON bodies: the `feedChunk`
    /// flags for the JS entry, and the window offsets of the bodies completed (in `windowed`;
    /// none when a chunk of the window read a lone surrogate as U+FFFD, so that the core's text
    /// is used, as the core saw it).
    fn track_window(
        &mut self,
        chunk: &str,
        chunk_start: usize,
        chunk_start16: u64,
        body_open: Option<usize>,
        as_is: bool,
    ) -> u32 {
        if !self.window.open {
            self.window = Window {
                start16: chunk_start16,
                open: true,
                replaced: false,
                body_start16: None,
            };
        }
        self.window.replaced |= !as_is;
        let mut flags = WINDOW_ADD;
        let offset16 = |at: usize| chunk_start16 + utf16_len(&chunk[..at - chunk_start]);
        self.windowed.clear();
        for span in self.parser.drain_body_spans() {
            let start16 = match self.window.body_start16.take() {
                Some(start16) if span.start < chunk_start => start16,
                _ => offset16(span.start),
            };
            let end16 = offset16(span.end);
            let start = self.window.start16;
            self.windowed.push((start16 - start, end16 - start));
        }
        if self.window.replaced {
            self.windowed.clear();
        } else if !self.windowed.is_empty() {
            flags |= SPANS_READY;
        }
        match body_open {
            Some(start) => {
                if start >= chunk_start {
                    self.window.body_start16 = Some(offset16(start));
                }
                flags | WINDOW_OPEN
            }
            None => {
                self.window.open = false;
                flags
            }
        }
    }
}
