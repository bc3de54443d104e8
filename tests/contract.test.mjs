//! openapi.yaml against the code: every route of worker/src/router.rs is in the contract and
//! every operation of the contract is a route; the wire types' fields in Rust equal the
//! properties of their schemas; every schema compiles and every `$ref` resolves.
import { test } from "node:test";
import assert from "node:assert/strict";
import { assertSchema, contract, contractRoutes, routerRoutes, rustFields } from "./contract.mjs";

test("the contract lists exactly the router's routes", () => {
  const router = routerRoutes();
  const documented = contractRoutes();
  assert.ok(router.size > 40, `read ${router.size} routes from the router`);
  assert.deepEqual([...router].filter((r) => !documented.has(r)).sort(), [], "routes missing from openapi.yaml");
  assert.deepEqual([...documented].filter((r) => !router.has(r)).sort(), [], "operations with no route");
});

test("the wire types' fields are the schemas' properties", () => {
  const pairs = [
    ["crates/core/src/protocol.rs", "ChatRequest", "ChatRequest"],
    ["crates/core/src/protocol.rs", "ChatResponse", "ChatResponse"],
    ["crates/core/src/protocol.rs", "ChatMessage", "ChatMessage"],
    ["crates/core/src/protocol.rs", "CheckboxOption", "CheckboxOption"],
    ["crates/core/src/protocol.rs", "ContextRequired", "ContextRequired"],
    ["crates/core/src/agent/answer.rs", "AssistantResponse", "AssistantResponse"],
    ["crates/core/src/agent/mod.rs", "ToolUse", "ToolUse"],
    ["crates/core/src/markers/types.rs", "Payload", "Payload"],
  ];
  for (const [file, struct, schema] of pairs) {
    const properties = Object.keys(contract.components.schemas[schema].properties).sort();
    assert.deepEqual(properties, rustFields(file, struct), `${struct} (${file}) against components.schemas.${schema}`);
  }
});

test("every schema compiles, every $ref resolves, examples validate", () => {
  for (const name of Object.keys(contract.components.schemas)) assertSchema(name, exampleOf(name));
  const refs = JSON.stringify(contract).match(/"#\/components\/[^"]+"/g) ?? [];
  for (const ref of new Set(refs)) {
    const target = ref.slice(3, -1).split("/").reduce((node, key) => node?.[key], contract);
    assert.ok(target, `${ref} resolves`);
  }
  assert.throws(() => assertSchema("ChatRequest", { message: "x", colour: "red" }), /additional/);
});

/** A value each schema must accept: its `examples` when given, else the smallest valid one. */
function exampleOf(name) {
  const minimal = {
    Error: { error: { code: "not_found", message: "no such route" } },
    ChatRequest: { message: "Track rivals", current_config: {} },
    AnswerData: { kind: "guided", step: "purpose" },
    RunAgentInput: { threadId: "t", runId: "r", messages: [{ role: "user", content: "hi" }] },
    StreamEvent: { type: "text_delta", text: "Hi" },
    AgUiEvent: { type: "RUN_STARTED" },
    Health: { status: "ok", provider: { name: "offline", kind: "offline" }, providers: [] },
    Me: { owner: { id: "a", kind: "anonymous" }, usage: { calls: 0, tokens: 0 }, access: false },
    ChatResponse: { message: "", next_step: "purpose", updated_config: {}, suggestions: [], options: [], skipped: [] },
    AssistantResponse: { message: "", payloads: [], suggested_values: [], suggested_actions: [], tool_history: [] },
    ContextRequired: { status: "context_required", conversation_id: "c", user_message_id: "u", request_id: "r", required: [], request: {} },
    TurnAnswer: { message: "", next_step: "purpose", updated_config: {}, suggestions: [], options: [], skipped: [] },
    ToolUse: { tool_name: "t", input: {}, output: "" },
    Payload: { type: "p", data: {} },
    CheckboxOption: { label: "a", value: "a", checked: false },
    ChatMessage: { role: "user", content: "hi" },
    UserAction: { type: "text_input" },
    WorkflowSpec: { id: "demo", title: "Demo", steps: [{ id: "review", kind: "confirm" }] },
    ProviderInfo: { name: "offline", kind: "offline" },
  };
  return minimal[name] ?? {};
}
