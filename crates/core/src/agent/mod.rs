//! The assistant's agent loop (chat-architecture.md §2), sans-IO: the driver tells the
//! [`Agent`] what the model answered and how each tool run ended; the agent answers with the
//! next [`Step`]: call the model (with the rounds so far), run these tools, or done.
//!
//! Bounded: at most [`AgentLimits::max_iterations`] model calls a turn (the last one may not
//! call tools) and [`AgentLimits::max_tool_calls`] tool runs. A call of an unknown tool, with
//! arguments that are not a JSON object or fail the tool's `input_schema`, past the bound, or
//! whose tool failed or timed out becomes an error reply the model reads: never a crash.
//!
//! A call of a tool that needs the owner's approval ([`crate::approval`]) is held, not run: the
//! round's other calls run, and the turn ends there with the held call as the answer's
//! [`Approval`]. One call is held a turn; another one is refused. The turn that the approval
//! begins starts from the held call's round ([`Agent::seed`]), its reply the tool's result.

mod answer;

pub use answer::{AssistantResponse, Note, finish};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::{Approval, complete_arguments, estimated_calls};
use crate::json::check_schema;
use crate::llm::{Round, ToolCall, ToolReply, ToolSpec};
use crate::markers::Payload;
use crate::registry::Resolution;

/// The bounds of one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentLimits {
    /// Most model calls (default 6).
    pub max_iterations: u32,
    /// Most tool runs (default 10).
    pub max_tool_calls: u32,
}

impl Default for AgentLimits {
    fn default() -> Self {
        AgentLimits {
            max_iterations: 6,
            max_tool_calls: 10,
        }
    }
}

/// What the driver does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Call the model with [`Agent::rounds`]; `answer_now` forbids tool calls (the last call).
    CallModel {
        /// The model must answer in text.
        answer_now: bool,
    },
    /// Run these tools (each reported back with [`Agent::tool_finished`]), emitting
    /// `tool_start` before and `tool_complete` after each.
    RunTools(Vec<ToolRun>),
    /// The turn's answer is complete: build it with [`finish`].
    Done,
}

/// A tool to run, its input checked against its schema.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRun {
    /// The call's index in the turn (every call counts, refused ones too).
    pub index: u32,
    /// The tool.
    pub tool: String,
    /// Its input.
    pub input: Value,
}

/// How a tool run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// It answered: `text` for the model, and data for the client when the tool has a payload type.
    Done {
        /// What the model reads.
        text: String,
        /// The payload's data.
        payload: Option<Value>,
    },
    /// It failed; the message is shown to the model.
    Failed(String),
    /// It did not finish in time.
    TimedOut,
}

/// One tool call of a turn, as `tool_history` shows it (spec §5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolUse {
    /// The tool called.
    pub tool_name: String,
    /// Its input (the arguments as written when they were not a JSON object).
    pub input: Value,
    /// What the model read back.
    pub output: String,
    /// The call was refused or failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// One turn's loop.
#[derive(Debug, Clone)]
pub struct Agent<'r> {
    resolution: &'r Resolution<'r>,
    limits: AgentLimits,
    rounds: Vec<Round>,
    /// The round whose tools are running: its replies so far, in call order.
    open: Option<(Round, Vec<Option<ToolReply>>)>,
    model_calls: u32,
    tools_run: u32,
    /// Whether the last model call forbade tool calls.
    answer_now: bool,
    history: Vec<ToolUse>,
    payloads: Vec<Payload>,
    notes: Vec<Note>,
    /// The call held for the owner's approval.
    held: Option<Approval>,
    /// The configured providers and the synthesis default, written into held calls' arguments.
    defaults: (Vec<String>, String),
}

impl<'r> Agent<'r> {
    /// A turn with the tools of `resolution`.
    pub fn new(resolution: &'r Resolution<'r>, limits: AgentLimits) -> Self {
        Agent {
            resolution,
            limits,
            rounds: Vec::new(),
            open: None,
            model_calls: 0,
            tools_run: 0,
            answer_now: false,
            history: Vec::new(),
            payloads: Vec::new(),
            notes: Vec::new(),
            held: None,
            defaults: (Vec::new(), String::new()),
        }
    }

