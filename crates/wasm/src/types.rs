//! TypeScript declarations of the plain data crossing the boundary, in the wire's snake_case
//! shape. They mirror the serde types of stepwise-core; `tests/ts/usage.ts` checks them with tsc.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** A field's value: one string, or a list of strings. */
export type FieldValue = string | string[];
/** Collected fields by field name. */
export type Config = Record<string, FieldValue>;
export type StepKind = "text" | "list" | "single_choice" | "multi_choice" | "confirm";

/** One step of a workflow spec. */
export interface StepSpecJson {
  id: string;
  field?: string;
  kind: StepKind;
  required?: boolean;
  choices?: string[];
  open?: boolean;
  min_items?: number;
  max_items?: number;
  max_len?: number;
  question?: string;
  guidance?: string;
}

/** A workflow spec. */
export interface WorkflowSpecJson {
  id: string;
  title: string;
  steps: StepSpecJson[];
}

/** A workflow state as input: the step, the collected fields, the skipped optional fields. */
export interface WorkflowState {
  current_step: string;
  config?: Config;
  skipped?: string[];
}

/** A workflow state as returned by `applyAction`. */
export interface WorkflowStateJson {
  current_step: string;
  config: Config;
  skipped: string[];
}

/** What the user did. */
export type UserAction =
  | { type: "option_selected"; target_field: string; selected_value: string }
  | { type: "options_selected"; target_field: string; selected_values: string[] }
  | { type: "text_input" }
  | { type: "skip_step"; target_field: string }
  | { type: "field_edit"; target_field: string; value: FieldValue }
  | { type: "confirm" }
  | { type: "go_to_step"; step: string };

export type ActionErrorCode =
  | "field_mismatch" | "invalid_value" | "selection_required" | "step_required"
  | "unknown_field" | "unknown_step" | "not_at_review" | "invalid_config" | "invalid_input";

/** A machine code and a human message. */
export interface ErrorBody { code: string; message: string }

/** What `validateAction` returns. */
export type ValidationResult = { ok: true } | { ok: false; error: ErrorBody & { code: ActionErrorCode } };

/** Errors thrown by this package are `Error`s with a stable `code`. */
export interface StepwiseError extends Error { code: string }

export interface ExtractedField { field: string; value: string }
export interface SuggestedValue { label: string; value: string }
export interface SuggestedAction { label: string; action: string; handler: "client" | "server" }
export interface Payload { type: string; data: unknown }

export type DiagnosticCode =
  | "malformed_marker" | "malformed_json" | "invalid_shape" | "line_too_long" | "payload_too_large"
  | "unterminated_payload" | "missing_payload_body" | "trailing_text" | "too_many_items" | "feed_after_end";
export interface Diagnostic { code: DiagnosticCode; message: string; line: number }

/** A completed marker. */
export type Marker =
  | { kind: "suggestions"; value: string[] }
  | { kind: "options"; value: string[] }
  | { kind: "extracted_data"; value: ExtractedField }
  | { kind: "proposed_message"; value: string }
  | { kind: "target_field"; value: string }
  | { kind: "suggested_values"; value: SuggestedValue[] }
  | { kind: "suggested_actions"; value: SuggestedAction[] }
  | { kind: "payload"; value: Payload };

/** `feed`, declared here because the package defines it in JS (js/stepwise.js) around `feedChunk`. */
export interface MarkerStream {
  /**
   * Parses the next chunk; returns the events it completed (display text, markers,
   * diagnostics). Chunks may be split anywhere, even inside a surrogate pair.
   *
   * ```js
   * stream.feed("Hello\nSUGG"); // [{ type: "text", text: "Hello\n" }]
   * ```
   */
  feed(chunk: string): MarkerEvent[];
}
/** One event of `MarkerStream.feed` / `end`. */
export type MarkerEvent =
  | { type: "text"; text: string }
  | ({ type: "marker" } & Marker)
  | ({ type: "diagnostic" } & Diagnostic);

/** The whole parse, from `MarkerStream.finish`. */
export interface Parsed {
  message: string;
  suggestions: string[];
  options: string[];
  extracted: ExtractedField[];
  proposed_message: string | null;
  target_field: string | null;
  suggested_values: SuggestedValue[];
  suggested_actions: SuggestedAction[];
  payloads: Payload[];
  diagnostics: Diagnostic[];
}

/** A chat message of the conversation history. */
export interface ChatMessage { role: "user" | "assistant"; content: string }

/** A guided chat turn as sent to `POST /api/chat`. */
export interface ChatRequest {
  conversation_id?: string;
  workflow?: string;
  /** A configured provider's name; the server's default when absent. */
  provider?: string;
  message: string;
  current_step?: string;
  current_config: Config;
  conversation_history: ChatMessage[];
  user_action?: UserAction;
  skipped?: string[];
}

export interface CheckboxOption { label: string; value: string; checked: boolean }

/** The answer to a chat turn. */
export interface ChatResponse {
  message: string;
  next_step: string;
  updated_config: Config;
  target_field?: string;
  suggestions: string[];
  options: CheckboxOption[];
  proposed_message?: string;
  error?: ErrorBody;
  skipped: string[];
  suggested_values?: SuggestedValue[];
  suggested_actions?: SuggestedAction[];
  payloads?: Payload[];
  conversation_id?: string;
  /** Sent once, on the first turn: send it back as the `X-Conversation-Token` header. */
  conversation_token?: string;
}

/** Server-Sent Events of a streamed chat turn. */
export type StreamEvent =
  | { type: "status"; message: string }
  | { type: "text_delta"; text: string }
  | { type: "model_delta"; text: string }
  | { type: "tool_start"; tool: string; input: unknown }
  | { type: "tool_progress"; tool: string; stage: string; progress: number }
  | { type: "tool_complete"; tool: string; index: number }
  | { type: "complete"; payload: ChatResponse }
  | { type: "error"; code: string; message: string };
"#;
