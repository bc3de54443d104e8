// A fake LLM provider on 127.0.0.1 that speaks the real streaming wire formats of OpenAI chat
// completions, Anthropic Messages and Gemini streamGenerateContent (SSE), text and tool calls,
// splits its bytes at awkward points (inside marker names, UTF-8 characters, JSON escapes and
// tool arguments), and injects faults. It also serves a fake of PubMed's E-utilities.
import http from "node:http";
import { handleEutils } from "./fake-eutils.mjs";

const MARKER_NAMES = ["SUGGESTIONS", "OPTIONS", "EXTRACTED_DATA", "PROPOSED_MESSAGE", "TARGET_FIELD", "QUERY_SUGGESTION", "FILTER_SUGGESTION", "SUGGESTED_VALUES", "SUGGESTED_ACTIONS", "tool_calls", "input_json_delta", "functionCall"];

/** Splits the reply text into content deltas of about 7 characters (so markers straddle them),
 * or one per line when `byLine`. */
function deltas(text, byLine = false) {
  if (byLine) return text.match(/[^\n]*\n|[^\n]+$/g) ?? [""];
  const pieces = [];
  const chars = [...text];
  for (let i = 0; i < chars.length; i += 7) pieces.push(chars.slice(i, i + 7).join(""));
  return pieces.length ? pieces : [""];
}

/** Tool-call arguments as the JSON text a model streams, in pieces of about 6 characters. */
function argumentPieces(call) {
  const text = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {});
  const pieces = [];
  for (let i = 0; i < text.length; i += 6) pieces.push(text.slice(i, i + 6));
  return pieces.length ? pieces : [""];
}

/** The raw response body of a successful stream, in a provider's wire format: the reply's text,
 * then the `toolCalls` (`[{name, arguments}]`, arguments as an object or raw text). */
