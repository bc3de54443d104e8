//! The guided workflow chat: streamed answers parsed locally by the wasm `MarkerStream`, chips,
//! checkboxes with Continue, Skip and Confirm, a step indicator, an inline-editable config
//! preview, local validation with the wasm `Workflow`, and refresh recovery. A conversation saved
//! as a stream is finished: it points to the stream's Settings, where later edits belong.

import { Workflow, type ChatContext, type ChatRequest, type ChatResponse, type CheckboxOption, type FieldValue, type SavedStream, type StepSpec, type UserAction } from "../../crates/wasm/pkg/stepwise.js";
import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { authHeaders } from "./owner.js";
import { fetchWithChallenge } from "./turnstile.js";
import type { Page } from "./page.js";
import { Ended, outcome, forget, join, Lost, pendingRejoin, recall, remember, requestStop, Stopped, TurnReader, type Held, type LiveChoices, type Running } from "./chat-live.js";
import { confirmRestart } from "./chat-restart.js";
import { QueuedMessage, giveBack, keepDraft } from "./queued.js";
import { OtherTabs } from "./chat-tabs.js";
import { changedNote, finishedControls, reviewSummary } from "./chat-review.js";
import { greeting, label, LOST_FIRST, readableError, shownValue } from "./chat-text.js";
import { joinPatiently, NOT_REACHED } from "./rejoin.js";
import { OpenEditor } from "./chat-editor.js";
import { applySnapshot, forgetSaved, loadSaved, refreshSavedStream, storeSaved, type Saved } from "./chat-saved.js";

/** Why a saved conversation's pencils and step links are disabled. */
const SAVED_HINT = "Saved as a stream: edit it in the stream's Settings";

/** The chat screen. */
export class ChatView implements Page {
  private readonly workflow: Workflow;
  private readonly steps: StepSpec[];
  private state: Saved;
  private busy = false;
  private pending: { message: string; action: UserAction } | null = null;
  /** The turn being answered (its conversation and token), while one streams. */
  private running: Running | null = null;
  /** Counts Start overs: a turn begun before one is not this page's any more when it ends. */
  private generation = 0;
  /** The conversation's live connection, and whether another tab's turn is being shown. */
  private tabs: OtherTabs | null = null;
  private watching = false;
  /** The lease of the last turn of the conversation shown read on this page's own stream: the
   * live connection's replay of it (a socket opened as it ends) is not another tab's turn. */
  private readLease = 0;
  /** The log lacks turns the server holds (another tab's, read since): drawn again when idle. */
  private logStale = false;
  /** Notes the leases a stream of this page reads, while no Start over came since. */
  private noteLease(generation: number): (lease: number) => void {
    return (lease) => void (generation === this.generation && (this.readLease = Math.max(this.readLease, lease)));
  }
  /** A turn this page was reading before a reload is being joined (not another tab's). */
  private rejoining = pendingRejoin();
  /** A message typed while this page's answer streams, sent when it ends. */
  private readonly queued = new QueuedMessage("stepwise.chat.queued.v1");
  private readonly editor = new OpenEditor();
  private readonly root = h("div", { class: "chat-layout" });
  private readonly stepList = h("ol");
  private readonly log = h("div", { class: "log", role: "log", "aria-live": "polite", "aria-label": "Conversation" });
  private readonly controls = h("div", { class: "controls" });
  private readonly notice = h("div", { "aria-live": "assertive" });
  private readonly configPanel = h("div", { class: "config" });
  private readonly input = h("input", { type: "text", id: "chat-input", autocomplete: "off", placeholder: "Type your answer…" });
  private readonly sendButton = h("button", { class: "btn", type: "submit" }, "Send");
  private readonly stopButton = h("button", { class: "btn secondary", type: "button", hidden: true, "data-action": "stop", onclick: () => this.stop() }, "Stop");

