// The HTTP API's wire types, written by `cargo run -p stepwise-contract` from
// stepwise-core's Rust types (the same schemas as openapi.yaml). Do not edit.

/**
 * An action a suggested-action button may trigger (spec §4): handled in the browser (client
 * actions) or by `POST /api/assistant/actions` (server actions).
 */
export interface ActionConfigJson {
  /** What it does and what its `target` is, for the model. */
  description: string;
  /** Its name, e.g. `open_stream`. */
  name: string;
}
/** Who handles a suggested action. */
export type ActionHandler = "client" | "server";
/** An AG-UI event, one per `data:` line. */
export interface AgUiEvent {
  type: "RUN_STARTED" | "RUN_FINISHED" | "RUN_ERROR" | "STEP_STARTED" | "STEP_FINISHED" | "TEXT_MESSAGE_START" | "TEXT_MESSAGE_CONTENT" | "TEXT_MESSAGE_END" | "TOOL_CALL_START" | "TOOL_CALL_ARGS" | "TOOL_CALL_END" | "TOOL_CALL_RESULT" | "STATE_SNAPSHOT" | "CUSTOM";
  [key: string]: unknown;
}
/** One message of the thread (AG-UI roles: user, assistant, system, developer, tool). */
export interface AgUiMessage {
  /** Text, or a list of content parts of which the `text` parts are read. */
  content?: unknown;
  /** Its role. */
  role: string;
}
/** The shared state of a guided run. */
export interface AgUiState {
  /** The collected config. */
  config?: Config;
  /** The step the client is on. */
  current_step?: string | null;
  /** Optional fields skipped. */
  skipped?: string[];
}
/** The `data-stepwise` part of a UI message stream and the `result` of an AG-UI run: a guided answer's state, chips and handles, or an assistant answer's cards and tools. */
export interface AnswerData {
  config?: Config;
  conversation_id?: string;
  conversation_token?: string;
  custom_payload?: Payload;
  error?: ErrorBody;
  kind: "guided" | "assistant";
  options?: CheckboxOption[];
  payloads?: Payload[];
  proposed_message?: string;
  skipped?: string[];
  step?: string;
  suggested_actions?: SuggestedAction[];
  suggested_values?: SuggestedValue[];
  suggestions?: string[];
  target_field?: string;
  tool_history?: ToolUse[];
  turns?: number;
}
/** A tool call held for the owner's approval, and what became of it. */
export interface Approval {
  /** The arguments as proposed (defaults filled in, so the owner sees what would run). */
  arguments: unknown;
  /** The model's call id. */
  call_id: string;
  /** When it was decided (ms since the epoch). */
  decided_at?: number | null;
  /** Who decided (the owner's email, or `owner`; `system` for an expiry). */
  decided_by?: string | null;
  /** The arguments the owner approved, when they edited them. */
  edited_arguments?: unknown;
  /** Model calls the call is estimated to make. */
  estimated_calls: number;
  /** When it expires unanswered (ms since the epoch). */
  expires_at: number;
  /** Its id (set when the turn that proposed it stores it). */
  id: string;
  /** Why it was denied (`expired` for an expiry). */
  reason?: string | null;
  /** Half its time has passed and the owner was reminded (the watching tabs were told). */
  reminded?: boolean;
  /** When it was asked (ms since the epoch). */
  requested_at: number;
  /** What the approved call returned, once it ran. */
  result?: ApprovalResult | null;
  /** Where it stands. */
  state: ApprovalState;
  /** What the call will do, in a sentence. */
  summary: string;
  /** The tool. */
  tool: string;
}
/** When a tool's calls need the owner's approval. */
export type ApprovalPolicy = "never" | "always" | "over_cost";
/** What the approved call returned. */
export interface ApprovalResult {
  /** The call failed. */
  is_error?: boolean;
  /** The tool's text for the model, cut to `MAX_RESULT_CHARS`. */
  output: string;
}
/** Where an approval stands. */
export type ApprovalState = "pending" | "approved" | "denied" | "expired";
/** One article's abstract. */
export interface ArticleAbstract {
  /** Journal title. */
  journal: string;
  /** PubMed id. */
  pmid: string;
  /** The abstract's text (empty when the article has none). */
  text: string;
  /** Title. */
  title: string;
  /** Publication year, when given. */
  year: number | null;
}
/** A page of `GET /api/articles/search`. */
export interface ArticleSearch {
  articles: ArticleSummary[];
  /** Articles PubMed found in all. */
  count: number;
  maxdate: string | null;
  mindate: string | null;
  page: number;
  per_page: number;
  query: string;
  sort: "relevance" | "date";
  /** How PubMed read the query. */
  translation: string | null;
}
/** An article as a results list shows it. */
export interface ArticleSummary {
  /** Authors, as `Last Initials`, the first ten. */
  authors: string[];
  /** DOI, when listed. */
  doi?: string | null;
  /** Journal (abbreviated, as PubMed gives it). */
  journal: string;
  /** PubMed id. */
  pmid: string;
  /** Publication date as PubMed writes it (`2023 Jan 5`). */
  pub_date: string;
  /** Title. */
  title: string;
  /** Publication year, when the date has one. */
  year: number | null;
}
/** The body of `POST /api/assistant/actions`: a server action a suggested action named. */
export interface AssistantActionRequest {
  /** The server action's name. */
  action: string;
  /** What the page shows (`ChatContext`). */
  context: ChatContext;
  /** The conversation to continue; a new one when absent. */
  conversation_id?: string | null;
  /** Its button's label (the action's name when absent). */
  label?: string | null;
  /** What it acts on (an id, a page, a question). */
  target?: string | null;
}
/** `GET /api/assistant/conversations/:id`: the messages, oldest first (all of them, or a page with `?limit=&before=`). */
export interface AssistantConversation {
  /** Every context request of the conversation, with its slots and supplies. */
  context_requests?: ContextRequest[];
  /** Milliseconds since the epoch. */
  created_at: number;
  id: string;
  /** Everything the conversation's turns waited on or wait on (approvals, context requests), oldest first, in the one shape of an interrupt. */
  interrupts?: Interrupt[];
  /** Messages in the whole conversation. */
  message_count: number;
  messages: ConversationMessage[];
  /** The index of `messages[0]` in the whole conversation (0 unless a page was asked for). */
  messages_from: number;
  /** A turn is being answered. */
  running: boolean;
  title: string;
  /** Turns the conversation holds. */
  turns: number;
  /** Milliseconds since the epoch. */
  updated_at: number;
  /** The request a deferred message waits for. */
  waiting?: string | null;
  /** The writing style kept for the next turns. */
  writing_style?: string | null;
}
/** Something of the answer that was dropped or ignored, and why. */
export interface AssistantNote {
  /** Stable machine code (`invalid_payload`, `unknown_action`, a parser diagnostic's code...). */
  code: string;
  /** Human explanation. */
  message: string;
}
/** The body of `POST /api/assistant`: a message for the page-aware assistant. */
export interface AssistantRequest {
  /** What the page shows (`ChatContext`). */
  context: ChatContext;
  /** The conversation to continue; a new one when absent. */
  conversation_id?: string | null;
  /** What the user wrote. */
  message: string;
  /** A configured provider's name (default: the server's `LLM_PROVIDER`). */
  provider?: string | null;
  /** A writing style of the page's prompt sheet, kept for the conversation's next turns. */
  writing_style?: string | null;
}
/** The answer of an assistant turn (`ChatResponsePayload`, spec §5). */
export interface AssistantResponse {
  /**
   * A tool call held for the owner's approval: the turn ended there, and the call runs only
   * once approved (`POST /api/assistant/conversations/:id/approvals/:approval_id`).
   */
  approval?: Approval | null;
  /** The conversation, set by the server. */
  conversation_id?: string | null;
  /** The main card: the model's payload, or else the last tool payload. */
  custom_payload?: Payload | null;
  /** What was dropped, and why. */
  diagnostics?: AssistantNote[];
  /** The assistant's text, marker lines removed. */
  message: string;
  /**
   * The answer's index among the conversation's stored messages, set by the server once it
   * is stored: its payload cards' outcomes are kept by it.
   */
  message_index?: number | null;
  /** Every payload of the turn, tool payloads first, each checked against its schema. */
  payloads?: Payload[];
  /** Action buttons, each an action the page offers. */
  suggested_actions: SuggestedAction[];
  /** Chips that send their `value` as the next message. */
  suggested_values: SuggestedValue[];
  /** The tools called this turn. */
  tool_history: ToolUse[];
}
/** The daily caps on model calls (`None`: no cap). */
export interface Caps {
  /**
   * `MODEL_CALLS_NEW_OWNERS_PER_DAY`: all owners first seen today together (within the
   * total); the rest of the total is kept for owners who existed before.
   */
  new_owners: number | null;
  /**
   * `MODEL_CALLS_PER_ADDRESS_PER_DAY`: anonymous owners' calls from one client address (an
   * IPv6 /64 counts as one address: `address_key`).
   */
  per_address: number | null;
  /** `MODEL_CALLS_PER_OWNER_PER_DAY`. */
  per_owner: number | null;
  /** `MODEL_CALLS_PER_DAY`, all owners together. */
  total: number | null;
}
/** What the owner did with a payload card of an answer. */
export type CardOutcome = "accepted" | "dismissed" | "failed";
/** A payload card's outcome, when, and (failed) why. Accepted is final. */
export interface CardState {
  /** When (ms since the epoch). */
  at: number;
  /** Why applying it failed, for people. */
  note?: string | null;
  /** What happened. */
  outcome: CardOutcome;
}
/** What a page shows, sent with each assistant message (chat-architecture.md §1): where the user is and what is on the screen, data items as summaries only (at most 200). Pages may add keys of their own; the whole context is at most 48 KiB of JSON. */
export interface ChatContext {
  active_subtab?: string;
  active_tab?: string;
  current_page: string;
  item_summaries?: (Record<string, unknown>)[];
  pagination?: Record<string, unknown>;
  /** The research job in view. */
  report_id?: string;
  results?: Record<string, unknown>;
  search_form?: Record<string, unknown>;
  selection?: string[];
  sort?: Record<string, unknown>;
  /** The saved stream in view. */
  stream_id?: string;
  viewer?: Record<string, unknown> | null;
  [key: string]: unknown;
}
/** One message of the conversation history. */
export interface ChatMessage {
  /** What was written. */
  content: string;
  /** Who wrote it. */
  role: Role;
  /**
   * An answer cut short: `stopped` by its owner, or `interrupted` when its turn died
   * (absent for a whole message).
   */
  status?: EntryStatus | null;
}
/** Payload types, tools, actions and pages, checked as a whole. */
export interface ChatRegistryJson {
  /** Client actions: the global ones (listed in `global_client_actions`) and those pages add. */
  client_actions?: ActionConfigJson[];
  /** Names of the client actions available on every page. */
  global_client_actions?: string[];
  /** Every page. */
  pages?: PageConfigJson[];
  /** Every payload type. */
  payloads?: PayloadTypeJson[];
  /** Server actions (`POST /api/assistant/actions`), available on every page. */
  server_actions?: ActionConfigJson[];
  /** Every tool. */
  tools?: ToolConfigJson[];
}
/** A chat turn as the browser sends it (guided-workflow.md §1, plus `skipped` for recovery). */
export interface ChatRequest {
  /** The conversation so far, oldest first. */
  conversation_history?: ChatMessage[];
  /** The conversation this turn belongs to (absent on the first turn). */
  conversation_id?: string | null;
  /** The fields collected so far. */
  current_config?: Config;
  /** The step from the last response's `next_step`; inferred from the config when absent. */
  current_step?: string | null;
  /** What the user typed or the label of what they clicked. */
  message?: string;
  /** A configured provider's name to answer this turn (default: the server's `LLM_PROVIDER`). */
  provider?: string | null;
  /** Optional fields the user skipped (from the last response). */
  skipped?: string[];
  /**
   * The count of turns this turn builds on (the last response's `turns`); required with
   * `conversation_id`. A stale count (another tab took a turn) is refused with 409.
   */
  turns?: number | null;
  /** What the user did; absent means `text_input` (spec §9, migration path). */
  user_action?: UserAction | null;
  /** The workflow id (default `research_stream`). */
  workflow?: string | null;
}
/** The answer to a chat turn (guided-workflow.md §5). */
export interface ChatResponse {
  /** The conversation id, set by the server. */
  conversation_id?: string | null;
  /** The conversation's access token, sent once, on its first turn (`X-Conversation-Token`). */
  conversation_token?: string | null;
  /** Why the turn was rejected; nothing changed when set. */
  error?: ErrorBody | null;
  /** The assistant's message, marker lines removed. */
  message: string;
  /** The step the next request must use. */
  next_step: string;
  /** Multi-select checkboxes (send `options_selected`). */
  options: CheckboxOption[];
  /** Registered payloads the model produced (chat-architecture.md §3). */
  payloads?: Payload[];
  /** Label of the Continue button for the checkboxes. */
  proposed_message?: string | null;
  /** Optional fields the user skipped. */
  skipped: string[];
  /** Action buttons (chat-architecture.md §4). */
  suggested_actions?: SuggestedAction[];
  /** Chips that send a prepared message (chat-architecture.md §4). */
  suggested_values?: SuggestedValue[];
  /** Single-select chips (send `option_selected`). */
  suggestions: string[];
  /** The field the next question is about (absent at review and when done). */
  target_field?: string | null;
  /** Turns the conversation holds with this one (send it back as the next request's `turns`). */
  turns?: number | null;
  /** The config after this turn. */
  updated_config: Config;
}
/** One checkbox of a multi-select question. */
export interface CheckboxOption {
  /** Whether the value is already in the config. */
  checked: boolean;
  /** Text shown. */
  label: string;
  /** Value sent in `selected_values`. */
  value: string;
}
/** Collected fields by field name. */
export type Config = Record<string, FieldValue>;
/** The user's answer to a partial failure. */
export type ConfirmAction = "proceed" | "retry" | "cancel";
/** A context request of one user message. */
export interface ContextRequest {
  /** When (ms since the epoch). */
  created_at: number;
  /** Who asked. */
  origin: Origin;
  /** The reminder at half the SLA was sent. */
  reminded: boolean;
  /** Its id. */
  request_id: string;
  /** When it ended. */
  resolved_at?: number | null;
  /** How long it waits before the turn runs without it, in ms. */
  sla_ms: number;
  /** What it needs. */
  slots: Slot[];
  /** Where it stands. */
  status: RequestStatus;
  /** The user message it holds back. */
  user_message_id: string;
}
/**
 * A deferred turn's answer: `status` is `context_required`; `required` lists the slots still
 * open; `request` is the whole request (with what was filled automatically).
 */
