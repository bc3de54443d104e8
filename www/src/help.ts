//! The Help page (`#help`): ask the help desk a question; when the best article has clarifying
//! questions they come one at a time ("Question 2 of 3") and the answer uses them. "Talk to a
//! person" is offered with every answer (and stands out when the answer recommends a person);
//! pressing it, typing a request for a person, or saying yes to the desk's offer hands the session
//! over: the handoff footer after the reply and a banner, and the user can keep asking. The
//! session id is kept in this browser, so a reload resumes at the same question. A turn runs on
//! the server whatever happens to the page: its events stream in (what the desk is doing, then
//! the answer), a broken connection or a reload joins it again, and Stop gives it up. The newest
//! message is kept in view. The operators' view (`#help/operator`, admin token) lists escalated
//! sessions and resolves them.

import type { ChatContext } from "../../crates/wasm/pkg/stepwise.js";
import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { SEQ_SPAN } from "./assistant/live.js";
import { HelpTabs, joinTurn, sessionHeld } from "./help-tabs.js";
import { joinPatiently, NOT_REACHED, REJOIN_DELAYS_MS } from "./rejoin.js";
import { authHeaders } from "./owner.js";
import type { Page } from "./page.js";
import { readSse } from "./sse.js";
import { fetchWithChallenge } from "./turnstile.js";
import { QueuedMessage, giveBack, keepDraft } from "./queued.js";
import { WaitingLine } from "./waiting-line.js";
import { tabId } from "./tab.js";

/** An answer's text with its articles' `**bold**` spans as `<strong>` (built as nodes, never as
 * HTML, so nothing in an answer can inject markup); other text is kept as it is. */
export function withBold(text: string): (string | HTMLElement)[] {
  return text.split(/\*\*([^*\n]+)\*\*/).map((part, i) => (i % 2 ? h("strong", {}, part) : part));
}

const SESSION_KEY = "stepwise.help.session";
const UNANSWERED_FIRST = "The question was not answered while the page reloaded (it was stopped, or failed); nothing of it was kept.";
/** The turn being answered (`{session_id, message}`), for a reload to join. */
const RUNNING_KEY = "stepwise.help.running.v1";
/** Messages of the help conversation the assistant tray sees (the newest). */
const HELP_CONTEXT_MESSAGES = 6;

interface Question { number: number; total: number; text: string }
interface DocRef { id: string; title: string }
interface HelpMessage { role: "user" | "desk"; text: string; question?: Question; footer?: string; doc?: DocRef }
/** The question a tab waits for, kept for its reload (`RUNNING_KEY`): its session, its text,
 * its turn's number once known, whether it waited behind another, the tab, and where it stood
 * in the log. */
interface KeptQuestion { session_id?: string; message?: string; turn?: number; waited?: boolean; tab?: string; at?: number }

/** The kept question (a corrupt entry is none). */
function keptQuestion(): KeptQuestion | null {
  try {
    return JSON.parse(localStorage.getItem(RUNNING_KEY) ?? "null");
  } catch {
    return null;
  }
}

export interface Session {
  id: string;
  status: "open" | "escalated" | "resolved";
  dialog_state: string | null;
  messages: HelpMessage[];
  handoff_offered: boolean;
  escalation: { at: number; reason: string; resolved_at: number | null; query?: string | null; answers?: Record<string, string> } | null;
  state: { original_query: string | null; clarification_context: { questions: string[]; answers: Record<string, string> } | null };
}
interface TurnAnswer {
  session_id: string;
  reply: string;
  footer: string | null;
  question: Question | null;
  dialog_state: string;
  status: Session["status"];
  no_answer: boolean;
  handoff_offered: boolean;
  doc: DocRef | null;
}

/** How a turn the page followed ended without an answer. */
class Unanswered extends Error {
  /** `away`: the turn ended while the page was not reading it; `session` holds how. */
  constructor(message: string, readonly why: "stopped" | "away" | "lost" | "failed", readonly session = "") {
    super(message);
  }
}