  constructor(workflow: Workflow) {
    this.workflow = workflow;
    this.steps = workflow.steps();
    this.state = loadSaved(this.steps[0].id);
    const composer = h(
      "form",
      { class: "composer", onsubmit: (e: Event) => (e.preventDefault(), this.sendText()) },
      h("label", { for: "chat-input", class: "visually-hidden" }, "Your message"),
      this.input,
      this.sendButton,
      this.stopButton,
    );
    const restart = h("button", { class: "btn link", type: "button", onclick: () => this.askToRestart() }, "Start over");
    this.root.append(
      h("aside", { class: "steps panel", "aria-label": "Steps" }, h("h2", { class: "visually-hidden" }, "Steps"), this.stepList),
      h("section", { class: "panel", "aria-label": "Chat" }, this.log, this.notice, this.controls, composer, restart),
      h("aside", { class: "panel", "aria-label": "Configuration" }, h("h2", {}, "Configuration"), this.configPanel),
    );
  }

  /** The assistant's view of this page: the step and the fields collected so far. */
  context(): ChatContext {
    return { current_page: "chat", workflow_step: this.state.step, config: this.state.config, skipped: this.state.skipped };
  }

  /** Mounts the view and resumes a saved conversation (re-reading it from the server). */
  async mount(parent: Element): Promise<void> {
    replace(parent, this.root);
    this.render();
    // A message that waited when this tab was reloaded was never sent: it goes back into the box.
    keepDraft(this.input, "stepwise.chat.draft.v1");
    giveBack(this.input, this.queued.restored());
    // A turn kept for a reload shows as running before the stored conversation is read: a
    // message typed meanwhile waits for it.
    const held = this.holdRejoin();
    if (this.state.conversation_id && this.state.token) await this.resume();
    if (this.state.stream_id) (await refreshSavedStream(this.state), this.save(), this.render());
    // Not awaited: the rest of the app does not wait for an answer to end.
    void this.rejoin(held).finally(() => ((this.rejoining = false), this.tabs?.ownEnded()));
  }

  /** The page is left: a message still queued is not sent from it; the next chat page puts it
   * back into its box (it is kept for this tab until then). */
  unmount(): void { this.queued.leave(); }

  /** Whether this conversation was saved as a stream: its edits then belong to the stream. */
  private get saved(): boolean {
    return !!this.state.stream_id;
  }

  private save(): void { storeSaved(this.state); }

  /** Refresh recovery: the server's snapshot wins, its step included (a step the workflow does
   * not know, from an older spec, is re-inferred locally). */
  private async resume(): Promise<void> {
    try {
      const response = await fetch(`/api/conversations/${this.state.conversation_id}`, { headers: authHeaders({ "x-conversation-token": this.state.token! }) });
      if (response.status === 404) {
        // Gone (expired, or made by another owner token): the next turn starts a new one.
        [this.state.conversation_id, this.state.token] = [undefined, undefined];
        this.save();
        this.watchTabs();
      }
      if (!response.ok) throw new Error(`the saved conversation could not be loaded (${response.status})`);
      // The log shows the copy this page kept: another tab's turns it never saw are drawn too.
      if (applySnapshot(this.state, await response.json(), this.workflow)) this.logStale = true;
      this.save();
      if (this.notice.querySelector('[data-code="not_read"]')) replace(this.notice); // Read now.
      this.render();
    } catch (error) {
      this.showError(`${(error as Error).message}. Showing the copy saved in this browser.`, "not_read");
    }
  }

  /** Start over asks first when there is anything to lose, naming it; Cancel keeps everything. */
  private askToRestart(): void {
    const { config, skipped, history, stream_name: name } = this.state;
    const asked = confirmRestart(this.root, this.steps, { config, skipped, messages: history.length, saved: this.saved ? name ?? "(unnamed)" : null }, () => this.restart());
    if (!asked) this.restart();
  }

  private restart(): void {
    // This page's turn still answering is stopped (a first turn then leaves its conversation
    // unseen) and its end not shown: the page has started over.
    if (this.running && !this.watching) void requestStop(this.running);
    this.generation++;
    // A message that waited goes back into the box (the conversation it was for is gone).
    giveBack(this.input, this.queued.take());
    this.running = null;
    // A turn of another tab that this one followed goes on there, unseen here.
    this.watching = this.rejoining = false;
    this.setBusy(false);
    forget();
    forgetSaved();
    this.state = { step: this.steps[0].id, config: {}, skipped: [], history: [] };
    this.editor.close();
    this.pending = null;
    replace(this.log);
    replace(this.notice);
    this.render();
  }