export function encodeStream(kind, reply, byLine = false, toolCalls = []) {
  if (kind === "openai") {
    const chunk = (delta, finish = null) =>
      `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "fake", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
    // Escape non-ASCII as \uXXXX, as some servers do, so splits land inside escapes too.
    const ascii = (s) => s.replace(/[\u0080-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
    const calls = toolCalls.flatMap((call, index) => [
      chunk({ tool_calls: [{ index, id: `call_fake_${index}`, type: "function", function: { name: call.name, arguments: "" } }] }),
      ...argumentPieces(call).map((piece) => chunk({ tool_calls: [{ index, function: { arguments: piece } }] })),
    ]);
    return (
      chunk({ role: "assistant", content: "" }) +
      (reply ? deltas(reply, byLine).map((t) => ascii(chunk({ content: t }))).join("") : "") +
      calls.join("") +
      chunk({}, toolCalls.length ? "tool_calls" : "stop") +
      `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })}\n\n` +
      "data: [DONE]\n\n"
    );
  }
  if (kind === "anthropic") {
    const event = (name, data) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    return (
      event("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", content: [], model: "fake", stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } }) +
      event("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
      event("ping", { type: "ping" }) +
      deltas(reply, byLine).map((t) => event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: t } })).join("") +
      event("content_block_stop", { type: "content_block_stop", index: 0 }) +
      toolCalls
        .map(
          (call, i) =>
            event("content_block_start", { type: "content_block_start", index: i + 1, content_block: { type: "tool_use", id: `toolu_fake_${i}`, name: call.name, input: {} } }) +
            argumentPieces(call).map((piece) => event("content_block_delta", { type: "content_block_delta", index: i + 1, delta: { type: "input_json_delta", partial_json: piece } })).join("") +
            event("content_block_stop", { type: "content_block_stop", index: i + 1 }),
        )
        .join("") +
      event("message_delta", { type: "message_delta", delta: { stop_reason: toolCalls.length ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } }) +
      event("message_stop", { type: "message_stop" })
    );
  }
  const pieces = deltas(reply, byLine);
  const parts = pieces.map((t) => [{ text: t }]);
  if (toolCalls.length) {
    const args = (call) => (typeof call.arguments === "string" ? JSON.parse(call.arguments) : call.arguments ?? {});
    parts.push(toolCalls.map((call) => ({ functionCall: { name: call.name, args: args(call) } })));
  }
  return parts
    .map((p, i) => {
      const candidate = { content: { parts: p, role: "model" }, index: 0 };
      if (i === parts.length - 1) candidate.finishReason = "STOP";
      return `data: ${JSON.stringify({ candidates: [candidate], usageMetadata: { promptTokenCount: 1 } })}\r\n\r\n`;
    })
    .join("");
}

/** Cut points: inside every marker name, inside every multi-byte character and escape, and every 5 bytes. */
export function awkwardCuts(bytes) {
  const text = bytes.toString("latin1");
  const cuts = new Set();
  for (const name of MARKER_NAMES) for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) cuts.add(at + 3);
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] >= 0xc0) cuts.add(i + 1); // inside a UTF-8 sequence
    if (bytes[i] === 0x5c) cuts.add(i + 1); // after a backslash: inside a JSON escape
    if (i % 5 === 0) cuts.add(i);
  }
  return [...cuts].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b);
}

/** The end offsets of the SSE events in a body. */
function eventEnds(bytes) {
  const text = bytes.toString("latin1");
  const ends = [];
  for (let at = text.indexOf("\n\n"); at >= 0; at = text.indexOf("\n\n", at + 2)) ends.push(at + 2);
  if (ends.at(-1) !== bytes.length) ends.push(bytes.length);
  return ends;
}

function errorBody(kind, status, custom) {
  const message = custom ?? (status === 429 ? "Rate limit reached" : status === 401 ? "Incorrect API key provided" : "The server had an error");
  if (kind === "anthropic") return { type: "error", error: { type: status === 429 ? "rate_limit_error" : "api_error", message } };
  if (kind === "gemini") return { error: { code: status, message, status: status === 429 ? "RESOURCE_EXHAUSTED" : "INTERNAL" } };
  return { error: { message, type: "server_error", param: null, code: null } };
}

/** The model a request names (in the body, or in Gemini's URL). */
function modelOf(url, body) {
  return body?.model ?? decodeURIComponent(url.match(/\/models\/([^/:]+)/)?.[1] ?? "");
}

/** The system prompt of a request, in any of the three formats. */
function systemOf(body) {
  if (!body) return "";
  if (typeof body.system === "string") return body.system;
  if (Array.isArray(body.system)) return body.system.map((b) => b.text).join("");
  if (body.systemInstruction) return body.systemInstruction.parts.map((p) => p.text).join("");
  return (body.messages ?? []).filter((m) => m.role === "system").map((m) => m.content).join("");
}

/**
 * Starts the fake provider. `script(next)` sets how answers behave: an object for every answer,
 * or a function of the request `{kind, model, system, body}` returning one per request.
 * Behaviour fields: `reply`, `toolCalls`, `status` (+ `message`), `fault` (`hang_before_headers`, `hang`,
 * `cut`, `malformed`, `reset`: the connection dropped before any answer), `latencyMs` (wait before answering), `delayMs` (between writes), `paced` (one write per event,
 * or `perWrite` events a write), `hangMs` (drop a
 * hung connection after this long).
 * `/v1/embeddings` answers OpenAI-style embeddings (see `embeddings`).
 * POSTs to `/webhook` are recorded in `webhooks` and answered `webhookStatus` (default 200).
 */
export async function startFakeProvider() {
  const requests = [];
  const writes = [];
  const webhooks = [];
  const jwksFetches = [];
  let jwks = [];
  const sockets = new Set();
  let script = { reply: "Hello." };
  let webhookStatus = 200;
  const eutils = { requests: [], fault: null };
  const embeddings = { requests: [], status: 0, vectorOf: () => [0, 0, 0, 0] };
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    if (req.url.startsWith("/eutils/")) return handleEutils(req, res, eutils);
    if (req.url === "/cdn-cgi/access/certs") {
      // A Cloudflare Access team's key set, for the owner tests.
      jwksFetches.push(Date.now());
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ keys: jwks }));
    }
    if (req.url === "/v1/embeddings") {
      // An OpenAI-compatible embeddings endpoint: `embeddings.vectorOf(text)` decides each vector
      // (default: zeros, similar to nothing); `embeddings.status` fails every call.
      const parsed = JSON.parse(body);
      embeddings.requests.push({ at: Date.now(), body: parsed, headers: req.headers });
      if (embeddings.status) {
        res.writeHead(embeddings.status, { "content-type": "application/json" });
        return res.end(JSON.stringify({ error: { message: "embeddings failed" } }));
      }
      const inputs = Array.isArray(parsed.input) ? parsed.input : [parsed.input];
      const data = inputs.map((text, index) => ({ object: "embedding", index, embedding: embeddings.vectorOf(text) }));
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ object: "list", data: data.reverse(), model: parsed.model }));
    }
    if (req.url === "/webhook") {
      webhooks.push({ at: Date.now(), status: webhookStatus, body: JSON.parse(body), raw: body, headers: req.headers });
      res.writeHead(webhookStatus, { "content-type": "text/plain" });
      return res.end("ok");
    }
    const kind = ["openai", "anthropic", "gemini"].find((k) => req.url.startsWith(`/${k}/`));
    const parsed = body ? JSON.parse(body) : null;
    const request = { kind, url: req.url, headers: req.headers, body: parsed, model: modelOf(req.url, parsed), system: systemOf(parsed), at: Date.now(), closedEarly: null };
    requests.push(request);
    // The client (the Worker) closing the connection before the answer ended: a cancelled call.
    res.on("close", () => {
      if (!res.writableEnded) request.closedEarly = Date.now();
    });
    const behaviour = typeof script === "function" ? script(request) : script;
    const { reply = "", fault, status, message, delayMs = 0, latencyMs = 0 } = behaviour;
    if (latencyMs) await new Promise((r) => setTimeout(r, latencyMs));
    if (fault === "reset") return req.socket.destroy();
    if (fault === "hang_before_headers") {
      // Never answers; the connection is dropped after `hangMs`, or when the server closes.
      if (behaviour.hangMs) setTimeout(() => res.socket?.destroy(), behaviour.hangMs);
      return;
    }
    if (status) {
      res.writeHead(status, { "content-type": "application/json" });
      return res.end(JSON.stringify(errorBody(kind, status, message)));
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const encoded = encodeStream(kind, reply, behaviour.paced, behaviour.toolCalls ?? []);
    let bytes = Buffer.from(fault === "malformed" ? "data: {not json\n\n" : encoded, "utf8");
    if (fault === "cut" || fault === "hang") bytes = bytes.subarray(0, Math.floor(bytes.length / 2));
    // `paced`: one write per SSE event (or `perWrite` events: a burst), `delayMs` apart, each
    // write's time recorded (benchmarks); otherwise writes cut at awkward points.
    const perWrite = behaviour.perWrite ?? 1;
    const cuts = behaviour.paced
      ? eventEnds(bytes).filter((_, i, ends) => (i + 1) % perWrite === 0 || i === ends.length - 1)
      : [...awkwardCuts(bytes), bytes.length];
    let previous = 0;
    for (const cut of cuts) {
      res.write(bytes.subarray(previous, cut));
      writes.push({ at: performance.now(), text: bytes.subarray(previous, cut).toString("utf8") });
      previous = cut;
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    }
    if (fault === "cut") {
      // Let the head and the first half arrive, then drop the connection mid-stream.
      await new Promise((r) => setTimeout(r, 150));
      return res.socket.destroy();
    }
    if (fault === "hang") return; // headers and half a stream, then silence
    res.end();
  });
  // Providers' front ends keep an idle connection open for a minute or more; node's default (5 s)
  // would close connections the Worker's pool is about to reuse under load (a reset request).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    writes,
    webhooks,
    jwksFetches,
    /** The E-utilities fake: its request log, and `fault` (`{status}` or `{down: true}`). */
    eutils,
    /** The embeddings fake: its request log, `vectorOf(text)` and a failing `status`. */
    embeddings,
    /** Serves these JWKs at /cdn-cgi/access/certs. */
    setJwks(keys) {
      jwks = keys;
    },
    script(next) {
      script = next;
    },
    webhookAnswers(status) {
      webhookStatus = status;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