export interface ContextRequired {
  /** The conversation. */
  conversation_id: string;
  /** The request, whole. */
  request: ContextRequest;
  /** The request. */
  request_id: string;
  /** The slots the user is asked for. */
  required: Slot[];
  /** Always `context_required`. */
  status: string;
  /** The user message held back. */
  user_message_id: string;
}
/** One event, tagged by `type` (`conversation:message`, `conversation:context_request`...). */
export type ConversationEvent = {
  /** The conversation. */
  conversation_id: string;
  /** Its index among the conversation's messages (its cards' outcomes are kept by it). */
  index: number;
  /** The message. */
  message: ConversationMessage;
  type: "conversation:message";
} | {
  /** The conversation. */
  conversation_id: string;
  /** The turn's lease: its events' sequence numbers are `lease × 1 000 000 + n`. */
  lease: number;
  /** The user's message (`None` for a resumed turn, whose message is stored). */
  message: ConversationMessage | null;
  type: "conversation:turn_started";
  /**
   * The id the message waited under in the line (`x-stepwise-waiting`), when it waited:
   * the tab that sent it knows the turn as its own even after a reload.
   */
  waiting_id?: string | null;
} | {
  /** The conversation. */
  conversation_id: string;
  /** The event. */
  event: StreamEvent;
  /** The event's sequence number (its SSE `id`). */
  seq: number;
  type: "conversation:turn_event";
} | {
  /** The conversation. */
  conversation_id: string;
  /** A turn runs; its next events follow. */
  running: boolean;
  type: "conversation:caught_up";
} | {
  /** The conversation. */
  conversation_id: string;
  /** The waiting messages, first to be answered first. */
  messages: WaitingMessage[];
  type: "conversation:waiting";
} | {
  /** Why, as an error code (`rate_limited`, `context_pending`...). */
  code: string;
  /** The message, as the line listed it (for a tab that never saw it listed). */
  content: string;
  /** The conversation. */
  conversation_id: string;
  /** Why, for people. */
  message: string;
  type: "conversation:not_begun";
  /** The message's id in the line (`x-stepwise-waiting`). */
  waiting_id: string;
} | {
  /** The conversation. */
  conversation_id: string;
  /** The text. */
  text: string;
  type: "conversation:delta";
} | {
  /** The conversation. */
  conversation_id: string;
  /** The request. */
  request: ContextRequest;
  type: "conversation:context_request";
} | {
  /** The conversation. */
  conversation_id: string;
  /** The request now. */
  request: ContextRequest;
  type: "conversation:context_update";
} | {
  /** The conversation. */
  conversation_id: string;
  /** The request. */
  request: ContextRequest;
  type: "conversation:context_resolved";
} | {
  /** The conversation. */
  conversation_id: string;
  /** The answer's index among the conversation's messages. */
  message: number;
  /** The payload's index in the answer's `payloads`. */
  payload: number;
  /** The card's state now. */
  state: CardState;
  type: "conversation:card";
} | {
  /** The approval now. */
  approval: Approval;
  /** The conversation. */
  conversation_id: string;
  /** The answer's index among the conversation's messages. */
  message: number;
  type: "conversation:approval";
} | {
  /** The conversation. */
  conversation_id: string;
  /** The interrupt now. */
  interrupt: Interrupt;
  type: "conversation:interrupt";
} | {
  /** The conversation. */
  conversation_id: string;
  /** When the turn runs without it (ms since the epoch). */
  deadline: number;
  /** The request. */
  request_id: string;
  type: "conversation:context_reminder";
};
/** A page of `GET /api/assistant/conversations`. */
export interface ConversationList {
  /** Pass as `?cursor=` for the next page; null on the last. */
  cursor: string | null;
  items: ConversationSummary[];
}
/** One message of an assistant conversation. */
export interface ConversationMessage {
  /** The server action this message asked for, instead of text (user messages). */
  action?: string | null;
  /** The tool call this answer held for the owner's approval, and what became of it. */
  approval?: Approval | null;
  /** When (ms since the epoch). */
  at: number;
  /** What the owner did with its payload cards, by the payload's index in `payloads`. */
  cards?: Record<string, unknown>;
  /** The text (for the assistant: marker lines removed). */
  content: string;
  /** Its id (messages stored since context requests exist have one). */
  id?: string | null;
  /** The page the user was on (user messages). */
  page?: string | null;
  /** Payloads of this answer, the main card last. */
  payloads?: Payload[];
  /** The context request of its turn, if one was made. */
  request_id?: string | null;
  /** Who wrote it. */
  role: Role;
  /** Where it stands (a deferred user message, or an answer cut short). */
  status?: EntryStatus | null;
  /** Buttons offered. */
  suggested_actions?: SuggestedAction[];
  /** Chips offered. */
  suggested_values?: SuggestedValue[];
  /** Tools called for this answer. */
  tool_history?: ToolUse[];
}
/** One conversation of `GET /api/assistant/conversations`. */
export interface ConversationSummary {
  /** Milliseconds since the epoch. */
  created_at: number;
  id: string;
  title: string;
  /** Turns the conversation holds. */
  turns: number;
  /** Milliseconds since the epoch. */
  updated_at: number;
}
/** Something malformed in the stream, dropped with a reason. */
export interface Diagnostic {
  /** Stable machine code (see `DiagnosticCode`). */
  code: DiagnosticCode;
  /** 1-based line of the stream where the marker started. */
  line: number;
  /** Human explanation. */
  message: string;
}
/** Stable codes of parser diagnostics. */
export type DiagnosticCode = "malformed_marker" | "malformed_json" | "invalid_shape" | "line_too_long" | "payload_too_large" | "unterminated_payload" | "missing_payload_body" | "trailing_text" | "too_many_items" | "feed_after_end";
/**
 * Where a message stands: a deferred turn's user message waiting or answered, or an answer
 * cut short (stopped by its owner, or interrupted when its turn died).
 */