  private currentStep(): StepSpec {
    return this.steps.find((s) => s.id === this.state.step) ?? this.steps[0];
  }

  private sendText(): void {
    const text = this.input.value.trim();
    if (!text) return this.showError("Type a message first.");
    if (this.ownTurnRuns()) return this.queue(text);
    this.send(text, { type: "text_input" });
  }

  /** Whether this page's own answer is streaming (a message typed now waits for it). */
  private ownTurnRuns(): boolean {
    return this.busy && !!this.running && !this.watching;
  }

  /** A message typed while the answer streams waits, shown as queued, and is sent (checked on
   * the state the answer leaves) as soon as it ends; one at a time. */
  private queue(message: string): void {
    if (this.queued.waiting) return this.showError("A message is already waiting for this answer.");
    this.queued.hold(message, this.log);
    this.log.scrollTop = this.log.scrollHeight;
    this.input.value = "";
  }

  /** This page's turn ended (or another tab's it showed): another tab's turn that began
   * meanwhile shows now, and the message that waited waits for it too (shown last); else it is
   * sent. When this page's turn failed, or its connection was lost (the answer goes on at the
   * server), it goes back into the box instead, beside what is there. */
  private sendQueued(back = false): void {
    this.rejoining = false;
    this.tabs?.ownEnded();
    if (this.watching && !back) return this.queued.showIn(this.log);
    const next = this.queued.take();
    if (next === null) return;
    if (back) giveBack(this.input, next);
    else void this.send(next, { type: "text_input" });
  }

  /** Validates the action locally, then streams the turn. Nothing is sent if it is invalid. */
  private async send(message: string, action: UserAction): Promise<void> {
    if (this.busy || this.saved) return;
    const verdict = this.workflow.validateAction({ current_step: this.state.step, config: this.state.config, skipped: this.state.skipped }, action);
    const typed = action.type === "text_input";
    if (!verdict.ok) {
      if (typed) giveBack(this.input, message);
      return this.showError(readableError(this.steps, verdict.error.message), verdict.error.code);
    }
    // The box is cleared as the message goes (typing goes on while the answer streams); a
    // message that fails comes back into it.
    if (typed && this.input.value.trim() === message) this.input.value = "";
    replace(this.notice);
    this.pending = { message, action };
    this.setBusy(true);
    const request: ChatRequest = {
      message,
      current_step: this.state.step,
      current_config: this.state.config,
      skipped: this.state.skipped,
      conversation_history: this.state.history,
      user_action: action,
    };
    if (this.state.conversation_id) {
      request.conversation_id = this.state.conversation_id;
      request.turns = this.state.turns ?? 0;
    }
    const asked = h("div", { class: "msg user" }, message);
    this.log.append(asked);
    const bubble = h("div", { class: "msg assistant", "aria-busy": "true" });
    this.log.append(bubble);
    replace(this.controls);
    const generation = this.generation;
    let lost = false;
    let failed = false;
    try {
      const complete = await this.stream(request, bubble, generation);
      if (generation !== this.generation) return;
      this.apply(message, complete, bubble);
      this.pending = null;
    } catch (error) {
      if (generation !== this.generation) return;
      lost = error instanceof Lost;
      if (error instanceof Stopped) {
        await this.keepStopped(error, bubble, error.running);
        return;
      }
      bubble.remove();
      if (error instanceof Ended) {
        await this.caughtUp(error.running);
        return;
      }
      // A lost connection is not retried: the turn goes on on the server (a reload joins it).
      // A failed turn stored nothing: its message leaves the log (Retry, or the box, has it).
      failed = !lost;
      if (failed) asked.remove();
      if (typed && !lost) giveBack(this.input, message);
      this.showError((error as Error).message, undefined, !lost);
      this.renderControls(this.state.last);
      // Another tab moved the conversation on: take its state, so the next turn builds on it.
      if (/\((stale_turn|turn_in_progress)\)$/.test((error as Error).message)) await this.resume();
    } finally {
      bubble.removeAttribute("aria-busy");
      // A turn begun before a Start over leaves the page as it is now.
      if (generation === this.generation) {
        this.setBusy(false);
        this.renderSteps();
        this.renderControls(this.state.last);
        this.renderConfig();
        // A message that waited for a turn that failed is not sent on its heels: it goes back
        // into the box, and the error stays to be read.
        this.sendQueued(lost || failed);
      }
    }
  }

