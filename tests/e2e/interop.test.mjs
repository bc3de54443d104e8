//! End-to-end tests of the other ecosystems' dialects under `wrangler dev`: guided turns driven
//! through the AI SDK transport (clients/ai-sdk) and read by the `ai` package's own UI message
//! stream parser, a guided answer joined again with `reconnectToStream`, an assistant turn with a tool call as a UI message stream, AG-UI runs (guided,
//! and the assistant's with its tool calls) through `@ag-ui/client`'s HttpAgent (its event
//! verifier included), refusals, and real responses and
//! stream events validated against openapi.yaml.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { AbstractChat, lastAssistantMessageIsCompleteWithApprovalResponses, readUIMessageStream } from "ai";
import { HttpAgent } from "@ag-ui/client";
import { StepwiseAssistantTransport, StepwiseChatTransport } from "../../clients/ai-sdk/src/index.ts";
import { readFileSync } from "node:fs";
import { assertSchema, contract } from "../contract.mjs";
import { SECRET_KEY, apiCaller, asOwner, newOwner, parseSse, startStack } from "./harness.mjs";

let stack;
const bodies = [];
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
  for (const body of bodies) assert.ok(!body.includes(SECRET_KEY), "the provider key leaked");
});
const call = apiCaller(() => stack.base, bodies);

/** A model that takes the purpose, then the goals, then asks for the stream type. */
function guidedModel() {
  stack.fake.script((request) => {
    const asked = JSON.stringify(request.body);
    if (asked.includes("Launches and pricing")) {
      return { reply: "Noted the goals.\nEXTRACTED_DATA: business_goals=Launches and pricing\nWhich kind of stream?\nSUGGESTIONS: Competitive, Clinical\n" };
    }
    return { reply: "Got it.\nEXTRACTED_DATA: purpose=Track rivals\nWhich business goals matter?\nSUGGESTIONS: Launches, Pricing\n" };
  });
}

/** The last snapshot of the assistant message a UI message stream builds (the `ai` parser). */
async function lastMessage(stream) {
  let message;
  for await (const snapshot of readUIMessageStream({ stream })) message = snapshot;
  return message;
}

const userMessage = (id, text) => ({ id, role: "user", parts: [{ type: "text", text }] });

describe("the AI SDK's UI message stream", () => {
  test("useChat's transport drives two guided turns; the ai parser reads text and data-stepwise", async () => {
    guidedModel();
    const owner = newOwner();
    const transport = new StepwiseChatTransport({ baseUrl: stack.base, ownerToken: owner, provider: "fake-openai" });
    const send = (messages) =>
      transport.sendMessages({ trigger: "submit-message", chatId: "chat-1", messageId: undefined, messages, abortSignal: undefined });

    const messages = [userMessage("u1", "Track rivals")];
    const first = await lastMessage(await send(messages));
    assert.equal(first.role, "assistant");
    const text = first.parts.filter((p) => p.type === "text").map((p) => p.text).join("");
    assert.equal(text, "Got it.\nWhich business goals matter?\n");
    const data = first.parts.find((p) => p.type === "data-stepwise").data;
    assertSchema("AnswerData", data);
    assert.equal(data.kind, "guided");
    assert.equal(data.step, "business_goals");
    assert.deepEqual(data.config, { purpose: "Track rivals" });
    assert.deepEqual(data.suggestions, ["Launches", "Pricing"]);
    assert.match(data.conversation_id, /^[0-9a-f]{32}$/);
    assert.equal(data.turns, 1);
    assert.ok(data.conversation_token, "the first answer carries the conversation's token");

    messages.push(first, userMessage("u2", "Launches and pricing"));
    const second = await lastMessage(await send(messages));
    const next = second.parts.find((p) => p.type === "data-stepwise").data;
    assert.equal(next.step, "stream_type");
    assert.deepEqual(next.config, { purpose: "Track rivals", business_goals: ["Launches and pricing"] });
    assert.equal(next.conversation_id, data.conversation_id, "the same stored conversation");
    assert.equal(next.turns, 2);
    assert.equal(next.conversation_token, undefined, "the token is sent once");

    const stored = await call("GET", `/api/conversations/${data.conversation_id}`, { owner, headers: { "x-conversation-token": data.conversation_token } });
    assert.equal(stored.status, 200);
    assert.equal(stored.json.current_step, "stream_type");
  });

  test("the stream is marked v1 and ends with [DONE]; a bad format is refused with nothing stored", async () => {
    guidedModel();
    const body = { message: "Track rivals", current_config: {}, provider: "fake-openai" };
    const raw = await call("POST", "/api/chat", { body, headers: { accept: "text/event-stream", "x-stepwise-format": "ui-message-stream" } });
    assert.equal(raw.status, 200);
    assert.equal(raw.headers.get("x-vercel-ai-ui-message-stream"), "v1");
    const frames = raw.text.trim().split("\n\n");
    assert.equal(frames.at(-1), "data: [DONE]");
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.slice("data: ".length)));
    const status = chunks.find((c) => c.type === "data-status");
    assert.equal(status.transient, true, "progress notes are transient data parts");
    const types = chunks.map((c) => c.type).filter((t) => t !== "data-status");
    assert.deepEqual(types.slice(0, 3), ["start", "start-step", "text-start"]);
    assert.deepEqual(types.slice(-4), ["text-end", "data-stepwise", "finish-step", "finish"]);

    const bad = await call("POST", "/api/chat", { body, headers: { "x-stepwise-format": "smoke-signals" } });
    assert.equal(bad.status, 422);
    assert.equal(bad.json.error.code, "invalid_request");
  });

  test("an assistant turn with a tool call: tool input and output parts, then the answer", async () => {
    stack.fake.script((request) => {
      const replied = JSON.stringify(request.body).includes("articles found");
      if (!replied) return { reply: "Searching.", toolCalls: [{ name: "search_pubmed", arguments: { query: "EGFR resistance", max_results: 3 } }] };
      return { reply: "Three articles.\nSUGGESTED_VALUES: [{\"label\": \"Recent\", \"value\": \"Only since 2020\"}]\n" };
    });
    const response = await fetch(`${stack.base}/api/assistant`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", "x-stepwise-format": "ui-message-stream", ...asOwner() },
      body: JSON.stringify({ message: "Find EGFR resistance articles", provider: "fake-openai",
        context: { current_page: "streams", active_tab: "articles", search_form: { query: "" } } }),
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("x-vercel-ai-ui-message-stream"), "v1");
    const { parseJsonEventStream, uiMessageChunkSchema } = await import("ai");
    const chunks = parseJsonEventStream({ stream: response.body, schema: uiMessageChunkSchema }).pipeThrough(
      new TransformStream({ transform(result, controller) {
        if (!result.success) throw result.error;
        controller.enqueue(result.value);
      } }));
    const message = await lastMessage(chunks);
    const tool = message.parts.find((p) => p.type === "tool-search_pubmed");
    assert.equal(tool.state, "output-available");
    assert.deepEqual(tool.input, { query: "EGFR resistance", max_results: 3 });
    assert.match(String(tool.output), /articles found/);
    const data = message.parts.find((p) => p.type === "data-stepwise").data;
    assert.equal(data.kind, "assistant");
    assert.deepEqual(data.suggested_values.map((v) => v.label), ["Recent"]);
    assert.match(data.conversation_id, /^[0-9a-f]{32}$/);
  });
});

