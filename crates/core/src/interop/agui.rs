//! AG-UI (the Agent–User Interaction protocol of CopilotKit and others): `POST /api/agui` takes
//! a `RunAgentInput` and answers one turn as AG-UI events: a guided turn, or (with
//! `forwardedProps.agent` = `"assistant"`) a turn of the page-aware assistant, whose tools come
//! out as `TOOL_CALL_*`. [`run_input`] reads the input into a [`RunRequest`]; [`AgUiEncoder`]
//! writes the turn's events as `RUN_STARTED`, `STEP_STARTED` (the workflow step a guided turn
//! answers), `TEXT_MESSAGE_*`, `TOOL_CALL_START` / `_ARGS` / `_END` / `_RESULT`,
//! `STEP_FINISHED`, `STATE_SNAPSHOT` (`{current_step, config, skipped}`, guided) and
//! `RUN_FINISHED` (its `result` is the answer's [`answer_data`]), or `RUN_ERROR`.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{TextParts, ToolCalls, answer_data, answer_message, data_frame};
use crate::protocol::{ChatMessage, ChatRequest, Role, StreamEvent, TurnAnswer};
use crate::workflow::{Config, UserAction};

/// Most messages of a run's history read (older ones are dropped first).
pub const MAX_HISTORY: usize = 50;

/// The fields of AG-UI's `RunAgentInput` that a guided turn reads. `tools` and `context` are
/// accepted and ignored: the workflow decides what the model may do.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RunAgentInput {
    /// The client's thread id, echoed in `RUN_STARTED` and `RUN_FINISHED`.
    pub thread_id: String,
    /// The client's run id, echoed likewise.
    pub run_id: String,
    /// `{current_step, config, skipped}` of the guided workflow, as the last `STATE_SNAPSHOT`.
    #[serde(default)]
    pub state: Option<GuidedState>,
    /// The thread's messages; the last user message is the turn's input.
    pub messages: Vec<AgUiMessage>,
    /// Stepwise's own fields (`workflow`, `provider`, `user_action`, and the
    /// `conversation_id` / `turns` of the last answer to continue a stored conversation).
    #[serde(default)]
    pub forwarded_props: Option<ForwardedProps>,
    /// Answers to the interrupts that ended the previous run (an approval's decision).
    #[serde(default)]
    pub resume: Vec<ResumeEntry>,
}

/// An answer to one interrupt (AG-UI's `ResumeEntry`). An approval: `resolved` with a payload
/// `{approved, reason?, editedArgs?}`, or `cancelled` (a denial). A context request (its
/// interrupt's id is `context:<request id>`): `resolved` with `{payloads?: [{slot, text |
/// key_path}], skip?: [slot]}`, or `cancelled` (run without it).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResumeEntry {
    /// The interrupt answered: the approval's id, or `context:` and the request's id.
    pub interrupt_id: String,
    /// `resolved` or `cancelled`.
    pub status: String,
    /// The answer.
    #[serde(default)]
    pub payload: Option<Value>,
}

/// The shared state of a guided run.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "AgUiState"))]
pub struct GuidedState {
    /// The step the client is on.
    #[serde(default)]
    pub current_step: Option<String>,
    /// The collected config.
    #[serde(default)]
    pub config: Config,
    /// Optional fields skipped.
    #[serde(default)]
    pub skipped: Vec<String>,
}

/// One message of the thread (AG-UI roles: user, assistant, system, developer, tool).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgUiMessage {
    /// Its role.
    pub role: String,
    /// Text, or a list of content parts of which the `text` parts are read.
    #[serde(default)]
    pub content: Value,
}

/// What a Stepwise client may forward with a run.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ForwardedProps {
    /// Which agent answers: `guided` (the default) or `assistant`.
    #[serde(default)]
    pub agent: Option<String>,
    /// The page context of an assistant run (`ChatContext`: `current_page`, tabs, what is on
    /// screen), checked by the server.
    #[serde(default)]
    pub context: Option<Value>,
    /// The workflow id (default `research_stream`).
    #[serde(default)]
    pub workflow: Option<String>,
    /// A provider name.
    #[serde(default)]
    pub provider: Option<String>,
    /// A typed action (a chip, checkboxes, a skip); defaults to text input.
    #[serde(default)]
    pub user_action: Option<UserAction>,
    /// The stored conversation to continue.
    #[serde(default)]
    pub conversation_id: Option<String>,
    /// Its `turns` from the last answer (guided runs).
    #[serde(default)]
    pub turns: Option<u32>,
}