  /** Streams one turn: the model's text goes through `MarkerStream`, so chips and options
   * appear as soon as their line completes; the `complete` event is authoritative. */
  private async stream(request: ChatRequest, bubble: HTMLElement, generation: number): Promise<ChatResponse> {
    const headers = authHeaders({ "content-type": "application/json", accept: "text/event-stream", "x-stepwise-deltas": "model" });
    if (this.state.token) headers["x-conversation-token"] = this.state.token;
    let response: Response;
    try {
      response = await fetchWithChallenge("/api/chat", { method: "POST", headers, body: JSON.stringify(request) });
    } catch {
      throw new Error("The connection was lost before the server answered.");
    }
    if (!response.ok || !response.body) {
      const body = await response.json().catch(() => null);
      throw new Error(body?.error ? `${body.error.message} (${body.error.code})` : `The server answered ${response.status}.`);
    }
    // The turn runs on the server whatever happens to this page: its conversation (a first
    // turn's too, with its token) is known at once, so Stop can reach it, a broken connection
    // join it again and a reload join it. A first turn's conversation is kept only once it
    // answers: a failed one leaves none.
    const id = response.headers.get("x-stepwise-conversation");
    const token = response.headers.get("x-conversation-token") ?? this.state.token;
    const running: Running | null = id && token ? { message: request.message ?? "", conversation_id: id, token } : null;
    const current = () => generation === this.generation;
    if (running && current()) {
      this.running = running;
      remember(running);
      this.updateComposer();
    }
    let lost = false;
    try {
      // The turn's lease is kept with it, so a reload can learn whether it failed.
      const lease = (n: number) => (this.noteLease(generation)(n), running && current() && running.lease !== n && remember(Object.assign(running, { lease: n })));
      return await new TurnReader(bubble, (live) => this.renderLive(live), lease).read(response.body, running);
    } catch (error) {
      if (error instanceof Stopped) error.running = running;
      lost = error instanceof Lost;
      throw error;
    } finally {
      if (current()) {
        this.running = null;
        // A turn whose connection was lost is still kept, for a reload to join.
        if (!lost) forget();
      }
    }
  }

  /** Chips and options shown while the answer streams (disabled until it completes). */
  private renderLive(live: LiveChoices): void {
    const options: CheckboxOption[] = live.options.map((value) => ({ label: value, value, checked: false }));
    this.renderChoices(live.suggestions, options, live.proposed ?? undefined, true);
  }

  private apply(message: string, response: ChatResponse, bubble: HTMLElement): void {
    if (response.error) {
      bubble.remove();
      this.showError(readableError(this.steps, response.error.message), response.error.code);
      return;
    }
    bubble.textContent = response.message;
    bubble.removeAttribute("aria-busy");
    // Turns of other tabs came before this one (it waited behind them): the server's log has them.
    if (response.turns != null && response.turns > (this.state.turns ?? 0) + 1) void this.resume();
    this.state.history = [...this.state.history, { role: "user" as const, content: message }, { role: "assistant" as const, content: response.message }].slice(-40);
    this.state.step = response.next_step;
    this.state.config = response.updated_config;
    this.state.skipped = response.skipped;
    this.state.last = response;
    if (response.conversation_id) this.state.conversation_id = response.conversation_id;
    if (response.conversation_token) this.state.token = response.conversation_token;
    if (response.turns != null) this.state.turns = response.turns;
    this.save();
    this.render();
  }

