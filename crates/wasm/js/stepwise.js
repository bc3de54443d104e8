//! The package's entry: the wasm-bindgen bindings, with `MarkerStream`'s streaming defined here.
//!
//! `feed` runs once per streamed chunk, so it crosses the boundary as little as possible. Most
//! of a reply is lines of prose, which the core's lead-byte map (which first bytes may begin a
//! marker line) tells apart from a line that may be a marker by their first character: while
//! the parser is at a line start or inside a text line, the entry finds such lines itself
//! (`indexOf` of the line breaks) and only tells the core how much it took (with the core's
//! next call, so a delta inside a text line does not call into wasm). The
//! rest of the chunk (from a line that may be a marker) has its UTF-8 written straight into a buffer the stream keeps in wasm memory
//! (`TextEncoder.encodeInto`, or a loop for an ASCII chunk of up to 64 units), one call parses it and
//! returns a number, and the events are read from a tape of numbers in wasm memory
//! (crates/wasm/src/tape.rs). Display text is cut from the caller's own strings
//! (`chunk.slice`, no copy); the strings of markers and diagnostics come in one blob, decoded
//! once, and their objects are built here from the tape. While a payload's JSON body streams in, the chunks are kept here too, and the finished
//! body is parsed from them (`JSON.parse` of a slice the core points at). The display text and
//! the payloads are kept here for `finish`. All parsing is the core's; this file only moves
//! bytes, stitches UTF-16 surrogate pairs that a chunk boundary split (Rust strings cannot hold
//! half a pair) and builds the results.
import init, { initSync, MarkerStream as Bindings, resolveChat, Workflow, wasmMemory } from "./bindings.js";

export { init as default, initSync, resolveChat, Workflow };

// The codes and flags of `feedInput` (crates/wasm/src/marker_stream.rs).
const NO_EVENTS = 0;
const CHUNK_AS_TEXT = 1;
const WINDOW_ADD = 4;
const WINDOW_OPEN = 8;
const SPANS_READY = 16;
const BLOB_READY = 32;
const HOLDING = 64;
const AT_LINE_START = 128;
const IN_TEXT_LINE = 256;
const POSITION = AT_LINE_START | IN_TEXT_LINE;
// The tape's words (crates/wasm/src/tape.rs).
const TEXT = 1;
const SPAN = 3;
const MARKER = 6;
const DIAGNOSTIC = 7;
/** Added to a marker's kind number when its kept strings are ranges of the chunk. */
const IN_CHUNK = 8;
/** First word of a string of `finishRest`'s tape that is a kept string of the events. */
const REF = 0xffffffff;
/** The markers' kinds, as the tape numbers them (`KINDS` in crates/wasm/src/tape.rs). */
const KINDS = ["suggestions", "options", "extracted_data", "proposed_message", "target_field",
  "suggested_values", "suggested_actions", "payload"];
// Chunks up to this many UTF-16 units are written by a loop while they are ASCII instead of by
// `encodeInto` and its `subarray`. Node's `encodeInto` is a native call of about 100 ns, which
// the loop (2-3.5 ns a unit) loses to from about 30 units: there the limit is 64 (a limit
// of 32 made Chromium's payload at 64 B chunks 0.76x as fast). Chromium's goes through its
// DOM bindings, 0.4-1.3 µs a call at 32-256 units: the loop wins up to about 256, and a limit of
// 256 made its reply 1.14-1.56x as fast at 256 B to 64 KiB chunks, where node's was 1.27-1.49x
// slower (bench/README.md). Engines that say they are node (Bun, Deno 2, Electron with node)
// get node's limit; others, not measured, the browser's.
const LOOP_MAX = globalThis.process?.versions?.node ? 64 : 256;

/** Whether a UTF-16 unit is White_Space, as Rust's `char::is_whitespace` (JS's `trim` also
 * strips U+FEFF and keeps U+0085): the core trims the message so. */