/// The turn a run asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum RunRequest {
    /// A guided workflow turn.
    Guided(ChatRequest),
    /// A turn of the page-aware assistant, whose conversation the server holds (the run's
    /// earlier messages are not read: the stored conversation is).
    Assistant(AssistantRun),
    /// The owner's answer to the interrupt that ended the previous run.
    Resume(ResumeRun),
}

/// The prefix of a context request's interrupt id in AG-UI (an approval's is its bare id).
pub const CONTEXT_INTERRUPT_PREFIX: &str = "context:";

/// An interrupt answered by a run's resume entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeRun {
    /// The conversation the interrupt is in.
    pub conversation_id: String,
    /// The page context of the run that answers.
    pub context: Option<Value>,
    /// What was answered.
    pub answer: ResumeAnswer,
}

/// What a resume entry answers.
#[derive(Debug, Clone, PartialEq)]
pub enum ResumeAnswer {
    /// An approval decided.
    Approval {
        /// The approval.
        approval_id: String,
        /// Approved, or denied.
        approved: bool,
        /// The arguments as the owner edited them.
        arguments: Option<Value>,
        /// Why it was denied.
        reason: Option<String>,
    },
    /// A context request supplied, skipped, or run without (`run_without`).
    Context {
        /// The request.
        request_id: String,
        /// The slots supplied: `{slot, text}` or `{slot, key_path}` each.
        payloads: Vec<Value>,
        /// The slots skipped.
        skip: Vec<String>,
        /// "Run without context" (a `cancelled` entry).
        run_without: bool,
    },
}

/// A context request as an AG-UI interrupt: its slots to supply, skip, or run without.
fn context_interrupt(request: &crate::handshake::ContextRequest) -> Value {
    use crate::interrupt::Interruptible;
    let slots: Vec<&str> = request.slots.iter().map(|s| s.slot.as_str()).collect();
    let payload = json!({"type": "object", "required": ["slot"], "properties": {
        "slot": {"enum": slots}, "text": {"type": "string"}, "key_path": {"type": "string"}}});
    let schema = json!({"type": "object", "properties": {
        "payloads": {"type": "array", "items": payload},
        "skip": {"type": "array", "items": {"enum": slots}}}});
    json!({"id": format!("{CONTEXT_INTERRUPT_PREFIX}{}", request.request_id),
           "reason": "context_request", "message": request.summary(),
           "responseSchema": schema, "expiresAt": crate::dates::iso(request.deadline())})
}

/// An assistant turn asked for by a run.
#[derive(Debug, Clone, PartialEq)]
pub struct AssistantRun {
    /// The conversation to continue; a new one when `None`.
    pub conversation_id: Option<String>,
    /// The user's message.
    pub message: String,
    /// The page context, as sent (the server checks it).
    pub context: Value,
    /// A provider name.
    pub provider: Option<String>,
}

/// Why a run's input cannot become a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError(pub String);

/// The text of a message's content (a string, or the `text` parts of a list).
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The turn a run asks for: its last message must be the user's. A guided run (the default)
/// reads earlier user and assistant messages as the history (at most [`MAX_HISTORY`]) and
/// `state` as the workflow's; an assistant run (`forwardedProps.agent` = `"assistant"`) needs
/// the page context in `forwardedProps.context`, and takes none of the guided fields.
///
/// ```
/// use stepwise_core::interop::agui::{RunAgentInput, RunRequest, run_input};
///
/// let input: RunAgentInput = serde_json::from_str(r#"{"threadId": "t", "runId": "r",
///   "state": {"current_step": "purpose", "config": {}},
///   "messages": [{"id": "1", "role": "user", "content": "Track rivals"}]}"#).unwrap();
/// let RunRequest::Guided(request) = run_input(&input).unwrap() else { unreachable!() };
/// assert_eq!(request.message, "Track rivals");
/// assert_eq!(request.current_step.as_deref(), Some("purpose"));
///
/// let input: RunAgentInput = serde_json::from_str(r#"{"threadId": "t", "runId": "r",
///   "messages": [{"id": "1", "role": "user", "content": "EGFR articles"}],
///   "forwardedProps": {"agent": "assistant", "context": {"current_page": "streams"}}}"#).unwrap();
/// let RunRequest::Assistant(run) = run_input(&input).unwrap() else { unreachable!() };
/// assert_eq!(run.message, "EGFR articles");
/// ```
pub fn run_input(input: &RunAgentInput) -> Result<RunRequest, InputError> {
    if !input.resume.is_empty() {
        return resume_run(input).map(RunRequest::Resume);
    }
    let (last, earlier) = input.messages.split_last().ok_or_else(|| {
        InputError("`messages` is empty: the last message must be the user's".into())
    })?;
    if last.role != "user" {
        return Err(InputError(format!(
            "the last message is the {}'s: a run answers a user message",
            last.role
        )));
    }
    let props = input.forwarded_props.clone().unwrap_or_default();
    match props.agent.as_deref().unwrap_or("guided") {
        "guided" => guided_run(input, last, earlier, props).map(RunRequest::Guided),
        "assistant" => assistant_run(input, last, props).map(RunRequest::Assistant),
        other => Err(InputError(format!(
            "`forwardedProps.agent` is `guided` or `assistant`, not `{other:.32}`"
        ))),
    }
}

