//! `MarkerStream`: the incremental marker parser for tokens streaming into the browser.

use stepwise_core::markers::{
    Event, Marker, MarkerParser, MarkerRegistry, TextPiece, TextPosition,
};
use wasm_bindgen::prelude::*;

use crate::error::{coded_error, from_js};
use crate::tape::{Tape, TapeWriter, write_parse};
use crate::window::{ChunkAt, Window};

/// `feedInput`: the chunk completed no event.
pub const NO_EVENTS: u32 = 0;
/// `feedInput`: the chunk completed exactly one event, `{ type: "text", text: chunk }`.
pub const CHUNK_AS_TEXT: u32 = 1;
/// `feedInput`: the events are described by the tape (`tape.rs`).
pub const EVENTS_READY: u32 = 2;
/// `feedInput` flag: keep this chunk in the window (a JSON body is open in it or ended in it).
pub const WINDOW_ADD: u32 = 4;
/// `feedInput` flag: a JSON body is still open after this chunk: keep the window.
pub const WINDOW_OPEN: u32 = 8;
/// `feedInput` flag: payloads of these events take their data from the window (the spans:
/// `[event index, start, end]`, UTF-16 offsets into the window's joined chunks).
pub const SPANS_READY: u32 = 16;
/// `feedInput` flag: the tape refers to strings of its blob, to decode (`tape.rs`).
pub const BLOB_READY: u32 = 32;
/// `feedInput` flag: a line start is still undecided after this chunk: the entry keeps the
/// text from here on, for the tape's `EARLIER` pieces.
pub const HOLDING: u32 = 64;
/// `feedInput` flag: the parser is at a line start with nothing
/// held, and no window is open: the entry may find the display text of the next chunk's first
/// lines itself (those whose first character the lead-byte map rules out) and give it to
/// `skipText` instead of writing it into wasm memory.
pub const AT_LINE_START: u32 = 128;
/// Flag as [`AT_LINE_START`]: the parser is inside a display line: the next chunk up to and
/// with its first line break is display text.
pub const IN_TEXT_LINE: u32 = 256;

/// The largest input buffer [`MarkerStream::reset`] keeps (a chunk of a third as many UTF-16
/// units fits in it).
const KEPT_INPUT: usize = 64 * 1024;

