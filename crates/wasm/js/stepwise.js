//! The package's entry: the wasm-bindgen bindings, with `MarkerStream.feed` defined here.
//!
//! `feed` runs once per streamed token, so it crosses the boundary as little as possible: the
//! chunk goes in as a string, a number comes back, and the common plain-text delta becomes
//! `[{ type: "text", text: chunk }]` here, reusing the caller's string. All parsing is the
//! core's; this file only stitches UTF-16 surrogate pairs that a chunk boundary split (Rust
//! strings cannot hold half a pair) and builds the trivial results.
import init, { initSync, MarkerStream as Bindings, Workflow } from "./bindings.js";

export { init as default, initSync, Workflow };

// The codes of `feedChunk` (crates/wasm/src/marker_stream.rs).
const NO_EVENTS = 0;
const CHUNK_AS_TEXT = 1;

export class MarkerStream extends Bindings {
  /** A high surrogate that ended the last chunk, waiting for its low half. */
  #held = "";

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
    switch (this.feedChunk(text)) {
      case NO_EVENTS:
        return [];
      case CHUNK_AS_TEXT:
        return [{ type: "text", text }];
      default:
        return this.takeEvents();
    }
  }
}
