//! TypeScript declarations of the assistant's side of the package's API: what `resolveChat`
//! answers. The registry, page contexts, turns and conversations are wire types, written into
//! `js/wire.d.ts` from stepwise-core.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const ASSISTANT_TYPES: &'static str = r#"
/** What the assistant has on a page: global, then page, tab and subtab definitions. */
export interface ChatResolution {
  payloads: { name: string; source: "tool" | "llm"; marker: string | null }[];
  /** The payload markers to give `new MarkerStream(...)` for this page's answers. */
  markers: string[];
  tools: string[];
  client_actions: string[];
  server_actions: string[];
}
"#;
