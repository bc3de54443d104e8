// The wasm package through its JS API: chunk invariance under arbitrary splits (UTF-16 code
// units, surrogate pairs included), coded errors, and the shapes of validate/apply results.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Workflow, MarkerStream, repoFile } from "./load.mjs";

const markerCases = JSON.parse(repoFile("vectors/markers.json")).cases;
const texts = [
  ...markerCases.map((c) => ({ name: c.name, text: c.text, payloads: c.payload_markers })),
  { name: "reply-2k fixture", text: repoFile("fixtures/reply-2k.txt") },
  { name: "schema-64k fixture", text: repoFile("fixtures/schema-64k.txt"), payloads: ["SCHEMA_PROPOSAL"] },
  { name: "emoji at every split", text: "😀😀 SUGGESTIONS: 😀, é\nOPTIONS: 日本|😀\n😀" },
];

/** A small deterministic PRNG (mulberry32), so failures replay. */
function prng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Parses `chunks`; returns events with adjacent text merged, and the final parse. */
function parse(chunks, payloads, stream = new MarkerStream(payloads)) {
  const events = [];
  const push = (event) => {
    const last = events.at(-1);
    if (event.type === "text" && last?.type === "text") last.text += event.text;
    else events.push(event);
  };
  for (const chunk of chunks) stream.feed(chunk).forEach(push);
  stream.end().forEach(push);
  return { events, parsed: stream.finish() };
}

/** Splits at random UTF-16 offsets: surrogate pairs may be cut, as a careless caller would. */
function randomSplit(text, random, maxChunk) {
  const chunks = [];
  for (let at = 0; at < text.length; ) {
    const size = 1 + Math.floor(random() * maxChunk);
    chunks.push(text.slice(at, at + size));
    at += size;
  }
  return chunks;
}

test("random splits through the JS API give the same events and parse", () => {
  const random = prng(20261122);
  for (const { name, text, payloads } of texts) {
    const whole = parse([text], payloads);
    const rounds = text.length > 10000 ? 5 : 60;
    for (let round = 0; round < rounds; round++) {
      const chunks = randomSplit(text, random, round % 2 ? 4 : 64);
      assert.deepEqual(parse(chunks, payloads), whole, `${name}, round ${round}`);
    }
    assert.deepEqual(parse([...text], payloads), whole, `${name}, one code point at a time`);
  }
});

test("the shared vectors parse through the JS entry as the core parses them, at any split", () => {
  const defaults = { message: "", suggestions: [], options: [], extracted: [], proposed_message: null, target_field: null,
    suggested_values: [], suggested_actions: [], payloads: [], diagnostics: [] };
  const random = prng(20261126);
  for (const c of markerCases) {
    const want = { ...defaults, ...c.expect };
    for (const chunks of [[c.text], [...c.text], randomSplit(c.text, random, 7), randomSplit(c.text, random, 300)]) {
      const { events, parsed } = parse(chunks, c.payload_markers);
      parsed.diagnostics = parsed.diagnostics.map((d) => d.code);
      assert.deepEqual(parsed, want, `${c.name} in ${chunks.length} chunks`);
      if (c.display !== undefined) {
        assert.equal(events.filter((e) => e.type === "text").map((e) => e.text).join(""), c.display, c.name);
      }
      const payloads = events.filter((e) => e.kind === "payload").map((e) => e.value);
      assert.equal(payloads.length, parsed.payloads.length, c.name);
      payloads.forEach((p, i) => assert.equal(parsed.payloads[i], p, `${c.name}: finish gives the events' payload objects`));
    }
  }
});

test("each marker kind's event carries its kind's name and its value as the parse holds it", () => {
  const text = "SUGGESTIONS: a, b\nOPTIONS: c|d\nEXTRACTED_DATA: field=value\nPROPOSED_MESSAGE: Go on\n" +
    "TARGET_FIELD: goals\nSUGGESTED_VALUES: [{\"label\": \"One\", \"value\": \"1\"}]\n" +
    "SUGGESTED_ACTIONS: [{\"label\": \"Open\", \"action\": \"open_research\", \"handler\": \"client\", \"target\": \"0b89\"}]\nPLAN: {\"a\": 1}\n";
  for (const chunks of [[text], [...text]]) {
    const { events, parsed } = parse(chunks, ["PLAN"]);
    const markers = events.filter((e) => e.type === "marker");
    assert.deepEqual(markers.map((e) => e.kind), ["suggestions", "options", "extracted_data", "proposed_message", "target_field", "suggested_values", "suggested_actions", "payload"]);
    const value = (kind) => markers.find((e) => e.kind === kind).value;
    assert.deepEqual(value("suggestions"), parsed.suggestions);
    assert.deepEqual(value("options"), parsed.options);
    assert.deepEqual([value("extracted_data")], parsed.extracted);
    assert.equal(value("proposed_message"), parsed.proposed_message);
    assert.equal(value("target_field"), parsed.target_field);
    assert.deepEqual(value("suggested_values"), parsed.suggested_values);
    assert.deepEqual(value("suggested_actions"), parsed.suggested_actions);
    assert.deepEqual(value("payload"), { type: "plan", data: { a: 1 } });
    assert.deepEqual(parsed.diagnostics, [], "every line as the core reads it");
  }
});