export type EntryStatus = "waiting_context" | "answered" | "stopped" | "interrupted";
/** A refusal or a failure: a stable machine code and a message for people. Nothing changed. */
export interface Error {
  error: ErrorBody;
}
/** A machine code and a human message. */
export interface ErrorBody {
  /** Stable machine code. */
  code: string;
  /** Human explanation. */
  message: string;
}
/** A report the user supplied as extra context for the synthesis. */
export interface ExternalReport {
  /** Its text. */
  content: string;
  /** Its title. */
  title: string;
}
/** One `field=value` pair of an `EXTRACTED_DATA` marker, as the model wrote it. */
export interface ExtractedField {
  /** The field name. */
  field: string;
  /** The raw value (lists are comma-separated or a JSON array). */
  value: string;
}
/** One field's new value. */
export interface FieldEdit {
  /** The field. */
  field: string;
  /** Its value. */
  value: FieldValue;
}
/**
 * A field's value: one string, or a list of strings.
 * Written untagged; read by a hand-written visitor (`wire.rs`).
 */
export type FieldValue = string | string[];
/** What a Stepwise client may forward with a run. */
export interface ForwardedProps {
  /** Which agent answers: `guided` (the default) or `assistant`. */
  agent?: string | null;
  /**
   * The page context of an assistant run (`ChatContext`: `current_page`, tabs, what is on
   * screen), checked by the server.
   */
  context?: unknown;
  /** The stored conversation to continue. */
  conversation_id?: string | null;
  /** A provider name. */
  provider?: string | null;
  /** Its `turns` from the last answer (guided runs). */
  turns?: number | null;
  /** A typed action (a chip, checkboxes, a skip); defaults to text input. */
  user_action?: UserAction | null;
  /** The workflow id (default `research_stream`). */
  workflow?: string | null;
}
/** `GET /healthz`. */
export interface Health {
  /** The provider guided and assistant turns use by default. */
  provider: ProviderInfo;
  /** Every configured provider. */
  providers: ProviderInfo[];
  /** Always `ok` when the server answers. */
  status: string;
}
/** `GET /api/help/sessions/:id` and the handoff's answer: the owner's session. */
export interface HelpSession {
  created_at: number;
  escalation?: Record<string, unknown> | null;
  handoff_offered?: boolean;
  id: string;
  /** The last clarifying question the desk asked, open until the next turn answers it (resolved `answered`) or does not (`skipped`). */
  interrupt?: Interrupt | null;
  messages: (Record<string, unknown>)[];
  search_calls?: number;
  /** The pipeline's state, `clarification_context` among it. */
  state?: Record<string, unknown>;
  status: "open" | "escalated" | "resolved";
  turns: number;
  updated_at: number;
}
/** `POST /api/help`: one turn of the help desk. */
export interface HelpTurn {
  dialog_state: "NEEDS_CLARIFICATION" | "ANSWER_PROVIDED" | "ESCALATED";
  footer?: string | null;
  handoff_offered?: boolean;
  /** The last clarifying question the desk asked, open until the next turn answers it (resolved `answered`) or does not (`skipped`). */
  interrupt?: Interrupt | null;
  no_answer?: boolean;
  /** The clarifying question asked: `{number, total, text}`. */
  question?: Record<string, unknown> | null;
  reply: string;
  search_calls?: number;
  session_id: string;
  status: "open" | "escalated" | "resolved";
  turns: number;
}
/**
 * What a turn waits on, in the same shape whatever it is: an approval, a context request or a
 * clarifying question. The record it stands for (`id`, and the kind's own fields) says more.
 */
