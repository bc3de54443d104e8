//! The schemas of what the Worker answers as JSON it assembles itself, with no wire type of its
//! own: the error envelope, list pages (entries kept in KV metadata), an assistant
//! conversation's view, a help-desk turn and session, an Articles search, the answer data both stream dialects carry, and
//! AG-UI's events. The e2e suites validate real answers against them.

use serde_json::{Map, Value, json};

use crate::SCHEMAS_PATH;

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("{SCHEMAS_PATH}{name}") })
}

fn list_of(item: &str) -> Value {
    json!({"type": "array", "items": reference(item)})
}

/// A page of an owner's list: its entries, newest first, and the cursor of the next page.
fn page(description: &str, item: &str) -> Value {
    json!({
        "description": description,
        "type": "object",
        "required": ["items", "cursor"],
        "properties": {
            "items": list_of(item),
            "cursor": {"type": ["string", "null"], "description": "Pass as `?cursor=` for the next page; null on the last."},
        },
    })
}

/// The hand-written schemas by name.
pub fn schemas() -> Map<String, Value> {
    let text = json!({"type": "string"});
    let time = json!({"type": "integer", "description": "Milliseconds since the epoch."});
    let mut schemas = Map::new();
    let mut add = |name: &str, schema: Value| {
        schemas.insert(name.to_owned(), schema);
    };
    add(
        "Object",
        json!({"description": "A JSON object (an answer not described further).", "type": "object"}),
    );
    add(
        "Error",
        json!({
            "description": "A refusal or a failure: a stable machine code and a message for people. Nothing changed.",
            "type": "object",
            "required": ["error"],
            "properties": {"error": reference("ErrorBody")},
        }),
    );
    add(
        "ResearchListItem",
        json!({
            "description": "One job of `GET /api/research`.",
            "type": "object",
            "required": ["id", "title", "status", "created_at", "providers"],
            "properties": {
                "id": text, "title": text, "status": reference("ResearchStatus"), "created_at": time,
                "providers": {"type": "integer", "description": "How many providers the job asks."},
                "stream_id": {"type": "string", "description": "The saved stream it researches for."},
            },
        }),
    );
    add(
        "ResearchList",
        page("A page of `GET /api/research`.", "ResearchListItem"),
    );
    add(
        "SavedStreamItem",
        json!({
            "description": "One stream of `GET /api/streams`.",
            "type": "object",
            "required": ["id", "name", "stream_type", "created_at", "updated_at"],
            "properties": {"id": text, "name": text, "stream_type": text, "created_at": time, "updated_at": time},
        }),
    );
    add(
        "SavedStreamList",
        page("A page of `GET /api/streams`.", "SavedStreamItem"),
    );
    let summary = json!({
        "id": text, "title": text, "created_at": time, "updated_at": time,
        "turns": {"type": "integer", "description": "Turns the conversation holds."},
    });
    add(
        "ConversationSummary",
        json!({
            "description": "One conversation of `GET /api/assistant/conversations`.",
            "type": "object",
            "required": ["id", "title", "created_at", "updated_at", "turns"],
            "properties": summary,
        }),
    );
    add(
        "ConversationList",
        page(
            "A page of `GET /api/assistant/conversations`.",
            "ConversationSummary",
        ),
    );
    let mut conversation = summary.as_object().cloned().unwrap_or_default();
    conversation.insert("messages".into(), list_of("ConversationMessage"));
    conversation.insert(
        "messages_from".into(),
        json!({"type": "integer", "description": "The index of `messages[0]` in the whole conversation (0 unless a page was asked for)."}),
    );
    conversation.insert(
        "message_count".into(),
        json!({"type": "integer", "description": "Messages in the whole conversation."}),
    );
    conversation.insert(
        "running".into(),
        json!({"type": "boolean", "description": "A turn is being answered."}),
    );
    conversation.insert(
        "context_requests".into(),
        json!({"type": "array", "items": reference("ContextRequest"), "description": "Every context request of the conversation, with its slots and supplies."}),
    );
    conversation.insert(
        "interrupts".into(),
        json!({"type": "array", "items": reference("Interrupt"), "description": "Everything the conversation's turns waited on or wait on (approvals, context requests), oldest first, in the one shape of an interrupt."}),
    );
    conversation.insert(
        "waiting".into(),
        json!({"type": ["string", "null"], "description": "The request a deferred message waits for."}),
    );
    conversation.insert(
        "writing_style".into(),
        json!({"type": ["string", "null"], "description": "The writing style kept for the next turns."}),
    );
    add(
        "AssistantConversation",
        json!({
            "description": "`GET /api/assistant/conversations/:id`: the messages, oldest first (all of them, or a page with `?limit=&before=`).",
            "type": "object",
            "required": ["id", "title", "created_at", "updated_at", "turns", "messages", "messages_from", "message_count", "running"],
            "properties": conversation,
        }),
    );
    help(&mut add);
    add(
        "ArticleSearch",
        json!({
            "description": "A page of `GET /api/articles/search`.",
            "type": "object",
            "required": ["query", "mindate", "maxdate", "sort", "page", "per_page", "count", "translation", "articles"],
            "properties": {
                "query": text,
                "mindate": {"type": ["string", "null"]},
                "maxdate": {"type": ["string", "null"]},
                "sort": {"enum": ["relevance", "date"]},
                "page": {"type": "integer"},
                "per_page": {"type": "integer"},
                "count": {"type": "integer", "description": "Articles PubMed found in all."},
                "translation": {"type": ["string", "null"], "description": "How PubMed read the query."},
                "articles": list_of("ArticleSummary"),
            },
        }),
    );
    add("AnswerData", answer_data());
    add("AgUiEvent", agui_event());
    schemas
}

