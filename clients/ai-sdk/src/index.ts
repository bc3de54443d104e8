//! A `ChatTransport` for the AI SDK's `useChat` that drives a Stepwise guided conversation:
//! each `sendMessage` becomes one `POST /api/chat` turn answered as a UI message stream
//! (`x-stepwise-format: ui-message-stream`). The guided state travels in the messages
//! themselves: every answer ends with a `data-stepwise` part (`step`, `config`, `skipped`,
//! `suggestions`, `options`, `payloads`, the conversation's id and `turns`), and the next
//! request is built from the last one. The turn runs on the server whatever the client does:
//! `reconnectToStream` joins a chat's running turn (`GET /api/conversations/:id/stream` with its
//! token), which the transport knows from the headers of the chat's last answer (or from
//! `conversations`, filled by the app after a reload); a chat with no turn to join gets `null`.
import { DefaultChatTransport, type UIMessage } from "ai";

/** The `data-stepwise` part of an answer (see openapi.yaml `AnswerData`). */
export interface StepwiseData {
  kind: "guided" | "assistant";
  step?: string;
  config?: Record<string, unknown>;
  skipped?: string[];
  suggestions?: string[];
  options?: { label: string; value: string; checked: boolean }[];
  payloads?: { name: string; value: unknown }[];
  conversation_id?: string;
  conversation_token?: string;
  turns?: number;
  [field: string]: unknown;
}

/** The UI message type of a Stepwise chat: its data parts. */
export type StepwiseUIMessage = UIMessage<unknown, {
  stepwise: StepwiseData;
  status: { message: string };
  "context-required": Record<string, unknown>;
  "tool-progress": { tool: string; stage: string; message: string; progress: number };
}>;

/** Options of [`StepwiseChatTransport`]. */
export interface StepwiseTransportOptions {
  /** The Stepwise origin, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** The owner's bearer token (an anonymous owner id, a JWT, …). */
  ownerToken: string;
  /** The workflow id (default `research_stream`). */
  workflow?: string;
  /** A provider name of `/healthz` (default: the Worker's chat provider). */
  provider?: string;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
}

/** The text of a UI message's text parts. */
function textOf(message: UIMessage): string {
  return message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
}

/** The last `data-stepwise` part among `messages` (newest first), and the first token seen. */
export function lastState(messages: UIMessage[]): { data?: StepwiseData; token?: string } {
  let data: StepwiseData | undefined;
  let token: string | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    for (const part of messages[i].parts) {
      if (part.type !== "data-stepwise") continue;
      const found = (part as { data: StepwiseData }).data;
      data ??= found;
      token ??= found.conversation_token;
    }
  }
  return { data, token };
}

/** Names a request's chat to the transport's own fetch, which removes it. */
const CHAT_HEADER = "x-stepwise-transport-chat";

/** A guided conversation a chat's turns belong to: its id and token. */
export interface GuidedConversation {
  id: string;
  token: string;
}

/** Drives guided turns from `useChat`: `new Chat({ transport: new StepwiseChatTransport({...}) })`. */
export class StepwiseChatTransport extends DefaultChatTransport<StepwiseUIMessage> {
  /** The conversation of each chat id seen (named by its answers' headers before their first
   * event); an app that keeps them can set them again after a reload, for `reconnectToStream`. */
  readonly conversations: Map<string, GuidedConversation>;

  constructor(options: StepwiseTransportOptions) {
    const base = options.baseUrl.replace(/\/$/, "");
    const conversations = new Map<string, GuidedConversation>();
    const send = options.fetch ?? globalThis.fetch;
    super({
      api: `${base}/api/chat`,
      fetch: (async (url: RequestInfo | URL, init?: RequestInit) => {
        // The chat a message is sent for travels with its request (taken off before it goes):
        // its response names the conversation.
        const headers = new Headers(init?.headers);
        const chat = headers.get(CHAT_HEADER) ?? undefined;
        headers.delete(CHAT_HEADER);
        const response = await send(url, { ...init, headers });
        const id = response.headers.get("x-stepwise-conversation");
        const token = response.headers.get("x-conversation-token") ?? (chat ? conversations.get(chat)?.token : undefined);
        if (chat && id && token) conversations.set(chat, { id, token });
        return response;
      }) as typeof globalThis.fetch,
      prepareReconnectToStreamRequest: ({ id }) => {
        // `reconnectToStream` asks only for chats whose conversation is known.
        const known = conversations.get(id)!;
        return {
          api: `${base}/api/conversations/${encodeURIComponent(known.id)}/stream`,
          headers: { authorization: `Bearer ${options.ownerToken}`, "x-stepwise-format": "ui-message-stream", "x-conversation-token": known.token },
        };
      },
      prepareSendMessagesRequest: ({ id: chat, messages }) => {
        const last = messages.at(-1);
        if (!last || last.role !== "user") throw new Error("a Stepwise turn answers a user message");
        const { data, token } = lastState(messages);
        const history = messages.slice(0, -1).flatMap((m) =>
          m.role === "user" || m.role === "assistant" ? [{ role: m.role, content: textOf(m) }] : []);
        const body: Record<string, unknown> = {
          message: textOf(last),
          current_config: data?.config ?? {},
          conversation_history: history.filter((m) => m.content),
        };
        if (options.workflow) body.workflow = options.workflow;
        if (options.provider) body.provider = options.provider;
        if (data?.step) body.current_step = data.step;
        if (data?.skipped?.length) body.skipped = data.skipped;
        if (data?.conversation_id) {
          body.conversation_id = data.conversation_id;
          body.turns = data.turns;
        }
        const headers: Record<string, string> = {
          authorization: `Bearer ${options.ownerToken}`,
          "x-stepwise-format": "ui-message-stream",
          accept: "text/event-stream",
          [CHAT_HEADER]: chat,
        };
        if (token) headers["x-conversation-token"] = token;
        return { body, headers };
      },
    });
    this.conversations = conversations;
  }

  /** Joins the chat's running turn; `null` when there is none, or no conversation is known for
   * the chat. */
  async reconnectToStream(options: Parameters<DefaultChatTransport<StepwiseUIMessage>["reconnectToStream"]>[0]) {
    if (!this.conversations.has(options.chatId)) return null;
    return super.reconnectToStream(options);
  }
}

export { StepwiseAssistantTransport } from "./assistant.ts";
export type { StepwiseAssistantOptions } from "./assistant.ts";