export interface Interrupt {
  /** When it expires unresolved (`None`: never). */
  deadline?: number | null;
  /** The id of the record it stands for (the approval's, the request's, the question's). */
  id: string;
  /** What it waits on. */
  kind: InterruptKind;
  /** When it opened (ms since the epoch). */
  opened_at: number;
  /** Why (a denial's reason). */
  reason?: string | null;
  /** When the owner is reminded, half way to the deadline. */
  remind_at?: number | null;
  /** The reminder was sent. */
  reminded: boolean;
  /** How it was resolved. */
  resolution?: Resolution | null;
  /** When it was resolved. */
  resolved_at?: number | null;
  /** Who resolved it (`system` at a deadline). */
  resolved_by?: string | null;
  /** Open or resolved. */
  state: InterruptState;
  /** What it waits on, in a sentence for people. */
  summary: string;
}
/** What a turn waits on. */
export type InterruptKind = "approval" | "context_request" | "question";
/** Whether an interrupt still waits. */
export type InterruptState = "open" | "resolved";
/** One provider's result. */
export interface LlmResult {
  /** The current attempt, from 1; results of other attempts are ignored. */
  attempt: number;
  /** When the current attempt was sent (ms since the epoch). */
  dispatched_at: number;
  /** The normalized error code and a message safe to show, when failed. */
  error?: ProviderError | null;
  /** When the attempt ended. */
  finished_at?: number | null;
  /** Provider name (from `LLM_PROVIDERS`). */
  provider: string;
  /** The report, when completed. */
  result?: string | null;
  /** Its state. */
  status: LlmStatus;
}
/** Where one provider's call stands. */
export type LlmStatus = "pending" | "processing" | "completed" | "failed";
/** A completed marker with its parsed value. */
export type Marker = {
  kind: "suggestions";
  value: string[];
} | {
  kind: "options";
  value: string[];
} | {
  kind: "extracted_data";
  value: ExtractedField;
} | {
  kind: "proposed_message";
  value: string;
} | {
  kind: "target_field";
  value: string;
} | {
  kind: "suggested_values";
  value: SuggestedValue[];
} | {
  kind: "suggested_actions";
  value: SuggestedAction[];
} | {
  kind: "payload";
  value: Payload;
};
/**
 * One event of a streamed parse. Adjacent `Text` events may be split differently for different
 * chunkings; their concatenation, and every other event, is the same for any chunking.
 */
