//! TypeScript declarations of the package's own API around the wire types: validation results,
//! coded errors and `MarkerStream.feed` (defined in `js/stepwise.js`). The wire types themselves
//! (`ChatRequest`, `MarkerEvent`, `WorkflowSpec`...) are written from stepwise-core's Rust types
//! into `js/wire.d.ts` by `cargo run -p stepwise-contract`, and `scripts/build-wasm.sh` appends
//! them to the package's declarations; `js-tests/usage.ts` checks both with tsc.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
export type ActionErrorCode =
  | "field_mismatch" | "invalid_value" | "selection_required" | "step_required"
  | "unknown_field" | "unknown_step" | "not_at_review" | "invalid_config" | "message_too_long"
  | "invalid_input";

/** What `validateAction` returns. */
export type ValidationResult = { ok: true } | { ok: false; error: ErrorBody & { code: ActionErrorCode } };

/** Errors thrown by this package are `Error`s with a stable `code`. */
export interface StepwiseError extends Error { code: string }

/** `feed`, `end` and `finish`, declared here because the package defines them in JS (js/stepwise.js) around `feedInput`. */
export interface MarkerStream {
  /**
   * Parses the next chunk; returns the events it completed (display text, markers,
   * diagnostics). Chunks may be split anywhere, even inside a surrogate pair. Text events are
   * the chunks' own text. Throws `invalid_input` for a chunk that is not a string, and
   * `stream_freed` once `finish` or `free` ended the stream.
   *
   * ```js
   * stream.feed("Hello\nSUGG"); // [{ type: "text", text: "Hello\n" }]
   * ```
   */
  feed(chunk: string): MarkerEvent[];
  /**
   * Ends the stream and returns the last events (held text, a final marker).
   *
   * ```js
   * stream.end(); // [{ type: "marker", kind: "suggestions", value: ["a"] }]
   * ```
   */
  end(): MarkerEvent[];
  /**
   * Ends the stream and returns the whole parse; the stream cannot be used afterwards.
   *
   * ```js
   * const { message, suggestions, options, extracted } = stream.finish();
   * ```
   */
  finish(): Parsed;
}
"#;