/// A help-desk turn's answer and a help-desk session: the fields clients read, among them the
/// clarifying question as an interrupt (the shape approvals and context requests have too).
fn help(add: &mut impl FnMut(&str, Value)) {
    let interrupt = json!({"oneOf": [reference("Interrupt"), {"type": "null"}], "description": "The last clarifying question the desk asked, open until the next turn answers it (resolved `answered`) or does not (`skipped`)."});
    let status = json!({"enum": ["open", "escalated", "resolved"]});
    add(
        "HelpTurn",
        json!({
            "description": "`POST /api/help`: one turn of the help desk.",
            "type": "object",
            "required": ["session_id", "reply", "dialog_state", "status", "turns"],
            "properties": {
                "session_id": {"type": "string"},
                "reply": {"type": "string"},
                "footer": {"type": ["string", "null"]},
                "question": {"type": ["object", "null"], "description": "The clarifying question asked: `{number, total, text}`."},
                "dialog_state": {"enum": ["NEEDS_CLARIFICATION", "ANSWER_PROVIDED", "ESCALATED"]},
                "status": status,
                "no_answer": {"type": "boolean"},
                "handoff_offered": {"type": "boolean"},
                "search_calls": {"type": "integer"},
                "turns": {"type": "integer"},
                "interrupt": interrupt,
            },
        }),
    );
    add(
        "HelpSession",
        json!({
            "description": "`GET /api/help/sessions/:id` and the handoff's answer: the owner's session.",
            "type": "object",
            "required": ["id", "created_at", "updated_at", "status", "messages", "turns"],
            "properties": {
                "id": {"type": "string"},
                "created_at": {"type": "integer"},
                "updated_at": {"type": "integer"},
                "status": status,
                "state": {"type": "object", "description": "The pipeline's state, `clarification_context` among it."},
                "messages": {"type": "array", "items": {"type": "object"}},
                "escalation": {"type": ["object", "null"]},
                "handoff_offered": {"type": "boolean"},
                "search_calls": {"type": "integer"},
                "turns": {"type": "integer"},
                "interrupt": interrupt,
            },
        }),
    );
}

/// `interop::answer_data`: the `data-stepwise` part of a UI message stream and the `result` of an
/// AG-UI run.
fn answer_data() -> Value {
    json!({
        "description": "The `data-stepwise` part of a UI message stream and the `result` of an AG-UI run: a guided answer's state, chips and handles, or an assistant answer's cards and tools.",
        "type": "object",
        "required": ["kind"],
        "properties": {
            "kind": {"enum": ["guided", "assistant"]},
            "step": {"type": "string"},
            "config": reference("Config"),
            "skipped": {"type": "array", "items": {"type": "string"}},
            "suggestions": {"type": "array", "items": {"type": "string"}},
            "options": list_of("CheckboxOption"),
            "target_field": {"type": "string"},
            "proposed_message": {"type": "string"},
            "error": reference("ErrorBody"),
            "payloads": list_of("Payload"),
            "custom_payload": reference("Payload"),
            "suggested_values": list_of("SuggestedValue"),
            "suggested_actions": list_of("SuggestedAction"),
            "tool_history": list_of("ToolUse"),
            "conversation_id": {"type": "string"},
            "conversation_token": {"type": "string"},
            "turns": {"type": "integer"},
        },
    })
}

/// The AG-UI events `POST /api/agui` writes.
fn agui_event() -> Value {
    json!({
        "description": "An AG-UI event, one per `data:` line.",
        "type": "object",
        "required": ["type"],
        "properties": {
            "type": {"enum": ["RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "STEP_STARTED", "STEP_FINISHED",
                "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TOOL_CALL_START",
                "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT", "STATE_SNAPSHOT", "CUSTOM"]},
        },
        "additionalProperties": true,
    })
}