export type MarkerEvent = {
  /** The text. */
  text: string;
  type: "text";
} | ({
  type: "marker";
}) & Marker | ({
  type: "diagnostic";
}) & Diagnostic;
/** `GET /api/me`: who the caller is and what they spent today against the daily caps. */
export interface Me {
  /** Whether Cloudflare Access decides who owners are (owner tokens are then ignored). */
  access: boolean;
  /** The caller. */
  owner: OwnerInfo;
  /** Model calls and estimated tokens counted today. */
  usage: Usage;
}
/** A JSON object (an answer not described further). */
export type Object = Record<string, unknown>;
/** Who asked for the context. */
export type Origin = "analyzer" | "model";
/** The caller as the server knows it. */
export interface OwnerInfo {
  /** An Access identity's e-mail address. */
  email: string | null;
  /** The owner id: hex SHA-256 of the identity, what the caller's data is keyed by. */
  id: string;
  /** How the caller proved who they are. */
  kind: OwnerKind;
}
/** How an owner proved who they are. */
export type OwnerKind = "access" | "anonymous";
/** A page of the app and what the assistant has there (spec §1). */
export interface PageConfigJson {
  /** Client actions the page handles besides the global ones, by name. */
  client_actions?: string[];
  /**
   * Context template (see `render_template`): what the page is, with placeholders for
   * what is on it.
   */
  context_template?: string;
  /** Its name, as clients send it in `current_page`. */
  page: string;
  /** Payload types available on every tab, by name. */
  payloads?: string[];
  /** Its tabs. */
  tabs?: TabConfigJson[];
  /** Tools available on every tab, by name. */
  tools?: string[];
}
/** The whole parse of a reply. */
export interface Parsed {
  /** Every diagnostic, in order. */
  diagnostics: Diagnostic[];
  /** Every `EXTRACTED_DATA` pair, in order (a later pair for the same field wins when applied). */
  extracted: ExtractedField[];
  /** Display text with marker lines removed, trimmed. */
  message: string;
  /** Checkboxes from `OPTIONS` lines, in order, without repeats, at most `MAX_LIST_ITEMS`. */
  options: string[];
  /** Every registered payload, in order. */
  payloads: Payload[];
  /** The last `PROPOSED_MESSAGE`. */
  proposed_message: string | null;
  /** Every `SUGGESTED_ACTIONS` entry, in order. */
  suggested_actions: SuggestedAction[];
  /** Every `SUGGESTED_VALUES` entry, in order. */
  suggested_values: SuggestedValue[];
  /** Chips from `SUGGESTIONS` lines, in order, without repeats, at most `MAX_LIST_ITEMS`. */
  suggestions: string[];
  /** The last `TARGET_FIELD`. */
  target_field: string | null;
}
/** What a partial failure left behind. */
export interface PartialFailure {
  /** When it was detected. */
  detected_at: number;
  /** Providers whose calls failed. */
  failed_providers: string[];
  /** Retries already made. */
  retry_count: number;
}
/**
 * A registered payload: its type (the marker name in snake_case) and its JSON body.
 *
 * The body is kept as validated JSON text: it is checked while it streams and never rebuilt,
 * so a large payload costs one pass. Read it with `serde_json::from_str(data.as_str())`.
 */
export interface Payload {
  /** The JSON body, validated, exactly as the model wrote it. */
  data: unknown;
  /** Payload type, e.g. `schema_proposal` for `SCHEMA_PROPOSAL:`. */
  type: string;
}
/** Where a payload comes from. */
export type PayloadSource = "tool" | "llm";
/** A kind of structured data the client renders as a card (spec §3). */
export interface PayloadTypeJson {
  /** What it is. */
  description: string;
  /** Available on every page (otherwise only where a page, tab or subtab names it). */
  is_global?: boolean;
  /** How the model is to write it (model payloads only). */
  llm_instructions?: string;
  /** Its name, e.g. `query_suggestion`. */
  name: string;
  /** The marker a model writes it after (model payloads only): the name in upper case. */
  parse_marker?: string | null;
  /** JSON Schema its data must match before it reaches a client. */
  schema: unknown;
  /** Tool or model. */
  source: PayloadSource;
}
/** An upstream failure: a code and a message safe to show (it never contains request headers). */
export interface ProviderError {
  /** The normalized code. */
  code: ProviderErrorCode;
  /** What went wrong, from the provider's error body where it had one. */
  message: string;
}
/**
 * The stable code of an upstream failure. Read by hand (`ErrorCode::parse`): the derived
 * reader of a unit enum costs the Worker more than a match on the string.
 */
export type ProviderErrorCode = "timeout" | "rate_limited" | "auth" | "upstream_error" | "bad_stream" | "answer_too_long" | "model_calls_disabled";
/** A provider as the server lists it: its name and kind, never its URL or key. */
export interface ProviderInfo {
  /** Its protocol. */
  kind: ProviderKind;
  /** Its name (what requests name in `provider`). */
  name: string;
}
/** Which wire protocol a provider speaks. */
export type ProviderKind = "openai" | "anthropic" | "gemini" | "offline";
/** How a request ended, or that it has not. */
export type RequestStatus = "open" | "resolved" | "forced" | "fell_back";
/**
 * The JSON of `GET /api/research/:id` and of the job in events: every field of the record,
 * and `synthesis_not_available` (the spec's condition for the completed card).
 */
