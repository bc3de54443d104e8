// Load run (not a test): 200 concurrent guided conversations of 7 turns each (JSON mode, driven by
// autocannon, one connection a conversation) and, at the same time, 50 concurrent assistant
// conversations with a tool call (event streams, a bounded script), against `wrangler dev` with
// the fake provider (the OpenAI wire format, one write an event) and the fake E-utilities on
// loopback. Every conversation has its own owner. Afterwards every conversation's stored state is
// read back and compared with what its client saw: no turn may be lost or changed.
// Reports errors, lost turns and p50/p95/p99 per turn. Bounded: a fixed number of turns, and the
// whole run gives up after RUN_LIMIT_MS; the stack stops at the end.
// Usage: node bench/load.mjs [guided=200] [assistant=50]
import autocannon from "autocannon";
import { ADMIN_TOKEN, asOwner, newOwner, parseSse, startStack } from "../tests/e2e/harness.mjs";

const GUIDED = Number(process.argv[2] ?? 200);
const ASSISTANT = Number(process.argv[3] ?? 50);
const RUN_LIMIT_MS = 10 * 60 * 1000;

/** The seven turns of a guided conversation: a message and, for clicks, the typed action. */
const TURNS = [
  { message: "Monitor competitors for strategic planning" },
  { message: "Track launches, pricing" },
  { message: "competitive", user_action: { type: "option_selected", target_field: "stream_type", selected_value: "competitive" } },
  { message: "Continue", user_action: { type: "options_selected", target_field: "focus_areas", selected_values: ["Oncology", "Cardiology"] } },
  { message: "Skip", user_action: { type: "skip_step", target_field: "competitors" } },
  { message: "EGFR, KRAS, PD-1" },
  { message: "Looks good", user_action: { type: "confirm" } },
];

/** A model for both kinds of conversation: a guided turn extracts what the user wrote for the
 * current step; an assistant turn searches PubMed first, then answers from the results. */
function model(request) {
  const messages = request.body?.messages ?? [];
  const system = messages.find((m) => m.role === "system")?.content ?? "";
  if (request.body?.tools?.length) {
    const last = messages.at(-1);
    if (last?.role === "tool") return { reply: "Three articles on EGFR resistance.\n", paced: true };
    if (String(last?.content ?? "").startsWith("Find")) {
      return { reply: "Searching.", paced: true, toolCalls: [{ name: "search_pubmed", arguments: { query: "EGFR resistance", max_results: 3 } }] };
    }
    return { reply: "You are welcome.\n", paced: true };
  }
  const step = system.match(/→ \d+\. (\w+)/)?.[1];
  const wrote = system.includes("What just happened: the user wrote the message below");
  const user = String(messages.at(-1)?.content ?? "");
  const extract = wrote && step && step !== "review" ? `EXTRACTED_DATA: ${step}=${user}\n` : "";
  return { reply: `Noted.\n${extract}Next question?\n`, paced: true };
}

const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
};
/** Distinct lines with their counts, the most frequent first. */
const grouped = (lines) => [...lines.reduce((map, line) => map.set(line, (map.get(line) ?? 0) + 1), new Map())].sort((a, b) => b[1] - a[1]);
const ms = (value) => `${value.toFixed(0)} ms`;

/** The guided conversations: autocannon, one connection a conversation, its turns in order. */
async function guided(base) {
  const latencies = [];
  const finished = [];
  const failures = [];
  const requests = TURNS.map((turn, index) => ({
    method: "POST",
    path: "/api/chat",
    setupRequest(req, context) {
      if (index === 0) Object.assign(context, { owner: newOwner(), last: null, token: null, seen: [] });
      const last = context.last;
      const body = {
        provider: "fake-openai",
        message: turn.message,
        user_action: turn.user_action,
        current_step: last?.next_step,
        current_config: last?.updated_config ?? {},
        skipped: last?.skipped ?? [],
        conversation_history: context.seen,
        ...(last ? { conversation_id: last.conversation_id, turns: last.turns } : {}),
      };
      context.sent = performance.now();
      return {
        ...req,
        headers: { "content-type": "application/json", accept: "application/json", ...asOwner(context.owner), ...(context.token ? { "x-conversation-token": context.token } : {}) },
        body: JSON.stringify(body),
      };
    },
    onResponse(status, body, context) {
      latencies.push(performance.now() - context.sent);
      if (status !== 200) {
        failures.push(`guided turn ${index + 1}: ${status} ${String(body).slice(0, 200)}`);
        return;
      }
      const response = JSON.parse(body);
      context.token ??= response.conversation_token;
      context.seen.push({ role: "user", content: turn.message }, { role: "assistant", content: response.message });
      context.last = response;
      if (index === TURNS.length - 1) finished.push({ owner: context.owner, token: context.token, last: response });
    },
  }));
  const started = performance.now();
  const result = await autocannon({
    url: base,
    connections: GUIDED,
    maxConnectionRequests: TURNS.length,
    amount: GUIDED * TURNS.length,
    requests,
    timeout: 60,
  });
  return { latencies, finished, failures, result, seconds: (performance.now() - started) / 1000 };
}

