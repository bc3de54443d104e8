//! The assistant tray, on every page: a right-hand column on wide screens, a drawer on narrow ones
//! (which starts closed on every load, since it covers the page; Escape closes it and gives focus
//! back). Each message goes with the page's context; the answer streams in with tool progress,
//! payload cards, chips and action buttons. Conversations are the server's: the current one resumes
//! after a reload (an answer still being written goes on streaming), and past ones are listed in
//! History. The conversation's live connection (`live.ts`) streams a turn started in another tab
//! the same way, and brings a waiting request's reminders and updates and the answer when it comes
//! from elsewhere (the SLA's fallback). A message sent while a turn runs waits ("Queued") and is
//! answered right after: sent while this tab's own answer streams, it is held here as queued (kept
//! for the tab: a reload puts it back into the box unsent) and sent when that answer ends; sent
//! while another tab's turn runs, it waits at the server. A message whose turn is refused or fails,
//! or that never reaches the server, goes back into the box. Stop stops the running turn wherever
//! it was started; its partial answer stays, marked stopped. In a tab whose message waits, Stop
//! stops that message alone, which goes back into the box (an action or an approval stopped so can
//! be pressed again). Messages waiting at the server, sent from any tab (this one before a reload
//! too), show above the box (`waiting-line.ts`), each with a Stop that puts it back into the box.
//! What the owner does with a card (accept, dismiss, a failed apply) is kept with the conversation
//! and shows in every tab and after a reload. "Context" lists what the assistant can read of the
//! stream and job in view, attachable to a waiting card. Past context requests say what they got; a
//! writing style can be chosen, and the conversation keeps it. A tool call the assistant holds for
//! approval shows as an approval card in every tab; approving it streams its run here like any
//! turn.

import { resolveChat, type Approval, type AssistantConversation, type AssistantResponse, type CardOutcome, type CardState, type ChatContext, type ChatRegistryJson, type StreamEvent, type SuggestedAction } from "../../../crates/wasm/pkg/stepwise.js";
import { api } from "../api.js";
import { QueuedMessage, giveBack, keepDraft } from "../queued.js";
import { WaitingLine } from "../waiting-line.js";
import { h, replace } from "../dom.js";
import { authHeaders } from "../owner.js";
import { fetchWithChallenge } from "../turnstile.js";
import { readSse } from "../sse.js";
import { type LiveEvent, LiveConnection, SEQ_SPAN, leaseOf } from "./live.js";
import { type ApprovalActions, approvalRefusal, WAIT_FOR_ANSWER } from "./approval.js";
import { AnswerView, type CardStates } from "./message.js";
import type { PayloadHost } from "./payloads.js";
import { TrayPanels } from "./panels.js";
import { StylePicker } from "./style-picker.js";
import { Drawer } from "./drawer.js";
import { type ContextRequestJson, RequestCard, requestSummary } from "./request.js";
import { PAGE_MESSAGES, earlierButton, type EarlierPages } from "./earlier.js";
import { dropOwnTurn, keepOwnTurn, KEPT, ownTurnOf, ownTurnOutcome, ownTurnsGone, type OwnTurn } from "./own-turn.js";

const STORAGE_KEY = "stepwise.assistant.v1";
/** Most messages one page may hold (the server's `MAX_PAGE_MESSAGES`). */
const MAX_PAGE_MESSAGES = 1000;

/** What the tray needs from the app. */
export interface TrayHost extends PayloadHost {
  /** Runs a client action (`navigate`, `open_stream`, `open_research`, `show_tab`). */
  clientAction(action: string, target?: string): void;
}