/// A run that answers the interrupt of the run before it: an approval or a context request of
/// an assistant run.
fn resume_run(input: &RunAgentInput) -> Result<ResumeRun, InputError> {
    let [entry] = input.resume.as_slice() else {
        return Err(InputError(
            "`resume` answers one interrupt: a run ends with at most one".into(),
        ));
    };
    let props = input.forwarded_props.clone().unwrap_or_default();
    if props.agent.as_deref() != Some("assistant") {
        return Err(InputError(
            "only assistant runs are interrupted: send `forwardedProps.agent` = `assistant`".into(),
        ));
    }
    let conversation_id = props.conversation_id.ok_or_else(|| {
        InputError(
            "a resumed run names its conversation in `forwardedProps.conversation_id`".into(),
        )
    })?;
    let payload = entry.payload.clone().unwrap_or_default();
    let answer = match entry.interrupt_id.strip_prefix(CONTEXT_INTERRUPT_PREFIX) {
        Some(request_id) => context_answer(request_id, &entry.status, &payload)?,
        None => approval_answer(&entry.interrupt_id, &entry.status, &payload)?,
    };
    Ok(ResumeRun {
        conversation_id,
        context: props.context,
        answer,
    })
}

fn approval_answer(id: &str, status: &str, payload: &Value) -> Result<ResumeAnswer, InputError> {
    let text = |key: &str| payload[key].as_str().map(str::to_owned);
    let (approved, reason) = match status {
        "cancelled" => (
            false,
            Some(text("reason").unwrap_or_else(|| "cancelled".into())),
        ),
        "resolved" => match payload["approved"].as_bool() {
            Some(approved) => (approved, text("reason")),
            None => {
                return Err(InputError(
                    "a resolved approval's payload says `approved`: true or false".into(),
                ));
            }
        },
        other => return Err(status_error(other)),
    };
    let arguments = match payload.get("editedArgs") {
        None | Some(Value::Null) => None,
        Some(args) if args.is_object() && approved => Some(args.clone()),
        Some(_) => {
            return Err(InputError(
                "`editedArgs` is an object, sent with an approval".into(),
            ));
        }
    };
    Ok(ResumeAnswer::Approval {
        approval_id: id.to_owned(),
        approved,
        arguments,
        reason,
    })
}

fn context_answer(
    request_id: &str,
    status: &str,
    payload: &Value,
) -> Result<ResumeAnswer, InputError> {
    let run_without = match status {
        "cancelled" => true,
        "resolved" => false,
        other => return Err(status_error(other)),
    };
    let list = |key: &str| match payload.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.clone()),
        Some(_) => Err(InputError(format!("`{key}` is a list"))),
    };
    let payloads = list("payloads")?;
    let skip = list("skip")?
        .into_iter()
        .map(|slot| match slot {
            Value::String(slot) => Ok(slot),
            _ => Err(InputError("`skip` lists slot names".into())),
        })
        .collect::<Result<Vec<_>, _>>()?;
    if !run_without && payloads.is_empty() && skip.is_empty() {
        return Err(InputError(
            "a resolved context request's payload has `payloads`, `skip`, or both".into(),
        ));
    }
    Ok(ResumeAnswer::Context {
        request_id: request_id.to_owned(),
        payloads,
        skip,
        run_without,
    })
}

fn status_error(status: &str) -> InputError {
    InputError(format!(
        "a resume entry's status is `resolved` or `cancelled`, not `{status:.32}`"
    ))
}