/// Slots of the shared block the JS entry reads (`MarkerStream::shared`).
const INPUT_AT: usize = 0;
const INPUT_CAPACITY: usize = 1;
const TAPE_AT: usize = 2;
const TAPE_LEN: usize = 3;
/// The blob of the tape.
const TEXT_AT: usize = 4;
const TEXT_LEN: usize = 5;
const SPANS_AT: usize = 6;
const SPANS_LEN: usize = 7;
/// Where the lead-byte map starts: 8 words, bit `b` set when a line whose first UTF-8 byte is
/// `b` may be a marker line (the core's rule; the entry maps a UTF-16 unit to its lead byte).
const LEAD_MAP: usize = 8;

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
    /// UTF-16 code units fed so far.
    fed16: u64,
    /// The window of chunks a streaming JSON body is read from.
    window: Window,
    /// The window offsets of the bodies of the last chunk's payloads (reused).
    windowed: Vec<(u64, u64)>,
    /// Where the JS entry writes each chunk's UTF-8 bytes (`TextEncoder.encodeInto`), so that
    /// no buffer is allocated and freed per chunk.
    input: Vec<u8>,
    /// The events of the last chunk, as the JS entry reads them (`tape.rs`).
    tape: Tape,
    /// The payloads whose data the JS entry reads from its window: `[event index, start,
    /// end]`.
    spans: Vec<u32>,
    /// The text pieces of the last chunk's events (reused).
    pieces: Vec<TextPiece>,
    /// The places of the last chunk's line markers' strings in it (reused).
    places: Vec<(usize, std::ops::Range<usize>)>,
    /// What the JS entry reads from wasm memory: the addresses and lengths of the input, the
    /// tape, its blob and the spans, then the lead-byte map (boxed: its address is stable).
    shared: Box<[u32; 16]>,
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
        let mut parser = MarkerParser::with_registry(registry);
        parser.set_text_spans(true);
        let mut shared = Box::new([0; 16]);
        shared[LEAD_MAP..].copy_from_slice(&parser.marker_lead_map());
        Ok(MarkerStream {
            parser,
            fed16: 0,
            window: Window::default(),
            windowed: Vec::new(),
            input: Vec::new(),
            tape: Tape::default(),
            spans: Vec::new(),
            pieces: Vec::new(),
            places: Vec::new(),
            // The input buffer is made by the first chunk's `reserveInput`.
            shared,
        })
    }

    /// The address in wasm memory of the shared block: `[input address, input capacity, tape
    /// address, tape length (words), blob address, its length (bytes), spans address,
    /// spans length (words)]` and the 8 words of the lead-byte map, read by the JS entry.
    #[wasm_bindgen(js_name = sharedAt, skip_typescript)]
    pub fn shared_at(&self) -> u32 {
        self.shared.as_ptr() as usize as u32
    }

    /// Makes the input buffer hold at least `bytes` bytes (its address may change).
    #[wasm_bindgen(js_name = reserveInput, skip_typescript)]
    pub fn reserve_input(&mut self, bytes: u32) {
        let bytes = bytes as usize;
        if self.input.len() < bytes {
            self.input.resize(bytes, 0);
        }
        self.shared[INPUT_AT] = self.input.as_ptr() as usize as u32;
        self.shared[INPUT_CAPACITY] = self.input.len() as u32;
    }

    /// The parsing half of the package's `feed` (defined in `js/stepwise.js`): takes the
    /// display text the entry found itself since its last call ([`Self::skip_text`]: `taken`
    /// UTF-16 units holding `lines` line breaks, ending inside a line or not), then parses the
    /// first `len` bytes of the input buffer, the UTF-8 of a chunk of `len16` UTF-16 units
    /// that never ends inside a surrogate pair (the entry holds a trailing high surrogate
    /// back). Returns how the events are to be built, in the low two bits: [`NO_EVENTS`],
    /// [`CHUNK_AS_TEXT`] (one text event that is the chunk itself, reused as the caller's
    /// string) or [`EVENTS_READY`] (the tape: text as ranges of the caller's chunk, strings as
    /// ranges of it or of its blob when [`BLOB_READY`] is set); and flags above them: [`WINDOW_ADD`],
    /// [`WINDOW_OPEN`], [`SPANS_READY`], [`HOLDING`], [`AT_LINE_START`], [`IN_TEXT_LINE`]. Numbers cross the boundary much faster
    /// than fresh objects and strings, and the engine already holds the chunk's text.
    #[wasm_bindgen(js_name = feedInput, skip_typescript)]
    pub fn feed_input(
        &mut self,
        len: u32,
        len16: u32,
        taken: u32,
        lines: u32,
        in_line: bool,
    ) -> u32 {
        if taken > 0 {
            self.skip_text(taken, lines, in_line);
        }
        let input = std::mem::take(&mut self.input);
        let end = (len as usize).min(input.len());
        // The entry writes what `TextEncoder` makes: valid UTF-8 (a lone surrogate as U+FFFD).
        let code = match std::str::from_utf8(&input[..end]) {
            Ok(chunk) => self.feed_str(chunk, len16),
            Err(_) => self.feed_str(&String::from_utf8_lossy(&input[..end]), len16),
        };
        self.input = input;
        code
    }

    /// The half of the entry's `end` in wasm: takes the text the entry found (as
    /// [`Self::feed_input`]), ends the stream; returns [`NO_EVENTS`] or
    /// [`EVENTS_READY`] for the last events (held text, a final marker), read as
    /// `feedInput`'s are, with an empty chunk.
    #[wasm_bindgen(js_name = endInput, skip_typescript)]
    pub fn end_input(&mut self, taken: u32, lines: u32, in_line: bool) -> u32 {
        if taken > 0 {
            self.skip_text(taken, lines, in_line);
        }
        self.parser.end_parse();
        self.write_tape("", 0)
    }

    /// Makes the stream as new for the next reply, keeping its largest buffers up to
    /// [`KEPT_INPUT`] bytes each (the input, the tape's words and blob, the spans; the core's
    /// value buffer up to its `KEPT_ON_RESET`; the small lists as they are): the entry
    /// keeps a few finished streams of each set of payload markers and hands them out again,
    /// since making a stream (the registry, the buffers, the crossing of the names) costs more
    /// than parsing a short reply.
    #[wasm_bindgen(skip_typescript)]
    pub fn reset(&mut self) {
        self.tape.clear();
        self.restart();
    }

    /// The half of the entry's `finish` in wasm: writes the parse without its message and
    /// payloads (which the entry keeps) to the tape and its blob (`tape.rs`), then makes the
    /// stream as new as [`Self::reset`] does but for the tape, which the entry reads next;
    /// returns the tape's length in words.
    #[wasm_bindgen(js_name = finishRest, skip_typescript)]
    pub fn finish_rest(&mut self) -> u32 {
        self.parser.end_parse();
        write_parse(&mut self.tape, self.parser.parsed());
        self.restart();
        self.point_at_tape();
        self.tape.words().len() as u32
    }
}

