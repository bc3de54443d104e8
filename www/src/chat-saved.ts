//! What the guided chat keeps in this browser across a reload: the conversation's id and token,
//! its step, fields and history as last read, and the stream it was saved as. The server holds
//! the same (reachable with the token) and wins when it can be read.

import type { ChatMessage, ChatResponse, Config, SavedStream, Workflow } from "../../crates/wasm/pkg/stepwise.js";
import { api } from "./api.js";

const STORAGE_KEY = "stepwise.chat.v1";

/** What survives a reload (the server holds the same, reachable with the token). */
export interface Saved {
  conversation_id?: string;
  token?: string;
  /** Turns the server holds: each turn states it, so another tab's turn is never lost. */
  turns?: number;
  /** The stream this configuration was saved as: the conversation is then finished, and its
   * fields are edited in that stream's Settings. */
  stream_id?: string;
  /** That stream's name, as last read. */
  stream_name?: string;
  step: string;
  config: Config;
  skipped: string[];
  history: ChatMessage[];
  last?: ChatResponse;
}

/** The saved conversation, or a new one at `firstStep` (a missing or corrupt entry). */
export function loadSaved(firstStep: string): Saved {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "null") as Saved | null;
    if (saved && typeof saved.step === "string") return saved;
  } catch {
    /* a corrupt entry starts a new conversation */
  }
  return { step: firstStep, config: {}, skipped: [], history: [] };
}

/** Keeps `state` for the next load. */
export function storeSaved(state: Saved): void {
  localStorage.setItem(STORAGE_KEY, JSON.stringify(state));
}

/** Forgets the saved conversation (Start over). */
export function forgetSaved(): void {
  localStorage.removeItem(STORAGE_KEY);
}

/** Reads the saved stream's name again into `state` (it may have been renamed); a stream deleted
 * since frees the conversation, which can then be edited and saved again. Any other failure
 * leaves `state` as it was. */
export async function refreshSavedStream(state: Saved): Promise<void> {
  try {
    state.stream_name = (await api<SavedStream>("GET", `/api/streams/${state.stream_id}`)).name;
  } catch (error) {
    if (!/\(not_found\)$/.test((error as Error).message)) return;
    delete state.stream_id;
    delete state.stream_name;
  }
}

/** The server's snapshot of a conversation (`GET /api/conversations/:id`), as far as read here. */
export interface Snapshot {
  current_config: Config;
  skipped: string[];
  conversation_history: ChatMessage[];
  turns: number;
  current_step: string;
}

/** Puts `snapshot` into `saved`: the server's state wins, its step included (one `workflow` does
 * not know, from an older spec, is inferred again). Whether the history differed (another
 * tab's turns this page never saw: its log is out of date). */
export function applySnapshot(saved: Saved, snapshot: Snapshot, workflow: Workflow): boolean {
  const stale = JSON.stringify(snapshot.conversation_history) !== JSON.stringify(saved.history);
  saved.config = snapshot.current_config;
  saved.skipped = snapshot.skipped;
  saved.history = snapshot.conversation_history;
  saved.turns = snapshot.turns;
  const known = snapshot.current_step === "done" || workflow.steps().some((s) => s.id === snapshot.current_step);
  saved.step = known ? snapshot.current_step : workflow.inferStep(saved.config, saved.skipped);
  return stale;
}
