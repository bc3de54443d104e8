// Compiled with `tsc --noEmit` by the test command: the package's declarations must describe
// real usage, and reject wrong usage (each @ts-expect-error must be an error).
import init, {
  MarkerStream,
  Workflow,
  type ChatRequest,
  type ChatResponse,
  type MarkerEvent,
  type Parsed,
  type StreamEvent,
  type UserAction,
  type ValidationResult,
  type WorkflowState,
  type Research,
  type ResearchEvent,
  type ResearchDraft,
  type ResearchList,
  type ConfirmAction,
} from "../pkg/stepwise.js";

export async function demo(tokens: AsyncIterable<string>): Promise<string> {
  await init();
  const workflow = Workflow.builtin("research_stream");
  const step: string = workflow.inferStep({ purpose: "Track rivals", business_goals: ["Launches"] }, []);
  const action: UserAction = { type: "options_selected", target_field: "focus_areas", selected_values: ["Oncology"] };
  const verdict: ValidationResult = workflow.validateAction({ current_step: step, config: {} }, action);
  if (!verdict.ok) return `${verdict.error.code}: ${verdict.error.message}`;
  const next: WorkflowState = workflow.applyAction({ current_step: step }, action);
  const stepIds: string[] = workflow.steps().map((s) => s.id);

  const stream = new MarkerStream(["SCHEMA_PROPOSAL"]);
  let shown = "";
  for await (const token of tokens) {
    const events: MarkerEvent[] = stream.feed(token);
    for (const event of events) {
      if (event.type === "text") shown += event.text;
      else if (event.type === "marker" && event.kind === "options") shown += event.value.join("|");
      else if (event.type === "marker" && event.kind === "payload") shown += event.value.type;
      else if (event.type === "diagnostic") shown += event.code;
    }
  }
  const parsed: Parsed = stream.finish();
  const request: ChatRequest = {
    message: "hi",
    current_step: next.current_step,
    current_config: next.config,
    conversation_history: [{ role: "user", content: "hi" }],
    user_action: { type: "text_input" },
  };
  const onEvent = (event: StreamEvent): ChatResponse | null => (event.type === "complete" ? (event.payload as ChatResponse) : null);
  void onEvent;
  void request;
  return shown + parsed.message + stepIds.join(",");
}

/** What a research card shows, written against the package's research wire types. */
export function describeJob(job: Research, event: ResearchEvent, list: ResearchList): string {
  const failed = job.llm_results.filter((r) => r.status === "failed").map((r) => `${r.provider}: ${r.error?.code ?? ""}`);
  const change = event.type === "provider_changed" ? `${event.provider} is ${event.status}` : event.type === "status_changed" ? event.status : event.url;
  const note = job.synthesis_not_available ? "Synthesis not available" : job.synthesized_result ?? "";
  return [job.title, change, note, ...failed, String(list.items.length), list.cursor ?? ""].join("\n");
}
export const draftBody: ResearchDraft = { prompt: "Compare EGFR inhibitors", selected_llms: ["openai"], external_reports: [{ title: "Notes", content: "..." }] };
export const answer: ConfirmAction = "proceed";
// @ts-expect-error: a job status outside the lifecycle is rejected
export const wrongStatus: Research["status"] = "paused";
// @ts-expect-error: provider error codes are the five normalized ones
export const wrongCode: NonNullable<Research["llm_results"][number]["error"]>["code"] = "oops";

// @ts-expect-error: an unknown action type is rejected
export const wrongAction: UserAction = { type: "teleport" };
// @ts-expect-error: option_selected needs selected_value
export const incomplete: UserAction = { type: "option_selected", target_field: "stream_type" };
// @ts-expect-error: marker events have no `payload` type
export const wrongEvent: MarkerEvent = { type: "payload", text: "" };
