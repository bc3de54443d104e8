//! How the guided chat names workflow fields, errors and values for people.

import type { FieldValue, StepSpec } from "../../crates/wasm/pkg/stepwise.js";

/** The log's first message, however it is drawn (in every tab, after a reload too). */
export function greeting(steps: StepSpec[]): string {
  return `Let's set this up step by step. ${steps[0].question ?? ""}`;
}

/** A field or step as people read it: `focus_areas` is "focus areas". */
export function label(name: string): string {
  return name.replace(/_/g, " ");
}

/** A workflow error for people: the core names fields and steps by id, in backquotes
 * (`` `focus_areas` ``); the ones the workflow knows are named by their label instead. */
export function readableError(steps: StepSpec[], message: string): string {
  const names = new Set(steps.flatMap((s) => [s.id, s.field ?? s.id]));
  return message.replace(/`([A-Za-z0-9_]+)`/g, (quoted, name: string) => (names.has(name) ? label(name) : quoted));
}

/** A value as the configuration shows it. */
export function shownValue(value: FieldValue | undefined): string {
  return Array.isArray(value) ? value.join(", ") : value ?? "";
}

/** A reloaded page's first answer that its conversation's object no longer knows (it failed, or
 * the object was evicted): nothing of it was kept. */
export const LOST_FIRST = "The answer was lost while the page reloaded; nothing of it was kept. Send it again.";
