//! The tools Stepwise offers MCP clients, their input schemas (JSON Schema, checked by the
//! core's checker before a tool runs), and a call read into what to run: starting a research job
//! (after the person approves it through elicitation), a job's status and results, and a saved
//! stream's PubMed search.

use serde_json::{Map, Value, json};

use super::jsonrpc::{INVALID_PARAMS, RpcError};
use crate::json::check_schema;

/// A tool call, its arguments checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCall {
    /// `research_status`: where a research job stands, provider by provider.
    ResearchStatus {
        /// The job.
        research_id: String,
    },
    /// `research_result`: a finished job's synthesis and provider reports.
    ResearchResult {
        /// The job.
        research_id: String,
    },
    /// `research_start`: a research job drafted and started once the person approves it.
    ResearchStart {
        /// The research question.
        prompt: String,
        /// The providers to ask (every configured one when empty).
        providers: Vec<String>,
        /// The provider that writes the synthesis (the chat provider when absent).
        synthesis_provider: Option<String>,
        /// Whether the call waits for the job to end, with progress as it goes.
        wait: bool,
    },
    /// `help_ask`: a question to the help desk, its clarifying questions asked one at a time.
    HelpAsk {
        /// The question (or, continuing `session_id`, the answer to its question).
        question: String,
        /// The help session to continue.
        session_id: Option<String>,
    },
    /// `guided_configure`: a guided workflow walked one elicitation form per step.
    GuidedConfigure {
        /// The workflow's id.
        workflow: String,
    },
    /// `stream_articles`: a saved stream's PubMed search, one page.
    StreamArticles {
        /// The stream.
        stream_id: String,
        /// The page, from 1.
        page: u32,
    },
}

/// Most results of one `stream_articles` page.
pub const ARTICLES_PER_PAGE: u32 = 20;

/// Every tool as `tools/list` answers it.
pub fn list() -> Value {
    let id = |what: &str| json!({"type": "string", "minLength": 32, "maxLength": 32, "description": what});
    json!([
        {
            "name": "research_start",
            "title": "Start a research job",
            "description": "Asks several models one research question and writes a synthesis of their reports. Before anything starts, the person is asked to approve it (elicitation), with the model calls it will use; declining starts nothing. With wait (the default) the call returns when the job ends, with progress per provider; with wait: false it returns the job id at once (then use research_status and research_result).",
            "inputSchema": {"type": "object", "additionalProperties": false, "required": ["prompt"],
                "properties": {
                    "prompt": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "The research question."},
                    "providers": {"type": "array", "minItems": 1, "maxItems": 8, "items": {"type": "string", "minLength": 1, "maxLength": 64}, "description": "The providers to ask (every configured one when left out)."},
                    "synthesis_provider": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The provider that writes the synthesis."},
                    "wait": {"type": "boolean", "description": "Wait for the job to end, with progress (default true)."}
                }},
            "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": true}
        },
        {
            "name": "help_ask",
            "title": "Ask the help desk",
            "description": "Asks Stepwise's help desk a question about using Stepwise. When the best article needs details first, the desk asks its clarifying questions one at a time: through elicitation when the client supports it (one question, one answer), otherwise the result carries the question and a session_id, and the next help_ask with that session_id and the answer as question goes on. The answer names its source article; a request for a person hands the session over, and the result says so.",
            "inputSchema": {"type": "object", "additionalProperties": false, "required": ["question"],
                "properties": {
                    "question": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "The question, or the answer to the desk's question when continuing a session."},
                    "session_id": id("The help session to continue (32 hex digits), from an earlier result.")
                }},
            "annotations": {"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}
        },
        {
            "name": "guided_configure",
            "title": "Fill a guided workflow",
            "description": "Walks a guided workflow (research_stream by default: a research stream's purpose, goals, type, focus areas, competitors and keywords, then a review) with the person, one elicitation form per step built from the step's spec; each answer is validated as the app validates it, and a refused one is asked again with the reason. Returns the confirmed configuration. Needs a client with the elicitation capability; declining a form stops the walk with nothing saved.",
            "inputSchema": {"type": "object", "additionalProperties": false,
                "properties": {"workflow": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The workflow's id (default research_stream)."}}},
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        },
        {
            "name": "research_status",
            "title": "Research job status",
            "description": "Where one of your research jobs stands: its status, and each provider's (pending, completed, failed), with the time it started and finished.",
            "inputSchema": {"type": "object", "additionalProperties": false, "required": ["research_id"],
                "properties": {"research_id": id("The job's id (32 hex digits).")}},
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        },
        {
            "name": "research_result",
            "title": "Research job results",
            "description": "A research job's synthesis and each provider's report, as far as they are written. The same texts are resources: stepwise://research/<id>/synthesis and stepwise://research/<id>/reports/<provider>.",
            "inputSchema": {"type": "object", "additionalProperties": false, "required": ["research_id"],
                "properties": {"research_id": id("The job's id (32 hex digits).")}},
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        },
        {
            "name": "stream_articles",
            "title": "A stream's PubMed articles",
            "description": "Runs the PubMed search of one of your saved streams (its keywords and focus areas) and returns a page of articles: PMID, title, journal, year.",
            "inputSchema": {"type": "object", "additionalProperties": false, "required": ["stream_id"],
                "properties": {
                    "stream_id": id("The stream's id (32 hex digits)."),
                    "page": {"type": "integer", "minimum": 1, "maximum": 50, "description": "The page, from 1 (20 articles a page)."}
                }},
            "annotations": {"readOnlyHint": true, "openWorldHint": true}
        }
    ])
}