    /// The server's defaults a held `start_research` call shows: the `configured` providers and
    /// the `synthesis` provider.
    pub fn with_defaults(mut self, configured: Vec<String>, synthesis: String) -> Self {
        self.defaults = (configured, synthesis);
        self
    }

    /// Starts the turn from an earlier round: the approved call and its result. Its calls are
    /// the first of the turn's tool history (the turn's own calls are numbered after them).
    pub fn seed(&mut self, round: Round) {
        for (call, reply) in round.calls.iter().zip(&round.replies) {
            self.history.push(ToolUse {
                tool_name: call.name.clone(),
                input: call
                    .input()
                    .unwrap_or_else(|| Value::String(call.arguments.clone())),
                output: reply.content.clone(),
                is_error: reply.is_error,
            });
        }
        self.rounds.push(round);
    }

    /// The call held for approval this turn, if any.
    pub fn held(&self) -> Option<&Approval> {
        self.held.as_ref()
    }

    /// The first step: call the model.
    pub fn start(&mut self) -> Step {
        self.next_call()
    }

    /// The tools to offer, as providers take them.
    pub fn tool_specs(&self) -> Vec<ToolSpec<'r>> {
        self.resolution
            .tools
            .iter()
            .map(|tool| ToolSpec {
                name: &tool.name,
                description: &tool.description,
                parameters: &tool.input_schema,
            })
            .collect()
    }

    /// The rounds of calls and replies so far, for the next model call.
    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }

    /// The model answered `text` and made `calls`.
    pub fn model_answered(&mut self, text: &str, calls: Vec<ToolCall>) -> Step {
        if calls.is_empty() {
            return Step::Done;
        }
        if self.answer_now {
            for call in &calls {
                self.note(
                    "tool_call_ignored",
                    format!("`{}` was called after the last round; not run", call.name),
                );
            }
            return Step::Done;
        }
        let mut runs = Vec::new();
        let mut replies = Vec::with_capacity(calls.len());
        for call in &calls {
            let index = self.history.len() as u32;
            let input = call.input();
            let refusal = self.refusal(call, input.as_ref());
            self.history.push(ToolUse {
                tool_name: call.name.clone(),
                input: input
                    .clone()
                    .unwrap_or_else(|| Value::String(call.arguments.clone())),
                output: String::new(),
                is_error: false,
            });
            // Judged on the arguments as they would run (the server's defaults written out).
            let (configured, synthesis) = &self.defaults;
            let completed = input
                .as_ref()
                .map(|args| complete_arguments(&call.name, args, configured, synthesis));
            let needs_approval = refusal.is_none()
                && self.resolution.tool(&call.name).is_some_and(|tool| {
                    tool.needs_approval(completed.as_ref().unwrap_or(&Value::Null))
                });
            let refusal = match refusal {
                None if needs_approval && self.held.is_some() => Some(
                    "error: another action already waits for the user's approval this turn; propose one at a time"
                        .to_owned(),
                ),
                other => other,
            };
            match refusal {
                Some(message) => replies.push(Some(self.reply(call, index, message, true))),
                None if needs_approval => {
                    let args = completed.clone().unwrap_or_default();
                    let cost = estimated_calls(&call.name, &args);
                    self.held = Some(Approval::proposed(&call.name, &call.id, args, cost));
                    let waiting = "waiting for the user's approval; it has not run".to_owned();
                    replies.push(Some(self.reply(call, index, waiting, false)));
                }
                None => {
                    self.tools_run += 1;
                    runs.push(ToolRun {
                        index,
                        tool: call.name.clone(),
                        input: input.unwrap_or_default(),
                    });
                    replies.push(None);
                }
            }
        }
        let round = Round {
            text: text.to_owned(),
            calls,
            replies: Vec::new(),
        };
        self.open = Some((round, replies));
        if runs.is_empty() {
            return self.close_round();
        }
        Step::RunTools(runs)
    }

    /// A tool run of the open round ended. Returns the next step once every run of the round
    /// has ended, `None` while some are still running (or for an index that is not running).
    pub fn tool_finished(&mut self, index: u32, outcome: ToolOutcome) -> Option<Step> {
        let (round, replies) = self.open.as_ref()?;
        let first = self.history.len() - replies.len();
        let slot = (index as usize).checked_sub(first)?;
        if replies.get(slot)?.is_some() {
            return None;
        }
        let call = round.calls[slot].clone();
        let (text, is_error) = match outcome {
            ToolOutcome::Done { text, payload } => {
                if let Some(data) = payload {
                    self.accept_payload(&call.name, data);
                }
                (text, false)
            }
            ToolOutcome::Failed(message) => (format!("error: {message}"), true),
            ToolOutcome::TimedOut => ("error: the tool did not finish in time".to_owned(), true),
        };
        let reply = self.reply(&call, index, text, is_error);
        let (_, replies) = self.open.as_mut()?;
        replies[slot] = Some(reply);
        if replies.iter().all(Option::is_some) {
            Some(self.close_round())
        } else {
            None
        }
    }

    /// Every tool call of the turn so far.
    pub fn tool_history(&self) -> &[ToolUse] {
        &self.history
    }

    /// Model calls made so far.
    pub fn model_calls(&self) -> u32 {
        self.model_calls
    }

    fn refusal(&self, call: &ToolCall, input: Option<&Value>) -> Option<String> {
        let Some(tool) = self.resolution.tool(&call.name) else {
            let known: Vec<&str> = self
                .resolution
                .tools
                .iter()
                .map(|t| t.name.as_str())
                .collect();
            return Some(format!(
                "error: there is no tool `{}` here; available: {}",
                call.name,
                known.join(", ")
            ));
        };
        if self.tools_run >= self.limits.max_tool_calls {
            return Some(format!(
                "error: the limit of {} tool calls a turn is reached; answer with what you have",
                self.limits.max_tool_calls
            ));
        }
        let Some(input) = input else {
            return Some("error: the arguments are not a JSON object".into());
        };
        check_schema(input, &tool.input_schema)
            .err()
            .map(|why| format!("error: invalid arguments: {why}"))
    }

    fn reply(&mut self, call: &ToolCall, index: u32, content: String, is_error: bool) -> ToolReply {
        if let Some(entry) = self.history.get_mut(index as usize) {
            entry.output = content.clone();
            entry.is_error = is_error;
        }
        ToolReply {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error,
        }
    }

    fn accept_payload(&mut self, tool: &str, data: Value) {
        let payload_type = self
            .resolution
            .tool(tool)
            .and_then(|t| t.payload_type.as_deref())
            .and_then(|name| self.resolution.payload(name));
        let Some(payload_type) = payload_type else {
            self.note(
                "unexpected_payload",
                format!("`{tool}` returned data but has no payload type"),
            );
            return;
        };
        match check_schema(&data, &payload_type.schema) {
            Ok(()) => self.payloads.push(Payload {
                payload_type: payload_type.name.clone(),
                data: crate::json::JsonText::from_value(&data),
            }),
            Err(why) => {
                let message = format!("`{}` from `{tool}` dropped: {why}", payload_type.name);
                self.note("invalid_payload", message);
            }
        }
    }

    fn close_round(&mut self) -> Step {
        if let Some((mut round, replies)) = self.open.take() {
            round.replies = replies.into_iter().flatten().collect();
            self.rounds.push(round);
        }
        if self.held.is_some() {
            // The turn ends with the held call: the owner decides before anything else runs.
            return Step::Done;
        }
        self.next_call()
    }

    fn next_call(&mut self) -> Step {
        if self.model_calls >= self.limits.max_iterations {
            return Step::Done;
        }
        self.model_calls += 1;
        self.answer_now =
            self.resolution.tools.is_empty() || self.model_calls >= self.limits.max_iterations;
        Step::CallModel {
            answer_now: self.answer_now,
        }
    }

    fn note(&mut self, code: &'static str, message: String) {
        self.notes.push(Note {
            code: code.into(),
            message,
        });
    }

    /// The turn's tool payloads and notes, for [`finish`].
    pub(crate) fn into_results(self) -> (Vec<ToolUse>, Vec<Payload>, Vec<Note>, Option<Approval>) {
        (self.history, self.payloads, self.notes, self.held)
    }
}