export interface Research {
  /** Creation time. */
  created_at: number;
  /** Why the job failed. */
  error?: string | null;
  /** Extra context reports. */
  external_reports: ExternalReport[];
  /** Completion (or failure) time. */
  finished_at?: number | null;
  /** Job id. */
  id: string;
  /** One result per selected provider. */
  llm_results: LlmResult[];
  /** The owner id: only this owner can read or change the job. */
  owner: string;
  /** Set while (and after) some providers failed. */
  partial_failure?: PartialFailure | null;
  /** The synthesis's points of interest (its `POINTS_OF_INTEREST:` line), when it wrote them. */
  points_of_interest?: string[];
  /** The research prompt. */
  prompt: string;
  /** Retries of failed providers made so far. */
  retry_count: number;
  /** Providers to ask. */
  selected_llms: string[];
  /** The shareable report, once published. */
  share_info?: ShareInfo | null;
  /** Start time. */
  started_at?: number | null;
  /** The job's state. */
  status: ResearchStatus;
  /** The saved stream this job researches for, when it was started from one. */
  stream_id?: string | null;
  /** The current synthesis attempt (0 before any). */
  synthesis_attempt: number;
  /**
   * The last synthesis attempt a queue consumer claimed (0: none), so a second delivery of
   * the same attempt is dropped.
   */
  synthesis_claimed?: number;
  /** When the current synthesis attempt was sent. */
  synthesis_dispatched_at?: number | null;
  /** Why the last synthesis failed. */
  synthesis_error?: string | null;
  /** Provider that writes the synthesis. */
  synthesis_llm: string;
  /** Completed with no synthesis, at most one successful report and no external report. */
  synthesis_not_available: boolean;
  /** The synthesis, when one was written. */
  synthesized_result?: string | null;
  /** Title (generated from the prompt). */
  title: string;
}
/** The body of `POST /api/research/:id/confirm`: the user's answer to a partial failure. */
export interface ResearchConfirm {
  /** Proceed with what succeeded, retry the failed providers, or cancel. */
  action: ConfirmAction;
}
/**
 * The body of `POST /api/research/draft` and `PUT /api/research/:id/draft`: a draft as the user
 * writes it (the title is made by the server).
 */
export interface ResearchDraft {
  /** Reports the user adds as context for the synthesis. */
  external_reports?: ExternalReport[];
  /** The question. */
  prompt: string;
  /** The providers to ask (default: every configured one). */
  selected_llms?: string[] | null;
  /** The caller's saved stream the job researches for. */
  stream_id?: string | null;
  /** The provider that writes the synthesis (default: the chat's). */
  synthesis_llm?: string | null;
}
/** A lifecycle event, for the events stream and the `research-events` queue. */
export type ResearchEvent = {
  /** When. */
  at: number;
  /** Job id. */
  research_id: string;
  /** New status. */
  status: ResearchStatus;
  type: "status_changed";
} | {
  /** When. */
  at: number;
  /** Attempt number. */
  attempt: number;
  /** Provider name. */
  provider: string;
  /** Job id. */
  research_id: string;
  /** New state. */
  status: LlmStatus;
  type: "provider_changed";
} | {
  /** When. */
  at: number;
  /** When the page expires. */
  expires_at: number;
  /** Job id. */
  research_id: string;
  /** Share id. */
  share_id: string;
  type: "published";
  /** The public URL of the report. */
  url: string;
};
/** A page of `GET /api/research`. */
export interface ResearchList {
  /** Pass as `?cursor=` for the next page; null on the last. */
  cursor: string | null;
  items: ResearchListItem[];
}
/** One job of `GET /api/research`. */
export interface ResearchListItem {
  /** Milliseconds since the epoch. */
  created_at: number;
  id: string;
  /** How many providers the job asks. */
  providers: number;
  status: ResearchStatus;
  /** The saved stream it researches for. */
  stream_id?: string;
  title: string;
}
/** The body of `POST /api/research`: the draft to start. */
export interface ResearchStart {
  /** The draft's id. */
  research_id: string;
}
/** Where a research job stands. */
export type ResearchStatus = "draft" | "processing" | "synthesizing" | "awaiting_confirmation" | "retrying" | "completed" | "failed";
/** How an interrupt was resolved. */
export type Resolution = "approved" | "denied" | "supplied" | "skipped" | "answered" | "forced" | "expired";
/**
 * An answer to one interrupt (AG-UI's `ResumeEntry`). An approval: `resolved` with a payload
 * `{approved, reason?, editedArgs?}`, or `cancelled` (a denial). A context request (its
 * interrupt's id is `context:<request id>`): `resolved` with `{payloads?: [{slot, text |
 * key_path}], skip?: [slot]}`, or `cancelled` (run without it).
 */
export interface ResumeEntry {
  /** The interrupt answered: the approval's id, or `context:` and the request's id. */
  interruptId: string;
  /** The answer. */
  payload?: unknown;
  /** `resolved` or `cancelled`. */
  status: string;
}
/** Who wrote a message of the conversation. Clients cannot send system messages. */
export type Role = "user" | "assistant";
/**
 * The fields of AG-UI's `RunAgentInput` that a guided turn reads. `tools` and `context` are
 * accepted and ignored: the workflow decides what the model may do.
 */
export interface RunAgentInput {
  /**
   * Stepwise's own fields (`workflow`, `provider`, `user_action`, and the
   * `conversation_id` / `turns` of the last answer to continue a stored conversation).
   */
  forwardedProps?: ForwardedProps | null;
  /** The thread's messages; the last user message is the turn's input. */
  messages: AgUiMessage[];
  /** Answers to the interrupts that ended the previous run (an approval's decision). */
  resume?: ResumeEntry[];
  /** The client's run id, echoed likewise. */
  runId: string;
  /** `{current_step, config, skipped}` of the guided workflow, as the last `STATE_SNAPSHOT`. */
  state?: AgUiState | null;
  /** The client's thread id, echoed in `RUN_STARTED` and `RUN_FINISHED`. */
  threadId: string;
}
/**
 * A stream as its owner reads it (`GET /api/streams/:id`): every field but the owner's id, and
 * the search its Articles tab starts with.
 */