test("a stream made after others were finished or freed anywhere parses as a new one", () => {
  const random = prng(20261127);
  const schema = repoFile("fixtures/schema-64k.txt");
  // Cut points inside a JSON body, a held line start, a marker's value and a surrogate pair.
  const leftovers = [schema.slice(0, 40000), "Intro\nSUGGES", "OPTIONS: a|b", "Hi \uD83D", schema, "TARGET_FIELD: x\n"];
  for (const c of markerCases) {
    const fresh = [];
    // More streams at once than are kept: the last ones are new, the first reused.
    for (let i = 0; i < 6; i++) fresh.push(new MarkerStream(c.payload_markers));
    const chunks = randomSplit(c.text, random, 40);
    const results = fresh.map((stream) => parse(chunks, c.payload_markers, stream));
    for (const result of results.slice(1)) assert.deepEqual(result, results[0], c.name);
    for (const leftover of leftovers) {
      const abandoned = new MarkerStream(c.payload_markers);
      abandoned.feed(leftover.slice(0, 1 + Math.floor(random() * leftover.length)));
      if (random() < 0.5) abandoned.free();
      else abandoned.finish();
      assert.deepEqual(parse(chunks, c.payload_markers), results[0], `${c.name} after ${JSON.stringify(leftover.slice(0, 20))}`);
    }
  }
  // More sets of payload names than are kept: the oldest give way, and every set still parses.
  const text = "Intro\nPLAN_A: {\"a\": 1}\nSUGGESTIONS: x, y\n";
  for (let round = 0; round < 3; round++) {
    for (let set = 0; set < 12; set++) {
      const names = ["PLAN_A", ...Array.from({ length: set }, (_, i) => `EXTRA_${i}`)];
      const { parsed } = parse(randomSplit(text, random, 9), names);
      assert.deepEqual([parsed.message, parsed.suggestions, parsed.payloads], ["Intro", ["x", "y"], [{ type: "plan_a", data: { a: 1 } }]], `set ${set}`);
    }
  }
});

test("marker values with quotes, backslashes, control and non-BMP characters cross intact at any split", () => {
  const text = "Tabs\tand \u0001 control\nSUGGESTIONS: a\"b, c\\\\d, e\u0001f\u001fg, ü😀\nPROPOSED_MESSAGE: say \"hi\"\\n\n";
  const want = {
    events: [
      { type: "text", text: "Tabs\tand \u0001 control\n" },
      { type: "marker", kind: "suggestions", value: ["a\"b", "c\\\\d", "e\u0001f\u001fg", "ü😀"] },
      { type: "marker", kind: "proposed_message", value: "say \"hi\"\\n" },
    ],
  };
  for (let at = 0; at <= text.length; at++) {
    const { events, parsed } = parse([text.slice(0, at), text.slice(at)]);
    assert.deepEqual(events, want.events, `split at ${at}`);
    assert.deepEqual(parsed.suggestions, want.events[1].value);
    assert.equal(parsed.message, "Tabs\tand \u0001 control");
  }
});

test("a U+FEFF, a U+FFFD and a lone surrogate in text are kept as given, at any split", () => {
  const text = "\uFEFF\uFFFD\nSUGGESTIONS: a\nb\uFEFF\uD800\nOPTIONS: x|y\n";
  const whole = parse([text]);
  assert.equal(whole.parsed.message, "\uFEFF\uFFFD\nb\uFEFF\uD800");
  assert.deepEqual(whole.parsed.suggestions, ["a"]);
  assert.deepEqual(whole.parsed.options, ["x", "y"]);
  for (let at = 0; at <= text.length; at++) {
    assert.deepEqual(parse([text.slice(0, at), text.slice(at)]), whole, `split at ${at}`);
  }
});

