//! What a page of the app offers the assistant tray: its context (what is on screen, summaries
//! only), and the hooks the payload cards call when the user Accepts one. A page leaves out
//! the hooks it has no use for; a card whose hook is missing says it cannot be applied here.

import type { ChatContext, StreamChange } from "../../crates/wasm/pkg/stepwise.js";

/** A date range and order for the Articles search. */
export interface ArticleFilter { mindate?: string; maxdate?: string; sort?: "relevance" | "date" }

/** A research question for the Research form. */
export interface ResearchDraftFill { prompt: string; providers?: string[] }

/** A page the tray can see and act on. */
export interface Page {
  /** What the user sees now. */
  context(): ChatContext;
  /** Leaves the page (closes its streams). */
  unmount?(): void;
  /** Puts a query in the search field and runs the search. */
  applyQuery?(query: string): Promise<void>;
  /** Applies a date range and order and searches again. */
  applyFilter?(filter: ArticleFilter): Promise<void>;
  /** Applies field edits and instructions to the stream in view (validated by the server). */
  applyStreamChange?(change: StreamChange): Promise<void>;
  /** Fills the research form. */
  fillResearchDraft?(draft: ResearchDraftFill): void;
  /** An approved assistant tool changed the owner's data (`tool`, run with `args`): shows it. */
  dataChanged?(tool: string, args: Record<string, unknown>): Promise<void>;
}
