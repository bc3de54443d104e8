//! The package's entry: the wasm-bindgen bindings, with `MarkerStream.feed` defined here.
//!
//! `feed` runs once per streamed token, so it crosses the boundary as little as possible: the
//! chunk goes in as a string, a number comes back, and the common plain-text delta becomes
//! `[{ type: "text", text: chunk }]` here, reusing the caller's string. While a payload's JSON
//! body streams in, the chunks are kept here too, and the finished body is parsed from them
//! (`JSON.parse` of a slice the core points at) instead of being copied back out of wasm
//! memory. All parsing is the core's; this file only stitches UTF-16 surrogate pairs that a
//! chunk boundary split (Rust strings cannot hold half a pair) and builds the trivial results.
import init, { initSync, MarkerStream as Bindings, resolveChat, Workflow } from "./bindings.js";

export { init as default, initSync, resolveChat, Workflow };

// The codes and flags of `feedChunk` (crates/wasm/src/marker_stream.rs).
const NO_EVENTS = 0;
const CHUNK_AS_TEXT = 1;
const EVENTS_READY = 2;
const WINDOW_ADD = 4;
const WINDOW_OPEN = 8;
const SPANS_READY = 16;

export class MarkerStream extends Bindings {
  /** A high surrogate that ended the last chunk, waiting for its low half. */
  #held = "";
  /** The text since a JSON body started, while it streams (the engine keeps concatenations
   * as ropes: appending a chunk copies nothing). */
  #window = "";

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
    return held.concat(super.end());
  }

  finish() {
    this.end();
    return super.finish();
  }

  #parse(text) {
    const code = this.feedChunk(text, text.length);
    switch (code) {
      case NO_EVENTS:
        return [];
      case CHUNK_AS_TEXT:
        return [{ type: "text", text }];
      case EVENTS_READY:
        return this.takeEvents();
      default:
        return this.#parseInBody(code, text);
    }
  }

  /** A chunk that opens, continues or closes a JSON body (a flag of `code` is set). */
  #parseInBody(code, text) {
    if (code & WINDOW_ADD) this.#window += text;
    let events = [];
    if ((code & 3) === CHUNK_AS_TEXT) events = [{ type: "text", text }];
    else if ((code & 3) === EVENTS_READY) {
      events = this.takeEvents();
      if (code & SPANS_READY) this.#fillPayloads();
    }
    if (!(code & WINDOW_OPEN)) this.#window = "";
    return events;
  }

  /** Parses the bodies of the payloads just completed from the kept chunks. */
  #fillPayloads() {
    const text = this.#window;
    const spans = this.takeSpans();
    for (let i = 0; i < spans.length; i += 3) spans[i].data = JSON.parse(text.slice(spans[i + 1], spans[i + 2]));
  }
}