impl MarkerStream {
    /// [`Self::reset`] but for the tape's words and blob (the next chunk clears them).
    fn restart(&mut self) {
        self.parser.reset();
        self.fed16 = 0;
        self.window = Window::default();
        self.windowed.clear();
        self.spans.clear();
        self.pieces.clear();
        if self.input.len() > KEPT_INPUT {
            self.input = Vec::new();
        }
        self.tape.shrink_to(KEPT_INPUT);
        self.spans.shrink_to(KEPT_INPUT / 4);
        self.reserve_input(0);
    }

    /// Takes display text the entry found itself instead of writing it into wasm memory
    /// (`MarkerParser::skip_text`, the stream's position counted in UTF-16 units for it):
    /// `len16` units holding `lines` line breaks, ending inside a line or not. The entry may
    /// take text only after a call that returned [`AT_LINE_START`] or [`IN_TEXT_LINE`], and
    /// tells it with its next call, all the text taken since. Text given at any other position
    /// is not taken.
    fn skip_text(&mut self, len16: u32, lines: u32, ends_in_line: bool) {
        if !self.window.open && self.parser.skip_text(len16 as usize, lines, ends_in_line) {
            self.fed16 += u64::from(len16);
        }
    }

    /// [`Self::feed_input`] of a chunk given as a string (copied into the input buffer): the
    /// path the Rust tests take to check the JS entry's protocol.
    pub fn feed_str_copied(&mut self, chunk: &str) -> u32 {
        self.reserve_input(chunk.len() as u32);
        self.input[..chunk.len()].copy_from_slice(chunk.as_bytes());
        self.feed_input(
            chunk.len() as u32,
            chunk.encode_utf16().count() as u32,
            0,
            0,
            false,
        )
    }

    /// The tape of the last call that returned [`EVENTS_READY`].
    pub fn tape(&self) -> &[u32] {
        self.tape.words()
    }

    /// The blob of the last call that set [`BLOB_READY`].
    pub fn blob(&self) -> &str {
        self.tape.blob()
    }

    /// The spans of the last call that set [`SPANS_READY`]: `[event index, start, end]`.
    pub fn spans(&self) -> &[u32] {
        &self.spans
    }

    fn feed_str(&mut self, chunk: &str, len16: u32) -> u32 {
        // The caller's string length: UTF-16 units, counted by the engine for free.
        let start16 = self.fed16;
        self.fed16 += u64::from(len16);
        let start = self.parser.fed();
        self.parser.parse(chunk);
        let body_open = self.parser.open_body_start();
        let window_flags =
            if body_open.is_some() || self.window.open || self.parser.has_body_spans() {
                let at = ChunkAt {
                    chunk,
                    len16,
                    start,
                    start16,
                    as_is: as_is(chunk, len16),
                };
                let parser = &mut self.parser;
                self.window.track(parser, at, body_open, &mut self.windowed)
            } else {
                self.windowed.clear();
                0
            };
        let holding = if self.parser.holds_line_start() {
            HOLDING
        } else {
            0
        };
        self.write_tape(chunk, len16) | window_flags | holding | self.position()
    }

    /// Writes where the tape and its blob are to the shared block.
    fn point_at_tape(&mut self) {
        self.shared[TAPE_AT] = self.tape.words().as_ptr() as usize as u32;
        self.shared[TAPE_LEN] = self.tape.words().len() as u32;
        self.shared[TEXT_AT] = self.tape.blob().as_ptr() as usize as u32;
        self.shared[TEXT_LEN] = self.tape.blob().len() as u32;
    }