export interface SavedStream {
  /** Instructions added to the assistant's prompt when this stream is in view. */
  chat_instructions: string;
  /** The configuration. */
  config: Config;
  /** The guided conversation it was saved from. */
  conversation_id?: string | null;
  /** Creation time (ms since the epoch). */
  created_at: number;
  /** The PubMed query its Articles tab starts with (its keywords and focus areas). */
  default_query: string;
  /** Its id. */
  id: string;
  /** Its name (from the purpose at first; editable). */
  name: string;
  /** Optional fields left out. */
  skipped: string[];
  /** Last change (ms since the epoch). */
  updated_at: number;
  /** The workflow its configuration follows. */
  workflow: string;
}
/** One stream of `GET /api/streams`. */
export interface SavedStreamItem {
  /** Milliseconds since the epoch. */
  created_at: number;
  id: string;
  name: string;
  stream_type: string;
  /** Milliseconds since the epoch. */
  updated_at: number;
}
/** A page of `GET /api/streams`. */
export interface SavedStreamList {
  /** Pass as `?cursor=` for the next page; null on the last. */
  cursor: string | null;
  items: SavedStreamItem[];
}
/** One shard's part of the day. */
export interface ShardReport {
  /** Owners' calls the shard counted today. */
  counted: number;
  /** Calls leased and not yet spent, for established owners. */
  held_established: number;
  /** Calls leased and not yet spent, for owners first seen today. */
  held_new: number;
  /** The shard's number (`shard-<n>`). */
  shard: number;
}
/** Where the shareable report lives, while its owner keeps it published. */
export interface ShareInfo {
  /** When the page expires and is no longer served. */
  expires_at: number;
  /** When it was published (ms since the epoch). */
  published_at: number;
  /** The share id. */
  share_id: string;
  /** The public URL. */
  url: string;
}
/** One thing a turn needs. */
export interface Slot {
  /** What it needs (`points_of_interest`, `llm_result`, `note`...). */
  artifact_type: string;
  /** What and why, for people. */
  description: string;
  /** Where the system would find it; `None` when only the user can give it. */
  key_path?: string | null;
  /** The phase of what it needs, 0 to 4. */
  phase: number;
  /** Most characters taken. */
  size_limit: number;
  /** The slot's name within its request (`s1`, `s2`...). */
  slot: string;
  /** Where it stands. */
  state: SlotState;
  /** Snippets to attach with one click. */
  suggestions?: Suggestion[];
  /** What was supplied. */
  supply?: Supply | null;
  /** Required or optional. */
  urgency: Urgency;
}
/** Where a slot stands. */
export type SlotState = "open" | "supplied" | "skipped";
/**
 * The day's spending over every shard. `granted` equals `counted + held`: every call the
 * budget gave out was either counted or is still held in a shard.
 */
