// Tidy checks of the repository, run first by the test command: ARCHITECTURE.md's code map
// against the tree (every path exists; every source file is named), a summary line at the top of
// every source file, documentation links (inside the repository, to files and headings that
// exist), and the README's shape (at most 250 lines, a link to every page of docs/).
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

/** Every Markdown file's relative link targets, as written (`](target)`). */
function markdownLinks(path) {
  const text = readFileSync(join(ROOT, path), "utf8");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
}

/** GitHub's anchor for a heading: its text as rendered, lowercased, punctuation other than
 * hyphens and spaces dropped, spaces turned into hyphens. */
function slug(heading) {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // links and images keep their text
    .replace(/<[^>]+>/g, "") // inline HTML
    .replace(/[`*]/g, ""); // code spans and emphasis
  return rendered.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "").replace(/ /g, "-");
}

/** The anchors a Markdown file offers: its headings' slugs outside code fences (a repeated one
 * gets `-1`, `-2`, … as on GitHub), and explicit `id`/`name` attributes of inline HTML. */
const anchorCache = new Map();
function anchors(path) {
  if (anchorCache.has(path)) return anchorCache.get(path);
  const found = new Set();
  const seen = new Map();
  let fence = null;
  for (const line of readFileSync(join(ROOT, path), "utf8").split("\n")) {
    const marker = line.match(/^\s*(```+|~~~+)/);
    if (marker) {
      if (fence === null) fence = marker[1][0];
      else if (marker[1][0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const heading = line.match(/^ {0,3}#{1,6}\s+(.*?)(\s+#+)?\s*$/);
    if (heading) {
      const base = slug(heading[1]);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      found.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const [, id] of line.matchAll(/<[^>]*\b(?:id|name)="([^"]+)"/g)) found.add(id);
  }
  anchorCache.set(path, found);
  return found;
}

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

test("every #anchor of a documentation link names a heading of its target", () => {
  const broken = [];
  for (const path of tracked.filter((p) => p.endsWith(".md"))) {
    for (const target of markdownLinks(path)) {
      if (/^(https?:|mailto:)/.test(target) || !target.includes("#")) continue;
      const [file, anchor] = [target.slice(0, target.indexOf("#")), target.slice(target.indexOf("#") + 1)];
      const resolved = file === "" ? path : normalize(join(dirname(path), file));
      if (!resolved.endsWith(".md") || !existsSync(join(ROOT, resolved))) continue; // the file check's business
      if (!anchors(resolved).has(decodeURIComponent(anchor))) broken.push(`${path}: ${target}`);
    }
  }
  assert.deepEqual(broken, [], "links whose #anchor matches no heading of the target (GitHub's slugs: lowercase, punctuation dropped, spaces to hyphens)");
});

test("the README stays short: at most 250 lines", () => {
  const lines = readFileSync(join(ROOT, "README.md"), "utf8").replace(/\n$/, "").split("\n").length;
  assert.ok(lines <= 250, `README.md has ${lines} lines; move detail into a page of docs/ and link it`);
});

test("the README links every page of docs/", () => {
  const linked = new Set(markdownLinks("README.md").map((target) => normalize(target.split("#")[0])));
  const pages = tracked.filter((path) => /^docs\/[^/]+\.md$/.test(path));
  assert.ok(pages.length > 0, "no pages found in docs/");
  assert.deepEqual(pages.filter((page) => !linked.has(page)), [], "pages of docs/ the README does not link");
});

test("the starter knowledge base's migration is generated from docs/help/starter-kb.json", async () => {
  const { starterSql } = await import("../scripts/help-kb.mjs");
  const committed = readFileSync(join(ROOT, "migrations/0002_starter_help.sql"), "utf8");
  assert.equal(committed, starterSql(), "run `node scripts/help-kb.mjs` after changing the starter articles");
});
