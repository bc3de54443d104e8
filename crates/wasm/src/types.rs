//! TypeScript declarations of the plain data crossing the boundary and of the HTTP API's wire
//! types, in the wire's snake_case shape. They mirror the serde types of stepwise-core;
//! `js-tests/usage.ts` checks them with tsc, and the browser app imports them.

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
  | "unknown_field" | "unknown_step" | "not_at_review" | "invalid_config" | "message_too_long"
  | "invalid_input";

/** A machine code and a human message. */
export interface ErrorBody { code: string; message: string }

/** What `validateAction` returns. */
export type ValidationResult = { ok: true } | { ok: false; error: ErrorBody & { code: ActionErrorCode } };

/** Errors thrown by this package are `Error`s with a stable `code`. */
export interface StepwiseError extends Error { code: string }

export interface ExtractedField { field: string; value: string }
export interface SuggestedValue { label: string; value: string }
/** A button: a client action the page handles, or a server action (`POST /api/assistant/actions`),
 * with the id, page or question it acts on. */
export interface SuggestedAction { label: string; action: string; handler: "client" | "server"; target?: string }
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
  /** With `conversation_id`: the last response's `turns` (a stale count is refused with 409). */
  turns?: number;
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
  /** Turns the conversation holds with this one: the next request's `turns`. */
  turns?: number;
}

/** Server-Sent Events of a streamed turn (each with an `id`), ending with `complete` and its
 * `Answer` or with `error`. */
export type TurnEvent<Answer> =
  | { type: "status"; message: string }
  | { type: "text_delta"; text: string }
  | { type: "model_delta"; text: string }
  | { type: "tool_start"; tool: string; input: unknown }
  | { type: "tool_progress"; tool: string; stage: string; message: string; progress: number }
  | { type: "tool_complete"; tool: string; index: number }
  | { type: "context_required"; payload: ContextRequired }
  | { type: "complete"; payload: Answer }
  | { type: "error"; code: string; message: string };

/** A deferred assistant turn (context-handshake.md): nothing is answered until the request's
 * required slots are supplied, skipped or forced, or its SLA passes. */
export interface ContextRequired {
  status: "context_required";
  conversation_id: string;
  user_message_id: string;
  request_id: string;
  required: unknown[];
  request: unknown;
}

/** Server-Sent Events of a streamed chat turn. */
export type StreamEvent = TurnEvent<ChatResponse>;

/** A research job's status (research-lifecycle.md). */
export type ResearchStatus =
  | "draft" | "processing" | "synthesizing" | "awaiting_confirmation" | "retrying" | "completed" | "failed";
/** One provider call's status. */
export type LlmStatus = "pending" | "processing" | "completed" | "failed";
/** The normalized code of a failed model call. */
export type ProviderErrorCode =
  | "timeout" | "rate_limited" | "auth" | "upstream_error" | "bad_stream" | "answer_too_long";

/** One provider's result in a research job. */
export interface LlmResult {
  provider: string;
  status: LlmStatus;
  attempt: number;
  dispatched_at: number;
  result?: string;
  error?: { code: ProviderErrorCode; message: string };
  finished_at?: number;
}

/** A report the user supplied as extra context for the synthesis. */
export interface ExternalReport { title: string; content: string }

/** A research job as `GET /api/research/:id` answers it. */
export interface Research {
  id: string;
  /** The owner id (hex SHA-256 of the owner's identity). */
  owner: string;
  title: string;
  prompt: string;
  selected_llms: string[];
  synthesis_llm: string;
  external_reports: ExternalReport[];
  status: ResearchStatus;
  created_at: number;
  started_at?: number;
  finished_at?: number;
  llm_results: LlmResult[];
  partial_failure?: { failed_providers: string[]; detected_at: number; retry_count: number };
  retry_count: number;
  synthesized_result?: string;
  synthesis_error?: string;
  synthesis_attempt: number;
  synthesis_dispatched_at?: number;
  synthesis_claimed?: number;
  error?: string;
  /** Set while the owner publishes the report; it expires at `expires_at` (ms since the epoch). */
  share_info?: { share_id: string; url: string; published_at: number; expires_at: number };
  /** Completed with no synthesis, at most one report and no external report (computed by the server). */
  synthesis_not_available: boolean;
}

/** The body of `POST /api/research/draft` and `PUT /api/research/:id/draft`. */
export interface ResearchDraft {
  prompt: string;
  selected_llms?: string[];
  synthesis_llm?: string;
  external_reports?: ExternalReport[];
}

/** The user's answer to a partial failure (`POST /api/research/:id/confirm`). */
export type ConfirmAction = "proceed" | "retry" | "cancel";

/** One entry of `GET /api/research`. */
export interface ResearchListItem { id: string; title: string; status: ResearchStatus; created_at: number; providers: number }
/** A page of `GET /api/research`. */
export interface ResearchList { items: ResearchListItem[]; cursor: string | null }

/** Events of `GET /api/research/:id/events` (besides `snapshot`, whose data is a `Research`). */
export type ResearchEvent =
  | { type: "status_changed"; research_id: string; status: ResearchStatus; at: number }
  | { type: "provider_changed"; research_id: string; provider: string; status: LlmStatus; attempt: number; at: number }
  | { type: "published"; research_id: string; share_id: string; url: string; expires_at: number; at: number };

/** The answer of `GET /api/me`. */
export interface Me {
  owner: { id: string; kind: "access" | "anonymous"; email?: string };
  usage: { calls: number; tokens: number };
  access: boolean;
}

/** A provider as `GET /healthz` lists it. */
export interface ProviderInfo { name: string; kind: "openai" | "anthropic" | "gemini" | "offline" }
/** The answer of `GET /healthz`. */
export interface Health { status: "ok"; provider: ProviderInfo; providers: ProviderInfo[] }
"#;