/** One assistant conversation over event streams: a turn with a tool call, then a follow-up. */
async function assistantConversation(base, latencies, failures) {
  const owner = newOwner();
  const context = { current_page: "streams", active_tab: "articles", search_form: { query: "" } };
  const seen = [];
  let conversationId;
  for (const message of ["Find EGFR resistance articles", "Thanks!"]) {
    const sent = performance.now();
    const response = await fetch(`${base}/api/assistant`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...asOwner(owner) },
      body: JSON.stringify({ message, provider: "fake-openai", context, ...(conversationId ? { conversation_id: conversationId } : {}) }),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await response.text();
    latencies.push(performance.now() - sent);
    const events = response.status === 200 ? parseSse(text) : [];
    const complete = events.find((e) => e.event === "complete");
    if (!complete) {
      failures.push(`assistant turn: ${response.status} ${text.slice(0, 200)}`);
      return null;
    }
    if (message.startsWith("Find") && !events.some((e) => e.event === "tool_complete")) failures.push("assistant turn without its tool call");
    conversationId = complete.data.payload.conversation_id;
    seen.push(message, complete.data.payload.message);
  }
  return { owner, conversationId, seen };
}

async function assistants(base) {
  const latencies = [];
  const failures = [];
  const started = performance.now();
  const conversations = await Promise.all(Array.from({ length: ASSISTANT }, () => assistantConversation(base, latencies, failures)));
  return { latencies, failures, conversations: conversations.filter(Boolean), seconds: (performance.now() - started) / 1000 };
}

/** Conversations whose stored state differs from what their client last saw. */
async function lostTurns(base, guidedRun, assistantRun) {
  const lost = [];
  for (const { owner, token, last } of guidedRun.finished) {
    const stored = await (await fetch(`${base}/api/conversations/${last.conversation_id}`, { headers: { ...asOwner(owner), "x-conversation-token": token } })).json();
    const same = stored.turns === last.turns && stored.current_step === last.next_step
      && JSON.stringify(stored.current_config) === JSON.stringify(last.updated_config) && JSON.stringify(stored.skipped) === JSON.stringify(last.skipped);
    if (!same || last.turns !== TURNS.length) lost.push(`guided ${last.conversation_id}: stored ${stored.turns} turns at ${stored.current_step}, the client saw ${last.turns} at ${last.next_step}`);
  }
  for (const { owner, conversationId, seen } of assistantRun.conversations) {
    const stored = await (await fetch(`${base}/api/assistant/conversations/${conversationId}`, { headers: asOwner(owner) })).json();
    const contents = (stored.messages ?? []).map((m) => m.content);
    if (JSON.stringify(contents) !== JSON.stringify(seen)) lost.push(`assistant ${conversationId}: stored ${contents.length} messages, the client saw ${seen.length}`);
  }
  return lost;
}

const stack = await startStack({ overrides: { LLM_TIMEOUT_MS: "60000" } });
const limit = setTimeout(() => {
  console.error(`the run took longer than ${RUN_LIMIT_MS / 1000} s: stopped`);
  stack.stop().finally(() => process.exit(1));
}, RUN_LIMIT_MS);
try {
  stack.fake.script(model);
  console.log(`node ${process.version}; wrangler dev, the fake provider and the fake E-utilities on loopback`);
  console.log(`${GUIDED} guided conversations x ${TURNS.length} turns (JSON, autocannon) and ${ASSISTANT} assistant conversations x 2 turns with a tool call (SSE), at once\n`);
  const [guidedRun, assistantRun] = await Promise.all([guided(stack.base), assistants(stack.base)]);
  const lost = await lostTurns(stack.base, guidedRun, assistantRun);
  const { result } = guidedRun;
  // A non-2xx answer is one of the guided failures already (autocannon counts it as `non2xx`).
  const errors = result.errors + result.timeouts + guidedRun.failures.length + assistantRun.failures.length;
  console.log("| conversations | turns | per turn p50 | p95 | p99 | max | wall time |");
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const [name, run] of [["guided (JSON)", guidedRun], ["assistant with a tool call (SSE)", assistantRun]]) {
    const l = run.latencies;
    console.log(`| ${name} | ${l.length} | ${ms(pct(l, 50))} | ${ms(pct(l, 95))} | ${ms(pct(l, 99))} | ${ms(Math.max(...l))} | ${run.seconds.toFixed(1)} s |`);
  }
  console.log(`\nautocannon: ${result.requests.total} requests, ${result["2xx"]} 2xx, ${result.non2xx} other, ${result.errors} errors, ${result.timeouts} timeouts; latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`);
  console.log(`errors: ${errors}; lost turns: ${lost.length} (every stored conversation compared with its client's last view: ${guidedRun.finished.length} guided, ${assistantRun.conversations.length} assistant)`);
  for (const [line, count] of grouped([...guidedRun.failures, ...assistantRun.failures, ...lost]).slice(0, 10)) console.log(`  ${count} x ${line}`);
  // What the Worker logged about its provider calls (the reason behind a 502).
  const warnings = stack.log().split("\n").filter((line) => /provider [\w-]+: \w+:/.test(line)).map((line) => line.replace(/^.*?(provider )/, "$1"));
  for (const [line, count] of grouped(warnings).slice(0, 5)) console.log(`  Worker log, ${count} x ${line.slice(0, 200)}`);
  // The spending guard's day: every model call counted once, and how the charges fell over its shards.
  const spend = await (await fetch(`${stack.base}/api/spend`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json();
  const counts = spend.by_shard.map((s) => s.counted);
  const charged = spend.counted === stack.fake.requests.length;
  console.log(`spending guard: ${spend.counted} calls counted for ${stack.fake.requests.length} provider calls${charged ? "" : " (MISMATCH)"}; ` +
    `${spend.by_shard.length} of ${spend.shards} shards counted, ${Math.min(...counts)}–${Math.max(...counts)} calls a shard; ` +
    `the day's budget granted ${spend.granted} (${spend.held} held in blocks)`);
  process.exitCode = !charged || errors || lost.length || guidedRun.finished.length !== GUIDED || assistantRun.conversations.length !== ASSISTANT ? 1 : 0;
} finally {
  clearTimeout(limit);
  await stack.stop();
}
