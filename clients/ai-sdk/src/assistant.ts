//! A `ChatTransport` for the AI SDK's `useChat` that talks to the Stepwise assistant: each
//! `sendMessage` is one `POST /api/assistant` turn (with the page context the app gives) answered
//! as a UI message stream, and `reconnectToStream` joins the conversation's running turn
//! (`GET /api/assistant/conversations/:id/stream`): after a reload, or from a second tab, the
//! answer streams from its start, and a chat with no turn to join gets `null`.
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
    const send = options.fetch ?? globalThis.fetch;
    super({
      api: `${base}/api/assistant`,
      fetch: (async (url: RequestInfo | URL, init?: RequestInit) => {
        const chat = sending;
        const response = await send(url, init);
        const conversation = response.headers.get("x-stepwise-conversation");
        if (chat && conversation) conversations.set(chat, conversation);
        return response;
      }) as typeof globalThis.fetch,
      prepareSendMessagesRequest: ({ id, messages }) => {
        const last = messages.at(-1);
        if (!last || last.role !== "user") throw new Error("an assistant turn answers a user message");
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