function isSpace(unit) {
  if (unit <= 0x20) return unit === 0x20 || (unit >= 0x09 && unit <= 0x0d);
  if (unit < 0x85) return false;
  return unit === 0x85 || unit === 0xa0 || unit === 0x1680 || (unit >= 0x2000 && unit <= 0x200a) ||
    unit === 0x2028 || unit === 0x2029 || unit === 0x202f || unit === 0x205f || unit === 0x3000;
}

const encoder = new TextEncoder();
// `ignoreBOM`: a blob that starts with U+FEFF keeps it (the offsets count it).
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
// The text kept for `EARLIER` pieces: a held line start is at most 260 UTF-16 units (the core's
// MAX_PREFIX_LEN of 256 bytes and one more character), so a longer tail is trimmed to this.
const PENDING_KEEP = 512;
/** Views of wasm memory, made again when it grows (the old buffer is then detached). */
let bytes = new Uint8Array(0);
let words = new Uint32Array(0);
function views() {
  if (bytes.byteLength === 0) {
    const { buffer } = wasmMemory();
    bytes = new Uint8Array(buffer);
    words = new Uint32Array(buffer);
  }
}

// Finished streams kept for reuse, a few for each set of payload marker names: making a stream
// (the names crossing, the registry, the buffers, the bindings' finalizer) costs about 1 µs, as
// much as parsing a short reply (bench/README.md). `free` resets a stream and keeps it here;
// past KEPT_NAME_SETS sets, the set used longest ago is freed.
const KEPT_PER_NAMES = 4;
const KEPT_NAME_SETS = 8;
/** Finished streams by `namesKey`: `{ inner, shared, leads }`. */
const kept = new Map();

/** The key `kept` moved to its end last (the set used most recently), which a stream reused
 * for the same set need not move again. */
let newestKey;
/** The names of the last stream made from an array of strings (a copy) and their key: most
 * callers make every stream with the same names, whose key is then not built again. */
let lastNames = [];
let lastKey;

/** A key for a set of payload marker names (lengths before names, so that no two sets share
 * one); `undefined` when they are not an array of strings, which are never kept. */
function namesKey(names) {
  if (names === undefined || names === null) return "";
  if (!Array.isArray(names)) return undefined;
  const count = names.length;
  if (count === lastNames.length && lastKey !== undefined) {
    let same = true;
    for (let i = 0; i < count; i++) {
      if (names[i] !== lastNames[i]) {
        same = false;
        break;
      }
    }
    if (same) return lastKey;
  }
  let key = "";
  for (const name of names) {
    if (typeof name !== "string") return undefined;
    key += name.length + ":" + name;
  }
  lastNames = names.slice();
  lastKey = key;
  return key;
}

/** A suggested action read from the tape: `(label), (action), handler (0 client, 1 server),
 * 0 | 1, (target)`. */
function action(word, string) {
  const read = { label: string(), action: string(), handler: word() === 1 ? "server" : "client" };
  if (word() === 1) read.target = string();
  return read;
}

/** Adds `event` to `events`, a text event that follows a text event joined to it. */
function add(events, event) {
  const last = events.length - 1;
  if (event.type === "text" && last >= 0 && events[last].type === "text") {
    events[last] = { type: "text", text: events[last].text + event.text };
  } else events.push(event);
}

/** Adds each of `more` to `events`. */
function append(events, more) {
  for (const event of more) add(events, event);
}

