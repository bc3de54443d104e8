//! Chat turns: `POST /api/chat` (SSE by default, one JSON response with `Accept:
//! application/json`) and `PUT /api/chat/update-field` (inline edit, no model call).

use futures_channel::mpsc;
use futures_util::SinkExt;
use serde::Deserialize;
use stepwise_core::llm::{ModelCall, ProviderKind, StreamItem};
use stepwise_core::markers::{Event, MarkerParser};
use stepwise_core::offline;
use stepwise_core::protocol::{ChatMessage, ChatRequest, ChatResponse, Role, StreamEvent};
use stepwise_core::turn::{self, TurnOptions, TurnPlan, TurnStart};
use stepwise_core::workflow::{
    Config as FieldConfig, FieldValue, UserAction, WorkflowSpec, WorkflowState,
};
use worker::{Context, Env, Request, Response, console_error, console_log};

use crate::body::read_json;
use crate::config::{Config, api_key};
use crate::error::{AppError, AppResult};
use crate::event_stream;
use crate::ids;
use crate::provider::ModelStream;
use crate::store::{Snapshot, Store};

/// The workflow used when a request names none.
const DEFAULT_WORKFLOW: &str = "research_stream";
/// Header carrying a conversation's access token.
pub const TOKEN_HEADER: &str = "x-conversation-token";
/// The request header asking for `model_delta` events (value `model`) instead of `text_delta`.
pub const DELTAS_HEADER: &str = "x-stepwise-deltas";

/// `POST /api/chat`.
pub async fn post_chat(mut req: Request, env: Env, ctx: &Context) -> AppResult<Response> {
    let config = Config::from_env(&env)?;
    let store = Store::new(&env)?;
    let json_mode = wants_json(&req)?;
    let token = req.headers().get(TOKEN_HEADER)?;
    let request: ChatRequest = read_json(&mut req).await?;
    if let Some(name) = request
        .provider
        .as_deref()
        .filter(|n| config.providers.get(n).is_none())
    {
        return Err(AppError::new(
            422,
            "unknown_provider",
            format!("provider `{name}` is not configured"),
        ));
    }
    let workflow = request
        .workflow
        .clone()
        .unwrap_or_else(|| DEFAULT_WORKFLOW.to_owned());
    let spec = store.workflow(&workflow).await?;
    let conversation =
        Conversation::open(&store, request.conversation_id.as_deref(), token).await?;
    let options = TurnOptions {
        history_budget: config.history_budget,
    };
    let job = match turn::begin_with(&spec, &request, options) {
        TurnStart::Respond(response) => match response.error {
            Some(error) => {
                return AppError::new(422, &error.code, error.message)
                    .to_response()
                    .map_err(AppError::from);
            }
            None => Job {
                spec,
                plan: None,
                request,
                conversation,
                config,
                env,
                workflow,
                immediate: Some(response),
            },
        },
        TurnStart::CallModel(plan) => Job {
            spec,
            plan: Some(plan),
            request,
            conversation,
            config,
            env,
            workflow,
            immediate: None,
        },
    };
    if json_mode {
        let mut out = Output::Collect(Vec::new());
        let persisted = job.run(&mut out).await;
        return out.into_json_response(persisted);
    }
    let model_deltas = req
        .headers()
        .get(DELTAS_HEADER)?
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("model"));
    let (sender, receiver) = mpsc::channel::<worker::Result<Vec<u8>>>(32);
    ctx.wait_until(async move {
        let mut out = Output::Sse {
            sender,
            next_id: 0,
            model_deltas,
        };
        job.run(&mut out).await; // the `status` event already told the client if it was not stored
    });
    Ok(event_stream::response(receiver)?)
}

/// The body of `PUT /api/chat/update-field`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateField {
    #[serde(default)]
    conversation_id: Option<String>,
    #[serde(default)]
    workflow: Option<String>,
    #[serde(default)]
    current_config: FieldConfig,
    field_name: String,
    value: FieldValue,
}

/// `PUT /api/chat/update-field`: validates and applies one field (spec Scenario 4).
pub async fn update_field(mut req: Request, env: Env) -> AppResult<Response> {
    let store = Store::new(&env)?;
    let token = req.headers().get(TOKEN_HEADER)?;
    let body: UpdateField = read_json(&mut req).await?;
    let spec = store
        .workflow(body.workflow.as_deref().unwrap_or(DEFAULT_WORKFLOW))
        .await?;
    let state = WorkflowState {
        current_step: spec.infer_step(&body.current_config, &[], false).to_owned(),
        config: body.current_config,
        skipped: Vec::new(),
    };
    let edit = UserAction::FieldEdit {
        target_field: body.field_name,
        value: body.value,
    };
    let (state, _) = spec.apply_action(&state, &edit)?;
    if let Some(id) = body.conversation_id.as_deref() {
        let conversation = Conversation::open(&store, Some(id), token).await?;
        if let Some(mut snapshot) = store.conversation(id).await? {
            if snapshot.workflow != spec.id {
                let message = format!("conversation `{id}` uses workflow `{}`", snapshot.workflow);
                return Err(AppError::new(422, "workflow_mismatch", message));
            }
            snapshot.current_config = state.config.clone();
            if let Err(error) = store.put_conversation(&conversation.id, &snapshot).await {
                console_error!("update-field: the snapshot was not stored: {error}");
            }
        }
    }
    Ok(Response::from_json(
        &serde_json::json!({"updated_config": state.config}),
    )?)
}

