//! The package's entry in Node: the same API as stepwise.js, initialized on import from the
//! wasm file beside it (Node's `fetch` cannot read file URLs, so `init()` has nothing to load).
import { readFileSync } from "node:fs";
import { initSync } from "./stepwise.js";

export * from "./stepwise.js";

const output = initSync({ module: readFileSync(new URL("./stepwise_bg.wasm", import.meta.url)) });

/** Already done on import; kept so code written for the browser (`await init()`) runs as is. */
export default async function init() {
  return output;
}
