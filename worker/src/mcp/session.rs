//! An MCP session's Durable Object (`McpSession`, named by the `Mcp-Session-Id` its
//! `initialize` answered): it keeps whose session it is, the negotiated protocol version and
//! whether the client answers elicitation, and routes every later message of the session. A
//! request is answered as the stateless route would, except the calls that ask the person
//! (`research_start`, `help_ask`, `guided_configure`), which it runs for the length of the call
//! so that the client's answer to a question, POSTed separately, reaches the call waiting for
//! it, and whose streams a client resumes after a dropped connection (`resume.rs`). A session
//! unused for a day is erased.
// `#[durable_object]` generates wasm-bindgen glue without docs; everything written here has them.
#![allow(missing_docs)]

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use stepwise_core::mcp::jsonrpc::{self, INVALID_REQUEST, Incoming, RpcError};
use stepwise_core::mcp::server::{self, Call};
use stepwise_core::mcp::tools::ToolCall;
use worker::{DurableObject, Env, Request, Response, Result, State, durable_object};

use super::person::Waiting;
use super::start::{self, Client, StartCall};
use super::{ask, guided};
use super::{perform, rpc_response};
use crate::platform::error::{AppError, AppResult};
use crate::platform::owner::Owner;

/// The Durable Object binding's name in wrangler.toml.
pub const BINDING: &str = "MCP_SESSIONS";
/// The header carrying the caller (the `Owner`, as JSON) to the object.
pub const OWNER_HEADER: &str = "x-stepwise-owner";
/// The header telling the object the client takes an event stream as an answer.
pub const STREAMS_HEADER: &str = "x-stepwise-sse";
/// How long a session is kept after its last message.
const IDLE_MS: i64 = 24 * 3600 * 1000;
const INFO: &str = "info";

/// What a session remembers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The owner id it belongs to.
    pub owner: String,
    /// The negotiated protocol version.
    pub version: String,
    /// Whether the client declared elicitation (forms).
    pub elicitation: bool,
    /// When it began (ms since the epoch).
    pub created_at: u64,
}

#[durable_object]
pub struct McpSession {
    state: State,
    env: Env,
    waiting: Rc<Waiting>,
}