  private render(): void {
    this.renderSteps();
    this.renderConfig();
    // A log out of date is drawn again, unless an answer is being written into it.
    if (this.logStale && !this.log.querySelector("[aria-busy]")) (this.logStale = false), replace(this.log);
    if (!this.log.childElementCount) {
      this.log.append(h("div", { class: "msg assistant" }, greeting(this.steps)));
      for (const m of this.state.history) {
        // An answer cut short says so: stopped by its owner, or interrupted when its turn died.
        const mark = m.status === "stopped" || m.status === "interrupted" ? h("span", { class: "msg-status" }, ` (${m.status})`) : null;
        this.log.append(h("div", { class: `msg ${m.role}${mark ? ` ${m.status}` : ""}` }, m.content, mark));
      }
    }
    this.renderLogNote();
    this.renderControls(this.state.last);
    this.updateComposer();
    this.log.scrollTop = this.log.scrollHeight;
    this.watchTabs();
  }

  /** Keeps the live connection of the conversation shown (none without one), so turns other
   * tabs send stream here too; the stored state wins once they end. */
  private watchTabs(): void {
    const { conversation_id: id, token } = this.state;
    if (this.tabs?.id === id) return;
    // Leases are counted per conversation: another one's start again.
    if (this.tabs) this.readLease = 0;
    this.tabs?.close();
    this.tabs = null;
    if (this.watching) {
      this.watching = false;
      this.running = null;
      this.setBusy(false);
    }
    if (!id || !token) return;
    this.tabs = new OtherTabs(id, token, {
      reading: () => (this.busy && !this.watching) || this.rejoining,
      readLease: () => this.readLease,
      began: (message) => {
        this.watching = true;
        this.running = { message, conversation_id: id, token };
        this.setBusy(true);
        replace(this.controls);
        this.log.append(h("div", { class: "msg user" }, message));
        const bubble = this.log.appendChild(h("div", { class: "msg assistant", "aria-busy": "true" }));
        this.log.scrollTop = this.log.scrollHeight;
        return bubble;
      },
      ended: (answer) => void this.otherTabEnded(answer),
    });
  }

  private async otherTabEnded(answer: ChatResponse | null): Promise<void> {
    [this.watching, this.running] = [false, null];
    if (answer) this.state.last = answer;
    // Drawn again from the stored conversation once read (not emptied while it is).
    this.log.querySelector("[aria-busy]")?.removeAttribute("aria-busy");
    this.logStale = true;
    await this.resume();
    this.setBusy(false); // first: the chips drawn are then enabled
    this.render(); // the copy saved in this browser, if the server could not be read
    this.sendQueued(); // A message that waited for this turn too.
  }

  /** A field edited after the last answer leaves that answer out of date (its review summary,
   * say): a note under it names the fields changed since. It is not a chat message. */
  private renderLogNote(): void {
    this.log.querySelector(".log-note")?.remove();
    const { last, step, turns, config } = this.state;
    const note = last && last.next_step === step && (last.turns ?? null) === (turns ?? null) ? changedNote(this.steps, step, config, last.updated_config) : null;
    if (note) this.log.append(note);
  }

  /** The input is for answering; a conversation saved as a stream takes no more answers. */
  private updateComposer(): void {
    // While this page's answer streams, a message can be typed (it waits for the answer); a
    // field edit or a step change cannot (the server would refuse it meanwhile): an open
    // editor keeps what was typed, and saves once the answer has ended.
    const blocked = (this.busy && !this.ownTurnRuns()) || this.saved;
    this.input.disabled = this.sendButton.disabled = blocked;
    for (const edit of this.root.querySelectorAll<HTMLButtonElement>(".config dt button, .config dd button[type=submit], .steps .step-link")) edit.disabled = this.busy || this.saved;
    this.stopButton.hidden = !this.busy || !this.running;
    this.input.placeholder = this.saved ? SAVED_HINT : "Type your answer…";
  }

  /** The step list; a completed step is a button that goes back to it (spec edge case 6). */
  private renderSteps(): void {
    // After Confirm the state's step is past the last one: every step is then done.
    const found = this.steps.findIndex((s) => s.id === this.state.step);
    const index = found < 0 ? this.steps.length : found;
    replace(
      this.stepList,
      ...this.steps.map((step, i) => {
        const skipped = !!step.field && this.state.skipped.includes(step.field);
        const current = step.id === this.state.step;
        const name = label(step.id);
        const text = `${name}${skipped ? " (skipped)" : ""}`;
        const back = i < index && step.field
          ? h("button", { class: "btn link step-link", type: "button", disabled: this.busy || this.saved, title: this.saved ? SAVED_HINT : `Go back to ${name}`, onclick: () => this.send(`Go back to ${name}`, { type: "go_to_step", step: step.id }) }, text)
          : text;
        return h("li", { class: [i < index && "done", skipped && "skipped"].filter(Boolean).join(" "), "aria-current": current ? "step" : undefined, "data-step": step.id }, back);
      }),
    );
  }