    /// [`AT_LINE_START`] or [`IN_TEXT_LINE`] when the entry may skip text, else 0.
    fn position(&self) -> u32 {
        match self.parser.text_position() {
            _ if self.window.open => 0,
            TextPosition::LineStart => AT_LINE_START,
            TextPosition::InTextLine => IN_TEXT_LINE,
            TextPosition::Elsewhere => 0,
        }
    }

    /// Writes the events the parser completed to the tape (and its blob, and the spans);
    /// returns [`NO_EVENTS`], [`CHUNK_AS_TEXT`] or [`EVENTS_READY`] with [`BLOB_READY`] and
    /// [`SPANS_READY`] as they apply.
    fn write_tape(&mut self, chunk: &str, len16: u32) -> u32 {
        self.pieces.clear();
        self.pieces.extend(self.parser.take_text_pieces());
        self.places.clear();
        self.places.extend(self.parser.take_value_places());
        let events = self.parser.take_events();
        if events.len() == 0 {
            return NO_EVENTS;
        }
        if events.len() == 1 && crate::tape::is_whole(&self.pieces, chunk.len()) {
            return CHUNK_AS_TEXT;
        }
        self.spans.clear();
        let as_is = self.places.is_empty() || as_is(chunk, len16);
        let mut windowed = self.windowed.iter();
        let mut writer = TapeWriter::new(&mut self.tape, chunk, len16, &self.places);
        let mut pieces = self.pieces.drain(..).peekable();
        for (index, event) in events.enumerate() {
            if let Event::Text { .. } = event {
                writer.text(std::iter::from_fn(|| pieces.next_if(|p| p.event == index)));
                continue;
            }
            let window = match &event {
                Event::Marker(Marker::Payload(_)) => windowed.next(),
                _ => None,
            };
            writer.event(index, &event, window.is_some(), as_is);
            if let Some(&(start, end)) = window {
                self.spans.extend([index as u32, start as u32, end as u32]);
            }
        }
        drop(pieces);
        self.point_at_tape();
        self.shared[SPANS_AT] = self.spans.as_ptr() as usize as u32;
        self.shared[SPANS_LEN] = self.spans.len() as u32;
        let mut code = EVENTS_READY;
        if !self.tape.blob().is_empty() {
            code |= BLOB_READY;
        }
        if !self.spans.is_empty() {
            code |= SPANS_READY;
        }
        code
    }
}

/// Whether `chunk` (`len16` UTF-16 units) is as the caller gave it: a lone surrogate in the JS
/// chunk reads as U+FFFD here. Text events keep the caller's text as it is (U+FFFD and a lone
/// surrogate are one UTF-16 unit each), but a JSON body is then read as the core saw it, not
/// from the window (`Window::track`), and marker strings from the blob, not from the chunk.
/// (U+FFFD is EF BF BD in UTF-8: an ASCII chunk, one byte a unit, has none, and a search for
/// 0xEF sixteen bytes at a time rules it out in most others.)
fn as_is(chunk: &str, len16: u32) -> bool {
    let bytes = chunk.as_bytes();
    if bytes.len() == len16 as usize {
        return true;
    }
    const LOW: u64 = 0x0101_0101_0101_0101;
    let mut at = 0;
    // Sixteen bytes at a time up to a pair of words that holds 0xEF, then byte by byte.
    let has_ef = |word: &[u8]| {
        let x = u64::from_le_bytes(word.try_into().expect("eight bytes")) ^ (LOW * 0xEF);
        x.wrapping_sub(LOW) & !x
    };
    while let Some(pair) = bytes.get(at..at + 16) {
        if (has_ef(&pair[..8]) | has_ef(&pair[8..])) & (LOW << 7) != 0 {
            break;
        }
        at += 16;
    }
    while let Some(offset) = memchr::memchr(0xEF, &bytes[at..]) {
        at += offset + 1;
        if bytes[at..].starts_with(&[0xBF, 0xBD]) {
            return false;
        }
    }
    true
}

/// The module's memory, for the JS entry: it writes chunks into the input buffer and reads the
/// tape in place.
#[wasm_bindgen(js_name = wasmMemory, skip_typescript)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}