export class MarkerStream {
  /** The stream's half in wasm (the bindings' `MarkerStream`). */
  #inner;
  /** Its payload marker names' `namesKey`, to keep it by when freed. */
  #key;
  /** Where the shared block is, in words: `[input address, input capacity, tape address, tape
   * length, blob address, blob length, spans address, spans length]`, then the 8 words of the
   * lead-byte map. */
  #shared;
  /** A high surrogate that ended the last chunk, waiting for its low half. */
  #held = "";
  /** The text since a JSON body started, while it streams (the engine keeps concatenations
   * as ropes: appending a chunk copies nothing). */
  #window = "";
  /** The text since an undecided line start, while one is held (the tape's `EARLIER`). */
  #pending = "";
  /** The display text so far, trimmed as the core trims it (`finish`'s message): built trimmed,
   * so that `finish` need not read it (reading a string built by `+=` copies it whole first). */
  #message = "";
  /** Whitespace after the message's last other character, added to it before the next one. */
  #tail = "";
  /** Every payload given out so far, in order: `finish`'s payloads. */
  #payloads = [];
  /** Whether a marker or a diagnostic was given out: only they fill the parse's other fields,
   * so `finish` reads them from the core only then. */
  #marked = false;
  /** The kept strings of the markers given out, in order (the tape's `(k)`): `finish`'s tape
   * refers to them. */
  #strings = [];
  /** `AT_LINE_START`, `IN_TEXT_LINE` or 0: where the parser stands, for `#skip`. */
  #position = AT_LINE_START;
  /** Text taken since the core was last told (it goes with the next call): UTF-16 units and line breaks (whether
   * it ends inside a line is `#position`). */
  #taken = 0;
  #takenLines = 0;
  /** Set by `free` (and so by `finish`). */
  #freed = false;
  /** Set when `finishRest` made the stream's half in wasm as new (`free` need not reset it). */
  #reset = false;
  /** The lead-byte map: bit `b` set when a line whose first UTF-8 byte is `b` may be a marker. */
  #leads;
  /** A view of the input buffer in wasm memory (`#write`). */
  #input = bytes;

