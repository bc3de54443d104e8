//! openapi.yaml against the code: every route of worker/src/router.rs is in the contract and
//! every operation of the contract is a route; every schema compiles and every `$ref` resolves.
//! (The schemas themselves are written from the Rust wire types by `cargo run -p
//! stepwise-contract`, whose test fails when they fall behind.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { assertSchema, compileSchema, contract, contractRoutes, routerRoutes } from "./contract.mjs";

test("the contract lists exactly the router's routes", () => {
  const router = routerRoutes();
  const documented = contractRoutes();
  assert.ok(router.size > 40, `read ${router.size} routes from the router`);
  assert.deepEqual([...router].filter((r) => !documented.has(r)).sort(), [], "routes missing from openapi.yaml");
  assert.deepEqual([...documented].filter((r) => !router.has(r)).sort(), [], "operations with no route");
});

test("every schema compiles, every $ref resolves, examples validate", () => {
  for (const name of Object.keys(contract.components.schemas)) {
    const example = exampleOf(name);
    if (example === undefined) compileSchema(name);
    else assertSchema(name, example);
  }
  const refs = JSON.stringify(contract).match(/"#\/components\/[^"]+"/g) ?? [];
  for (const ref of new Set(refs)) {
    const target = ref.slice(3, -1).split("/").reduce((node, key) => node?.[key], contract);
    assert.ok(target, `${ref} resolves`);
  }
  assert.throws(() => assertSchema("ChatRequest", { message: "x", colour: "red" }), /additional/);
});

/** A value a schema must accept, for the schemas given one here. */
function exampleOf(name) {
  const minimal = {
    Error: { error: { code: "not_found", message: "no such route" } },
    ChatRequest: { message: "Track rivals", current_config: {} },
    AnswerData: { kind: "guided", step: "purpose" },
    RunAgentInput: { threadId: "t", runId: "r", messages: [{ role: "user", content: "hi" }] },
    StreamEvent: { type: "text_delta", text: "Hi" },
    AgUiEvent: { type: "RUN_STARTED" },
    Health: { status: "ok", provider: { name: "offline", kind: "offline" }, providers: [] },
    Me: { owner: { id: "a", kind: "anonymous", email: null }, usage: { calls: 0, tokens: 0 }, access: false },
    ChatResponse: { message: "", next_step: "purpose", updated_config: {}, suggestions: [], options: [], skipped: [] },
    AssistantResponse: { message: "", payloads: [], suggested_values: [], suggested_actions: [], tool_history: [] },
    TurnAnswer: { message: "", next_step: "purpose", updated_config: {}, suggestions: [], options: [], skipped: [] },
    ToolUse: { tool_name: "t", input: {}, output: "" },
    Payload: { type: "p", data: {} },
    CheckboxOption: { label: "a", value: "a", checked: false },
    ChatMessage: { role: "user", content: "hi" },
    UserAction: { type: "text_input" },
    WorkflowSpecInput: { id: "demo", title: "Demo", steps: [{ id: "review", kind: "confirm" }] },
    ProviderInfo: { name: "offline", kind: "offline" },
  };
  return minimal[name];
}
