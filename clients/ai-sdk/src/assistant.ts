//! A `ChatTransport` for the AI SDK's `useChat` that talks to the Stepwise assistant: each
//! `sendMessage` is one `POST /api/assistant` turn (with the page context the app gives) answered
//! as a UI message stream, and `reconnectToStream` joins the conversation's running turn
//! (`GET /api/assistant/conversations/:id/stream`): after a reload, or from a second tab, the
//! answer streams from its start, and a chat with no turn to join gets `null`. A tool call the
//! assistant holds for approval arrives as a tool part awaiting approval; `addToolApprovalResponse`
//! (with `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses`) sends the
//! decision (`POST /api/assistant/conversations/:id/approvals/:approval_id`): an approval streams
//! the call's run into that part, a denial marks it denied.
import { DefaultChatTransport, type UIMessage } from "ai";
import type { StepwiseUIMessage } from "./index.ts";

/** Options of [`StepwiseAssistantTransport`]. */
export interface StepwiseAssistantOptions {
  /** The Stepwise origin, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** The owner's bearer token (an anonymous owner id, a JWT, …). */
  ownerToken: string;
  /** What the page shows now (`ChatContext`), sent with every message. */
  context: () => Record<string, unknown>;
  /** A provider name of `/healthz` (default: the Worker's provider). */
  provider?: string;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
}

/** An approval the owner answered in the chat (`addToolApprovalResponse`), not yet sent. */
interface Decided {
  approvalId: string;
  toolCallId: string;
  approved: boolean;
  reason?: string;
}

/** The last step's tool part of `message` whose approval was answered, if any. */
function decidedIn(message: UIMessage): Decided | undefined {
  for (const part of [...message.parts].reverse()) {
    if (!("toolCallId" in part) || part.state !== "approval-responded") continue;
    const approval = part.approval as { id: string; approved: boolean; reason?: string };
    return { approvalId: approval.id, toolCallId: part.toolCallId, approved: approval.approved, reason: approval.reason };
  }
  return undefined;
}

/** A UI message stream that marks `toolCallId` denied (the server answers a denial as JSON). */
function deniedStream(toolCallId: string): Response {
  const chunks = [{ type: "start" }, { type: "tool-output-denied", toolCallId }, { type: "finish" }];
  const body = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
  return new Response(body, { headers: { "content-type": "text/event-stream", "x-vercel-ai-ui-message-stream": "v1" } });
}

/** The text of a UI message's text parts. */
function textOf(message: UIMessage): string {
  return message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
}

/** Drives the assistant from `useChat`. The server names a chat's conversation when its first
 * turn starts; the transport keeps that name by chat id, and takes a chat id it has not seen
 * as the conversation's own id (so a chat whose id is its conversation's resumes after a
 * reload). */
export class StepwiseAssistantTransport extends DefaultChatTransport<StepwiseUIMessage> {
  /** The conversation of each chat id seen. */
  readonly conversations: Map<string, string>;

  constructor(options: StepwiseAssistantOptions) {
    const base = options.baseUrl.replace(/\/$/, "");
    const conversations = new Map<string, string>();
    const headers = { authorization: `Bearer ${options.ownerToken}`, "x-stepwise-format": "ui-message-stream", accept: "text/event-stream" };
    // The chat whose message is being sent: its response names the conversation.
    let sending: string | undefined;
    // The denial being sent: its JSON answer becomes the part's `output-denied`.
    let denying: string | undefined;
    const send = options.fetch ?? globalThis.fetch;
    super({
      api: `${base}/api/assistant`,
      fetch: (async (url: RequestInfo | URL, init?: RequestInit) => {
        const chat = sending;
        const denied = denying;
        denying = undefined;
        const response = await send(url, init);
        if (denied && response.ok) return deniedStream(denied);
        const conversation = response.headers.get("x-stepwise-conversation");
        if (chat && conversation) conversations.set(chat, conversation);
        return response;
      }) as typeof globalThis.fetch,
      prepareSendMessagesRequest: ({ id, messages }) => {
        const last = messages.at(-1);
        const decided = last?.role === "assistant" ? decidedIn(last) : undefined;
        if (decided) {
          // The owner answered an approval: the decision is the request.
          sending = id;
          const conversation = encodeURIComponent(conversations.get(id) ?? id);
          const api = `${base}/api/assistant/conversations/${conversation}/approvals/${encodeURIComponent(decided.approvalId)}`;
          if (!decided.approved) denying = decided.toolCallId;
          const body = decided.approved ? { decision: "approve", context: options.context() } : { decision: "deny", reason: decided.reason ?? "" };
          return { api, body, headers };
        }
        if (!last || last.role !== "user") throw new Error("an assistant turn answers a user message, or an approval");
        sending = id;
        const conversation = conversations.get(id);
        const body: Record<string, unknown> = { message: textOf(last), context: options.context() };
        if (conversation) body.conversation_id = conversation;
        if (options.provider) body.provider = options.provider;
        return { body, headers };
      },
      prepareReconnectToStreamRequest: ({ id }) => ({
        api: `${base}/api/assistant/conversations/${encodeURIComponent(conversations.get(id) ?? id)}/stream`,
        headers,
      }),
    });
    this.conversations = conversations;
  }
}