/// The conversation a turn belongs to.
struct Conversation {
    id: String,
    token: String,
    is_new: bool,
    turns: u32,
}

impl Conversation {
    /// A new conversation, or an existing one whose token matches.
    async fn open(
        store: &Store,
        id: Option<&str>,
        token: Option<String>,
    ) -> AppResult<Conversation> {
        let Some(id) = id else {
            return Ok(Conversation {
                id: ids::random_id()?,
                token: ids::random_id()?,
                is_new: true,
                turns: 0,
            });
        };
        if !ids::is_id(id) {
            return Err(AppError::new(
                422,
                "invalid_request",
                "invalid field `conversation_id`: not a conversation id",
            ));
        }
        let token = token.filter(|t| ids::is_id(t)).ok_or_else(|| {
            AppError::new(
                403,
                "forbidden",
                "this conversation needs its token in the X-Conversation-Token header",
            )
        })?;
        // Only a stored conversation can be continued: accepting an unknown id would let anyone
        // claim it with a token of their own. The previous turn's write is read back where it was
        // made, which is where the same client's next turn lands.
        let snapshot = store.conversation(id).await?.ok_or_else(|| {
            AppError::new(
                404,
                "conversation_not_found",
                "no such conversation; start a new one without conversation_id",
            )
        })?;
        if !ids::same_secret(&snapshot.token, &token) {
            return Err(AppError::new(
                403,
                "forbidden",
                "the conversation token does not match",
            ));
        }
        let turns = snapshot.turns;
        Ok(Conversation {
            id: id.to_owned(),
            token,
            is_new: false,
            turns,
        })
    }
}

/// Everything a turn needs after its request was accepted.
struct Job {
    spec: WorkflowSpec,
    plan: Option<TurnPlan>,
    request: ChatRequest,
    conversation: Conversation,
    config: Config,
    env: Env,
    workflow: String,
    immediate: Option<ChatResponse>,
}

impl Job {
    /// Runs the turn, emitting its events; a provider failure ends it with an `error` event and
    /// nothing extracted is applied or persisted. Returns whether the turn was stored.
    async fn run(self, out: &mut Output) -> bool {
        let (response, assistant_text) = match (&self.plan, self.immediate.clone()) {
            (_, Some(response)) => (response, None),
            (Some(plan), None) => match self.call_model(plan, out).await {
                Some(result) => result,
                None => return false,
            },
            (None, None) => unreachable!("a job has a plan or an immediate response"),
        };
        let mut response = response;
        response.conversation_id = Some(self.conversation.id.clone());
        if self.conversation.is_new {
            response.conversation_token = Some(self.conversation.token.clone());
        }
        let persisted = self.persist(&response, assistant_text).await;
        if let Err(error) = &persisted {
            console_error!(
                "conversation {} was not stored: {error}",
                self.conversation.id
            );
            out.emit(StreamEvent::Status {
                message: NOT_SAVED.into(),
            })
            .await;
        }
        out.emit(StreamEvent::Complete {
            payload: Box::new(response),
        })
        .await;
        persisted.is_ok()
    }

    async fn call_model(
        &self,
        plan: &TurnPlan,
        out: &mut Output,
    ) -> Option<(ChatResponse, Option<String>)> {
        out.emit(StreamEvent::Status {
            message: "Thinking...".into(),
        })
        .await;
        let provider = match &self.request.provider {
            Some(name) => self
                .config
                .providers
                .get(name)
                .expect("checked when the request was read"),
            None => self.config.providers.chat_provider(),
        };
        let opened = if provider.kind == ProviderKind::Offline {
            Ok(ModelStream::offline(offline::reply(&self.spec, plan)))
        } else {
            let call = ModelCall {
                system: &plan.system_prompt,
                messages: &plan.messages,
                max_tokens: self.config.max_tokens,
            };
            ModelStream::open(
                provider,
                api_key(&self.env, provider),
                &call,
                self.config.timeout_ms,
            )
            .await
        };
        let mut stream = match opened {
            Ok(stream) => stream,
            Err(error) => {
                out.emit(StreamEvent::Error {
                    code: error.code.as_str().into(),
                    message: error.message,
                })
                .await;
                return None;
            }
        };
        let mut parser = MarkerParser::new();
        while let Some(items) = stream.next().await {
            for item in items {
                match item {
                    StreamItem::Text { text } => {
                        let shown: String = display_text(parser.feed(&text));
                        out.delta(&text, shown).await;
                    }
                    StreamItem::Finished { .. } => {}
                    StreamItem::Failed(error) => {
                        out.emit(StreamEvent::Error {
                            code: error.code.as_str().into(),
                            message: error.message,
                        })
                        .await;
                        return None;
                    }
                }
            }
        }
        let shown = display_text(parser.end());
        out.delta("", shown).await;
        let outcome = turn::finish(&self.spec, plan, parser.finish());
        for note in &outcome.notes {
            console_log!("turn note {}: {}", note.code, note.message);
        }
        let text = outcome.response.message.clone();
        Some((outcome.response, Some(text)))
    }