  /** Chips, checkboxes + Continue, Skip and Confirm for the current step. */
  private renderControls(last: ChatResponse | undefined): void {
    const fromLast = last && last.next_step === this.state.step;
    this.renderChoices(fromLast ? last.suggestions : [], fromLast ? last.options : [], fromLast ? (last.proposed_message ?? undefined) : undefined, false);
  }

  private renderChoices(suggestions: string[], options: CheckboxOption[], proposed: string | undefined, streaming: boolean): void {
    if (!this.steps.some((s) => s.id === this.state.step)) {
      const { stream_id: id, stream_name: name, conversation_id: conversation } = this.state;
      return replace(this.controls, ...finishedControls(id ? { id, name } : null, !!conversation, () => this.saveStream()));
    }
    const step = this.currentStep();
    const field = step.field ?? "";
    const parts: HTMLElement[] = [];
    if (suggestions.length) {
      const chips = suggestions.map((value) =>
        h("button", { class: "chip", type: "button", disabled: streaming || this.busy, onclick: () => this.send(value, { type: "option_selected", target_field: field, selected_value: value }) }, value),
      );
      parts.push(h("div", { class: "chips", role: "group", "aria-label": "Suggestions" }, ...chips));
    }
    if (options.length) {
      const boxes = options.map((option, i) =>
        h("label", {}, h("input", { type: "checkbox", name: "option", value: option.value, checked: option.checked, id: `option-${i}` }), ` ${option.label}`),
      );
      const fieldset = h("fieldset", { class: "options" }, h("legend", { class: "visually-hidden" }, "Options"), ...boxes);
      const continueLabel = proposed || "Continue";
      const proceed = h("button", { class: "btn", type: "button", disabled: streaming || this.busy, onclick: () => {
        const values = [...fieldset.querySelectorAll<HTMLInputElement>("input:checked")].map((box) => box.value);
        // The user's message says what was chosen, in the log and in the history the model reads.
        this.send(values.join(", "), { type: "options_selected", target_field: field, selected_values: values });
      } }, continueLabel);
      parts.push(fieldset, h("div", { class: "actions" }, proceed));
    }
    const actions: HTMLElement[] = [];
    if (step.field && step.required === false && !streaming) {
      actions.push(h("button", { class: "btn secondary", type: "button", disabled: this.busy, onclick: () => this.send("Skip", { type: "skip_step", target_field: field }) }, "Skip"));
    }
    if (step.kind === "confirm" && !streaming) {
      parts.push(reviewSummary(this.steps, this.state.config, this.state.skipped));
      actions.push(h("button", { class: "btn", type: "button", disabled: this.busy, onclick: () => this.send("Confirm", { type: "confirm" }) }, "Confirm"));
    }
    if (actions.length) parts.push(h("div", { class: "actions" }, ...actions));
    replace(this.controls, ...parts);
  }

  private renderConfig(): void {
    const rows = this.steps.filter((s) => s.field).flatMap((step) => {
      const field = step.field!;
      const value = this.state.config[field];
      const shown = shownValue(value);
      const title = label(field);
      if (this.editor.field === field && !this.saved) return [h("dt", {}, title), h("dd", {}, this.editor.of(step, value, (next) => this.updateField(field, next), () => (this.editor.close(), this.renderConfig())))];
      const edit = h("button", { class: "btn link", type: "button", "aria-label": `Edit ${title}`, title: this.saved ? SAVED_HINT : undefined, disabled: this.busy || this.saved, onclick: () => (this.editor.open(field), this.renderConfig(), this.configPanel.querySelector<HTMLElement>("input,select")?.focus()) }, "✎");
      return [h("dt", {}, title, edit), h("dd", { "data-field": field }, shown || h("span", { class: "muted" }, this.state.skipped.includes(field) ? "skipped" : "—"))];
    });
    replace(this.configPanel, h("dl", {}, ...rows));
  }

