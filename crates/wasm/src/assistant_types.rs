//! TypeScript declarations of the assistant's side of the package's API: a page's resolution
//! in the registry (`resolveChat`, defined in `js/stepwise.js`). The registry, page contexts,
//! turns and conversations are wire types, written into `js/wire.d.ts` from stepwise-core.

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
