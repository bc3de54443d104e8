// Loads the built browser package (crates/wasm/pkg) synchronously in node.
import { readFileSync } from "node:fs";
import * as stepwise from "../pkg/stepwise.js";

stepwise.initSync({ module: readFileSync(new URL("../pkg/stepwise_bg.wasm", import.meta.url)) });

export const { Workflow, MarkerStream, resolveChat } = stepwise;

/** Reads a file of the repository's tests/ folder. */
export function repoFile(path) {
  return readFileSync(new URL(`../../../tests/${path}`, import.meta.url), "utf8");
}