describe("the AI SDK's guided transport", () => {
  test("a dropped client's guided answer is joined with reconnectToStream, whole and once; a finished turn and an unknown chat are null", async () => {
    const LINES = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of the guided answer.`);
    stack.fake.script({ reply: LINES.join("\n"), paced: true, delayMs: 120 });
    const owner = newOwner();
    const transport = new StepwiseChatTransport({ baseUrl: stack.base, ownerToken: owner, provider: "fake-openai" });
    const since = stack.fake.requests.length;
    const leaving = new AbortController();
    const first = await transport.sendMessages({ chatId: "chat-g", messages: [userMessage("u1", "Track rivals")], trigger: "submit-message", messageId: undefined, abortSignal: leaving.signal });
    const reader = first.getReader();
    for (let seen = ""; !seen.includes("Line 2"); ) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value.type === "text-delta") seen += value.delta;
    }
    leaving.abort();
    await reader.cancel().catch(() => {});
    const known = transport.conversations.get("chat-g");
    assert.match(known?.id ?? "", /^[0-9a-f]{32}$/);
    assert.ok(known.token, "the first turn's token, from its headers");

    const resumed = await transport.reconnectToStream({ chatId: "chat-g" });
    assert.ok(resumed, "the running turn is joined");
    const message = await lastMessage(resumed);
    const text = message.parts.filter((p) => p.type === "text").map((p) => p.text).join("");
    assert.equal(text.trim(), LINES.join("\n"), "the whole answer, each line once");
    const data = message.parts.find((p) => p.type === "data-stepwise")?.data;
    assert.equal(data?.conversation_id, known.id);
    assert.equal(stack.fake.requests.slice(since).length, 1, "one model call");

    // Once the answer is whole there is nothing to resume; a chat the transport does not know is
    // null too; an app that kept the conversation sets it after a reload.
    assert.equal(await transport.reconnectToStream({ chatId: "chat-g" }), null);
    const again = new StepwiseChatTransport({ baseUrl: stack.base, ownerToken: owner });
    assert.equal(await again.reconnectToStream({ chatId: "chat-g" }), null);
    again.conversations.set("chat-g", known);
    assert.equal(await again.reconnectToStream({ chatId: "chat-g" }), null);
    again.conversations.set("chat-g", { id: known.id, token: "0".repeat(32) });
    await assert.rejects(again.reconnectToStream({ chatId: "chat-g" }), /forbidden|token/i);
  });
});

describe("the AI SDK's assistant transport", () => {
  test("a dropped client's answer is joined with reconnectToStream, whole and once; a finished turn is null; a stranger is refused", async () => {
    const LINES = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of the answer.`);
    stack.fake.script({ reply: LINES.join("\n"), paced: true, delayMs: 120 });
    const owner = newOwner();
    const transport = new StepwiseAssistantTransport({ baseUrl: stack.base, ownerToken: owner, provider: "fake-openai", context: () => ({ current_page: "research" }) });
    const since = stack.fake.requests.length;
    const leaving = new AbortController();
    const first = await transport.sendMessages({ chatId: "chat-1", messages: [userMessage("u1", "Tell me everything")], trigger: "submit-message", messageId: undefined, abortSignal: leaving.signal });
    // The client reads the start of the answer, then goes away (a reload).
    const reader = first.getReader();
    for (let seen = ""; !seen.includes("Line 2"); ) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value.type === "text-delta") seen += value.delta;
    }
    leaving.abort();
    await reader.cancel().catch(() => {});
    const conversation = transport.conversations.get("chat-1");
    assert.match(conversation ?? "", /^[0-9a-f]{32}$/);

    const resumed = await transport.reconnectToStream({ chatId: "chat-1" });
    assert.ok(resumed, "the running turn is joined");
    const message = await lastMessage(resumed);
    const text = message.parts.filter((p) => p.type === "text").map((p) => p.text).join("");
    assert.equal(text.trim(), LINES.join("\n"), "the whole answer, each line once");
    assert.equal(stack.fake.requests.slice(since).length, 1, "one model call");

    // A second transport (another tab, a reload) resumes by the conversation's own id.
    const again = new StepwiseAssistantTransport({ baseUrl: stack.base, ownerToken: owner, context: () => ({ current_page: "research" }) });
    // Once the answer is whole there is nothing to resume (the AI SDK's `null`: the chat keeps the
    // message it has, never a second copy), and neither is there for a turn answered as JSON.
    assert.equal(await again.reconnectToStream({ chatId: conversation }), null);
    stack.fake.script({ reply: "Short." });
    const plain = await call("POST", "/api/assistant", { owner, headers: { accept: "application/json" }, body: { message: "Hi", provider: "fake-openai", context: { current_page: "research" } } });
    assert.equal(plain.status, 200, plain.text);
    assert.equal(await again.reconnectToStream({ chatId: plain.json.conversation_id }), null);
    // Another owner, and a conversation that does not exist: refused, nothing leaks.
    const stranger = new StepwiseAssistantTransport({ baseUrl: stack.base, ownerToken: newOwner(), context: () => ({ current_page: "research" }) });
    await assert.rejects(stranger.reconnectToStream({ chatId: conversation }), /no such conversation|not found/i);
    await assert.rejects(again.reconnectToStream({ chatId: "f".repeat(32) }), /no such conversation|not found/i);
  });
});