test("lines the entry takes itself keep the core's line numbers, offsets and held text right", () => {
  // Prose lines (taken by the entry), a bullet and a marker (parsed by the core), a malformed
  // marker on line 7 and a payload whose body spans lines after more prose.
  const text = "Intro line\nmore prose \u00e9\u2014 \ud83d\ude00\n- a bullet\nOPTIONS: A|B\nprose again\n\n" +
    "TARGET_FIELD: not a field!\nafter\nSCHEMA_PROPOSAL:\n{\"k\": \"v\u00e9\"}\nend";
  const random = prng(7);
  for (const chunks of [[text], [...text], randomSplit(text, random, 5), randomSplit(text, random, 40)]) {
    const { events, parsed } = parse(chunks, ["SCHEMA_PROPOSAL"]);
    assert.deepEqual(parsed.diagnostics.map((d) => [d.code, d.line]), [["malformed_marker", 7]], `${chunks.length} chunks`);
    assert.deepEqual(parsed.options, ["A", "B"]);
    assert.deepEqual(parsed.payloads, [{ type: "schema_proposal", data: { k: "v\u00e9" } }]);
    assert.equal(events.filter((e) => e.type === "text").map((e) => e.text).join(""),
      "Intro line\nmore prose \u00e9\u2014 \ud83d\ude00\n- a bullet\nprose again\n\nafter\nend");
  }
});

test("line starts held across thousands of chunks come back whole", () => {
  // Every chunk ends inside an undecided line start ("-") that the next chunk decides.
  const chunks = Array.from({ length: 3000 }, () => "x\n-");
  const { events, parsed } = parse([...chunks, " SUGGESTIONS: a, b\n"]);
  assert.equal(events[0].text, "x\n" + "-x\n".repeat(2999));
  assert.deepEqual(parsed.suggestions, ["a", "b"]);
  assert.deepEqual(parse([chunks.join("") + " SUGGESTIONS: a, b\n"]).events, events);
});

test("many payloads in one chunk, after non-ASCII text, get their own data", () => {
  const text = Array.from({ length: 200 }, (_, i) => `é ${i}\nSCHEMA_PROPOSAL: {"n": ${i}, "s": "ü${i}"}\n`).join("");
  const { events, parsed } = parse([text], ["SCHEMA_PROPOSAL"]);
  const payloads = events.filter((e) => e.kind === "payload").map((e) => e.value.data);
  assert.deepEqual(payloads, Array.from({ length: 200 }, (_, i) => ({ n: i, s: `ü${i}` })));
  assert.equal(parsed.payloads.length, 200);
});

test("a surrogate pair split across chunks is reassembled", () => {
  const [high, low] = ["😀"[0], "😀"[1]];
  const { parsed } = parse(["Hi ", high, low + " there"]);
  assert.equal(parsed.message, "Hi 😀 there");
});

test("text events keep the caller's text, lone surrogates included; marker values read them as U+FFFD", () => {
  const texts = (stream, chunks) => chunks.flatMap((c) => stream.feed(c)).concat(stream.end()).map((e) => e.text).join("");
  assert.equal(texts(new MarkerStream(), ["a\uDC00b"]), "a\uDC00b");
  assert.equal(texts(new MarkerStream(), ["x\uD800", "b"]), "x\uD800b");
  assert.equal(texts(new MarkerStream(), ["ok \uFFFD"]), "ok \uFFFD");
  // The same at a line start the core decides, in a held line start and in a skipped line.
  assert.equal(texts(new MarkerStream(), ["SUGG\uDC00\n", "Then \uDC00 x"]), "SUGG\uDC00\nThen \uDC00 x");
  const stream = new MarkerStream();
  assert.deepEqual(stream.feed("OPTIONS: a\uDC00|b\n").find((e) => e.type === "marker").value, ["a\uFFFD", "b"]);
});

test("a high surrogate held at the end is released by end() with the text held before it", () => {
  const stream = new MarkerStream();
  assert.deepEqual(stream.feed("Hello\nSUGG"), [{ type: "text", text: "Hello\n" }]);
  assert.deepEqual(stream.feed("\uD83D"), []);
  assert.deepEqual(stream.end(), [{ type: "text", text: "SUGG\uD83D" }]);
});

test("a feed after end() is a diagnostic, even after a held high surrogate; after finish() or free() it throws", () => {
  for (const last of ["Hi ", "Hi \uD83D"]) {
    const stream = new MarkerStream();
    stream.feed(last);
    stream.end();
    assert.deepEqual(stream.feed("more text\nOPTIONS: A|B\n").map((e) => e.type === "diagnostic" ? e.code : e.type), ["feed_after_end"], JSON.stringify(last));
    assert.equal(stream.finish().message, last.trim());
  }
  const finished = new MarkerStream();
  finished.feed("Hi \uD83D");
  finished.finish();
  assert.throws(() => finished.feed("more\nHello"), (e) => e.code === "stream_freed");
  const freed = new MarkerStream();
  freed.feed("Hi");
  freed.free();
  assert.throws(() => freed.feed(" there\nand more\n"), (e) => e.code === "stream_freed");
  assert.throws(() => freed.end(), (e) => e.code === "stream_freed");
  const disposed = new MarkerStream();
  disposed[Symbol.dispose]();
  assert.throws(() => disposed.feed("prose"), (e) => e.code === "stream_freed");
});

