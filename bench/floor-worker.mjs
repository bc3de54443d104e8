// The floor of a guided turn (a benchmark baseline, not part of the app): a plain JS Worker that
// makes the same runtime calls a first guided turn with the offline provider makes, and nothing
// else: the owner token's SHA-256, both rate limits at once, an event stream of as many events
// through an IdentityTransformStream, and the new conversation stored on its Durable Object
// (one put and an alarm). bench/worker-profile.mjs runs it beside the Worker, so what the Worker
// spends beyond it is the Worker's own work.
import { DurableObject } from "cloudflare:workers";

/** The conversation's object: stores what it is sent. */
export class Floor extends DurableObject {
  async fetch(request) {
    await this.ctx.storage.put("conversation", await request.text());
    await this.ctx.storage.setAlarm(Date.now() + 90 * 24 * 3600 * 1000);
    return new Response("{}");
  }

  async alarm() {}
}

const hex = (buffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");

export default {
  async fetch(request, env, ctx) {
    const token = (request.headers.get("authorization") ?? "").slice("Bearer ".length);
    const owner = hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`token:${token}`)));
    const body = await request.json();
    const [byOwner, byIp] = await Promise.all([env.OWNER_RATE_LIMIT.limit({ key: `owner:${owner}` }), env.IP_RATE_LIMIT.limit({ key: "ip:unknown" })]);
    if (!byOwner.success || !byIp.success) return new Response("limited", { status: 429 });
    const pipe = new IdentityTransformStream();
    const writer = pipe.writable.getWriter();
    const encoder = new TextEncoder();
    let id = 0;
    const send = (type, data) => writer.write(encoder.encode(`id: ${++id}\nevent: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)).catch(() => {});
    ctx.waitUntil((async () => {
      send("status", { message: "Thinking..." });
      const reply = `[offline assistant: rule-based, not an LLM] Noted your purpose: ${body.message}. Which business goals should this stream serve?`;
      for (let at = 0; at < reply.length; at += 24) send("text_delta", { text: reply.slice(at, at + 24) });
      const conversation = crypto.randomUUID().replaceAll("-", "");
      const stub = env.FLOOR.get(env.FLOOR.idFromName(conversation));
      await (await stub.fetch("https://floor/", { method: "POST", body: JSON.stringify({ owner, body, reply }) })).text();
      send("complete", { payload: { message: reply, next_step: "business_goals", updated_config: { purpose: body.message }, conversation_id: conversation, turns: 1 } });
      await writer.close();
    })());
    return new Response(pipe.readable, { headers: { "content-type": "text/event-stream; charset=utf-8" } });
  },
};