/** The tray. */
export class Tray {
  private readonly root = h("aside", { class: "tray", id: "assistant", "aria-label": "Assistant", hidden: true });
  private readonly log = h("div", { class: "tray-log", role: "log", "aria-live": "polite", "aria-label": "Assistant conversation" });
  private readonly panels = new TrayPanels(() => this.context(), () => (this.card?.waiting() ? this.card : null), (id) => void this.reopen(id));
  private readonly input = h("textarea", { id: "assistant-input", rows: 2, maxlength: 8000, placeholder: "Ask about this page…" });
  private readonly sendButton = h("button", { class: "btn", type: "submit" }, "Send");
  /** The writing style of the answers (a style of the prompt sheet), kept by the conversation. */
  private readonly style = new StylePicker();
  /** The messages waiting at the server behind the running turn, from any tab. */
  private readonly line = new WaitingLine((id) => this.withdraw(id), this.input, "stepwise.tray.waiting.v1");
  private readonly stopButton = h("button", { class: "btn secondary", type: "button", hidden: true, onclick: () => void this.stop() }, "Stop");
  private conversationId: string | null = localStorage.getItem(STORAGE_KEY);
  /** How far back this tab shows a conversation: the first message's index, and how many
   * messages it had when read. */
  private shownBack: { id: string; from: number; count: number } | null = null;
  /** What the "Show earlier messages" button needs of the tray. */
  private readonly pages: EarlierPages = {
    log: this.log,
    shows: (id) => this.conversationId === id,
    render: (messages, from, last, requests) => this.rendered(messages, from, last, requests),
    shownFrom: (id, from) => void (this.shownBack?.id === id && (this.shownBack.from = from)),
  };
  /** This tab streams a turn of its own: its message (if any) and answer on screen. */
  private busy = false;
  private streaming: HTMLElement[] = [];
  /** Answers that failed since this tab last sent (none of it is stored): a read keeps them. */
  private failures: HTMLElement[] = [];
  /** Reads of the conversation begun: one superseded by a later one shows nothing. */
  private reads = 0;
  /** The answer of a turn streamed over the live connection (started elsewhere, or rejoined),
   * and that turn's lease. */
  private remote: AnswerView | null = null;
  private remoteLease = 0;
  /** That turn's message (not an action): its bubble, gone if the turn fails (nothing of it is
   * kept), and, when it is this tab's own (from before a reload), its text to give back then. */
  private remoteMessage: { bubble: HTMLElement; content: string | null } | null = null;
  /** The last turn event this tab has shown (its sequence number): the live connection resumes
   * after it. */
  private seq = 0;
  /** The last event shown of each turn, by lease. A turn's own stream and the live connection
   * are two channels: the next turn's first events may come on one before the last events of the
   * turn before it on the other, so an event is a repeat only against its own turn's. */
  private shown = new Map<number, number>();
  /** The lease of this tab's own streaming turn (from its events' ids). */
  private ownLease = 0;
  /** The id of this tab's message waiting behind another tab's turn (`x-stepwise-waiting`):
   * Stop then stops that message (or its turn, once begun), not the turn it waits for. */
  private waitingId: string | null = null;
  /** Bumped when New or another conversation takes the tray: a turn of this tab's still
   * streaming goes on at the server, off screen. */
  private generation = 0;
  /** The one message sent while this tab's own answer streams: sent when that answer ends. */
  private readonly queued = new QueuedMessage("stepwise.tray.queued.v1");
  /** Turn events the socket brought while this tab's own turn streamed, sorted out when it ends. */
  private stash: LiveEvent[] = [];
  private card: RequestCard | null = null;
  /** The card's turn resumed and streams here (its whole answer is not shown again). */
  private cardStreamed = false;
  /** The card's answer came whole (the socket was down meanwhile): the resumed turn the socket
   * replays once it is back is not shown again, nor is the turn of that lease. */
  private answeredWhole = false;
  private skippedLease = 0;
  /** The answers on screen by their index among the stored messages. */
  private readonly views = new Map<number, AnswerView>();
  private live: LiveConnection | null = null;
  /** Its opening and closing. */
  private readonly drawer = new Drawer(this.root, this.input, `${STORAGE_KEY}.open`);

