//! The browser package as npm users get it: `npm pack` of crates/wasm/pkg, installed into a
//! scratch project from the tarball, then used from Node (its `node` entry and the browser-style
//! `await init()`) and type-checked through the `exports` map's types.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PKG = new URL("../pkg/", import.meta.url).pathname;
const ROOT = new URL("../../../", import.meta.url).pathname;
const npm = (args, cwd) => execFileSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, encoding: "utf8" });
const manifest = JSON.parse(readFileSync(join(PKG, "package.json"), "utf8"));

test("the manifest is publishable: scoped name, Cargo's version, licence, exports with types", () => {
  const cargoVersion = readFileSync(join(ROOT, "crates/wasm/Cargo.toml"), "utf8").match(/^version = "(.+)"$/m)[1];
  assert.equal(manifest.name, "@stepwise-dev/core");
  assert.equal(manifest.version, cargoVersion);
  assert.equal(manifest.license, "MIT OR Apache-2.0");
  assert.deepEqual(Object.keys(manifest.exports["."]), ["types", "node", "default"]);
  assert.equal(manifest.private, undefined);
});

test("the packed tarball installs into a fresh project and works in Node", (t) => {
  const scratch = mkdtempSync(join(tmpdir(), "stepwise-pkg-"));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  const [packed] = JSON.parse(npm(["pack", "--json", "--pack-destination", scratch], PKG));
  assert.deepEqual(packed.files.map((f) => f.path).sort(), [
    "LICENSE-APACHE", "LICENSE-MIT", "README.md", "package.json",
    "stepwise.d.ts", "stepwise.js", "stepwise.node.js", "stepwise_bg.wasm",
  ]);

  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }));
  npm(["install", "--offline", join(scratch, packed.filename)], scratch);

  writeFileSync(join(scratch, "use.mjs"), `
    import init, { Workflow, MarkerStream } from "@stepwise-dev/core";
    await init(); // browser-style code runs unchanged in Node
    const workflow = Workflow.builtin("research_stream");
    const stream = new MarkerStream();
    const texts = ["Noted.\\nSUGGES", "TIONS: Track launches, Price moves\\n"]
      .flatMap((chunk) => stream.feed(chunk)).filter((e) => e.type === "text").map((e) => e.text);
    let code;
    try { workflow.applyAction({ current_step: "stream_type", config: {} }, { type: "teleport" }); } catch (e) { code = e.code; }
    console.log(JSON.stringify({
      step: workflow.inferStep({ purpose: "Track rivals" }, []),
      texts,
      suggestions: stream.finish().suggestions,
      code,
    }));
  `);
  const out = JSON.parse(execFileSync(process.execPath, ["use.mjs"], { cwd: scratch, encoding: "utf8" }));
  assert.deepEqual(out.step, "business_goals");
  assert.deepEqual(out.texts.join(""), "Noted.\n");
  assert.deepEqual(out.suggestions, ["Track launches", "Price moves"]);
  assert.equal(typeof out.code, "string");

  writeFileSync(join(scratch, "use.ts"), `
    import init, { initSync, Workflow, MarkerStream, type ValidationResult } from "@stepwise-dev/core";
    await init();
    const result: ValidationResult = Workflow.builtin("research_stream").validateAction(
      { current_step: "stream_type", config: {}, skipped: [] },
      { type: "option_selected", target_field: "stream_type", selected_value: "clinical" });
    const stream = new MarkerStream(["SCHEMA_PROPOSAL"]);
    const suggestions: string[] = stream.finish().suggestions;
    const output = initSync({ module: new Uint8Array() });
    output.memory.buffer.byteLength;
    // @ts-expect-error the module's raw exports are not public
    output.__wbindgen_malloc;
    // @ts-expect-error feedInput is the JS entry's internal path into wasm
    stream.feedInput(1, 1);
    export { result, suggestions };
  `);
  writeFileSync(join(scratch, "tsconfig.json"), JSON.stringify({
    compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022", "ESNext.Disposable", "DOM"], strict: true, noEmit: true, types: [] },
    files: ["use.ts"],
  }));
  execFileSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", scratch], { encoding: "utf8" });
});