/** A model that calls start_research until it has a result, then says so. */
function startsResearch() {
  stack.fake.script((request) => {
    const body = JSON.stringify(request.body);
    if (!body.includes('"start_research"')) return { reply: "A report." };
    if (body.includes("Started research job")) return { reply: "It is running." };
    return { reply: "I can start that.", toolCalls: [{ name: "start_research", arguments: { prompt: "EGFR resistance", providers: ["offline"], synthesis_provider: "offline" } }] };
  });
}

/** The AI SDK's chat (what `useChat` wraps), its messages kept in memory. */
class MemoryChat extends AbstractChat {
  constructor(init) {
    const state = {
      status: "ready",
      error: undefined,
      messages: [],
      pushMessage(message) { this.messages = this.messages.concat(message); },
      popMessage() { this.messages = this.messages.slice(0, -1); },
      replaceMessage(index, message) { this.messages = [...this.messages.slice(0, index), structuredClone(message), ...this.messages.slice(index + 1)]; },
      snapshot: (value) => structuredClone(value),
    };
    super({ ...init, state });
  }
}

/** Settles once `chat` is ready again (its request and any automatic one ended). */
async function settled(chat) {
  for (const deadline = Date.now() + 20000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    if (chat.status === "ready" || chat.status === "error") return;
  }
  throw new Error(`the chat stayed ${chat.status}`);
}