  /** Scenario 4: an inline edit goes through `PUT /api/chat/update-field`: no chat message and
   * no step change. The edit is validated locally first. */
  private async updateField(field: string, value: FieldValue): Promise<void> {
    const action: UserAction = { type: "field_edit", target_field: field, value };
    const verdict = this.workflow.validateAction({ current_step: this.state.step, config: this.state.config, skipped: this.state.skipped }, action);
    if (!verdict.ok) return this.showError(readableError(this.steps, verdict.error.message), verdict.error.code);
    const headers = authHeaders({ "content-type": "application/json" });
    if (this.state.token) headers["x-conversation-token"] = this.state.token;
    try {
      const response = await fetch("/api/chat/update-field", {
        method: "PUT",
        headers,
        body: JSON.stringify({ conversation_id: this.state.conversation_id, current_config: this.state.config, field_name: field, value }),
      });
      const body = await response.json();
      if (!response.ok) return this.showError(readableError(this.steps, body.error.message), body.error.code);
      this.state.config = body.updated_config;
      this.editor.close();
      replace(this.notice);
      this.save();
      this.render();
    } catch {
      this.showError("The connection was lost; the edit was not saved.");
    }
  }

  /** Saves the confirmed configuration as a stream, then opens it on the Streams page. */
  private async saveStream(): Promise<void> {
    try {
      const stream = await api<SavedStream>("POST", "/api/streams", { conversation_id: this.state.conversation_id }, { "x-conversation-token": this.state.token ?? "" });
      this.state.stream_id = stream.id;
      this.state.stream_name = stream.name;
      this.save();
      this.render();
      location.hash = `#streams/${stream.id}`;
    } catch (error) {
      this.showError((error as Error).message);
    }
  }

  private setBusy(busy: boolean): void {
    this.busy = busy;
    this.updateComposer();
    if (!busy && !this.saved) this.input.focus();
  }

  /** Stop: the server aborts the model call and keeps the answer so far; the stream then ends
   * with `stopped` in every tab. */
  private async stop(): Promise<void> {
    if (!this.running) return;
    this.stopButton.disabled = true;
    const refused = await requestStop(this.running);
    this.stopButton.disabled = false;
    if (refused) this.showError(refused);
    else if (this.notice.querySelector('[data-code="not_reached"]')) replace(this.notice); // Not going on.
  }

  /** A stopped answer stays as far as it got, marked; the server's state then wins (the stopped
   * answer is a turn there). */
  private async keepStopped(stopped: Stopped, bubble: HTMLElement, running: Running | null): Promise<void> {
    // A stopped first turn made its conversation: it is this page's now.
    if (running) this.adopt(running);
    bubble.textContent = stopped.partial;
    bubble.classList.add("stopped");
    bubble.append(h("span", { class: "msg-status" }, " (stopped)"));
    this.pending = null;
    await this.resume();
  }

  /** A first turn that ended on the server (answered or stopped) made its conversation: it is
   * this page's now (a first turn that failed made none, and the snapshot read says so). */
  private adopt(running: Running): void {
    if (this.state.conversation_id) return;
    this.state.conversation_id = running.conversation_id;
    this.state.token = running.token;
    this.save();
  }

  /** The turn ended while this page was not reading it: the server's state shows how; this tab's
   * own (`own`, after a reload) gives its answer's chips, or if it failed, its message back. */
  private async caughtUp(running: Running, own = false): Promise<boolean> {
    const { answer, error: failed } = (own ? await outcome(running) : null) ?? {};
    this.adopt(running);
    [this.pending, this.state.last] = [null, answer ?? this.state.last];
    // The log is drawn again from the stored conversation, once read.
    if (this.state.conversation_id) {
      this.logStale = true;
      await this.resume();
      this.render();
    }
    if (failed) (giveBack(this.input, running.message), this.showError(`${failed.message} (${failed.code})`));
    return !!failed;
  }