/** The help desk chat. */
export class HelpView implements Page {
  private readonly log = h("div", { class: "log help-log", role: "log", "aria-live": "polite", "aria-label": "Help conversation" });
  private readonly progress = h("p", { class: "help-progress", "aria-live": "polite" });
  private readonly banner = h("div", { class: "help-banner", role: "status", hidden: true });
  private readonly notice = h("p", { class: "error", role: "alert", hidden: true });
  private readonly input = h("textarea", { id: "help-input", rows: 3, maxlength: 2000, placeholder: "Ask a question about Stepwise…" });
  private readonly send = h("button", { class: "btn", type: "submit" }, "Ask");
  private readonly stopButton = h("button", { class: "btn secondary", type: "button", hidden: true, "data-action": "stop", onclick: () => void this.stop() }, "Stop");
  private readonly composer = h(
    "form",
    { class: "composer help-composer", onsubmit: (e: Event) => (e.preventDefault(), void this.ask()) },
    h("label", { for: "help-input", class: "visually-hidden" }, "Your question"),
    this.input,
    this.send,
    this.stopButton,
  );
  private readonly handoff = h("button", { class: "btn secondary", type: "button", hidden: true, onclick: () => void this.askForPerson() }, "Talk to a person");
  private readonly actions = h("div", { class: "actions" }, this.handoff, h("button", { class: "btn link", type: "button", onclick: () => this.startOver() }, "New question"));
  private sessionId: string | null = localStorage.getItem(SESSION_KEY);
  /** The session of a first question another tab asks, followed here before it is this
   * browser's (it is saved once answered; dropped if it is not). */
  private following: string | null = null;
  private status: Session["status"] = "open";
  private busy = false;
  /** The session of the turn being answered (a first turn's is the page's only once it
   * answers), and a count of New questions (a turn begun before one is not shown). */
  private turnSession: string | null = null;
  /** The turn being answered was asked here (not in another tab). */
  private ownTurn = false;
  /** A question typed while an answer is written: shown as queued, asked when it ends. */
  private readonly queued = new QueuedMessage("stepwise.help.queued.v1");
  /** The question of the turn being answered, as shown (taken back if nothing of it is kept). */
  private asked: { line: HTMLElement; message: HelpMessage } | null = null;
  /** Questions shown as begun on this page (a reading of the session begun before one is not
   * shown over it). */
  private turnsBegun = 0;
  /** The session changed elsewhere while this page answered: it is read again afterwards. */
  private stale = false;
  /** Another tab changed the session while this page answered (read when it ends). */
  private storageMissed = false;
  /** The id the server gave this page's question while it waited behind another turn (a Stop
   * names it). */
  private waitingId: string | null = null;
  /** The notice of a read of the session that failed. */
  private unread = "";
  /** The questions waiting at the server behind the running turn, from any tab. */
  private readonly line = new WaitingLine(async (id) => (await api<{ stopped: boolean }>("POST", `/api/help/sessions/${this.sessionId}/stop`, { waiting: id, withdraw: true })).stopped, this.input, "stepwise.help.waiting.v1");
  private generation = 0;
  /** The clarifying question waiting for an answer, and the messages shown (for the tray). */
  private question: Question | null = null;
  private readonly shown: HelpMessage[] = [];
  /** The session's WebSocket: what other tabs ask, answer and change shows here too. */
  private tabs: HelpTabs | null = null;
  /** Another tab started or left a session: this page shows it too, unless it is answering. */
  private readonly onStorage = (event: StorageEvent): void => {
    if (event.key !== SESSION_KEY || (event.newValue === this.sessionId && !this.following)) return;
    if (this.busy) this.storageMissed = true;
    else this.followStorage();
  };

  /** What the assistant tray sees: the Help page and where the session stands. */
  context(): ChatContext {
    const recent = this.shown.slice(-HELP_CONTEXT_MESSAGES).map((m) => ({ role: m.role, text: m.text.slice(0, 400), ...(m.doc ? { article: m.doc.title } : {}) }));
    return {
      current_page: "help",
      results: { messages: this.shown.length },
      help: { status: this.status, ...(this.question ? { question: `${this.question.text} (${this.question.number} of ${this.question.total})` } : {}), recent },
    };
  }