describe("tool approval over the AI SDK", () => {
  const chatOf = (owner) => new MemoryChat({
    transport: new StepwiseAssistantTransport({ baseUrl: stack.base, ownerToken: owner, provider: "fake-openai", context: () => ({ current_page: "research" }) }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const toolPart = (chat) => chat.messages.at(-1).parts.find((p) => p.type === "tool-start_research");

  test("useChat shows the held call awaiting approval; addToolApprovalResponse runs it into that part", async () => {
    startsResearch();
    const owner = newOwner();
    const chat = chatOf(owner);
    await chat.sendMessage({ text: "Start research on EGFR resistance" });
    await settled(chat);
    assert.equal(chat.status, "ready", String(chat.error));
    const held = toolPart(chat);
    assert.equal(held.state, "approval-requested");
    assert.deepEqual(held.input, { prompt: "EGFR resistance", providers: ["offline"], synthesis_provider: "offline" });
    assert.match(held.approval.id, /^[0-9a-f]{32}$/);
    assert.equal((await call("GET", "/api/research?limit=5", { owner })).json.items.length, 0, "nothing ran");
    await chat.addToolApprovalResponse({ id: held.approval.id, approved: true });
    await new Promise((r) => setTimeout(r, 100));
    await settled(chat);
    assert.equal(chat.status, "ready", String(chat.error));
    // The run continues the same assistant message: one user message, one answer.
    assert.deepEqual(chat.messages.map((m) => m.role), ["user", "assistant"], JSON.stringify(chat.messages.map((m) => m.id)));
    const ran = toolPart(chat);
    assert.equal(ran.state, "output-available", JSON.stringify(chat.messages.at(-1).parts));
    assert.equal(chat.messages.at(-1).parts.filter((p) => p.type === "tool-start_research").length, 1, "one part for the call");
    assert.match(String(ran.output), /^Started research job [0-9a-f]{32}/);
    const text = chat.messages.at(-1).parts.filter((p) => p.type === "text").map((p) => p.text).join("");
    assert.match(text, /It is running\./);
    assert.equal((await call("GET", "/api/research?limit=5", { owner })).json.items.length, 1, "run once");
  });

  test("a denial marks the part denied, and the server keeps the reason", async () => {
    startsResearch();
    const owner = newOwner();
    const chat = chatOf(owner);
    await chat.sendMessage({ text: "Start research on EGFR resistance" });
    await settled(chat);
    const held = toolPart(chat);
    await chat.addToolApprovalResponse({ id: held.approval.id, approved: false, reason: "Not now" });
    await new Promise((r) => setTimeout(r, 100));
    await settled(chat);
    assert.equal(toolPart(chat).state, "output-denied", JSON.stringify(chat.messages.at(-1).parts));
    assert.deepEqual(chat.messages.map((m) => m.role), ["user", "assistant"]);
    const { items } = (await call("GET", "/api/assistant/conversations?limit=5", { owner })).json;
    const stored = (await call("GET", `/api/assistant/conversations/${items[0].id}`, { owner })).json;
    assert.equal(stored.messages[1].approval.state, "denied");
    assert.equal(stored.messages[1].approval.reason, "Not now");
    assert.equal((await call("GET", "/api/research?limit=5", { owner })).json.items.length, 0);
  });
});

describe("tool approval over AG-UI", () => {
  const context = { current_page: "research" };

  /** A run that ends with the held call as an interrupt: the client, its conversation, the interrupt. */
  async function interrupted(owner) {
    startsResearch();
    const client = new HttpAgent({ url: `${stack.base}/api/agui`, headers: asOwner(owner), threadId: "thread-ap" });
    client.addMessage({ id: "u1", role: "user", content: "Start research on EGFR resistance" });
    let finished;
    const { result } = await client.runAgent(
      { runId: "run-1", forwardedProps: { agent: "assistant", provider: "fake-openai", context } },
      { onRunFinishedEvent: (params) => void (finished = params) },
    );
    // An interrupted run has no result for the client; its RUN_FINISHED carries the answer.
    return { client, result, finished, conversation: finished.event.result.conversation_id };
  }

  test("the run ends with an interrupt outcome; the next run's resume entry approves it and the call runs once", async () => {
    const owner = newOwner();
    const { client, finished, conversation } = await interrupted(owner);
    assert.equal(finished.outcome, "interrupt");
    const [interrupt] = finished.interrupts;
    assert.equal(interrupt.reason, "tool_approval");
    assert.match(interrupt.id, /^[0-9a-f]{32}$/);
    assert.match(interrupt.message, /^Start a research job on "EGFR resistance"/);
    assert.ok(Date.parse(interrupt.expiresAt) > Date.now());
    assert.deepEqual(client.pendingInterrupts.map((i) => i.id), [interrupt.id]);
    const heldCall = client.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === interrupt.toolCallId);
    assert.equal(heldCall.function.name, "start_research");
    assert.equal((await call("GET", "/api/research?limit=5", { owner })).json.items.length, 0, "nothing ran");
    const events = [];
    const resumed = await client.runAgent(
      { runId: "run-2", forwardedProps: { agent: "assistant", conversation_id: conversation, context }, resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }] },
      { onEvent: ({ event }) => events.push(event) },
    );
    const results = events.filter((e) => e.type === "TOOL_CALL_RESULT");
    assert.equal(results.length, 1);
    assert.equal(results[0].toolCallId, interrupt.toolCallId, "the result answers the interrupted call");
    assert.match(results[0].content, /^Started research job/);
    assert.ok(!events.some((e) => e.type === "TOOL_CALL_START"), "not started again");
    assert.equal(resumed.result.conversation_id, conversation);
    assert.deepEqual(client.pendingInterrupts, []);
    assert.equal((await call("GET", "/api/research?limit=5", { owner })).json.items.length, 1);
    // The same resume again: settled, refused before anything runs.
    await assert.rejects(client.runAgent({ runId: "run-3", forwardedProps: { agent: "assistant", conversation_id: conversation, context }, resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }] }), /approval_settled|decided once|409/);
    assert.equal((await call("GET", "/api/research?limit=5", { owner })).json.items.length, 1);
  });

  test("a cancelled resume entry denies it, with the reason kept", async () => {
    const owner = newOwner();
    const { client, finished, conversation } = await interrupted(owner);
    const [interrupt] = finished.interrupts;
    const seen = [];
    const denied = await client.runAgent({ runId: "run-2", forwardedProps: { agent: "assistant", conversation_id: conversation }, resume: [{ interruptId: interrupt.id, status: "cancelled", payload: { reason: "Not now" } }] }, { onEvent: ({ event }) => seen.push(event) });
    assert.equal(denied.result.conversation_id, conversation);
    // The interrupted call gets its result: denied.
    const result = seen.find((e) => e.type === "TOOL_CALL_RESULT");
    assert.equal(result.toolCallId, interrupt.toolCallId);
    assert.equal(result.content, "denied by the user: Not now");
    assert.deepEqual(client.pendingInterrupts, []);
    const stored = (await call("GET", `/api/assistant/conversations/${conversation}`, { owner })).json;
    assert.equal(stored.messages[1].approval.state, "denied");
    assert.equal(stored.messages[1].approval.reason, "Not now");
    // Malformed resumes are refused.
    for (const resume of [[], [{ interruptId: interrupt.id, status: "maybe" }], [{ interruptId: interrupt.id, status: "resolved", payload: {} }]]) {
      const response = await call("POST", "/api/agui", { owner, headers: { accept: "text/event-stream" }, body: { threadId: "t", runId: "r", messages: [], state: {}, tools: [], context: [], forwardedProps: { agent: "assistant", conversation_id: conversation }, resume } });
      assert.equal(response.status, 422, `${JSON.stringify(resume)}: ${response.text}`);
    }
  });
});

