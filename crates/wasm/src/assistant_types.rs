//! TypeScript declarations of the assistant's side of the package and of the HTTP API: the
//! registry and its resolution (`resolveChat`, defined in `js/stepwise.js`), page contexts,
//! assistant turns and their events, conversations, saved streams and article searches. They
//! mirror the serde types of stepwise-core; `js-tests/usage.ts` checks them with tsc.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const ASSISTANT_TYPES: &'static str = r#"
/** A payload type of the assistant registry (chat-architecture.md §3). */
export interface PayloadTypeJson {
  name: string;
  description: string;
  source: "tool" | "llm";
  is_global?: boolean;
  schema: unknown;
  parse_marker?: string;
  llm_instructions?: string;
}
/** A tool of the assistant registry (§2). */
export interface ToolConfigJson {
  name: string;
  description: string;
  input_schema: unknown;
  is_global?: boolean;
  payload_type?: string;
  category?: string;
}
export interface ActionConfigJson { name: string; description: string }
export interface SubTabConfigJson { subtab: string; payloads?: string[]; tools?: string[] }
export interface TabConfigJson { tab: string; context_template?: string; payloads?: string[]; tools?: string[]; subtabs?: SubTabConfigJson[] }
export interface PageConfigJson {
  page: string;
  context_template?: string;
  payloads?: string[];
  tools?: string[];
  client_actions?: string[];
  tabs?: TabConfigJson[];
}
/** The assistant registry, as `GET /api/assistant/registry` serves it. */
export interface ChatRegistryJson {
  payloads?: PayloadTypeJson[];
  tools?: ToolConfigJson[];
  client_actions?: ActionConfigJson[];
  global_client_actions?: string[];
  server_actions?: ActionConfigJson[];
  pages?: PageConfigJson[];
}
/** What the assistant has on a page: global, then page, tab and subtab definitions. */
export interface ChatResolution {
  payloads: { name: string; source: "tool" | "llm"; marker: string | null }[];
  /** The payload markers to give `new MarkerStream(...)` for this page's answers. */
  markers: string[];
  tools: string[];
  client_actions: string[];
  server_actions: string[];
}
/**
 * Resolves what the assistant has on `page` (its `tab` and `subtab`), computed in wasm by the
 * core's resolution, so the page parses exactly the payload markers it allows.
 *
 * ```js
 * const { markers } = resolveChat(registry, "streams", "articles");
 * const stream = new MarkerStream(markers);
 * ```
 */
export function resolveChat(registry: ChatRegistryJson, page: string, tab?: string | null, subtab?: string | null): ChatResolution;

/** What a page shows, sent with each assistant message (chat-architecture.md §1). Pages may add
 * keys of their own; data items go as summaries only (at most 200). */
export interface ChatContext {
  current_page: string;
  active_tab?: string;
  active_subtab?: string;
  stream_id?: string;
  /** The research job in view. */
  report_id?: string;
  search_form?: Record<string, unknown>;
  pagination?: Record<string, unknown>;
  sort?: Record<string, unknown>;
  results?: Record<string, unknown>;
  viewer?: Record<string, unknown> | null;
  selection?: string[];
  item_summaries?: Record<string, unknown>[];
  [key: string]: unknown;
}
/** The body of `POST /api/assistant`. */
export interface AssistantRequest { conversation_id?: string; message: string; context: ChatContext; provider?: string }
/** The body of `POST /api/assistant/actions`: a server action a suggested action named. */
export interface AssistantActionRequest { conversation_id?: string; action: string; target?: string; label?: string; context: ChatContext }
/** One tool call of a turn. */
export interface ToolUse { tool_name: string; input: unknown; output: string; is_error?: boolean }
/** Something of an answer that was dropped, and why. */
export interface AssistantNote { code: string; message: string }
/** An assistant turn's answer (`ChatResponsePayload`, §5). */
export interface AssistantResponse {
  message: string;
  /** The main card: the model's payload, or else the last tool payload. */
  custom_payload?: Payload;
  payloads?: Payload[];
  suggested_values: SuggestedValue[];
  suggested_actions: SuggestedAction[];
  tool_history: ToolUse[];
  conversation_id?: string;
  diagnostics?: AssistantNote[];
}
/** Server-Sent Events of an assistant turn. */
export type AssistantEvent = TurnEvent<AssistantResponse>;
/** One entry of `GET /api/assistant/conversations`. */
export interface ConversationSummary { id: string; title: string; created_at: number; updated_at: number; turns: number }
/** One message of `GET /api/assistant/conversations/:id`. */
export interface ConversationMessage {
  role: "user" | "assistant";
  content: string;
  at: number;
  page?: string;
  action?: string;
  tool_history?: ToolUse[];
  payloads?: Payload[];
  suggested_values?: SuggestedValue[];
  suggested_actions?: SuggestedAction[];
}
export interface AssistantConversation extends ConversationSummary { messages: ConversationMessage[]; running: boolean }

/** A saved stream (`GET /api/streams/:id`). */
export interface SavedStream {
  id: string;
  name: string;
  workflow: string;
  config: Config;
  skipped: string[];
  /** Added to the assistant's prompt when this stream is in view. */
  chat_instructions: string;
  created_at: number;
  updated_at: number;
  conversation_id?: string;
  /** The Articles search the stream starts with (its keywords and focus areas). */
  default_query: string;
}
/** One entry of `GET /api/streams`. */
export interface SavedStreamItem { id: string; name: string; stream_type: string; created_at: number; updated_at: number }
/** The body of `PUT /api/streams/:id`: any of these; all apply or none. */
export interface StreamChange { name?: string; chat_instructions?: string; edits?: { field: string; value: FieldValue }[] }
/** An article as a results list shows it. */
export interface ArticleSummary { pmid: string; title: string; journal: string; pub_date: string; year: number | null; authors: string[]; doi?: string }
/** A page of `GET /api/articles/search`. */
export interface ArticleSearch {
  query: string; mindate: string | null; maxdate: string | null; sort: "relevance" | "date";
  page: number; per_page: number; count: number; translation: string | null; articles: ArticleSummary[];
}
/** An abstract of `GET /api/articles/abstracts`. */
export interface ArticleAbstract { pmid: string; title: string; journal: string; year: number | null; text: string }
"#;