    async fn persist(
        &self,
        response: &ChatResponse,
        assistant_text: Option<String>,
    ) -> Result<(), String> {
        let mut history = self.request.conversation_history.clone();
        if let Some(text) = assistant_text {
            history.push(ChatMessage {
                role: Role::User,
                content: self.request.message.clone(),
            });
            history.push(ChatMessage {
                role: Role::Assistant,
                content: text,
            });
        }
        let snapshot = Snapshot {
            token: self.conversation.token.clone(),
            workflow: self.workflow.clone(),
            current_step: response.next_step.clone(),
            current_config: response.updated_config.clone(),
            conversation_history: history,
            skipped: response.skipped.clone(),
            turns: self.conversation.turns + 1,
        };
        let store = Store::new(&self.env).map_err(|e| e.message)?;
        store
            .put_conversation(&self.conversation.id, &snapshot)
            .await
    }
}

/// The status note sent when a turn's snapshot could not be stored.
const NOT_SAVED: &str = "not saved: this turn could not be stored; refreshing may lose it";

fn display_text(events: std::vec::Drain<'_, Event>) -> String {
    events
        .filter_map(|e| {
            if let Event::Text { text } = e {
                Some(text)
            } else {
                None
            }
        })
        .collect()
}

/// Where a turn's events go: an SSE stream, or a list turned into one JSON response.
enum Output {
    Sse {
        sender: mpsc::Sender<worker::Result<Vec<u8>>>,
        next_id: u64,
        /// Send the model's text (`model_delta`) instead of display text (`text_delta`).
        model_deltas: bool,
    },
    Collect(Vec<StreamEvent>),
}

impl Output {
    /// Emits a piece of the model's answer: its display text, or its own text when asked for.
    async fn delta(&mut self, model_text: &str, shown: String) {
        let model_deltas = matches!(
            self,
            Output::Sse {
                model_deltas: true,
                ..
            }
        );
        if model_deltas && !model_text.is_empty() {
            let text = model_text.to_owned();
            self.emit(StreamEvent::ModelDelta { text }).await;
        } else if !model_deltas && !shown.is_empty() {
            self.emit(StreamEvent::TextDelta { text: shown }).await;
        }
    }

    async fn emit(&mut self, event: StreamEvent) {
        match self {
            Output::Sse {
                sender, next_id, ..
            } => {
                *next_id += 1;
                // A client that went away just stops receiving; the turn still completes.
                let _ = sender.send(Ok(event.to_sse(*next_id).into_bytes())).await;
            }
            Output::Collect(events) => events.push(event),
        }
    }

    fn into_json_response(self, persisted: bool) -> AppResult<Response> {
        let Output::Collect(events) = self else {
            unreachable!("only collected events become JSON")
        };
        for event in events.into_iter().rev() {
            match event {
                StreamEvent::Complete { payload } => {
                    let mut response = Response::from_json(&payload)?;
                    response.headers_mut().set(
                        "x-stepwise-persisted",
                        if persisted { "true" } else { "false" },
                    )?;
                    return Ok(response);
                }
                StreamEvent::Error { code, message } => {
                    let status = match code.as_str() {
                        "timeout" => 504,
                        "rate_limited" => 429,
                        _ => 502,
                    };
                    return Err(AppError::new(status, &code, message));
                }
                _ => {}
            }
        }
        Err(AppError::internal("a turn ended without a response"))
    }
}

/// Whether the client prefers one JSON response to an event stream (`Accept`, with q-values).
fn wants_json(req: &Request) -> AppResult<bool> {
    let accept = req
        .headers()
        .get("accept")?
        .unwrap_or_default()
        .to_ascii_lowercase();
    let quality = |wanted: &str| {
        accept
            .split(',')
            .filter_map(|range| {
                let mut parts = range.split(';').map(str::trim);
                let media = parts.next()?;
                let q = parts
                    .find_map(|p| p.strip_prefix("q="))
                    .and_then(|q| q.parse::<f32>().ok())
                    .unwrap_or(1.0);
                (media == wanted).then_some(q)
            })
            .fold(None, |best: Option<f32>, q| {
                Some(best.map_or(q, |b| b.max(q)))
            })
    };
    Ok(
        match (quality("application/json"), quality("text/event-stream")) {
            (Some(json), Some(sse)) => json > 0.0 && json > sse,
            (Some(json), None) => json > 0.0,
            _ => false,
        },
    )
}