describe("context requests over AG-UI", () => {
  const context = { current_page: "chat" };

  /** A run deferred by a context request: the client, its conversation, the interrupt. */
  async function deferred(owner, thread) {
    stack.fake.script((request) => ({ reply: JSON.stringify(request.body).includes("dosing matters") ? "With your note: dosing." : "Plain answer." }));
    const client = new HttpAgent({ url: `${stack.base}/api/agui`, headers: asOwner(owner), threadId: thread });
    client.addMessage({ id: "u1", role: "user", content: "Compare this with my notes" });
    let finished;
    await client.runAgent(
      { runId: "run-1", forwardedProps: { agent: "assistant", provider: "fake-openai", context } },
      { onRunFinishedEvent: (params) => void (finished = params) },
    );
    const [interrupt] = finished.interrupts;
    return { client, finished, interrupt, conversation: finished.event.result.conversation_id };
  }

  const resumeWith = (client, conversation, entry, runId, events = []) => client.runAgent(
    { runId, forwardedProps: { agent: "assistant", conversation_id: conversation, context }, resume: [entry] },
    { onEvent: ({ event }) => events.push(event) },
  );

  test("the run ends with the request as an interrupt; a resume supplying its slot streams the answer", async () => {
    const owner = newOwner();
    const { client, finished, interrupt, conversation } = await deferred(owner, "thread-cx");
    assert.equal(finished.outcome, "interrupt");
    assert.equal(interrupt.reason, "context_request");
    const requestId = finished.event.result.request_id;
    assert.equal(interrupt.id, `context:${requestId}`);
    assert.match(interrupt.message, /^Context for the answer: Your notes/);
    assert.ok(Date.parse(interrupt.expiresAt) > Date.now());
    const slot = finished.event.result.required[0].slot;
    assert.deepEqual(interrupt.responseSchema.properties.skip.items.enum, [slot]);
    assert.deepEqual(client.pendingInterrupts.map((i) => i.id), [interrupt.id]);
    // Supplying nothing the request needs is refused, and nothing is kept.
    await assert.rejects(resumeWith(client, conversation, { interruptId: interrupt.id, status: "resolved", payload: { payloads: [{ slot: "s9", text: "x" }] } }, "run-x"), /unknown_slot|422/);
    const events = [];
    const since = stack.fake.requests.length;
    const resumed = await resumeWith(client, conversation, { interruptId: interrupt.id, status: "resolved", payload: { payloads: [{ slot, text: "My note: dosing matters most." }] } }, "run-2", events);
    assert.equal(resumed.result.conversation_id, conversation);
    const text = events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
    assert.equal(text.trim(), "With your note: dosing.", "the answer streamed to the run that resumed it");
    assert.equal(stack.fake.requests.length - since, 1, "one model call");
    assert.deepEqual(client.pendingInterrupts, []);
    const stored = (await call("GET", `/api/assistant/conversations/${conversation}`, { owner })).json;
    assert.deepEqual(stored.messages.map((m) => [m.role, m.status ?? null]), [["user", "answered"], ["assistant", null]]);
    const [asInterrupt] = stored.interrupts;
    assert.deepEqual([asInterrupt.id, asInterrupt.state, asInterrupt.resolution, asInterrupt.resolved_by], [requestId, "resolved", "supplied", "user"]);
    // Answered once: the same resume again is refused before anything runs.
    await assert.rejects(resumeWith(client, conversation, { interruptId: interrupt.id, status: "resolved", payload: { payloads: [{ slot, text: "again" }] } }, "run-3"), /context_request_not_found|404/);
    assert.equal(stack.fake.requests.length - since, 1);
  });

  test("a resume that leaves a required slot open is refused with context_missing, and nothing is kept", async () => {
    const owner = newOwner();
    stack.fake.script((request) => JSON.stringify(request.body).includes("## Supplied Context Attachments")
      ? { reply: "Reviewed with both." }
      : { reply: 'Please share your draft and your notes.\nCONTEXT_REQUEST: {"slots": [{"phase": 0, "artifact_type": "note", "description": "Your draft"}, {"phase": 0, "artifact_type": "note", "description": "Your notes"}]}\n' });
    const client = new HttpAgent({ url: `${stack.base}/api/agui`, headers: asOwner(owner), threadId: "thread-cz" });
    client.addMessage({ id: "u1", role: "user", content: "Review the text I am writing" });
    let finished;
    await client.runAgent({ runId: "run-1", forwardedProps: { agent: "assistant", provider: "fake-openai", context } }, { onRunFinishedEvent: (params) => void (finished = params) });
    const [interrupt] = finished.interrupts;
    const conversation = finished.event.result.conversation_id;
    const [first, second] = finished.event.result.required.map((s) => s.slot);
    assert.ok(first && second, JSON.stringify(finished.event.result.required));
    await assert.rejects(resumeWith(client, conversation, { interruptId: interrupt.id, status: "resolved", payload: { payloads: [{ slot: first, text: "My draft." }] } }, "run-2"), /context_missing|409/);
    const kept = (await call("GET", `/api/assistant/conversations/${conversation}`, { owner })).json;
    assert.deepEqual(kept.context_requests[0].slots.map((s) => s.state), ["open", "open"], "nothing was kept");
    assert.equal(kept.interrupts[0].state, "open");
    const events = [];
    await resumeWith(client, conversation, { interruptId: interrupt.id, status: "resolved", payload: { payloads: [{ slot: first, text: "My draft." }], skip: [second] } }, "run-3", events);
    const text = events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
    assert.match(text, /Reviewed with both\./);
    const [done] = (await call("GET", `/api/assistant/conversations/${conversation}`, { owner })).json.interrupts;
    assert.deepEqual([done.state, done.resolution], ["resolved", "supplied"]);
  });

  test("a cancelled resume entry runs without the context, warned; malformed ones are refused", async () => {
    const owner = newOwner();
    const { client, interrupt, conversation } = await deferred(owner, "thread-cy");
    for (const payload of [{}, { payloads: "x" }, { skip: [3] }, { payloads: [{ slot: "s1", text: "a", key_path: "b" }] }]) {
      const response = await call("POST", "/api/agui", { owner, headers: { accept: "text/event-stream" }, body: { threadId: "t", runId: "r", messages: [], state: {}, tools: [], context: [], forwardedProps: { agent: "assistant", conversation_id: conversation, context }, resume: [{ interruptId: interrupt.id, status: "resolved", payload }] } });
      assert.ok([400, 422].includes(response.status), `${JSON.stringify(payload)}: ${response.status} ${response.text}`);
    }
    const events = [];
    await resumeWith(client, conversation, { interruptId: interrupt.id, status: "cancelled" }, "run-2", events);
    const text = events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
    assert.match(text, /^⚠ Answered without the context asked for: you chose to run without it\./);
    const [asInterrupt] = (await call("GET", `/api/assistant/conversations/${conversation}`, { owner })).json.interrupts;
    assert.equal(asInterrupt.resolution, "forced");
  });
});