  constructor(private readonly host: TrayHost, private readonly registry: ChatRegistryJson) {
    const composer = h("form", { class: "tray-composer", onsubmit: (e: Event) => (e.preventDefault(), this.sendInput()) },
      h("label", { for: "assistant-input", class: "visually-hidden" }, "Message to the assistant"), this.input, this.sendButton, this.stopButton);
    this.input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) (e.preventDefault(), this.sendInput());
    });
    this.root.append(
      h("header", { class: "tray-head" }, h("h2", {}, "Assistant"),
        this.style.select,
        h("button", { class: "btn link", type: "button", onclick: () => this.panels.toggleArtifacts() }, "Context"),
        h("button", { class: "btn link", type: "button", onclick: () => this.panels.toggleHistory() }, "History"),
        h("button", { class: "btn link", type: "button", onclick: () => this.newConversation() }, "New"),
        h("button", { class: "btn link", type: "button", "aria-label": "Close the assistant", onclick: () => this.drawer.close() }, "×")),
      this.panels.history, this.panels.artifacts, this.log, this.line.root, composer);
  }

  /** Puts the tray and its toggle in the page, and resumes the last conversation. */
  async mount(header: Element): Promise<void> {
    header.append(this.drawer.toggle);
    document.body.append(this.root);
    this.drawer.restore();
    void this.style.load();
    // A message that waited for an answer when this tab was reloaded was never sent: it goes
    // back into the box.
    keepDraft(this.input, "stepwise.tray.draft.v1");
    giveBack(this.input, this.queued.restored());
    if (this.conversationId) await this.load(this.conversationId);
  }

  private sendInput(): void {
    const text = this.input.value.trim();
    if (!text) return;
    this.input.value = "";
    void this.send(text);
  }

  /** Sends a message with the page's context and streams the answer. */
  async send(message: string): Promise<void> {
    this.drawer.setOpen(true);
    if (this.busy) return this.queue(message);
    this.failures = [];
    const bubble = h("div", { class: "msg user" }, message);
    this.log.append(bubble);
    const writing_style = this.style.toSend();
    const refused = await this.turn("/api/assistant", { conversation_id: this.conversationId ?? undefined, message, context: this.context(), writing_style });
    if (!refused) return;
    // A message the server refused, stopped while it waited, or failed (none of which it kept)
    // leaves the log and is kept in the composer to send again, never lost; the error stays.
    giveBack(this.input, message);
    bubble.remove();
    if (refused === "context_pending" && this.card) this.card.hold();
  }

  /** A message sent while this tab's answer streams waits for it, shown as queued, and is sent
   * when it ends; one at a time (another goes back into the box). */
  private queue(message: string): void {
    if (this.queued.waiting) return (giveBack(this.input, message), this.note("A message already waits for this answer: this one is back in the box."));
    this.queued.hold(message, this.log);
    this.sendButton.disabled = true;
    this.log.scrollTop = this.log.scrollHeight;
  }

  /** Sends the message that waited for the answer that just ended, or (`back`: after a refusal,
   * a failure, a Stop while it waited, or a lost connection) gives it back into the box. */
  private sendQueued(back: boolean): void {
    const next = this.queued.take();
    if (next !== null && back) giveBack(this.input, next);
    else if (next !== null) void this.send(next);
  }

  /** A note in the log (what was not sent, and why). */
  private readonly note = (text: string): void => this.log.append(h("p", { class: "log-note", role: "status" }, text));

  /** New or another conversation takes the tray: this tab's turn still streaming is left to
   * run at the server (Stop and Send are this conversation's), and the message waiting for it
   * goes back into the box. */
  private otherView(): void {
    [this.generation, this.failures] = [this.generation + 1, []];
    this.setBusy(false);
    this.waitingId = null;
    this.line.ownIs(null);
    this.stash = [];
    giveBack(this.input, this.queued.take());
  }

  /** A suggested action: the page runs client actions; server actions are a turn of their own
   * (pressed while this tab's answer streams, it says to wait: nothing is sent). */
  private act(action: SuggestedAction): void {
    if (action.handler === "client") return this.host.clientAction(action.action, action.target ?? undefined);
    if (this.busy) return this.note(`"${action.label}" was not sent: wait for the answer being written, then press it again.`);
    const bubble = h("div", { class: "msg user action" }, action.label);
    this.log.append(bubble);
    const asked = { conversation_id: this.conversationId ?? undefined, action: action.action, target: action.target, label: action.label, context: this.context() };
    // Stopped while it waited: nothing of it ran, and its button is still there to press again.
    void this.turn("/api/assistant/actions", asked).then((refused) => refused === "waiting_stopped" && bubble.remove());
  }

  private readonly context = (): ChatContext => this.host.page().context();

  /** An answer whose chips send and whose buttons act here (`markers`: those it parses). */
  private view(markers: string[] = []): AnswerView {
    return new AnswerView(markers, { send: (v) => void this.send(v), act: (a) => this.act(a), host: this.host, card: (view, p, o, n) => void this.keepCard(view, p, o, n), approvals: (view) => this.decisions(view) });
  }

  /** What an approval card of `view` does: approving streams the run as a turn here (every tab
   * sees it); denying stores the denial. A refusal (decided elsewhere first, expired, edited
   * arguments that do not fit) is thrown for the card to show. */
  private decisions(view: AnswerView): ApprovalActions {
    const path = (a: Approval) => `/api/assistant/conversations/${view.conversation ?? this.conversationId}/approvals/${a.id}`;
    return {
      approve: async (approval, edited) => {
        if (this.busy) throw new Error(WAIT_FOR_ANSWER);
        const label = edited ? "Approved with edits" : "Approved";
        const bubble = h("div", { class: "msg user action" }, `${label}: ${approval.summary}`);
        this.log.append(bubble);
        let ran = false;
        const turn = this.turn(path(approval), { decision: "approve", ...(edited ? { arguments: edited } : {}), context: this.context() }, () => (ran = true));
        const answer = bubble.nextElementSibling; // this turn's answer, shown at once (another tab's may follow it)
        // Refused before it ran: its answer view goes (it said why), the card says why and stays
        // decidable. A failure once it ran is its answer's, kept in the log as every tab shows it.
        const refused = await turn;
        if (refused && !ran) throw (bubble.remove(), answer?.remove(), new Error(approvalRefusal(refused)));
      },
      deny: async (approval, reason) => {
        const { approval: denied } = await api<{ approval: Approval }>("POST", path(approval), { decision: "deny", reason });
        return denied;
      },
    };
  }

  /** Keeps what the owner did with a card; every tab (this one too) hears it back. If it cannot
   * be kept (the network), the card stays as the owner left it here, and says so. */
  private async keepCard(view: AnswerView, payload: number, outcome: CardOutcome, note?: string): Promise<void> {
    // The answer's own conversation: another may be on screen by the time an Accept ends.
    if (view.index === null || !view.conversation) return;
    try {
      await api("POST", `/api/assistant/conversations/${view.conversation}/cards`, { message: view.index, payload, outcome, ...(note ? { note: note.slice(0, 300) } : {}) });
    } catch (error) {
      // Accepted elsewhere first: it shows so here too.
      if ((error as Error).message.endsWith("(card_settled)")) view.cardState(payload, { outcome: "accepted", at: Date.now() });
      else console.warn(`card ${view.index}/${payload} not kept: ${(error as Error).message}`);
    }
  }

  /** An answer shown whole: known by its stored index, for its cards' states. */
  private stored(view: AnswerView): void {
    if (view.index === null) return;
    view.conversation = this.conversationId;
    this.views.set(view.index, view);
  }

  /** A new answer on screen, its markers those of the page in view (`elsewhere`: every page's, for
   * a turn another tab asked, from a page not known here; its end is the server's parse). */
  private answerView(elsewhere = false): AnswerView {
    const context = this.context();
    const markers = elsewhere ? (this.registry.payloads ?? []).flatMap((p) => p.parse_marker ?? []) : resolveChat(this.registry, context.current_page, context.active_tab as string | undefined, context.active_subtab as string | undefined).markers;
    const answer = this.view(markers);
    this.log.append(answer.root);
    return answer;
  }

  /** One turn over SSE (`model_delta`s parsed here with the page's markers). If the stream
   * drops, the answer goes on over the live connection from the last event shown. A turn refused
   * or failed gives the error's code; `ran` is told when the turn has begun (its first event). */
  private async turn(path: string, body: Record<string, unknown>, ran?: () => void): Promise<string | undefined> {
    if (this.busy) return;
    const answer = this.answerView();
    this.streaming = [answer.root.previousElementSibling, answer.root].filter((el): el is HTMLElement => el === answer.root || !!el?.matches(".msg.user"));
    const [generation, had] = [this.generation, this.conversationId];
    this.setBusy(true);
    let ended = false;
    let refused: string | undefined;
    let kept: OwnTurn | null = null;
    try {
      let response: Response;
      try {
        response = await fetchWithChallenge(path, { method: "POST", headers: authHeaders({ "content-type": "application/json", accept: "text/event-stream", "x-stepwise-deltas": "model" }), body: JSON.stringify(body) });
      } catch {
        // Offline, it never left. Online it most likely did not either; if it did, its turn shows
        // over the conversation's live connection like another tab's. The message is the
        // caller's to keep either way.
        ended = true;
        answer.failed(navigator.onLine ? "The connection failed before the server answered; if the message got through, its answer shows here." : "The connection was lost before the server answered: nothing was sent.", "network_error");
        return (refused = "network_error");
      }
      if (!response.ok || !response.body) {
        const json = await response.json().catch(() => null);
        if (json?.error?.code === "conversation_not_found") this.gone();
        ended = true;
        if (json?.error?.code === "context_pending" && this.card) return (answer.root.remove(), (refused = "context_pending"));
        answer.failed(json?.error?.message ?? `The server answered ${response.status}.`, json?.error?.code ?? "http_error");
        return (refused = json?.error?.code ?? "http_error");
      }
      // New or another conversation took the tray meanwhile: the turn goes on at the server, off
      // screen, and leaves the tray alone.
      if (generation !== this.generation) return void response.body.cancel().catch(() => {});
      const id = response.headers.get("x-stepwise-conversation");
      if (id) (this.remember(id), this.watch(id));
      this.waitingId = response.headers.get("x-stepwise-waiting");
      this.line.ownIs(this.waitingId);
      this.setRunning(true);
      let begun = false;
      for await (const message of readSse(response.body)) {
        if (generation !== this.generation) return;
        if (message.id) {
          this.ownLease = this.saw(Number(message.id));
          // Kept for a reload, which follows it over the live connection (a message, not an action).
          if (!begun && this.conversationId && typeof body.message === "string") keepOwnTurn((kept = { conversation: this.conversationId, lease: this.ownLease, content: body.message, first: !had }));
          if (!begun) ran?.();
          begun = true;
        }
        const event = JSON.parse(message.data) as StreamEvent;
        // Stopped while it waited: nothing of it ran, and it goes back to the composer.
        if (event.type === "stopped" && !begun && this.waitingId) {
          ended = true;
          answer.root.remove();
          return (refused = "waiting_stopped");
        }
        if (this.show(answer, event)) {
          ended = true;
          if (event.type !== "error") return;
          // A failed turn (or one that could not begin after waiting) stored nothing: its message is
          // the caller's again, and a conversation it began (or whose first turn failed) is gone.
          if ((!had && id) || event.code === "conversation_not_found") (kept && dropOwnTurn(kept), this.gone(true));
          return (refused = event.code);
        }
        this.log.scrollTop = this.log.scrollHeight;
      }
    } catch {
      // The connection dropped; the turn runs on at the server.
    } finally {
      if (generation === this.generation) this.settle(answer, ended, refused, kept);
    }
  }

  /** This tab's turn in `answer` (`kept` for a reload) ended (`ended`: its last event came;
   * `refused`: the code of a refusal or failure): the tray takes messages again. */
  private settle(answer: AnswerView, ended: boolean, refused: string | undefined, kept: OwnTurn | null): void {
    this.setBusy(false);
    if (ended && kept) dropOwnTurn(kept);
    // A waiting message's stream lost: its turn's news comes over the live connection.
    if (!ended && this.waitingId) this.line.streamLost(this.waitingId);
    this.waitingId = null;
    this.line.ownIs(null);
    if (!ended) this.rejoin(answer);
    // What the socket brought meanwhile that was not this turn's: another tab's turn queued
    // behind it is shown now; one that began before it, unseen here, belongs above it, so the
    // stored conversation is shown again (and the live connection replays what still runs).
    const stashed = this.stash.splice(0);
    const before = stashed.some((event) => leaseOf(event) > 0 && leaseOf(event) < this.ownLease && !this.shown.has(leaseOf(event)));
    let shown: Promise<unknown> = Promise.resolve();
    if (before && this.conversationId) shown = this.load(this.conversationId).then(() => this.live?.resume());
    else for (const event of stashed) if (leaseOf(event) !== this.ownLease) this.onLive(event);
    this.log.scrollTop = this.log.scrollHeight;
    // The message that waited for this answer goes once the log is whole again, and after the
    // caller has dealt with a refusal (a macrotask: the caller resumes in a microtask); after a
    // refusal or a lost connection it goes back into the box, after the refused message.
    const back = refused !== undefined || !ended;
    // (After the tab's earlier kept turns are asked how they ended: not this one, if it goes on.)
    void shown.then(() => setTimeout(() => void this.ownTurnEnded(ended ? null : this.ownLease).finally(() => this.sendQueued(back))));
  }

  /** Shows one event of a turn in `answer`; true when the turn has ended. */
  private show(answer: AnswerView, event: StreamEvent): boolean {
    if (event.type === "complete") {
      // An assistant turn's `complete` carries an assistant answer.
      const payload = event.payload as AssistantResponse;
      answer.complete(payload);
      this.stored(answer);
      if (payload.conversation_id) this.remember(payload.conversation_id);
    } else if (event.type === "context_required") {
      answer.root.remove();
      const waiting = event.payload as unknown as { conversation_id: string; request: ContextRequestJson };
      this.remember(waiting.conversation_id);
      this.showRequest(waiting.conversation_id, waiting.request);
    } else if (!answer.apply(event)) return false;
    if (event.type === "error") this.failures.push(answer.root);
    const ended = ["error", "stopped", "complete", "context_required"].includes(event.type);
    if (ended) this.setRunning(false);
    return ended;
  }

  /** A stream that dropped before its turn ended: the rest comes over the live connection. */
  private rejoin(answer: AnswerView): void {
    if (!this.conversationId || !this.live) return answer.failed("The connection was lost while the answer was streaming.", "connection_lost");
    // Its message, kept for the tab, goes back (and its bubble away) if the turn then fails.
    const [own, bubble] = [ownTurnOf(this.conversationId, this.ownLease), answer.root.previousElementSibling];
    this.remoteMessage = own && bubble instanceof HTMLElement && bubble.matches(".msg.user") ? { bubble, content: own.content } : null;
    [this.remote, this.remoteLease] = [answer, this.ownLease];
    this.live.resume();
  }

  /** Notes turn event `seq` as shown; its turn's lease. */
  private saw(seq: number): number {
    const lease = Math.floor(seq / SEQ_SPAN);
    this.seq = Math.max(this.seq, seq);
    this.shown.set(lease, Math.max(this.shown.get(lease) ?? 0, seq));
    return lease;
  }

  /** Stops the running turn (wherever it was started), or this tab's message while it waits
   * behind another tab's turn (and then its turn). */
  private async stop(): Promise<void> {
    if (!this.conversationId) return;
    // Disabled (then hidden) with the focus, Stop would leave it nowhere: the composer takes it.
    if (document.activeElement === this.stopButton) this.input.focus();
    this.stopButton.disabled = true;
    // Refused when the turn ended meanwhile, or not sent: its end comes as an event either way.
    await api("POST", `/api/assistant/conversations/${this.conversationId}/stop`, this.waitingId ? { waiting: this.waitingId } : {}).catch(() => {});
    this.stopButton.disabled = false;
  }

  /** Takes this tab's message waiting at the server as `id` out of the line: whether it was
   * still there. */
  private async withdraw(id: string): Promise<boolean> {
    return (await api<{ stopped: boolean }>("POST", `/api/assistant/conversations/${this.conversationId}/stop`, { waiting: id, withdraw: true })).stopped;
  }

  private setBusy(busy: boolean): void {
    this.busy = busy;
    // While this tab's answer streams, one message can be sent: it waits for the answer.
    this.sendButton.disabled = busy && this.queued.waiting;
  }

  /** A turn runs (here or elsewhere): Stop shows (hidden with the focus, it gives it to the box). */
  private setRunning(running: boolean): void {
    const hadFocus = !running && document.activeElement === this.stopButton;
    this.stopButton.hidden = !running;
    if (hadFocus) this.input.focus();
  }

  /** Shows a stored conversation: every message, with its tools, cards, chips and actions; a turn
   * still running streams on. */
  private async load(id: string): Promise<void> {
    try {
      // The newest page, or as far back as this tab had paged this conversation (reading it
      // again, after another tab's turn or a catch-up, keeps the earlier pages shown); earlier
      // ones on "Show earlier messages".
      const back = this.shownBack?.id === id ? this.shownBack : null;
      const limit = back ? Math.min(MAX_PAGE_MESSAGES, Math.max(PAGE_MESSAGES, back.count - back.from + PAGE_MESSAGES / 10)) : PAGE_MESSAGES;
      const read = ++this.reads;
      const conversation = await api<AssistantConversation>("GET", `/api/assistant/conversations/${id}?limit=${limit}`);
      if (read !== this.reads) return; // A later read of it shows instead.
      this.shownBack = { id, from: conversation.messages_from, count: conversation.message_count };
      // A message waiting for another conversation's answer is not sent to this one.
      if (id !== this.conversationId) this.otherView();
      this.remember(id);
      replace(this.log);
      this.views.clear();
      const requests = (conversation.context_requests ?? []) as unknown as ContextRequestJson[];
      this.style.show(conversation.writing_style);
      if (conversation.messages_from > 0) this.log.append(earlierButton(this.pages, id, conversation.messages_from, requests));
      this.log.append(...this.rendered(conversation.messages, conversation.messages_from, conversation.message_count - 1, requests));
      const waiting = conversation as unknown as { waiting: string | null; running: boolean; context_requests?: ContextRequestJson[] };
      const request = waiting.context_requests?.find((r) => r.request_id === waiting.waiting && r.status === "open");
      if (request) this.showRequest(id, request);
      // Answers that failed since this tab sent, and its own being written, stay below it.
      this.log.append(...this.failures, ...(this.busy ? this.streaming : []));
      this.queued.showIn(this.log);
      this.seq = 0;
      this.shown.clear();
      this.remote = this.remoteMessage = null;
      // Stop shows once the live connection says a streamed turn runs (`caught_up`).
      this.setRunning(this.busy);
      this.watch(id);
      this.log.scrollTop = this.log.scrollHeight;
    } catch (error) {
      // Gone: a first turn of this tab's that failed while it reloaded left none.
      if ((error as Error).message.endsWith("(conversation_not_found)")) void this.ownTurnEnded(null, true).finally(() => this.forget());
      else this.log.append(h("p", { class: "error", role: "alert" }, (error as Error).message));
    }
  }

  /** The nodes of stored `messages`, the first at index `from`; `last` is the conversation's
   * newest (only it offers its suggestions). */
  private rendered(messages: AssistantConversation["messages"], from: number, last: number, requests: ContextRequestJson[]): HTMLElement[] {
    return messages.flatMap((m, offset) => {
      const i = from + offset;
      if (m.role === "user") {
        const nodes = [h("div", { class: `msg user${m.action ? " action" : ""}` }, m.content)];
        // What an earlier request of this message got (an open one shows as its card).
        const asked = requests.find((r) => r.request_id === m.request_id && r.status !== "open");
        if (asked) nodes.push(h("p", { class: "muted request-note" }, requestSummary(asked)));
        return nodes;
      }
      const view = this.view();
      for (const use of m.tool_history ?? []) (view.toolStart(use.tool_name), view.toolComplete(use.tool_name));
      view.complete({ message: m.content, payloads: m.payloads, tool_history: m.tool_history ?? [], suggested_values: i === last ? m.suggested_values ?? [] : [], suggested_actions: i === last ? m.suggested_actions ?? [] : [], message_index: i, approval: m.approval }, (m.cards ?? {}) as CardStates);
      this.stored(view);
      if (m.status === "stopped" || m.status === "interrupted") view.cutShort(m.status);
      return [view.root];
    });
  }

  /** A request card for the waiting turn. */
  private showRequest(id: string, request: ContextRequestJson): void {
    this.card?.root.remove();
    this.cardStreamed = false;
    this.answeredWhole = false;
    this.card = new RequestCard(id, request, (answer) => this.showAnswer(answer));
    this.log.append(this.card.root);
    this.log.scrollTop = this.log.scrollHeight;
    this.watch(id);
  }

  private showAnswer(answer: Parameters<AnswerView["complete"]>[0]): void {
    if (!this.card) return;
    this.card = null;
    if (this.cardStreamed) return void (this.cardStreamed = false);
    this.answeredWhole = true;
    const view = this.view();
    view.complete(answer);
    this.stored(view);
    this.log.append(view.root);
    this.log.scrollTop = this.log.scrollHeight;
  }

  /** Keeps the conversation's live connection open (one per conversation shown). */
  private watch(id: string): void {
    if (this.live?.id === id) return;
    this.live?.close();
    this.forgetTurns();
    this.live = new LiveConnection(id, () => this.seq, (event) => this.onLive(event));
    this.live.onRefused = () => void this.ownTurnEnded(null, true); // A failed first turn left none.
  }

  /** Forgets the turns of the conversation shown (sequence numbers are a conversation's own). */
  private forgetTurns(): void {
    this.line.clear();
    [this.seq, this.skippedLease, this.ownLease, this.answeredWhole, this.stash] = [0, 0, 0, false, []];
    this.shown.clear();
  }

  /** An event of the conversation's live connection. */
  private onLive(event: LiveEvent): void {
    const ofTurn = event.type === "conversation:turn_started" || event.type === "conversation:turn_event";
    // While this tab's own turn streams, the socket's turn events wait: they are its own (shown
    // by its stream), or another tab's turn queued behind it. (A turn still running elsewhere
    // while this tab's message waits, `remote`, is shown at once.)
    if (ofTurn && this.busy && !this.remote) return void this.stash.push(event);
    if (ofTurn && leaseOf(event) === this.skippedLease) return void (event.seq && this.saw(event.seq));
    if (event.type === "conversation:turn_started" && !event.message && this.answeredWhole) {
      // The resumed turn whose answer the card showed whole, replayed after a reconnection.
      this.answeredWhole = false;
      this.skippedLease = leaseOf(event);
      return;
    }
    if (event.type === "conversation:turn_started") {
      this.setRunning(true);
      if (this.remote && leaseOf(event) === this.remoteLease) return;
      if (this.remote && this.conversationId) {
        // The turn being shown ended unseen and the next began: the stored conversation has the
        // first, and the live connection replays the second from its start.
        this.remote = this.remoteMessage = null;
        return void this.load(this.conversationId).then(() => this.live?.resume());
      }
      this.remoteLease = leaseOf(event);
      // A waiting turn resuming (a supply here or elsewhere, a force, the wait running out)
      // streams here as it is written: its whole answer is not shown again when it comes.
      if (this.card) this.cardStreamed = true;
      const message = event.message;
      const bubble = message && this.log.appendChild(h("div", { class: `msg user${message.action ? " action" : ""}` }, message.content));
      // This tab's own message, when it waited (or this tab read it before a reload).
      const own = (event.waiting_id && message ? this.line.began(event.waiting_id, message.content) : null) ?? ownTurnOf(this.conversationId, leaseOf(event));
      this.remoteMessage = bubble && !message.action ? { bubble, content: own?.content ?? null } : null;
      this.remote = this.answerView(true);
    } else if (event.type === "conversation:turn_event" && event.event && event.seq) {
      const lease = leaseOf(event);
      if (event.seq <= (this.shown.get(lease) ?? 0)) return;
      // A late event of an earlier turn not on screen: that turn is in the stored conversation.
      if (lease < Math.floor(this.seq / SEQ_SPAN) && !(this.remote && lease === this.remoteLease)) return;
      this.saw(event.seq);
      if (!this.remote) (this.remote = this.answerView(true)), (this.remoteLease = leaseOf(event));
      if (this.show(this.remote, event.event as unknown as StreamEvent)) {
        // A message whose turn failed leaves the log (nothing of it was kept): this tab's own comes
        // back, and if it began the conversation, that conversation does not exist.
        const [failed, message, own] = [event.event.type === "error", this.remoteMessage, ownTurnOf(this.conversationId, lease)];
        if (failed && message) (message.bubble.remove(), message.content !== null && giveBack(this.input, message.content));
        if (own) (dropOwnTurn(own), failed && own.first && this.gone(true));
        this.remote = this.remoteMessage = null;
      }
      this.log.scrollTop = this.log.scrollHeight;
    } else if (event.type === "conversation:waiting") this.line.show(event.messages);
    else if (event.type === "conversation:not_begun" && event.waiting_id) {
      const { message, content } = event as { message?: unknown; content?: unknown };
      this.line.notBegun(event.waiting_id, String(message ?? ""), String(content ?? ""));
    }
    else if (event.type === "conversation:caught_up") {
      // The replay after a reconnection is over: a later resumed turn is shown.
      this.answeredWhole = false;
      this.setRunning(Boolean(event.running) || this.busy);
      // A turn that ended while this tab was away (the one it showed, or any while its socket was
      // down) is in the stored conversation; its own kept turn, unless it runs, is asked whether it failed.
      const shown = !event.running && (this.remote || (event.reconnected && !this.busy)) && this.conversationId ? ((this.remote = this.remoteMessage = null), this.load(this.conversationId)) : null;
      const running = event.running ? (this.remote ? this.remoteLease : Math.floor(this.seq / SEQ_SPAN)) : null;
      void (shown ?? Promise.resolve()).then(() => this.ownTurnEnded(running));
    } else if (event.type === "conversation:card") {
      const { message, payload, state } = event as unknown as { message: number; payload: number; state: CardState };
      this.views.get(message)?.cardState(payload, state);
    } else if (event.type === "conversation:approval") {
      const { message, approval } = event as unknown as { message: number; approval: Approval };
      this.views.get(message)?.approvalState(approval);
      // An approved call changed the owner's data: the page shows it.
      if (approval.result && !approval.result.is_error) void this.host.page().dataChanged?.(approval.tool, (approval.edited_arguments ?? approval.arguments) as Record<string, unknown>);
    } else if (event.type === "conversation:context_reminder") this.card?.remind();
    else if (event.type === "conversation:context_update" && event.request) this.card?.update(event.request);
    else if (event.type === "conversation:context_resolved" && event.request) this.card?.update(event.request);
    else if (event.type === "conversation:message" && event.message?.role === "assistant" && this.card) {
      // A deferred turn answered elsewhere (the SLA's fallback, another tab's supply), whole.
      const m = event.message as unknown as AssistantConversation["messages"][number];
      const index = (event as unknown as { index?: number }).index;
      this.showAnswer({ message: m.content, payloads: m.payloads ?? [], tool_history: m.tool_history ?? [], suggested_values: m.suggested_values ?? [], suggested_actions: m.suggested_actions ?? [], message_index: index, approval: m.approval });
    }
  }

  /** This tab's kept turns (but the one `running`) ended unseen, oldest first: each failed one's
   * message goes back into the box and its error shows (if its conversation still does); once
   * one was answered, the stored conversation is shown again. */
  private async ownTurnEnded(running: number | null, firstOnly = false): Promise<void> {
    const [id, generation] = [this.conversationId, this.generation];
    let answered = false;
    if (!id) return;
    for (let left = KEPT; left > 0 && !this.busy; left--) {
      const ended = await ownTurnOutcome(id, running, firstOnly);
      if (!ended) break;
      if (ended.error) giveBack(this.input, ended.turn.content);
      if (id !== this.conversationId || generation !== this.generation || this.busy) return;
      answered ||= !ended.error;
      if (!ended.error) continue;
      const view = this.answerView();
      this.remoteMessage?.bubble.before(view.root); // Above a later turn shown meanwhile.
      this.show(view, ended.error);
      if (ended.turn.first) return this.forget(true); // It left no conversation.
    }
    if (answered && id === this.conversationId && generation === this.generation && !this.busy) void this.load(id).then(() => this.live?.resume());
  }

  /** Shows conversation `id` from History: the one on screen is drawn anew, its running turn
   * replayed by the live connection (this tab's own answer is then followed as any other). */
  private async reopen(id: string): Promise<void> {
    if (id !== this.conversationId) return this.load(id);
    this.otherView();
    await this.load(id);
    this.live?.resume();
  }

  private newConversation(): void {
    // A message waiting for the old conversation's answer is not sent to the new one.
    this.otherView();
    this.forget(true);
    [this.card, this.remote, this.remoteMessage] = [null, null, null];
    this.setRunning(false);
    replace(this.log);
    this.views.clear();
    this.style.show(null);
    this.panels.history.hidden = true;
    this.input.focus();
  }

  private remember(id: string): void {
    this.conversationId = id;
    localStorage.setItem(STORAGE_KEY, id);
  }

  /** The conversation is gone (its first turn failed): this tab's messages kept for it come back
   * into the box, and it is forgotten. */
  private gone(unwatch = false): void {
    if (this.conversationId) for (const turn of ownTurnsGone(this.conversationId)) giveBack(this.input, turn.content);
    this.forget(unwatch);
  }

  /** Forgets the conversation (`unwatch`: its live connection, turns and waiting line too). */
  private forget(unwatch = false): void {
    this.conversationId = null;
    localStorage.removeItem(STORAGE_KEY);
    if (unwatch) (this.live?.close(), (this.live = null), this.forgetTurns());
  }
}