impl DurableObject for McpSession {
    fn new(state: State, env: Env) -> Self {
        McpSession {
            state,
            env,
            waiting: Rc::new(Waiting::default()),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        match self.answer(req).await {
            Ok(response) => Ok(response),
            Err(error) => error.to_response(),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        self.state.storage().delete_all().await?;
        Response::ok("")
    }
}

impl McpSession {
    async fn answer(&self, mut req: Request) -> AppResult<Response> {
        let storage = self.state.storage();
        let path = req.path();
        if path == "/init" {
            let info: SessionInfo = serde_json::from_str(&req.text().await?)?;
            storage.put(INFO, serde_json::to_string(&info)?).await?;
            storage.set_alarm(IDLE_MS).await?;
            return Ok(Response::empty()?.with_status(204));
        }
        let owner: Owner =
            serde_json::from_str(&req.headers().get(OWNER_HEADER)?.unwrap_or_default())?;
        let info = match storage.get::<String>(INFO).await? {
            Some(text) => Some(serde_json::from_str::<SessionInfo>(&text)?),
            None => None,
        };
        let Some(info) = info.filter(|info| info.owner == owner.id) else {
            // Unknown, ended, or another owner's: the client starts a new session.
            let why = RpcError::new(INVALID_REQUEST, "no such session: initialize again");
            return rpc_response(&jsonrpc::error(None, &why), 404);
        };
        if path == "/end" {
            storage.delete_all().await?;
            return Ok(Response::empty()?.with_status(204));
        }
        let requested = req.headers().get(super::VERSION_HEADER)?;
        if let Some(why) = server::session_version_error(&info.version, requested.as_deref()) {
            return rpc_response(&jsonrpc::error(None, &why), 400);
        }
        storage.set_alarm(IDLE_MS).await?;
        self.waiting.streams.set_version(&info.version);
        if path == "/resume" {
            let last = req
                .headers()
                .get(super::LAST_EVENT_HEADER)?
                .unwrap_or_default();
            return match self.waiting.streams.resume(&last)? {
                Some(stream) => Ok(stream),
                // 400, not 404: a 404 tells the client its session has ended.
                None => {
                    let why = RpcError::new(
                        INVALID_REQUEST,
                        "no such stream in this session (its call ended some minutes ago, or never was): call the tool again, or follow a research job with research_status",
                    );
                    rpc_response(&jsonrpc::error(None, &why), 400)
                }
            };
        }
        let req_streams = req.headers().get(STREAMS_HEADER)?.is_some();
        let text = req.text().await?;
        let (id, method, params) = match jsonrpc::read(&text) {
            Err((id, error)) => return rpc_response(&jsonrpc::error(id.as_ref(), &error), 400),
            Ok(Incoming::Response { id, outcome }) => {
                if !self.waiting.answer(&id, outcome) {
                    worker::console_log!("mcp: an answer to no waiting question ({id:?})");
                }
                return Ok(Response::empty()?.with_status(202));
            }
            Ok(Incoming::Notification { method, params }) => {
                if method == "notifications/cancelled"
                    && let Some(call) = params.get("requestId")
                {
                    self.waiting.cancel(call);
                }
                return Ok(Response::empty()?.with_status(202));
            }
            Ok(Incoming::Request { id, method, params }) => (id, method, params),
        };
        let call = match server::route(&method, &params, env!("CARGO_PKG_VERSION")) {
            Ok(call) => call,
            Err(error) => return rpc_response(&jsonrpc::error(Some(&id), &error), 200),
        };
        if let Call::ToolsCall(
            ToolCall::HelpAsk {
                question,
                session_id,
            },
            _,
        ) = &call
            && info.elicitation
            && req_streams
        {
            let (question, session_id) = (question.clone(), session_id.clone());
            let waiting = Rc::clone(&self.waiting);
            return ask::run_streamed(self.env.clone(), owner, waiting, id, question, session_id);
        }
        if let Call::ToolsCall(ToolCall::GuidedConfigure { workflow }, _) = &call
            && info.elicitation
            && req_streams
        {
            let waiting = Rc::clone(&self.waiting);
            return guided::run_streamed(self.env.clone(), waiting, id, workflow.clone());
        }
        if let Call::ToolsCall(
            ToolCall::ResearchStart {
                prompt,
                providers,
                synthesis_provider,
                wait,
            },
            progress,
        ) = call
        {
            let call = StartCall {
                id,
                progress,
                prompt,
                providers,
                synthesis_provider,
                wait,
            };
            let client = Client {
                elicitation: info.elicitation,
                streams: req_streams,
            };
            return start::run(
                self.env.clone(),
                owner,
                Rc::clone(&self.waiting),
                client,
                call,
            );
        }
        let message: Value = match perform(&self.env, &owner, call).await {
            Ok(result) => jsonrpc::result(&id, result),
            Err(error) => jsonrpc::error(Some(&id), &error),
        };
        rpc_response(&message, 200)
    }
}

/// Starts a session for `info`: its id (the object's name), to answer as `Mcp-Session-Id`.
pub async fn begin(env: &Env, info: &SessionInfo) -> AppResult<String> {
    let id = crate::platform::ids::random_id()?;
    let call = crate::platform::js::ObjectCall {
        method: "POST",
        url: "https://mcp.internal/init",
        headers: &[],
        body: Some(&serde_json::to_string(info)?),
    };
    match crate::platform::js::call_object(env, BINDING, &id, call).await? {
        (204, _) => Ok(id),
        (status, text) => Err(AppError::relayed(status, &text)),
    }
}