fn guided_run(
    input: &RunAgentInput,
    last: &AgUiMessage,
    earlier: &[AgUiMessage],
    props: ForwardedProps,
) -> Result<ChatRequest, InputError> {
    if props.context.is_some() {
        return Err(InputError(
            "`forwardedProps.context` is the page context of an assistant run".into(),
        ));
    }
    let history: Vec<ChatMessage> = earlier
        .iter()
        .filter_map(|message| {
            let role = match message.role.as_str() {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                _ => return None,
            };
            let content = text_of(&message.content);
            (!content.is_empty()).then_some(ChatMessage::new(role, content))
        })
        .collect();
    let skip = history.len().saturating_sub(MAX_HISTORY);
    let state = input.state.clone().unwrap_or_default();
    Ok(ChatRequest {
        conversation_id: props.conversation_id,
        turns: props.turns,
        workflow: props.workflow,
        provider: props.provider,
        message: text_of(&last.content),
        current_step: state.current_step,
        current_config: state.config,
        conversation_history: history.into_iter().skip(skip).collect(),
        user_action: props.user_action,
        skipped: state.skipped,
    })
}

fn assistant_run(
    input: &RunAgentInput,
    last: &AgUiMessage,
    props: ForwardedProps,
) -> Result<AssistantRun, InputError> {
    let state = input.state.as_ref();
    let guided_only = [
        ("workflow", props.workflow.is_some()),
        ("user_action", props.user_action.is_some()),
        ("turns", props.turns.is_some()),
        (
            "state",
            state.is_some_and(|s| {
                s.current_step.is_some() || !s.config.is_empty() || !s.skipped.is_empty()
            }),
        ),
    ];
    if let Some((field, _)) = guided_only.iter().find(|(_, given)| *given) {
        return Err(InputError(format!(
            "`{field}` belongs to guided runs, not to an assistant run"
        )));
    }
    let context = props.context.ok_or_else(|| {
        InputError("an assistant run needs the page context in `forwardedProps.context`".into())
    })?;
    Ok(AssistantRun {
        conversation_id: props.conversation_id,
        message: text_of(&last.content),
        context,
        provider: props.provider,
    })
}

/// Encodes one turn's events as AG-UI events (SSE `data:` frames).
#[derive(Debug)]
pub struct AgUiEncoder {
    thread_id: String,
    run_id: String,
    message_id: String,
    step: Option<String>,
    started: bool,
    ended: bool,
    /// Its text messages (the answer's id, then `<id>-2`, … after tool calls).
    text: TextParts,
    tool_calls: ToolCalls,
    /// The interrupt the run ends with: a call held for approval.
    interrupt: Option<Value>,
}

impl AgUiEncoder {
    /// An encoder for the run `run_id` of `thread_id`, whose answer is message `message_id` and
    /// whose turn answers the workflow step `step` (when known).
    pub fn new(thread_id: &str, run_id: &str, message_id: &str, step: Option<&str>) -> Self {
        AgUiEncoder {
            thread_id: thread_id.to_owned(),
            run_id: run_id.to_owned(),
            message_id: message_id.to_owned(),
            step: step.map(str::to_owned),
            started: false,
            ended: false,
            text: TextParts::new(message_id, |base, n| match n {
                1 => base.to_owned(),
                n => format!("{base}-{n}"),
            }),
            tool_calls: ToolCalls::default(),
            interrupt: None,
        }
    }

