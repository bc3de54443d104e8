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
"#;