  /** A stream recognizing the built-in markers plus the given payload marker names (e.g.
   * `["SCHEMA_PROPOSAL"]`); throws `invalid_marker_name`, `duplicate_marker` or
   * `too_many_markers`. */
  constructor(payloadMarkers) {
    this.#key = namesKey(payloadMarkers);
    const streams = this.#key === undefined ? undefined : kept.get(this.#key);
    const reused = streams?.pop();
    if (reused) {
      // The set used last is the one kept longest.
      if (this.#key !== newestKey) {
        kept.delete(this.#key);
        kept.set(this.#key, streams);
        newestKey = this.#key;
      }
      ({ inner: this.#inner, shared: this.#shared, leads: this.#leads } = reused);
      return;
    }
    this.#inner = new Bindings(payloadMarkers);
    this.#shared = this.#inner.sharedAt() >>> 2;
    views();
    this.#leads = words.slice(this.#shared + 8, this.#shared + 16);
  }

  feed(chunk) {
    if (typeof chunk !== "string") {
      throw Object.assign(new TypeError(`feed takes a string chunk, not ${typeof chunk}`), { code: "invalid_input" });
    }
    this.#live();
    // Not `"" + chunk`: optimized code may make that a cons string, flattened again by every
    // `charCodeAt` and `encodeInto` on it (measured: a third of a marker line's time).
    let text = this.#held ? this.#held + chunk : chunk;
    this.#held = "";
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last < 0xdc00) {
      this.#held = text.slice(-1);
      text = text.slice(0, -1);
    }
    return this.#position === 0 || text.length === 0 ? this.#parse(text) : this.#skip(text);
  }

  end() {
    this.#live();
    // A high surrogate held at the very end is released as it is (the core reads it as
    // U+FFFD): parsed before the end, and so before the position is cleared for good.
    const held = this.#held ? this.#parse(this.#held) : [];
    this.#held = "";
    const code = this.#inner.endInput(this.#taken, this.#takenLines, this.#position === IN_TEXT_LINE);
    this.#taken = 0;
    this.#takenLines = 0;
    this.#position = 0;
    return code === NO_EVENTS ? held : held.concat(this.#events("", code));
  }

  /** Frees the stream: its wasm memory is freed, or kept (reset) for a stream made later with
   * the same payload markers. A later `feed`, `end` or `finish` throws `stream_freed`; a second
   * `free` does nothing. */
  free() {
    if (this.#freed) return;
    this.#position = 0;
    this.#freed = true;
    this.#strings = [];
    const inner = this.#inner;
    this.#inner = undefined;
    let streams = this.#key === undefined ? undefined : kept.get(this.#key);
    if (!streams && this.#key !== undefined) {
      // Past KEPT_NAME_SETS sets, the one used longest ago gives way.
      if (kept.size >= KEPT_NAME_SETS) {
        const [oldest, its] = kept.entries().next().value;
        kept.delete(oldest);
        if (oldest === newestKey) newestKey = undefined;
        for (const stream of its) stream.inner.free();
      }
      kept.set(this.#key, (streams = []));
      newestKey = this.#key;
    }
    if (streams && streams.length < KEPT_PER_NAMES) {
      if (!this.#reset) inner.reset();
      streams.push({ inner, shared: this.#shared, leads: this.#leads });
    } else inner.free();
  }

  #live() {
    if (this.#freed) {
      throw Object.assign(new Error("this stream was freed (by finish or free): make a new one"), { code: "stream_freed" });
    }
  }

  finish() {
    // At a line start with nothing held, or inside a text line, the end completes nothing (the
    // core's `end` gives no events there), and the stream is reset next: no call.
    if (this.#position === 0 || this.#held) this.end();
    else this.#live();
    if (!this.#marked) {
      const parsed = { message: this.#message, suggestions: [], options: [], extracted: [], proposed_message: null,
        target_field: null, suggested_values: [], suggested_actions: [], payloads: this.#payloads, diagnostics: [] };
      this.free();
      return parsed;
    }
    this.#inner.finishRest();
    this.#reset = true;
    views();
    const shared = this.#shared;
    const from = words[shared + 4];
    const blob = words[shared + 5] > 0 ? decoder.decode(bytes.subarray(from, from + words[shared + 5])) : "";
    let at = words[shared + 2] >>> 2;
    const word = () => words[at++];
    const strings = this.#strings;
    const string = () => {
      const start = words[at++];
      const end = words[at++];
      return start === REF ? strings[end] : blob.slice(start, end);
    };
    const list = (item) => {
      const items = [];
      for (let n = word(); n > 0; n--) items.push(item());
      return items;
    };
    const optional = () => (word() === 1 ? string() : null);
    // The tape's order (crates/wasm/src/tape.rs); properties are read in the order written.
    const parsed = {
      message: this.#message,
      suggestions: list(string),
      options: list(string),
      extracted: list(() => ({ field: string(), value: string() })),
      proposed_message: optional(),
      target_field: optional(),
      suggested_values: list(() => ({ label: string(), value: string() })),
      suggested_actions: list(() => action(word, string)),
      payloads: this.#payloads,
      diagnostics: list(() => ({ code: string(), message: string(), line: word() })),
    };
    this.free();
    return parsed;
  }

  /** Parses `text` in parts: the display text the entry can tell apart itself (the rest of a
   * text line, then lines whose first character rules out a marker) is counted for the core's next
   * call; each run
   * of lines that may be markers goes to the core; and from where the core is left inside
   * something else (a JSON body, an undecided line start), the rest of the chunk goes to the
   * core. Any split gives the core's events (chunk invariance), so the parts' events are the
   * chunk's, adjacent text joined. */
  #skip(text) {
    if (this.#position === IN_TEXT_LINE && text.indexOf("\n") < 0) {
      // The usual delta: more of a text line.
      this.#take(text.length, 0, true);
      this.#say(text);
      return [{ type: "text", text }];
    }
    const length = text.length;
    const events = [];
    let at = 0;
    while (at < length) {
      const position = this.#position;
      if (position === 0) {
        append(events, this.#parse(text, at, length));
        break;
      }
      let end = at;
      let lines = 0;
      let inLine = false;
      // Inside a text line its rest is text; at a line start, the first character decides.
      let inText = position === IN_TEXT_LINE;
      while (!inLine && end < length && (inText || !this.#mayBegin(text.charCodeAt(end)))) {
        inText = false;
        const lineEnd = text.indexOf("\n", end);
        inLine = lineEnd < 0;
        end = inLine ? length : lineEnd + 1;
        if (!inLine) lines++;
      }
      if (end > at) {
        this.#take(end - at, lines, inLine);
        const run = end - at === length ? text : text.slice(at, end);
        this.#say(run);
        add(events, { type: "text", text: run });
        at = end;
        continue;
      }
      // Lines that may be markers, to the core, up to a line the entry can take again.
      while (end < length && this.#mayBegin(text.charCodeAt(end))) {
        const lineEnd = text.indexOf("\n", end);
        end = lineEnd < 0 ? length : lineEnd + 1;
      }
      append(events, this.#parse(text, at, end));
      at = end;
    }
    return events;
  }

  /** Whether a line starting with the UTF-16 unit `unit` may be a marker line, by the lead
   * byte of its UTF-8 in the core's map; a surrogate is left to the core. */
  #mayBegin(unit) {
    let lead;
    if (unit < 0x80) lead = unit;
    else if (unit < 0x800) lead = 0xc0 | (unit >> 6);
    else if (unit >= 0xd800 && unit < 0xe000) return true;
    else lead = 0xe0 | (unit >> 12);
    return ((this.#leads[lead >> 5] >>> (lead & 31)) & 1) === 1;
  }

  /** Adds display text to the message, which stays trimmed: whitespace at its start is dropped,
   * and whitespace at its end is held in `#tail` until other text follows. */
  #say(text) {
    let end = text.length;
    while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
    if (end === 0) {
      if (this.#message.length > 0) this.#tail += text;
      return;
    }
    let start = 0;
    if (this.#message.length === 0) {
      while (isSpace(text.charCodeAt(start))) start++;
    } else if (this.#tail.length > 0) {
      this.#message += this.#tail;
      this.#tail = "";
    }
    this.#message += start === 0 && end === text.length ? text : text.slice(start, end);
    if (end < text.length) this.#tail = text.slice(end);
  }

  /** Counts display text the entry took, for the core's next call. */
  #take(units, lines, inLine) {
    this.#taken += units;
    this.#takenLines += lines;
    this.#position = inLine ? IN_TEXT_LINE : AT_LINE_START;
  }

  /** Parses `chunk.slice(from, to)` (all of it by default), cut from `chunk` only where a
   * string of it is needed: the ASCII loop reads a flat chunk faster than a slice of it. */
  #parse(chunk, from = 0, to = chunk.length) {
    const length = to - from;
    // The text taken since the core's last call goes with this one.
    const code = this.#inner.feedInput(this.#write(chunk, from, to), length, this.#taken, this.#takenLines,
      this.#position === IN_TEXT_LINE);
    this.#taken = 0;
    this.#takenLines = 0;
    this.#position = code & POSITION;
    if ((code & ~POSITION) === CHUNK_AS_TEXT) {
      const text = length === chunk.length ? chunk : chunk.slice(from, to);
      this.#say(text);
      return [{ type: "text", text }];
    }
    const text = length === chunk.length || (code & (WINDOW_ADD | HOLDING)) === 0 ? chunk : chunk.slice(from, to);
    const offset = text === chunk ? from : 0;
    let events;
    if (code & WINDOW_ADD) this.#window += text;
    switch (code & 3) {
      case NO_EVENTS:
        events = [];
        break;
      case CHUNK_AS_TEXT:
        this.#say(text);
        events = [{ type: "text", text }];
        break;
      default:
        events = this.#events(text, code, offset);
    }
    if (!(code & WINDOW_OPEN)) this.#window = "";
    if (code & HOLDING) {
      this.#pending += text;
      if (this.#pending.length > 2 * PENDING_KEEP) this.#pending = this.#pending.slice(-PENDING_KEEP);
    } else this.#pending = "";
    return events;
  }

  /** Writes the UTF-8 of `chunk.slice(from, to)` into the input buffer; returns its length in
   * bytes. */
  #write(chunk, from, to) {
    const shared = this.#shared;
    const length = to - from;
    views();
    if (length * 3 > words[shared + 1]) {
      this.#inner.reserveInput(length * 3);
      views();
    }
    const at = words[shared] - from;
    let written = from;
    if (length <= LOOP_MAX) {
      const into = bytes;
      for (; written < to; written++) {
        const unit = chunk.charCodeAt(written);
        if (unit > 0x7f) break;
        into[at + written] = unit;
      }
      if (written === to) return length;
    }
    const rest = written === 0 && to === chunk.length ? chunk : chunk.slice(written, to);
    // The view of the input buffer is kept while the buffer stays where it is (a view costs an
    // allocation, and in Chromium about 0.1 µs a chunk).
    let input = this.#input;
    if (input.byteLength === 0 || input.byteOffset !== words[shared] || input.length !== words[shared + 1]) {
      input = this.#input = bytes.subarray(words[shared], words[shared] + words[shared + 1]);
    }
    return written - from + encoder.encodeInto(rest, written === from ? input : input.subarray(written - from)).written;
  }

  /** The events of the tape: text cut from `text` (and the pending text), strings cut from the
   * blob; payloads whose data is in the window get it from there. */
  #events(text, code, offset = 0) {
    views();
    const shared = this.#shared;
    let blob = "";
    if (code & BLOB_READY) {
      const from = words[shared + 4];
      blob = decoder.decode(bytes.subarray(from, from + words[shared + 5]));
    }
    let at = words[shared + 2] >>> 2;
    const end = at + words[shared + 3];
    const word = () => words[at++];
    const string = () => blob.slice(words[at++], words[at++]);
    // A marker's kept strings: ranges of the chunk or of the blob (`IN_CHUNK`), kept in order.
    const strings = this.#strings;
    let source = blob;
    let shift = 0;
    const kept = () => {
      const string = source.slice(shift + words[at++], shift + words[at++]);
      strings.push(string);
      return string;
    };
    const events = [];
    while (at < end) {
      const kind = word();
      if (kind === MARKER) {
        this.#marked = true;
        const number = word();
        source = number & IN_CHUNK ? text : blob;
        shift = number & IN_CHUNK ? offset : 0;
        events.push(this.#marker(number & 7, word, string, kept));
      } else if (kind === DIAGNOSTIC) {
        this.#marked = true;
        events.push({ type: "diagnostic", code: string(), message: string(), line: word() });
      } else if (kind === TEXT) {
        const piece = text.slice(offset + word(), offset + word());
        this.#say(piece);
        events.push({ type: "text", text: piece });
      } else {
        let joined = "";
        for (let pieces = word(); pieces > 0; pieces--) {
          const source = word();
          if (source === SPAN) joined += text.slice(offset + word(), offset + word());
          else joined += this.#pending.slice(this.#pending.length - word());
        }
        this.#say(joined);
        events.push({ type: "text", text: joined });
      }
    }
    if (code & SPANS_READY) {
      const window = this.#window;
      let span = words[shared + 6] >>> 2;
      for (const stop = span + words[shared + 7]; span < stop; span += 3) {
        events[words[span]].value.data = JSON.parse(window.slice(words[span + 1], words[span + 2]));
      }
    }
    return events;
  }

  /** A marker event, its value read from the tape as `tape.rs` writes it for its kind:
   * `kept` reads its kept strings, `string` the others. */
  #marker(number, word, string, kept) {
    let value;
    switch (number) {
      case 0: // suggestions
      case 1: // options
        value = [];
        for (let n = word(); n > 0; n--) value.push(kept());
        break;
      case 2: // extracted_data
        value = { field: kept(), value: kept() };
        break;
      case 5: // suggested_values
        value = [];
        for (let n = word(); n > 0; n--) value.push({ label: kept(), value: kept() });
        break;
      case 6: // suggested_actions
        value = [];
        for (let n = word(); n > 0; n--) value.push(action(word, kept));
        break;
      case 7: { // payload
        const type = string();
        value = { type, data: word() === 1 ? JSON.parse(string()) : null };
        this.#payloads.push(value);
        break;
      }
      default: // proposed_message, target_field
        value = kept();
    }
    return { type: "marker", kind: KINDS[number], value };
  }
}

// `using` frees the stream through the entry's `free`, as the bindings do for theirs.
if (Symbol.dispose) MarkerStream.prototype[Symbol.dispose] = MarkerStream.prototype.free;
