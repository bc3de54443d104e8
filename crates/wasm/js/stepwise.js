//! The package's entry: the wasm-bindgen bindings, with `MarkerStream`'s streaming defined here.
//!
//! `feed` runs once per streamed chunk, so it crosses the boundary as little as possible: the
//! chunk's UTF-8 is written straight into a buffer the stream keeps in wasm memory
//! (`TextEncoder.encodeInto`, or a loop for an ASCII chunk of up to 256 units), one call parses it and
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
// The tape's words (crates/wasm/src/tape.rs).
const TEXT = 1;
const SPAN = 3;
const EARLIER = 4;
const MARKER = 6;
const DIAGNOSTIC = 7;
// Chunks up to this many UTF-16 units are written by a loop while they are ASCII: cheaper than
// `encodeInto` and its `subarray` up to a few hundred units (in Chromium, 64 B chunks took
// 0.62-0.75x the time with the loop; 256 B and up, the two are even: bench/README.md).
const LOOP_MAX = 256;

/** Whether a UTF-16 unit is White_Space, as Rust's `char::is_whitespace` (JS's `trim` also
 * strips U+FEFF and keeps U+0085). */
function isSpace(unit) {
  if (unit <= 0x20) return unit === 0x20 || (unit >= 0x09 && unit <= 0x0d);
  if (unit < 0x85) return false;
  return unit === 0x85 || unit === 0xa0 || unit === 0x1680 || (unit >= 0x2000 && unit <= 0x200a) ||
    unit === 0x2028 || unit === 0x2029 || unit === 0x202f || unit === 0x205f || unit === 0x3000;
}

/** Rust's `str::trim`, as the core trims the message. */
function trim(text) {
  let start = 0;
  let end = text.length;
  while (start < end && isSpace(text.charCodeAt(start))) start++;
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
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

export class MarkerStream extends Bindings {
  /** Where the shared block is, in words: `[input address, input capacity, tape address, tape
   * length, values address, values length, spans address, spans length]`. */
  #shared;
  /** A high surrogate that ended the last chunk, waiting for its low half. */
  #held = "";
  /** The text since a JSON body started, while it streams (the engine keeps concatenations
   * as ropes: appending a chunk copies nothing). */
  #window = "";
  /** The text since an undecided line start, while one is held (the tape's `EARLIER`). */
  #pending = "";
  /** The display text so far: `finish`'s message. */
  #message = "";
  /** Every payload given out so far, in order: `finish`'s payloads. */
  #payloads = [];

  constructor(payloadMarkers) {
    super(payloadMarkers);
    this.#shared = this.sharedAt() >>> 2;
  }

  feed(chunk) {
    if (typeof chunk !== "string") {
      throw Object.assign(new TypeError(`feed takes a string chunk, not ${typeof chunk}`), { code: "invalid_input" });
    }
    let text = this.#held + chunk;
    this.#held = "";
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last < 0xdc00) {
      this.#held = text.slice(-1);
      text = text.slice(0, -1);
    }
    return this.#parse(text);
  }

  end() {
    // A high surrogate held at the very end is not text: the core reads it as U+FFFD.
    const held = this.#held ? this.#parse(this.#held) : [];
    this.#held = "";
    const code = this.endInput();
    return code === NO_EVENTS ? held : held.concat(this.#events("", code));
  }

  finish() {
    this.end();
    const length = this.finishRest();
    let rest = {};
    if (length > 0) {
      views();
      const at = words[this.#shared + 4];
      rest = JSON.parse(decoder.decode(bytes.subarray(at, at + length)));
    }
    this.free();
    return {
      message: trim(this.#message),
      suggestions: rest.suggestions ?? [],
      options: rest.options ?? [],
      extracted: rest.extracted ?? [],
      proposed_message: rest.proposed_message ?? null,
      target_field: rest.target_field ?? null,
      suggested_values: rest.suggested_values ?? [],
      suggested_actions: rest.suggested_actions ?? [],
      payloads: this.#payloads,
      diagnostics: rest.diagnostics ?? [],
    };
  }

  #parse(text) {
    const code = this.feedInput(this.#write(text), text.length);
    if (code === CHUNK_AS_TEXT) {
      this.#message += text;
      return [{ type: "text", text }];
    }
    let events;
    if (code & WINDOW_ADD) this.#window += text;
    switch (code & 3) {
      case NO_EVENTS:
        events = [];
        break;
      case CHUNK_AS_TEXT:
        this.#message += text;
        events = [{ type: "text", text }];
        break;
      default:
        events = this.#events(text, code);
    }
    if (!(code & WINDOW_OPEN)) this.#window = "";
    if (code & HOLDING) {
      this.#pending += text;
      if (this.#pending.length > 2 * PENDING_KEEP) this.#pending = this.#pending.slice(-PENDING_KEEP);
    } else this.#pending = "";
    return events;
  }

  /** Writes the chunk's UTF-8 into the input buffer; returns its length in bytes. */
  #write(text) {
    const shared = this.#shared;
    const length = text.length;
    views();
    if (length * 3 > words[shared + 1]) {
      this.reserveInput(length * 3);
      views();
    }
    const at = words[shared];
    let written = 0;
    if (length <= LOOP_MAX) {
      for (; written < length; written++) {
        const unit = text.charCodeAt(written);
        if (unit > 0x7f) break;
        bytes[at + written] = unit;
      }
      if (written === length) return written;
    }
    const rest = written === 0 ? text : text.slice(written);
    return written + encoder.encodeInto(rest, bytes.subarray(at + written, at + words[shared + 1])).written;
  }

  /** The events of the tape: text cut from `text` (and the pending text), strings cut from the
   * blob; payloads whose data is in the window get it from there. */
  #events(text, code) {
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
    const events = [];
    while (at < end) {
      const kind = word();
      if (kind === MARKER) events.push(this.#marker(string(), word, string));
      else if (kind === DIAGNOSTIC) events.push({ type: "diagnostic", code: string(), message: string(), line: word() });
      else if (kind === TEXT) {
        const piece = text.slice(words[at], words[at + 1]);
        at += 2;
        this.#message += piece;
        events.push({ type: "text", text: piece });
      } else {
        let joined = "";
        for (let pieces = word(); pieces > 0; pieces--) {
          const source = word();
          if (source === SPAN) {
            joined += text.slice(words[at], words[at + 1]);
            at += 2;
          } else if (source === EARLIER) joined += this.#pending.slice(this.#pending.length - word());
          else joined += string();
        }
        this.#message += joined;
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

  /** A marker event, its value read from the tape as `tape.rs` writes it for its kind. */
  #marker(kind, word, string) {
    let value;
    switch (kind) {
      case "suggestions":
      case "options":
        value = [];
        for (let n = word(); n > 0; n--) value.push(string());
        break;
      case "extracted_data":
        value = { field: string(), value: string() };
        break;
      case "suggested_values":
        value = [];
        for (let n = word(); n > 0; n--) value.push({ label: string(), value: string() });
        break;
      case "suggested_actions":
        value = [];
        for (let n = word(); n > 0; n--) {
          const action = { label: string(), action: string(), handler: string() };
          if (word() === 1) action.target = string();
          value.push(action);
        }
        break;
      case "payload": {
        const type = string();
        value = { type, data: word() === 1 ? JSON.parse(string()) : null };
        this.#payloads.push(value);
        break;
      }
      default: // proposed_message, target_field
        value = string();
    }
    return { type: "marker", kind, value };
  }
}