export interface SpendReport {
  /** Each shard that counted or holds anything today. */
  by_shard: ShardReport[];
  /** The caps in force. */
  caps: Caps;
  /** Owners' calls counted, over all shards. */
  counted: number;
  /** The UTC day (`YYYY-MM-DD`). */
  day: string;
  /** Calls the day's budget granted to shards (the total cap counts these). */
  granted: number;
  /** Of which to owners first seen today. */
  granted_new: number;
  /** Calls held in shards' blocks, not yet spent. */
  held: number;
  /** Shards the counters are spread over. */
  shards: number;
}
/** What kind of value a step collects. */
export type StepKind = "text" | "list" | "single_choice" | "multi_choice" | "confirm";
/** One step of a workflow. */
export interface StepSpec {
  /** The values a choice step offers. */
  choices?: string[];
  /** The config field this step fills; absent only for a confirm step. */
  field?: string | null;
  /** Instructions for the model while the conversation is on this step. */
  guidance?: string;
  /** Stable step id, used as `current_step` / `next_step` on the wire. */
  id: string;
  /** What the step collects. */
  kind: StepKind;
  /** Most items of a list value. */
  max_items?: number | null;
  /** Longest text value, or list item, in characters. */
  max_len?: number | null;
  /** Fewest items of a list value (a required list needs at least 1 in any case). */
  min_items?: number | null;
  /** For choice steps: the model may propose, and the user pick, values beyond `choices`. */
  open?: boolean;
  /** The question shown to the user for this step. */
  question?: string;
  /** Whether the workflow needs a value here (optional steps may be skipped). */
  required: boolean;
}
/** One step of a workflow. */
export interface StepSpecInput {
  /** The values a choice step offers. */
  choices?: string[];
  /** The config field this step fills; absent only for a confirm step. */
  field?: string | null;
  /** Instructions for the model while the conversation is on this step. */
  guidance?: string;
  /** Stable step id, used as `current_step` / `next_step` on the wire. */
  id: string;
  /** What the step collects. */
  kind: StepKind;
  /** Most items of a list value. */
  max_items?: number | null;
  /** Longest text value, or list item, in characters. */
  max_len?: number | null;
  /** Fewest items of a list value (a required list needs at least 1 in any case). */
  min_items?: number | null;
  /** For choice steps: the model may propose, and the user pick, values beyond `choices`. */
  open?: boolean;
  /** The question shown to the user for this step. */
  question?: string;
  /** Whether the workflow needs a value here (optional steps may be skipped). */
  required?: boolean;
}
/** A change to a stream: any of a new name, new instructions and field edits. */
export interface StreamChange {
  /** New chat instructions (empty clears them). */
  chat_instructions?: string | null;
  /** Field edits, applied in order. */
  edits?: FieldEdit[];
  /** A new name. */
  name?: string | null;
}
/** Server-Sent Events of a streamed turn (chat-architecture.md §5). */
export type StreamEvent = {
  /** The note. */
  message: string;
  type: "status";
} | {
  /** The text. */
  text: string;
  type: "text_delta";
} | {
  /** The text as the model wrote it. */
  text: string;
  type: "model_delta";
} | {
  /**
   * The model's call id, for a call that was held for approval and now runs: clients
   * that showed it awaiting approval attach its result to it.
   */
  call_id?: string | null;
  /** Its input. */
  input: unknown;
  /** Tool name. */
  tool: string;
  type: "tool_start";
} | {
  /** What it is doing, for people. */
  message: string;
  /** 0.0 to 1.0. */
  progress: number;
  /** Stage name (`searching`, `fetching_summaries`...). */
  stage: string;
  /** Tool name. */
  tool: string;
  type: "tool_progress";
} | {
  /** Index of the call within the turn. */
  index: number;
  /** Tool name. */
  tool: string;
  type: "tool_complete";
} | {
  /** What the client needs to show and answer the request. */
  payload: ContextRequired;
  type: "context_required";
} | {
  /** The held call: tool, arguments, what it will do, estimated model calls, deadline. */
  approval: Approval;
  type: "approval_required";
} | {
  /** The response. */
  payload: TurnAnswer;
  type: "complete";
} | {
  /** Stable machine code. */
  code: string;
  /** Human explanation. */
  message: string;
  type: "error";
} | {
  /** The partial answer's display text, as stored. */
  message: string;
  type: "stopped";
};
/** The payloads and tools a subtab adds. */
export interface SubTabConfigJson {
  /** Payload types it adds, by name. */
  payloads?: string[];
  /** Its name. */
  subtab: string;
  /** Tools it adds, by name. */
  tools?: string[];
}
/** A button that triggers a named action. */
export interface SuggestedAction {
  /** The action's name. */
  action: string;
  /** Who runs it. */
  handler: ActionHandler;
  /** Text on the button. */
  label: string;
  /** What it acts on (an id, a page, a question), when the action needs one. */
  target?: string | null;
}
/** A chip that sends `value` as the user's next message. */
export interface SuggestedValue {
  /** Text on the chip. */
  label: string;
  /** Message sent when clicked. */
  value: string;
}
/** A snippet offered for a slot, one click to attach. */
export interface Suggestion {
  /** End of the excerpt, in characters. */
  end: number;
  /** Its opening, redacted. */
  excerpt: string;
  /** Where it comes from. */
  key_path: string;
  /** Offset of the excerpt in the artifact, in characters. */
  start: number;
  /** A label for people. */
  title: string;
}
/** Who supplied a slot. */
export type Supplier = "system" | "user";
/** What was given for a slot, with its provenance. */
export interface Supply {
  /** When (ms since the epoch). */
  at: number;
  /** Who gave it. */
  by: Supplier;
  /** The artifact it came from, when it is one. */
  key_path?: string | null;
  /** The text, redacted and within the slot's limit. */
  text: string;
  /** Whether the text was cut to the limit. */
  truncated: boolean;
}
/** The payloads and tools a tab adds, its context, and its subtabs. */
export interface TabConfigJson {
  /** Context template of the tab, after the page's (see `render_template`). */
  context_template?: string;
  /** Payload types it adds, by name. */
  payloads?: string[];
  /** Its subtabs. */
  subtabs?: SubTabConfigJson[];
  /** Its name. */
  tab: string;
  /** Tools it adds, by name. */
  tools?: string[];
}
/** A tool the model may call (spec §2). */
export interface ToolConfigJson {
  /**
   * Whether its calls wait for the owner's approval (`never`, the default; `always`;
   * `over_cost`: when their estimated model calls exceed `approval_threshold`).
   */
  approval?: ApprovalPolicy;
  /** Estimated model calls a call may make without approval (`over_cost` only). */
  approval_threshold?: number;
  /** A grouping for people reading the registry (`research`, `data`...). */
  category?: string;
  /** What it does, for the model. */
  description: string;
  /** JSON Schema of its input (an object); calls that do not match are refused. */
  input_schema: unknown;
  /** Available on every page (the default). */
  is_global?: boolean;
  /** Its name, e.g. `search_pubmed`. */
  name: string;
  /** The payload type its results carry, if any (a tool payload). */
  payload_type?: string | null;
}
/** One tool call of a turn, as `tool_history` shows it (spec §5). */
export interface ToolUse {
  /** Its input (the arguments as written when they were not a JSON object). */
  input: unknown;
  /** The call was refused or failed. */
  is_error?: boolean;
  /** What the model read back. */
  output: string;
  /** The tool called. */
  tool_name: string;
}
/** The answer a `complete` event carries: a guided turn's or an assistant turn's. */
export type TurnAnswer = ChatResponse | AssistantResponse;
/** Must the slot be met before the turn runs? */
export type Urgency = "required" | "optional";
/** Calls and estimated tokens counted so far. */
export interface Usage {
  /** Model calls. */
  calls: number;
  /** Estimated tokens (`estimate_tokens`). */
  tokens: number;
}
/**
 * What the user did, as sent by the browser (`type` tag in snake_case). Written by serde's
 * derive; read by a hand-written visitor (`wire.rs`) that rejects unknown fields the same way.
 */
export type UserAction = {
  /** The chosen value. */
  selected_value: string;
  /** The field the chip belongs to. */
  target_field: string;
  type: "option_selected";
} | {
  /** Every checked value (the full selection). */
  selected_values: string[];
  /** The field the checkboxes belong to. */
  target_field: string;
  type: "options_selected";
} | {
  type: "text_input";
} | {
  /** The field of the step being skipped. */
  target_field: string;
  type: "skip_step";
} | {
  /** The field to change (any field of the spec). */
  target_field: string;
  type: "field_edit";
  /** The new value. */
  value: FieldValue;
} | {
  type: "confirm";
} | {
  /** The step to go to. */
  step: string;
  type: "go_to_step";
};
/** A message waiting behind the running turn, as its conversation's tabs see it. */
export interface WaitingMessage {
  /**
   * It asks for an action or an approved call, not a typed message: withdrawn, its button is
   * pressed again (its label is not something to send).
   */
  action: boolean;
  /** What it says: the message, or the label of the action it asks for. */
  content: string;
  /**
   * The id its sender's stream was named by (`x-stepwise-waiting`): a Stop naming it takes
   * it out of the line.
   */
  id: string;
}
/** A whole workflow: an id, a title and its ordered steps. */
export interface WorkflowSpec {
  /** Stable workflow id (`research_stream` for the built-in one). */
  id: string;
  /** The steps in the order the conversation walks them. */
  steps: StepSpec[];
  /** Human title of the workflow. */
  title: string;
}
/** A whole workflow: an id, a title and its ordered steps. */
export interface WorkflowSpecInput {
  /** Stable workflow id (`research_stream` for the built-in one). */
  id: string;
  /** The steps in the order the conversation walks them. */
  steps: StepSpecInput[];
  /** Human title of the workflow. */
  title: string;
}
/** What a guided conversation has reached: the step, the collected fields and the skipped ones. */
export interface WorkflowState {
  /** The collected fields. */
  config: Config;
  /** A step id of the spec, or `done`. */
  current_step: string;
  /** Fields of optional steps the user skipped. */
  skipped: string[];
}
/** What a guided conversation has reached: the step, the collected fields and the skipped ones. */
export interface WorkflowStateInput {
  /** The collected fields. */
  config?: Config;
  /** A step id of the spec, or `done`. */
  current_step: string;
  /** Fields of optional steps the user skipped. */
  skipped?: string[];
}