  /** After a reload, the turn this page was reading shows as running at once (before the stored
   * conversation is read), to be joined. A turn another tab reads (this tab opened while it
   * runs) shows too, as that tab's: this one waits for it to end. */
  private holdRejoin(): Held | null {
    const { running, own } = recall() ?? {};
    // A turn of this page's conversation, or the first turn of a new one.
    if (!running || (this.state.conversation_id && running.conversation_id !== this.state.conversation_id)) return null;
    // The turn shows as running while it is joined: a message typed meanwhile waits for it.
    const asked = h("div", { class: "msg user" }, running.message);
    const bubble = h("div", { class: "msg assistant", "aria-busy": "true" });
    this.log.append(asked, bubble);
    [this.running, this.watching] = [running, !own];
    this.setBusy(true);
    if (own) remember(running); // Kept for a reload during the join.
    return { running, own: !!own, asked, bubble, generation: this.generation };
  }

  /** Joins the turn `held` shows, if the server still runs it (or has just ended it): its answer
   * streams on where it was. */
  private async rejoin(held: Held | null): Promise<void> {
    if (!held) return;
    const { running, own, asked, bubble, generation } = held;
    const message = running.message;
    // The server not reached, the page goes on trying (the turn shown as running, and kept).
    const response = await joinPatiently(() => join(running), () => generation === this.generation, () => this.showError(NOT_REACHED, "not_reached"));
    // A page being left, or started over, concludes nothing.
    if (generation !== this.generation || !response) return;
    if (this.notice.querySelector('[data-code="not_reached"]')) replace(this.notice);
    // Its events the live connection held meanwhile are this page's, not another tab's.
    if (running.lease) this.noteLease(generation)(running.lease);
    if (response.status !== 200 || !response.body) {
      asked.remove();
      bubble.remove();
      [this.running, this.watching] = [null, false];
      if (own) forget();
      this.setBusy(false);
      // It ended between the snapshot read on mount and this join (a first turn's conversation
      // is then this page's): read the snapshot again. A first turn its object no longer knows
      // failed or was lost: nothing of it was kept.
      let failed = response.status !== 204;
      if (!failed) failed = await this.caughtUp(running, own);
      else if (response.status === 404 && own && !running.lease) (giveBack(this.input, message), this.showError(LOST_FIRST));
      // A message typed while it was joined goes now, or back into the box if the turn failed.
      this.sendQueued(failed);
      return;
    }
    let lost = false;
    let failed = false;
    try {
      const complete = await new TurnReader(bubble, (live) => generation === this.generation && this.renderLive(live), this.noteLease(generation)).read(response.body, running);
      if (generation === this.generation) this.apply(message, complete, bubble);
    } catch (error) {
      if (generation !== this.generation) return;
      lost = error instanceof Lost;
      if (error instanceof Stopped) await this.keepStopped(error, bubble, running);
      else {
        bubble.remove();
        if (error instanceof Ended) failed = await this.caughtUp(running, own);
        else {
          // The turn failed: the server kept nothing of it, so its message goes back into its
          // tab's box (unless the connection was lost: the turn may go on) and the error shows.
          failed = !lost;
          if (failed) asked.remove();
          if (failed && own) giveBack(this.input, message);
          if (this.state.conversation_id && !lost) await this.resume();
          this.showError((error as Error).message);
        }
      }
    } finally {
      bubble.removeAttribute("aria-busy");
      if (generation === this.generation) {
        [this.running, this.watching] = [null, false];
        if (!lost && own) forget();
        this.setBusy(false);
        this.render();
        if (this.notice.querySelector('[data-code="not_read"]')) void this.resume(); // Not read on mount.
        this.sendQueued(lost || failed);
      }
    }
  }

  private showError(message: string, code?: string, retry = false): void {
    const retryButton = retry && this.pending ? h("button", { class: "btn secondary", type: "button", onclick: () => {
      const { message: text, action } = this.pending!;
      this.log.lastElementChild?.remove(); // the unanswered user message is sent again
      this.send(text, action);
    } }, "Retry") : null;
    replace(this.notice, h("div", { class: "error", role: "alert", "data-code": code ?? "" }, message, " ", retryButton));
  }
}