  /** Shows the page, resuming the session this browser had. */
  async mount(app: HTMLElement): Promise<void> {
    replace(
      app,
      h(
        "section",
        { class: "panel help", "aria-label": "Help" },
        h("h2", {}, "Help"),
        h("p", { class: "muted" }, "Ask about the guided chat, your streams, research jobs, sharing or the assistant. Answers come from the help articles; a person can take over at any time."),
        this.banner,
        this.log,
        this.progress,
        this.notice,
        this.line.root,
        this.composer,
        this.actions,
      ),
    );
    this.input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) (e.preventDefault(), void this.ask());
    });
    window.addEventListener("storage", this.onStorage);
    // A question that waited when this tab was reloaded was never sent: it goes back into the box.
    keepDraft(this.input, "stepwise.help.draft.v1");
    giveBack(this.input, this.queued.restored());
    // The question this tab waited for shows as being answered before the session is read: one
    // typed meanwhile waits for it.
    const held = this.holdRejoin();
    if (this.sessionId) await this.resume(this.sessionId);
    this.watch(this.sessionId);
    await this.rejoin(held);
  }

  /** After a turn, or a send that failed: a question that waited is asked (or, `back`: the turn
   * was not answered, or its connection lost, given back); once none is asked, what changed
   * elsewhere meanwhile shows. */
  private settle(back: boolean): void {
    // (Nor is it asked in a session another tab has left this browser meanwhile.)
    this.askQueued(back || this.storageMissed);
    if (this.busy) return; // The waiting question is being asked: its end settles again.
    if (this.storageMissed) this.followStorage();
    else if (this.stale && this.sessionId) (this.stale = false), void this.reread(this.sessionId);
  }

  /** Shows the session another tab left this browser on (none: a New question there). */
  private followStorage(): void {
    this.storageMissed = false;
    this.stale = false;
    const id = localStorage.getItem(SESSION_KEY);
    if (id === this.sessionId && !this.following) return;
    if (id) void this.reread(id);
    else this.clear();
  }

  /** Leaves the page: the session's socket closes (a turn being answered goes on server-side). */
  unmount(): void {
    window.removeEventListener("storage", this.onStorage);
    this.watch(null);
    // A question still queued is not asked from a page no longer shown: the next Help page
    // puts it back into its box (it is kept for this tab until then).
    this.queued.leave();
  }

  /** Keeps the WebSocket of session `id` (none for `null`) open. */
  private watch(id: string | null): void {
    if (this.tabs?.id === id) return;
    this.tabs?.close();
    this.line.clear();
    this.tabs = id ? new HelpTabs(id, { started: (message, after, waiting) => this.followOther(message, after, waiting), changed: () => this.refresh(), waiting: (messages) => this.line.show(messages), notBegun: (id, why, content) => this.line.notBegun(id, why, content) }) : null;
  }

  /** Another tab asked `message`: its answer streams here too (joined after event `after`), and
   * Stop works from here. A question this tab asked that waited (`waiting`) before a reload is
   * followed as its own: if it is not answered, it goes back into the box here. While this page
   * answers a turn itself, only this tab's own is followed, out of sight. */
  private async followOther(message: string, after: number, waiting: string | null): Promise<void> {
    const own = waiting ? this.line.began(waiting, message) !== null : false;
    const session = this.sessionId;
    if (!session) return;
    const joined = this.busy ? null : await joinTurn(session, String(after));
    if (this.busy || session !== this.sessionId) {
      if (joined && joined !== "ended") void joined.cancel().catch(() => {});
      if (own && session === this.sessionId) void this.followUnseen(session, after, message).catch(() => {});
      return;
    }
    if (joined === "ended") return this.reread(session);
    if (!joined) return;
    this.setBusy(true);
    this.showAsked(message);
    await this.answerTurn(joined, session, message, this.generation, own);
    // A followed first question not answered leaves no session for this browser.
    if (this.following === session) (this.following = null), this.sessionId === session && this.clear();
  }

  /** This tab's own question (it waited before a reload) whose turn began while the page was
   * busy with another question: followed out of sight (its answer shows when the session is read
   * again); if it is not answered, it goes back into the box, with why. */
  private async followUnseen(session: string, after: number, message: string): Promise<void> {
    const joined = await joinTurn(session, String(after));
    if (!joined || joined === "ended") return;
    for await (const sse of readSse(joined)) {
      const event = JSON.parse(sse.data);
      if (event.type === "complete") return;
      if (event.type !== "error" && event.type !== "stopped") continue;
      if (session !== this.sessionId) return;
      giveBack(this.input, message);
      this.notice.textContent = event.type === "error" ? `${event.message} (${event.code})` : "Stopped: nothing of the answer was kept.";
      return void (this.notice.hidden = false);
    }
  }

  /** The session changed elsewhere: it is read again, unless this page is answering a turn. */
  private async refresh(): Promise<void> {
    if (this.busy) this.stale = true;
    else if (this.sessionId) await this.reread(this.sessionId);
  }

  /** Shows session `id` as the server has it, unless a turn began on the page meanwhile (the
   * turn's end reads it again). */
  private async resume(id: string): Promise<void> {
    const turns = this.turnsBegun;
    try {
      const session = await api<Session>("GET", `/api/help/sessions/${id}`);
      // A turn began meanwhile: its end reads the session again (or, ended already, this does).
      if (turns !== this.turnsBegun) return this.busy ? void (this.stale = true) : this.reread(id);
      this.render(session);
    } catch (error) {
      // Only a session that is gone is forgotten; a lost connection keeps it for the next try.
      if ((error as Error).message.includes("(help_session_not_found)")) this.startOver();
      else {
        // Read again once a turn ends; the notice goes when a read shows the session.
        this.notice.textContent = this.unread = `${(error as Error).message} Reload to try again.`;
        [this.notice.hidden, this.stale] = [false, true];
      }
    }
  }

  /** Shows `session` whole, in place of what the log showed. */
  private render(session: Session): void {
    if (this.notice.textContent === this.unread) this.notice.hidden = true;
    this.log.replaceChildren();
    this.shown.length = 0;
    for (const message of session.messages) this.append(message);
    const last = [...session.messages].reverse().find((m) => m.role === "desk");
    this.showQuestion(session.dialog_state === "NEEDS_CLARIFICATION" ? last?.question ?? null : null);
    this.setStatus(session.status, session.handoff_offered);
    this.reveal(this.log.lastElementChild);
  }

  /** Shows the question of a turn that begins. */
  private showAsked(text: string): void {
    const message: HelpMessage = { role: "user", text };
    this.turnsBegun++;
    this.asked = { line: this.append(message), message };
    this.reveal(this.asked.line);
  }

  /** Adds a message to the log and answers its first element. */
  private append(message: HelpMessage): HTMLElement {
    this.shown.push(message);
    if (message.role === "user") {
      const line = h("div", { class: "msg user" }, message.text);
      this.log.append(line);
      return line;
    }
    const bubble = h("div", { class: "msg assistant" });
    if (message.question) bubble.append(h("span", { class: "badge" }, `Question ${message.question.number} of ${message.question.total}`), " ");
    bubble.append(...withBold(message.question?.text ?? message.text));
    if (message.doc) bubble.append(h("p", { class: "muted source" }, `From the article “${message.doc.title}”`));
    this.log.append(bubble);
    // The handoff footer comes after the AI text, as its own line.
    if (message.footer) this.log.append(h("div", { class: "handoff-footer", role: "status" }, message.footer));
    return bubble;
  }

  /**
   * Keeps the newest message in view: the log scrolls to its end, or to the start of `newest`
   * when what follows from there is taller than the log (a long answer is read from its top);
   * then the page scrolls as little as it must to show the question box and the buttons under it.
   */
  private reveal(newest: Element | null): void {
    if (!newest) return;
    const log = this.log;
    // A little of what came before stays above a long answer's start.
    const start = Math.max(0, newest.getBoundingClientRect().top - log.getBoundingClientRect().top + log.scrollTop - 8);
    log.scrollTop = log.scrollHeight - start > log.clientHeight ? start : log.scrollHeight;
    this.actions.scrollIntoView({ block: "nearest" });
  }

  private showQuestion(question: Question | null): void {
    this.question = question;
    this.progress.textContent = question ? `Question ${question.number} of ${question.total}: answer it to go on.` : "";
    this.input.placeholder = question ? "Your answer…" : "Ask a question about Stepwise…";
  }

  /** Shows where the session stands. "Talk to a person" is offered with every answer while no
   * person has the session, as the main button when the answer recommends one. */
  private setStatus(status: Session["status"], handoffOffered: boolean): void {
    this.status = status;
    const closed = status === "resolved";
    this.banner.hidden = status === "open";
    this.banner.textContent = status === "escalated" ? "Escalated: a person has this conversation and will reply here. You can keep asking meanwhile." : "This session is closed. Start a new question.";
    this.banner.className = `help-banner ${status}`;
    this.input.disabled = closed;
    this.send.disabled = closed || (this.busy && this.queued.waiting);
    this.handoff.hidden = status !== "open" || !this.log.querySelector(".msg.assistant");
    this.handoff.className = handoffOffered ? "btn" : "btn secondary";
  }

  /** Asks what the box holds (or `queued`, a question that waited): while an answer is being
   * written, the question waits for it. */
  private async ask(queued?: string): Promise<void> {
    const message = queued ?? this.input.value;
    if (!message.trim() || this.status === "resolved") return;
    if (this.busy) return this.queue(message);
    this.setBusy(true);
    this.notice.hidden = true;
    this.showAsked(message);
    if (queued === undefined) this.input.value = "";
    const generation = this.generation;
    const body = this.sessionId ? { session_id: this.sessionId, message } : { message };
    const headers = authHeaders({ "content-type": "application/json", accept: "text/event-stream" });
    const response = await fetchWithChallenge("/api/help", { method: "POST", headers, body: JSON.stringify(body) }).catch(() => null);
    if (generation !== this.generation) return;
    if (!response?.ok || !response.body) {
      const json = await response?.json().catch(() => null);
      const why = !response ? "The connection was lost before the server answered." : json?.error ? `${json.error.message} (${json.error.code})` : `The server answered ${response.status}.`;
      await this.unanswered(new Unanswered(why, "failed"), message);
      this.setBusy(false);
      this.settle(true);
    } else {
      // A first turn's session becomes the page's only when it answers (a stopped or failed
      // one is erased).
      await this.answerTurn(response.body, response.headers.get("x-stepwise-session") ?? this.sessionId, message, generation);
    }
    this.input.focus();
  }

  /** A question typed while an answer is written waits, shown as queued, and is asked as soon as
   * the answer ends; one at a time. */
  private queue(message: string): void {
    if (this.queued.waiting) {
      this.notice.textContent = "A question is already waiting for this answer.";
      this.notice.hidden = false;
      return;
    }
    this.reveal(this.queued.hold(message, this.log));
    this.input.value = "";
    this.setBusy(true);
  }

  /** Asks the question that waited for the answer that just ended; when that turn was not
   * answered (failed, stopped, or its connection lost while it goes on at the server) it goes
   * back into the box instead. */
  private askQueued(back: boolean): void {
    const next = this.queued.take();
    if (next === null) return;
    if (back) giveBack(this.input, next);
    else void this.ask(next);
  }

  /** Follows the turn of `session` (asked `message`) to its end, kept meanwhile for a reload to
   * join, as the server runs it whatever happens to this page: its answer shown (a first turn's
   * session then the page's), or why there is none. A turn begun before a New question shows
   * nothing. */
  private async answerTurn(body: ReadableStream<Uint8Array>, session: string | null, message: string, generation: number, own = true): Promise<void> {
    this.turnSession = session;
    this.ownTurn = own;
    this.waitingId = null;
    // `at`: where its question stands in the log, so a reload whose read of the session already
    // holds it (the turn ended meanwhile) does not show it again.
    const at = this.asked ? this.shown.indexOf(this.asked.message) : this.shown.length;
    const running = { session_id: session, message, turn: 0, waited: false, at };
    // Only this tab's own question is kept for its reload (another tab's is that tab's record).
    const keep = () => session && own && localStorage.setItem(RUNNING_KEY, JSON.stringify({ ...running, tab: tabId() }));
    keep();
    let lost = false;
    let unanswered = false;
    try {
      const answer = await this.follow(body, session, running, keep);
      if (generation !== this.generation) return;
      this.adopt(answer.session_id);
      this.showAnswer(answer);
    } catch (error) {
      lost = error instanceof Unanswered && error.why === "lost";
      unanswered = true;
      // Another tab's question goes back into that tab's box, not this one's.
      if (generation === this.generation) await this.unanswered(error as Error, own ? message : "");
    } finally {
      if (generation === this.generation) {
        if (!lost && own) localStorage.removeItem(RUNNING_KEY);
        this.turnSession = null;
        // A waiting question's stream lost: its turn's news comes over the live connection.
        if (lost && this.waitingId) this.line.streamLost(this.waitingId);
        this.waitingId = null;
        this.line.ownIs(null);
        this.asked = null;
        this.setBusy(false);
        // A question that waited for a turn that failed or was stopped goes back into the box
        // too (after the one that was not answered), and the notice saying why stays.
        this.settle(unanswered);
      }
    }
  }

  /** Follows a turn's events until its answer; a broken connection joins the turn (of
   * `session`) again after the last event read. `running` (what a reload joins) learns the
   * turn's number, or that it waited behind another turn, and `keep` stores it. */
  private async follow(body: ReadableStream<Uint8Array>, session: string | null, running: { turn: number; waited: boolean }, keep: () => void): Promise<TurnAnswer> {
    let lastId: string | undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        for await (const message of readSse(body)) {
          if (message.id && !lastId) (running.turn = Math.floor(Number(message.id) / SEQ_SPAN)), keep();
          if (message.id) lastId = message.id;
          const event = JSON.parse(message.data);
          // A question that waits behind another turn: a Stop names it by this id.
          if (event.type === "status" && typeof event.waiting === "string") (this.waitingId = event.waiting), this.line.ownIs(event.waiting), (running.waited = true), keep();
          if (event.type === "status") this.progress.textContent = event.message;
          else if (event.type === "complete") return event.payload as TurnAnswer;
          else if (event.type === "error") throw new Unanswered(`${event.message} (${event.code})`, "failed");
          else if (event.type === "stopped") throw new Unanswered("Stopped: nothing of the answer was kept.", "stopped");
        }
      } catch (error) {
        if (error instanceof Unanswered) throw error;
      }
      // A question still waiting has no turn to join yet: the desk answers it all the same.
      if (attempt >= REJOIN_DELAYS_MS.length || !session || (running.waited && !lastId)) {
        throw new Unanswered("The connection was lost while the desk was answering. The answer goes on on the server: reload the page to see it.", "lost");
      }
      await new Promise((resolve) => setTimeout(resolve, REJOIN_DELAYS_MS[attempt]));
      const joined = await joinTurn(session, lastId);
      if (joined === "ended") throw new Unanswered("The answer ended while the page was away.", "away", session);
      body = joined ?? new ReadableStream({ start: (c) => c.close() });
    }
  }

  /** After a reload, this tab's own question still to be joined shows as being answered at once,
   * before its session is read: one typed meanwhile waits for it, Stop stops it, and a reload
   * meanwhile joins it again. */
  private holdRejoin(): KeptQuestion | null {
    const running = keptQuestion();
    if (!running || (running.tab && running.tab !== tabId()) || !this.ownToJoin(running)) return null;
    [this.turnSession, this.ownTurn] = [running.session_id, true];
    this.setBusy(true);
    this.showAsked(running.message);
    return running;
  }

  /** Whether `running` is a question of this page's session (or the first of a new one) whose
   * turn can be joined (one still waiting is read from the session once answered). */
  private ownToJoin(running: KeptQuestion): running is KeptQuestion & { session_id: string; message: string } {
    const session = running.session_id;
    return !!session && (!this.sessionId || session === this.sessionId) && typeof running.message === "string" && !(!Number(running.turn) && running.waited);
  }

  /** After a reload, joins the turn this page was waiting for (`held`: shown as being answered
   * already), if the server still runs it. */
  private async rejoin(held: KeptQuestion | null): Promise<void> {
    const running = held ?? keptQuestion();
    // Another tab's turn (this one opened while it runs) is that tab's to join after a reload:
    // the session's live connection shows it here (a first question's too: its session is not
    // this browser's until answered, but it is followed here meanwhile).
    if (running?.tab && running.tab !== tabId()) {
      if (running.session_id && !this.sessionId) (this.sessionId = this.following = running.session_id), this.watch(running.session_id);
      return;
    }
    localStorage.removeItem(RUNNING_KEY);
    // A turn of this page's session, or the first turn of a new one; one still waiting is read
    // from the session once answered.
    if (!running?.session_id || (this.sessionId && running.session_id !== this.sessionId) || typeof running.message !== "string") return;
    const [session, message] = [running.session_id, running.message];
    if (!this.ownToJoin(running)) return this.reread(session);
    // Answered before the session was read: the log shows it already (a question typed while
    // it was held is asked now).
    if (this.sessionId === session && this.holdsAsked(message, Number(running.at))) {
      if (held) (this.withdrawAsked(), (this.turnSession = null), this.setBusy(false), this.settle(false));
      return;
    }
    // Its own turn (not another question's that runs now), joined from its first event; held, it
    // is shown again below the session just read.
    const turn = Number(running.turn) || 0;
    if (!held) {
      [this.turnSession, this.ownTurn] = [session, true];
      this.setBusy(true);
      this.showAsked(message);
    } else if (this.asked && !this.asked.line.isConnected) {
      this.log.append(this.asked.line);
      this.shown.push(this.asked.message);
      this.queued.showIn(this.log);
    }
    localStorage.setItem(RUNNING_KEY, JSON.stringify({ ...running, tab: tabId() }));
    const generation = this.generation;
    // The server not reached, the page goes on trying (the question shown as being answered).
    const notReached = () => ((this.notice.textContent = NOT_REACHED), (this.notice.hidden = false));
    const joined = await joinPatiently(() => joinTurn(session, turn ? String(turn * SEQ_SPAN) : undefined), () => generation === this.generation, notReached);
    // A page being left, or a New question, concludes nothing.
    if (generation !== this.generation || !joined) return;
    if (this.notice.textContent === NOT_REACHED) this.notice.hidden = true;
    if (joined !== "ended") return this.answerTurn(joined, session, message, generation);
    // Nothing to join: the session shows how it ended, and a question typed meanwhile is asked.
    // A first question whose session the server does not hold was not answered (stopped, or it
    // failed): it comes back, as does the one typed.
    this.withdrawAsked();
    this.turnSession = null;
    this.setBusy(false);
    const unanswered = this.sessionId !== session && !(await sessionHeld(session));
    localStorage.removeItem(RUNNING_KEY);
    if (unanswered) (giveBack(this.input, message), (this.notice.textContent = UNANSWERED_FIRST), (this.notice.hidden = false));
    else await this.reread(session);
    this.settle(unanswered);
  }


  /** Whether the log shows question `message` asked at index `at` or later (a turn stores its
   * question with its answer, and turns that ran before it only put it later). */
  private holdsAsked(message: string, at: number): boolean {
    return Number.isInteger(at) && this.shown.some((shown, i) => i >= at && shown !== this.asked?.message && shown.role === "user" && shown.text === message);
  }

  /** The session `id` is the page's (a first turn answered). */
  private adopt(id: string): void {
    // Written only when it changes, so a tab that left the session is not pulled back to it
    // (a followed first question's session was not written yet).
    if (this.sessionId !== id || this.following === id) localStorage.setItem(SESSION_KEY, id);
    this.following = null;
    this.sessionId = id;
    this.watch(id);
  }

  private showAnswer(answer: TurnAnswer): void {
    const reply = this.append({ role: "desk", text: answer.reply, question: answer.question ?? undefined, footer: answer.footer ?? undefined, doc: answer.doc ?? undefined });
    this.showQuestion(answer.question);
    this.busy = false;
    this.setStatus(answer.status, answer.handoff_offered);
    this.reveal(reply);
  }

  /** A turn that ended without an answer shown: one that ended while the page was away is read
   * from the session; otherwise nothing of it was kept, and the message goes back into the field. */
  private async unanswered(error: Error, message: string): Promise<void> {
    if (error instanceof Unanswered && error.why === "away") return this.reread(error.session);
    this.withdrawAsked();
    if (!(error instanceof Unanswered && error.why === "lost")) giveBack(this.input, message);
    this.notice.textContent = error.message;
    this.notice.hidden = false;
  }

  /** The question shown as being answered leaves the log (nothing of its turn was kept). */
  private withdrawAsked(): void {
    const asked = this.asked;
    this.asked = null;
    if (!asked) return;
    asked.line.remove();
    this.shown.splice(this.shown.indexOf(asked.message), 1);
  }

  /** Shows session `id` as the server has it (a turn ended while the page was not reading it;
   * a first turn's session is the page's if it answered). */
  private async reread(id: string): Promise<void> {
    this.adopt(id);
    await this.resume(id);
  }

  /** Stop: the server drops the turn's work and keeps nothing of it. In a tab that follows
   * another tab's answer with a question of its own queued, Stop takes back that question (it
   * was never sent) and leaves the other tab's answer alone. */
  private async stop(): Promise<void> {
    if (!this.ownTurn && this.queued.waiting) {
      giveBack(this.input, this.queued.take());
      this.setBusy(this.busy);
      this.input.focus();
      return;
    }
    if (!this.turnSession) return;
    this.stopButton.disabled = true;
    try {
      await api("POST", `/api/help/sessions/${this.turnSession}/stop`, this.waitingId ? { waiting: this.waitingId } : {});
      if (this.notice.textContent === NOT_REACHED) this.notice.hidden = true; // Not going on.
    } catch (error) {
      this.notice.textContent = `Stop was refused: ${(error as Error).message}`;
      this.notice.hidden = false;
    } finally {
      this.stopButton.disabled = false;
    }
  }

  private setBusy(busy: boolean): void {
    this.busy = busy;
    // While an answer is written, one more question may wait for it.
    this.send.disabled = (busy && this.queued.waiting) || this.status === "resolved";
    this.stopButton.hidden = !busy;
    // A handoff waits for the answer being written (it did nothing meanwhile).
    this.handoff.disabled = busy;
    // The waiting clarifying question's line comes back in place of the turn's progress.
    if (!busy) this.showQuestion(this.question);
  }

  /** The button's handoff: the session's newest line is the desk's handoff reply, as a typed
   * request would have it. */
  private async askForPerson(): Promise<void> {
    if (!this.sessionId || this.busy) return;
    try {
      const turns = this.turnsBegun;
      const session = await api<Session>("POST", `/api/help/sessions/${this.sessionId}/handoff`, {});
      // The session as it is now (the desk's handoff reply last), unless a turn began meanwhile.
      if (turns === this.turnsBegun) this.render(session);
      else this.stale = true;
      // A failed try's notice does not outlive the handoff.
      this.notice.hidden = true;
    } catch (error) {
      this.notice.textContent = (error as Error).message;
      this.notice.hidden = false;
    }
  }

  private startOver(): void {
    // A turn this page asked that is still being answered is stopped (another tab's is left
    // alone), and its end not shown.
    if (this.busy && this.turnSession && this.ownTurn) void api("POST", `/api/help/sessions/${this.turnSession}/stop`, this.waitingId ? { waiting: this.waitingId } : {}).catch(() => {});
    this.generation++;
    this.turnSession = null;
    // A question that waited goes back into the box, beside a draft.
    giveBack(this.input, this.queued.take());
    localStorage.removeItem(RUNNING_KEY);
    this.setBusy(false);
    localStorage.removeItem(SESSION_KEY);
    this.clear();
    this.input.focus();
  }

  /** Shows no session (its socket closed). */
  private clear(): void {
    this.sessionId = this.following = null;
    this.watch(null);
    this.log.replaceChildren();
    this.shown.length = 0;
    this.showQuestion(null);
    this.setStatus("open", false);
  }
}
