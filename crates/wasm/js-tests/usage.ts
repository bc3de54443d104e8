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
  type WorkflowStateJson,
} from "../pkg/stepwise.js";

export async function demo(tokens: AsyncIterable<string>): Promise<string> {
  await init();
  const workflow = Workflow.builtin("research_stream");
  const step: string = workflow.inferStep({ purpose: "Track rivals", business_goals: ["Launches"] }, []);
  const action: UserAction = { type: "options_selected", target_field: "focus_areas", selected_values: ["Oncology"] };
  const verdict: ValidationResult = workflow.validateAction({ current_step: step, config: {} }, action);
  if (!verdict.ok) return `${verdict.error.code}: ${verdict.error.message}`;
  const next: WorkflowStateJson = workflow.applyAction({ current_step: step }, action);
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
  const onEvent = (event: StreamEvent): ChatResponse | null => (event.type === "complete" ? event.payload : null);
  void onEvent;
  void request;
  return shown + parsed.message + stepIds.join(",");
}

// @ts-expect-error: an unknown action type is rejected
export const wrongAction: UserAction = { type: "teleport" };
// @ts-expect-error: option_selected needs selected_value
export const incomplete: UserAction = { type: "option_selected", target_field: "stream_type" };
// @ts-expect-error: marker events have no `payload` type
export const wrongEvent: MarkerEvent = { type: "payload", text: "" };
