// Data the end-to-end and browser tests set up over the API, shared so each is written once: a
// saved stream walked through the guided workflow with the offline provider, and a completed
// research job.
import assert from "node:assert/strict";

/** The guided workflow's answers, to a confirmed configuration. */
const GUIDED_STEPS = [
  ["Track EGFR resistance research for our lung programme", null],
  ["Pipeline decisions, Partnering", null],
  ["scientific", { type: "option_selected", target_field: "stream_type", selected_value: "scientific" }],
  ["Continue", { type: "options_selected", target_field: "focus_areas", selected_values: ["Oncology"] }],
  ["Skip", { type: "skip_step", target_field: "competitors" }],
  ["EGFR, osimertinib", null],
  ["Looks good", { type: "confirm" }],
];

/** Walks the guided workflow over the API as `owner` (with `call`, from `apiCaller`) and saves
 * the stream; the saved stream. The guided conversation's id and token are put in `kept`. */
export async function savedStream(call, owner, kept = {}) {
  let state = { current_config: {}, skipped: [] };
  let ids = {};
  for (const [message, action] of GUIDED_STEPS) {
    const body = { message, provider: "offline", current_config: state.current_config, skipped: state.skipped, conversation_history: [] };
    if (state.next_step) body.current_step = state.next_step;
    if (action) body.user_action = action;
    if (ids.conversation_id) Object.assign(body, { conversation_id: ids.conversation_id, turns: state.turns });
    const headers = { accept: "application/json", ...(ids.token ? { "x-conversation-token": ids.token } : {}) };
    const { status, json } = await call("POST", "/api/chat", { owner, body, headers });
    assert.equal(status, 200, JSON.stringify(json));
    state = { next_step: json.next_step, current_config: json.updated_config, skipped: json.skipped, turns: json.turns };
    ids = { conversation_id: json.conversation_id, token: ids.token ?? json.conversation_token };
  }
  Object.assign(kept, { conversation_id: ids.conversation_id, token: ids.token });
  const saved = await call("POST", "/api/streams", { owner, body: { conversation_id: ids.conversation_id }, headers: { "x-conversation-token": ids.token } });
  assert.equal(saved.status, 201, saved.text);
  return saved.json;
}

/** A research job of `owner` drafted with `draft` (the draft route's fields), started, and
 * followed until it completes (20 s at most); the completed job. */
export async function completedJob(call, owner, draft) {
  const drafted = await call("POST", "/api/research/draft", { owner, body: draft });
  assert.equal(drafted.status, 201, drafted.text);
  const id = drafted.json.id;
  const started = await call("POST", "/api/research", { owner, body: { research_id: id } });
  assert.equal(started.status, 200, started.text);
  const deadline = Date.now() + 20000;
  for (;;) {
    const job = (await call("GET", `/api/research/${id}`, { owner })).json;
    if (job.status === "completed") return job;
    if (Date.now() > deadline) throw new Error(`job did not complete: ${JSON.stringify(job).slice(0, 400)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