test("errors are real Error objects carrying a code", () => {
  assert.throws(() => Workflow.builtin("nope"), (e) => e instanceof Error && e.code === "unknown_workflow");
  assert.throws(() => new Workflow({ id: "x", title: "X", steps: [] }), (e) => e instanceof Error && e.code === "invalid_spec");
  assert.throws(() => new MarkerStream(["bad name"]), (e) => e instanceof Error && e.code === "invalid_marker_name");
  const workflow = Workflow.builtin("research_stream");
  assert.throws(
    () => workflow.applyAction({ current_step: "purpose", config: {} }, { type: "skip_step", target_field: "purpose" }),
    (e) => e instanceof Error && e.code === "step_required" && /required/.test(e.message),
  );
});

test("validateAction answers ok or a coded error without throwing", () => {
  const workflow = Workflow.builtin("research_stream");
  const state = { current_step: "focus_areas", config: {}, skipped: [] };
  assert.deepEqual(workflow.validateAction(state, { type: "text_input" }), { ok: true });
  const empty = workflow.validateAction(state, { type: "options_selected", target_field: "focus_areas", selected_values: [] });
  assert.equal(empty.ok, false);
  assert.equal(empty.error.code, "selection_required");
  assert.equal(empty.error.message, "At least one selection required for `focus_areas`");
  assert.equal(workflow.validateAction(null, { type: "confirm" }).error.code, "invalid_input");
});

test("applyAction returns the new state and steps() lists the workflow", () => {
  const workflow = Workflow.builtin("research_stream");
  const next = workflow.applyAction(
    { current_step: "stream_type", config: { purpose: "P", business_goals: ["G"] } },
    { type: "option_selected", target_field: "stream_type", selected_value: "Clinical" },
  );
  assert.deepEqual(next, { current_step: "focus_areas", config: { purpose: "P", business_goals: ["G"], stream_type: "clinical" }, skipped: [] });
  assert.deepEqual(workflow.steps().map((s) => s.id), ["purpose", "business_goals", "stream_type", "focus_areas", "competitors", "keywords", "review"]);
  assert.equal(workflow.inferStep(next.config, []), "focus_areas");
  assert.equal(workflow.inferStep(next.config), "focus_areas");
});

test("the message is trimmed as the core trims it (Unicode White_Space, not U+FEFF), at any split", () => {
  const text = "\u3000 \n Hello\u0085 \n\nSUGGESTIONS: a\n \u2028World\t \n\u00a0";
  const want = "Hello\u0085 \n\n \u2028World";
  for (let cut = 0; cut <= text.length; cut++) {
    for (let second = cut; second <= text.length; second += 3) {
      const chunks = [text.slice(0, cut), text.slice(cut, second), text.slice(second)].filter((c) => c !== "");
      assert.equal(parse(chunks).parsed.message, want, `cut at ${cut} and ${second}`);
    }
  }
  assert.equal(parse(["\ufeff Hi \ufeff\n"]).parsed.message, "\ufeff Hi \ufeff");
  assert.equal(parse([" \n\t", "\n  "]).parsed.message, "");
  assert.equal(parse(["a ", " ", "b"]).parsed.message, "a  b");
});

test("finish() gives the whole parse with null for absent values, as on the wire", () => {
  const stream = new MarkerStream();
  stream.feed("Hello\n");
  const parsed = stream.finish();
  assert.deepEqual(parsed, {
    message: "Hello", suggestions: [], options: [], extracted: [], proposed_message: null,
    target_field: null, suggested_values: [], suggested_actions: [], payloads: [], diagnostics: [],
  });
  assert.equal(JSON.stringify(parsed).includes('"target_field":null'), true);
});

test("feed() refuses a chunk that is not a string, with a code, and changes nothing", () => {
  const stream = new MarkerStream();
  stream.feed("Hi ");
  for (const bad of [undefined, null, 42, {}]) {
    assert.throws(() => stream.feed(bad), (e) => e instanceof TypeError && e.code === "invalid_input");
  }
  stream.feed("there");
  assert.equal(stream.finish().message, "Hi there");
});

test("plain data may be a Map or a plain object; other values are refused with a code", () => {
  const workflow = Workflow.builtin("research_stream");
  assert.equal(workflow.inferStep(new Map([["purpose", "Track rivals"]]), []), "business_goals");
  assert.equal(workflow.inferStep({ purpose: "Track rivals" }, []), "business_goals");
  assert.throws(() => workflow.inferStep({ purpose: 2 ** 53 }, []),
    (e) => e.code === "invalid_input" && /invalid type: floating point/.test(e.message));
  assert.throws(() => workflow.inferStep({ purpose: () => 1 }, []), (e) => e.code === "invalid_input");
});