    /// Whether the run has ended (`RUN_FINISHED` or `RUN_ERROR` was written).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The frames for one event (empty once the run has ended).
    pub fn encode(&mut self, event: &StreamEvent) -> String {
        let mut out = String::new();
        if self.ended {
            return out;
        }
        if !self.started {
            self.started = true;
            let started =
                json!({"type": "RUN_STARTED", "threadId": self.thread_id, "runId": self.run_id});
            push(&mut out, started);
            if let Some(step) = &self.step {
                push(&mut out, json!({"type": "STEP_STARTED", "stepName": step}));
            }
        }
        match event {
            StreamEvent::Status { message } => push(
                &mut out,
                json!({"type": "CUSTOM", "name": "stepwise.status", "value": {"message": message}}),
            ),
            StreamEvent::TextDelta { text } | StreamEvent::ModelDelta { text } => {
                self.text(&mut out, text)
            }
            StreamEvent::ToolStart {
                tool,
                input,
                call_id,
            } => {
                self.close_text(&mut out);
                // An approved call was started by the run it interrupted: its result goes to it.
                let id = match call_id {
                    Some(id) => id.clone(),
                    None => {
                        let id = format!("{}-call-{}", self.run_id, self.tool_calls.len() + 1);
                        self.call(&mut out, &id, tool, input);
                        id
                    }
                };
                self.tool_calls.start(id);
            }
            StreamEvent::ToolProgress {
                tool,
                stage,
                message,
                progress,
            } => push(
                &mut out,
                json!({"type": "CUSTOM", "name": "stepwise.tool_progress",
                       "value": {"tool": tool, "stage": stage, "message": message, "progress": progress}}),
            ),
            StreamEvent::ToolComplete { index, .. } => self.tool_calls.finish(*index),
            StreamEvent::ApprovalRequired { approval } => {
                // The held call, then the run ends with it as an interrupt (`RUN_FINISHED`'s
                // outcome); the next run's `resume` entry decides it.
                self.close_text(&mut out);
                self.call(
                    &mut out,
                    &approval.call_id,
                    &approval.tool,
                    &approval.arguments,
                );
                let custom = json!({"type": "CUSTOM", "name": "stepwise.approval_required",
                                    "value": approval});
                push(&mut out, custom);
                let schema = json!({"type": "object", "required": ["approved"], "properties": {
                    "approved": {"type": "boolean"},
                    "reason": {"type": "string", "maxLength": crate::approval::MAX_REASON_CHARS},
                    "editedArgs": {"type": "object"}}});
                self.interrupt = Some(json!({"id": approval.id, "reason": "tool_approval",
                    "message": approval.summary, "toolCallId": approval.call_id,
                    "responseSchema": schema, "expiresAt": crate::dates::iso(approval.expires_at)}));
            }
            StreamEvent::ContextRequired { payload } => {
                // The run ends with the request as an interrupt; the next run's `resume` entry
                // supplies or skips its slots, or runs without them (`cancelled`).
                self.close_text(&mut out);
                self.interrupt = Some(context_interrupt(&payload.request));
                let value = json!(payload);
                let custom =
                    json!({"type": "CUSTOM", "name": "stepwise.context_required", "value": value});
                push(&mut out, custom);
                self.finish(&mut out, value);
            }
            StreamEvent::Complete { payload } => self.complete(&mut out, payload),
            StreamEvent::Stopped { message } => {
                self.close_text(&mut out);
                let value = json!({"stopped": true, "message": message});
                let custom = json!({"type": "CUSTOM", "name": "stepwise.stopped", "value": value});
                push(&mut out, custom);
                self.finish(&mut out, value);
            }
            StreamEvent::Error { code, message } => {
                self.close_text(&mut out);
                push(
                    &mut out,
                    json!({"type": "RUN_ERROR", "message": message, "code": code}),
                );
                self.ended = true;
            }
        }
        out
    }

    fn complete(&mut self, out: &mut String, answer: &TurnAnswer) {
        if !self.text.sent() {
            self.text(out, answer_message(answer));
        }
        self.close_text(out);
        for (index, (id, used)) in self.tool_calls.results(answer).enumerate() {
            push(
                out,
                json!({"type": "TOOL_CALL_RESULT", "messageId": format!("{}-tool-{}", self.message_id, index + 1),
                       "toolCallId": id, "content": used.output, "role": "tool"}),
            );
        }
        let data = answer_data(answer);
        if let TurnAnswer::Guided(response) = answer {
            if let Some(step) = self.step.take() {
                push(out, json!({"type": "STEP_FINISHED", "stepName": step}));
            }
            let snapshot = json!({"current_step": response.next_step, "config": response.updated_config,
                                  "skipped": response.skipped});
            push(out, json!({"type": "STATE_SNAPSHOT", "snapshot": snapshot}));
        }
        self.finish(out, data);
    }

    fn text(&mut self, out: &mut String, text: &str) {
        if let Some((id, opened)) = self.text.write(text) {
            if opened {
                let start =
                    json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"});
                push(out, start);
            }
            let content = json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": text});
            push(out, content);
        }
    }

    fn close_text(&mut self, out: &mut String) {
        if let Some(id) = self.text.close() {
            push(out, json!({"type": "TEXT_MESSAGE_END", "messageId": id}));
        }
    }

    fn finish(&mut self, out: &mut String, result: Value) {
        if let Some(step) = self.step.take() {
            push(out, json!({"type": "STEP_FINISHED", "stepName": step}));
        }
        let mut finished = json!({"type": "RUN_FINISHED", "threadId": self.thread_id,
                                  "runId": self.run_id, "result": result});
        if let Some(interrupt) = self.interrupt.take() {
            finished["outcome"] = json!({"type": "interrupt", "interrupts": [interrupt]});
        }
        push(out, finished);
        self.ended = true;
    }

    /// A tool call's start, arguments and end.
    fn call(&mut self, out: &mut String, id: &str, tool: &str, input: &Value) {
        push(
            out,
            json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": tool,
                   "parentMessageId": self.message_id}),
        );
        let args = json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": input.to_string()});
        push(out, args);
        push(out, json!({"type": "TOOL_CALL_END", "toolCallId": id}));
    }
}

fn push(out: &mut String, event: Value) {
    out.push_str(&data_frame(&event));
}
