// Tidy checks of the repository, run first by the test command: ARCHITECTURE.md's code map
// against the tree (every path exists; every source file is named), a summary line at the top of
// every source file, and no documentation link to a file outside the repository.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, normalize } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const tracked = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" })
  .split("\n")
  .filter((path) => path && existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile());

/** The code map's rows: the backticked paths of the first column, and the whole row's text. */
function codeMap() {
  const text = readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");
  const section = text.split("## Code map")[1]?.split("\n## ")[0] ?? "";
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const first = line.split("|")[1];
      return { paths: [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1]), text: line };
    });
}

/** Source files every one of which the map must name (tests, benches and examples are covered
 * by their folder's row). */
const mapped = (path) => /^(crates\/[^/]+\/src|worker\/src|www\/src|crates\/wasm\/js)\/.+\.(rs|ts|js)$/.test(path);

test("every path in the code map exists", () => {
  const rows = codeMap();
  assert.ok(rows.length > 10, "the code map was not found");
  for (const { paths } of rows) for (const path of paths) assert.ok(existsSync(join(ROOT, path)), `ARCHITECTURE.md names ${path}, which does not exist`);
});

test("every source file is named in the code map", () => {
  const rows = codeMap();
  const sources = tracked.filter(mapped);
  assert.ok(sources.length > 60, `only ${sources.length} source files found: the file list is wrong`);
  const missing = sources.filter((path) => {
    const dir = `${dirname(path)}/`;
    const name = basename(path);
    return !rows.some((row) => row.paths.includes(path) || (row.paths.includes(dir) && (name === "mod.rs" || name === "lib.rs" || row.text.includes(name))));
  });
  assert.deepEqual(missing, [], "source files the code map does not name (add them to ARCHITECTURE.md)");
});

test("every source file opens with a line saying what it is for", () => {
  const offenders = tracked.filter((path) => {
    const first = readFileSync(join(ROOT, path), "utf8").split("\n", 1)[0];
    if (path.endsWith(".rs")) return !first.startsWith("//!");
    if (/\.(ts|mjs|js)$/.test(path) && !path.includes("/fixtures/")) return !first.startsWith("//");
    return false;
  });
  assert.deepEqual(offenders, [], "files whose first line is not a summary comment (//! in Rust, // in JS and TS)");
});

test("no documentation links to a file outside the repository", () => {
  const outside = [];
  for (const path of tracked.filter((p) => p.endsWith(".md"))) {
    const text = readFileSync(join(ROOT, path), "utf8");
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:|#)/.test(target)) continue;
      const resolved = normalize(join(dirname(path), target.split("#")[0]));
      if (resolved.startsWith("..") || !existsSync(join(ROOT, resolved))) outside.push(`${path}: ${target}`);
    }
    for (const [reference] of text.matchAll(/`\.\.\/[^`]*`/g)) outside.push(`${path}: ${reference}`);
  }
  assert.deepEqual(outside, [], "links or path references that leave the repository (or name missing files)");
});

test("the starter knowledge base's migration is generated from docs/help/starter-kb.json", async () => {
  const { starterSql } = await import("../scripts/help-kb.mjs");
  const committed = readFileSync(join(ROOT, "migrations/0002_starter_help.sql"), "utf8");
  assert.equal(committed, starterSql(), "run `node scripts/help-kb.mjs` after changing the starter articles");
});
