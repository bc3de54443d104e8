//! The messages that wait at the server behind the running turn of the conversation shown (the
//! assistant tray's, the guided chat's), as its live connection says (`conversation:waiting`):
//! shown above the box, first to be answered first, each with a Stop that takes it out of the line
//! and puts it back into the box. A reloaded tab so shows (and can stop) the message it sent before
//! the reload, and every tab shows those sent in the others. The message whose stream this tab
//! reads shows in its log already and is left out here.
import { h, replace } from "./dom.js";

/** A waiting message as the server lists it. */
export interface Waiting {
  id: string;
  content: string;
}

export class WaitingLine {
  readonly root = h("div", { class: "waiting-line", hidden: true, role: "status", "aria-label": "Messages waiting to be answered" });
  private messages: Waiting[] = [];
  /** The id of the message whose stream this tab reads, left out. */
  private own: string | null = null;

  /** `stop(id)`: asks the server to stop the message waiting as `id` (whether it did); `back`:
   * puts a stopped message's text back into the box. */
  constructor(private readonly stop: (id: string) => Promise<boolean>, private readonly back: (content: string) => void) {}

  /** The line as the server says it is now (an event's `messages`, checked). */
  show(messages: unknown): void {
    this.messages = Array.isArray(messages) ? messages.filter((m): m is Waiting => typeof m?.id === "string" && typeof m?.content === "string") : [];
    this.render();
  }

  /** The message this tab's stream waits as (`null`: none). */
  ownIs(id: string | null): void {
    if (this.own === id) return;
    this.own = id;
    this.render();
  }

  /** Another conversation is shown: its line comes with its connection. */
  clear(): void {
    this.messages = [];
    this.own = null;
    this.render();
  }

  private render(): void {
    const shown = this.messages.filter((m) => m.id !== this.own);
    this.root.hidden = shown.length === 0;
    replace(this.root, ...(shown.length ? [h("p", { class: "muted" }, shown.length === 1 ? "Waiting to be answered next:" : "Waiting to be answered, in this order:")] : []),
      ...shown.map((message) => this.item(message)));
  }

  private item(message: Waiting): HTMLElement {
    const failure = h("span", { class: "error", hidden: true });
    const stop = h("button", { class: "btn link", type: "button", "aria-label": `Stop "${message.content.slice(0, 60)}" and put it back into the box` }, "Stop");
    stop.onclick = async () => {
      stop.disabled = true;
      failure.hidden = true;
      try {
        if (await this.stop(message.id)) {
          this.back(message.content);
          // The server's new line follows; until then it is not shown as waiting.
          this.messages = this.messages.filter((m) => m.id !== message.id);
          this.render();
        } else {
          failure.textContent = " Its answer has begun: Stop the answer instead.";
          failure.hidden = false;
        }
      } catch (error) {
        failure.textContent = ` ${(error as Error).message}`;
        failure.hidden = false;
      } finally {
        stop.disabled = false;
      }
    };
    return h("div", { class: "waiting-item msg user queued" }, h("span", {}, message.content), " ", stop, failure);
  }
}