/// Reads `tools/call`'s `name` and `arguments` into a call: -32602 for an unknown tool or
/// arguments that do not match its schema (the message says where and why).
///
/// ```
/// use serde_json::json;
/// use stepwise_core::mcp::tools::{read_call, ToolCall};
/// let call = read_call("research_status", &json!({"research_id": "0123456789abcdef0123456789abcdef"})).unwrap();
/// assert!(matches!(call, ToolCall::ResearchStatus { .. }));
/// let error = read_call("research_status", &json!({"research_id": "x"})).unwrap_err();
/// assert_eq!(error.message, "invalid arguments for `research_status`: $.research_id: shorter than 32 characters");
/// ```
pub fn read_call(name: &str, arguments: &Value) -> Result<ToolCall, RpcError> {
    let tools = list();
    let Some(tool) = tools
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == name)
    else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            format!("unknown tool `{name}`"),
        ));
    };
    check_schema(arguments, &tool["inputSchema"]).map_err(|why| {
        RpcError::new(
            INVALID_PARAMS,
            format!("invalid arguments for `{name}`: {why}"),
        )
    })?;
    let empty = Map::new();
    let arguments = arguments.as_object().unwrap_or(&empty);
    let text = |field: &str| -> Result<String, RpcError> {
        let value = arguments.get(field).and_then(Value::as_str).unwrap_or("");
        if value.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(value.to_ascii_lowercase())
        } else {
            let why = format!("invalid arguments for `{name}`: $.{field}: not hex digits");
            Err(RpcError::new(INVALID_PARAMS, why))
        }
    };
    Ok(match name {
        "research_start" => ToolCall::ResearchStart {
            prompt: arguments
                .get("prompt")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            providers: arguments
                .get("providers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            synthesis_provider: arguments
                .get("synthesis_provider")
                .and_then(Value::as_str)
                .map(str::to_owned),
            wait: arguments
                .get("wait")
                .and_then(Value::as_bool)
                .unwrap_or(true),
        },
        "help_ask" => ToolCall::HelpAsk {
            question: arguments
                .get("question")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            session_id: match arguments.get("session_id") {
                Some(_) => Some(text("session_id")?),
                None => None,
            },
        },
        "guided_configure" => ToolCall::GuidedConfigure {
            workflow: arguments
                .get("workflow")
                .and_then(Value::as_str)
                .unwrap_or("research_stream")
                .to_owned(),
        },
        "research_status" => ToolCall::ResearchStatus {
            research_id: text("research_id")?,
        },
        "research_result" => ToolCall::ResearchResult {
            research_id: text("research_id")?,
        },
        _ => ToolCall::StreamArticles {
            stream_id: text("stream_id")?,
            page: arguments
                .get("page")
                .and_then(Value::as_u64)
                .map_or(1, |p| p as u32),
        },
    })
}