describe("AG-UI", () => {
  /** An HttpAgent at /api/agui as `owner`, with the guided state and thread given. */
  const agent = (owner, state = {}) => new HttpAgent({
    url: `${stack.base}/api/agui`,
    headers: asOwner(owner),
    threadId: "thread-1",
    initialState: state,
  });

  test("a run streams the turn through the client's verifier: steps, text, state snapshot", async () => {
    guidedModel();
    const owner = newOwner();
    const client = agent(owner, { current_step: "purpose", config: {}, skipped: [] });
    const seen = [];
    client.addMessage({ id: "u1", role: "user", content: "Track rivals" });
    const { result, newMessages } = await client.runAgent(
      { runId: "run-1", forwardedProps: { provider: "fake-openai" } },
      { onEvent: ({ event }) => seen.push(event.type === "CUSTOM" ? `CUSTOM ${event.name}` : event.type) },
    );
    assert.deepEqual(seen.filter((t) => t !== "CUSTOM stepwise.status"), [
      "RUN_STARTED", "STEP_STARTED", "TEXT_MESSAGE_START",
      ...seen.filter((t) => t === "TEXT_MESSAGE_CONTENT"),
      "TEXT_MESSAGE_END", "STEP_FINISHED", "STATE_SNAPSHOT", "RUN_FINISHED",
    ]);
    assert.deepEqual(client.state, { current_step: "business_goals", config: { purpose: "Track rivals" }, skipped: [] });
    assert.equal(newMessages.length, 1);
    assert.equal(newMessages[0].content, "Got it.\nWhich business goals matter?\n");
    assert.deepEqual(result.suggestions, ["Launches", "Pricing"]);
    assertSchema("AnswerData", result);

    // The next run continues the stored conversation with the answer's id, turns and token.
    client.addMessage({ id: "u2", role: "user", content: "Launches and pricing" });
    const second = await new HttpAgent({
      url: `${stack.base}/api/agui`,
      headers: { ...asOwner(owner), "x-conversation-token": result.conversation_token },
      threadId: "thread-1",
      initialState: client.state,
      initialMessages: client.messages,
    }).runAgent({ runId: "run-2", forwardedProps: { provider: "fake-openai", conversation_id: result.conversation_id, turns: result.turns } });
    assert.equal(second.result.step, "stream_type");
    assert.equal(second.result.turns, 2);
  });

  test("an assistant run: tool calls as TOOL_CALL_* events with their result, then the answer; a second run continues it", async () => {
    stack.fake.script((request) => {
      const asked = JSON.stringify(request.body);
      if (asked.includes("And the newest?")) return { reply: "The newest is from 2024.\n" };
      if (!asked.includes("articles found")) return { reply: "Searching.", toolCalls: [{ name: "search_pubmed", arguments: { query: "EGFR resistance", max_results: 3 } }] };
      return { reply: "Three articles.\n" };
    });
    const owner = newOwner();
    const context = { current_page: "streams", active_tab: "articles", search_form: { query: "" } };
    const client = new HttpAgent({ url: `${stack.base}/api/agui`, headers: asOwner(owner), threadId: "thread-a" });
    client.addMessage({ id: "u1", role: "user", content: "Find EGFR resistance articles" });
    const events = [];
    const { result, newMessages } = await client.runAgent(
      { runId: "run-a1", forwardedProps: { agent: "assistant", provider: "fake-openai", context } },
      { onEvent: ({ event }) => events.push(event) },
    );
    const types = events.map((e) => e.type).filter((t) => t !== "CUSTOM");
    assert.deepEqual(types.slice(0, 1), ["RUN_STARTED"]);
    assert.deepEqual(types.filter((t) => t.startsWith("TOOL_CALL")), ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"]);
    assert.equal(types.at(-1), "RUN_FINISHED");
    assert.ok(!types.includes("STATE_SNAPSHOT") && !types.includes("STEP_STARTED"), "no guided state in an assistant run");
    const start = events.find((e) => e.type === "TOOL_CALL_START");
    assert.equal(start.toolCallName, "search_pubmed");
    assert.deepEqual(JSON.parse(events.find((e) => e.type === "TOOL_CALL_ARGS").delta), { query: "EGFR resistance", max_results: 3 });
    const toolResult = events.find((e) => e.type === "TOOL_CALL_RESULT");
    assert.equal(toolResult.toolCallId, start.toolCallId);
    assert.match(toolResult.content, /articles found/);
    assert.ok(events.some((e) => e.type === "CUSTOM" && e.name === "stepwise.tool_progress"), "tool progress as custom events");
    for (const event of events) assertSchema("AgUiEvent", event);
    assertSchema("AnswerData", result);
    assert.equal(result.kind, "assistant");
    assert.equal(result.tool_history[0].tool_name, "search_pubmed");
    assert.ok(newMessages.some((m) => m.role === "assistant" && /Three articles/.test(m.content ?? "")));

    client.addMessage({ id: "u2", role: "user", content: "And the newest?" });
    const second = await client.runAgent({ runId: "run-a2", forwardedProps: { agent: "assistant", provider: "fake-openai", context, conversation_id: result.conversation_id } });
    assert.equal(second.result.conversation_id, result.conversation_id, "the same stored conversation");
    const stored = await call("GET", `/api/assistant/conversations/${result.conversation_id}`, { owner });
    assert.deepEqual(stored.json.messages.filter((m) => m.role === "user").map((m) => m.content), ["Find EGFR resistance articles", "And the newest?"]);

    const noContext = await call("POST", "/api/agui", { owner, body: { threadId: "t", runId: "r", messages: [{ id: "u", role: "user", content: "x" }], forwardedProps: { agent: "assistant" } } });
    assert.deepEqual([noContext.status, noContext.json.error.code], [422, "invalid_request"]);
    const badContext = await call("POST", "/api/agui", { owner, body: { threadId: "t", runId: "r", messages: [{ id: "u", role: "user", content: "x" }], forwardedProps: { agent: "assistant", context: { active_tab: "x" } } } });
    assert.deepEqual([badContext.status, badContext.json.error.code], [422, "invalid_context"]);
    const otherOwner = await call("POST", "/api/agui", { owner: newOwner(), body: { threadId: "t", runId: "r", messages: [{ id: "u", role: "user", content: "x" }], forwardedProps: { agent: "assistant", context, conversation_id: result.conversation_id } } });
    assert.equal(otherOwner.status, 404, "another owner's conversation does not exist for them");
  });

  test("a rejected action and input that is not a turn are refused with 422", async () => {
    const owner = newOwner();
    const client = agent(owner, { current_step: "stream_type", config: { purpose: "A", business_goals: ["B"] } });
    client.addMessage({ id: "u1", role: "user", content: "banana" });
    let failure;
    await client.runAgent(
      { runId: "run-x", forwardedProps: { user_action: { type: "option_selected", target_field: "stream_type", selected_value: "banana" } } },
      { onRunFailed: ({ error }) => { failure = error; return { stopPropagation: true }; } },
    );
    assert.equal(failure?.status, 422, "the action is refused before anything runs");
    assert.equal(failure.payload.error.code, "invalid_value");

    const noUser = await call("POST", "/api/agui", { owner, body: { threadId: "t", runId: "r", messages: [{ id: "a", role: "assistant", content: "hi" }] } });
    assert.equal(noUser.status, 422);
    assert.match(noUser.json.error.message, /user message/);
    const extra = await call("POST", "/api/agui", { owner, body: { threadId: "t", runId: "r", messages: [{ id: "u", role: "user", content: "x" }], forwardedProps: { colour: "red" } } });
    assert.equal(extra.status, 422);
  });
});

describe("real responses against openapi.yaml", () => {
  test("the served contract, health, me, errors", async () => {
    const served = await fetch(`${stack.base}/openapi.yaml`);
    assert.equal(served.status, 200);
    assert.match(served.headers.get("content-type"), /yaml/);
    assert.equal(await served.text(), readFileSync(new URL("../../openapi.yaml", import.meta.url), "utf8"));
    assertSchema("Health", await (await fetch(`${stack.base}/healthz`)).json());
    assertSchema("Me", (await call("GET", "/api/me")).json);
    const missing = await call("GET", "/api/research/" + "0".repeat(32));
    assert.equal(missing.status, 404);
    assertSchema("Error", missing.json);
    assertSchema("Error", (await call("POST", "/api/chat", { body: { message: "x", colour: "red" } })).json);
  });

  test("research, the assistant's conversations, the registry and an article search match their schemas", async () => {
    const owner = newOwner();
    const draftBody = { prompt: "How do EGFR inhibitors compare?", selected_llms: ["offline"], synthesis_llm: "offline" };
    assertSchema("ResearchDraft", draftBody);
    const draft = await call("POST", "/api/research/draft", { owner, body: draftBody });
    assert.equal(draft.status, 201);
    assertSchema("Research", draft.json);
    assertSchema("Research", (await call("GET", `/api/research/${draft.json.id}`, { owner })).json);
    assertSchema("ResearchList", (await call("GET", "/api/research", { owner })).json);
    assertSchema("ChatRegistryJson", (await call("GET", "/api/assistant/registry", { owner })).json);
    const asked = { message: "Hello", provider: "offline", context: { current_page: "research" } };
    assertSchema("AssistantRequest", asked);
    const turn = await call("POST", "/api/assistant", { owner, body: asked, headers: { accept: "application/json" } });
    assert.equal(turn.status, 200);
    assertSchema("AssistantResponse", turn.json);
    assertSchema("ConversationList", (await call("GET", "/api/assistant/conversations", { owner })).json);
    assertSchema("AssistantConversation", (await call("GET", `/api/assistant/conversations/${turn.json.conversation_id}`, { owner })).json);
    const search = await call("GET", "/api/articles/search?query=EGFR%20resistance", { owner });
    assert.equal(search.status, 200);
    assertSchema("ArticleSearch", search.json);
  });

  test("each DELETE of an owner's item answers the success status its contract declares", async () => {
    const owner = newOwner();
    const declared = (path) => Object.keys(contract.paths[path].delete.responses).filter((code) => code !== "default");
    const turn = await call("POST", "/api/assistant", { owner, body: { message: "Hello", provider: "offline", context: { current_page: "research" } }, headers: { accept: "application/json" } });
    const help = await call("POST", "/api/help", { owner, body: { message: "How do I export a report?" } });
    const research = await call("POST", "/api/research/draft", { owner, body: { prompt: "How do EGFR inhibitors compare?", selected_llms: ["offline"], synthesis_llm: "offline" } });
    for (const [path, id] of [
      ["/api/assistant/conversations/{id}", turn.json.conversation_id],
      ["/api/help/sessions/{id}", help.json.session_id],
      ["/api/research/{id}", research.json.id],
    ]) {
      const deleted = await call("DELETE", path.replace("{id}", id), { owner });
      assert.deepEqual(declared(path), [String(deleted.status)], `${path}: ${deleted.text}`);
    }
  });

  test("guided turns as JSON and as events, AG-UI events and run input", async () => {
    guidedModel();
    const body = { message: "Track rivals", current_config: {}, provider: "fake-openai" };
    assertSchema("ChatRequest", body);
    const json = await call("POST", "/api/chat", { body, headers: { accept: "application/json" } });
    assert.equal(json.status, 200);
    assertSchema("TurnAnswer", json.json);
    assertSchema("ChatResponse", json.json);
    const sse = await call("POST", "/api/chat", { body, headers: { accept: "text/event-stream" } });
    const events = parseSse(sse.text);
    assert.ok(events.length > 2);
    for (const event of events) assertSchema("StreamEvent", event.data);

    const inputs = [];
    const agent = new HttpAgent({
      url: `${stack.base}/api/agui`,
      headers: asOwner(newOwner()),
      fetch: (url, init) => (inputs.push(JSON.parse(init.body)), fetch(url, init)),
    });
    agent.addMessage({ id: "u1", role: "user", content: "Track rivals" });
    const seen = [];
    await agent.runAgent({ forwardedProps: { provider: "fake-openai" } }, { onEvent: ({ event }) => seen.push(event) });
    assertSchema("RunAgentInput", inputs[0]);
    assert.ok(seen.length > 4);
    for (const event of seen) assertSchema("AgUiEvent", event);
  });
});
