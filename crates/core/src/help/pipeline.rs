//! One help-desk turn as a sans-IO machine (clarification-loop.md §3–§5):
//! `start → guardrails → router → (clarification | check_cache → hybrid_search → …) →
//! prompt_routing → generation → archive`. Each node is a pure step; when it needs the world
//! (a cache lookup, a search, a model call) the machine stops with an [`Effect`] and the driver
//! resumes it with the matching [`Input`]. The last step is the archive's [`Outcome`]: the reply,
//! the state to persist, and whether to cache the answer or escalate the session.
//!
//! The router's rules: a request for a person ("I want to talk to a person", in any language the
//! desk detects: [`wants_person`]), or a yes to the desk's offer of one, goes to the handoff node,
//! which hands the session over exactly as the "Talk to a person" button does ([`handoff`]);
//! otherwise, while a clarification context is active, the message is the answer to the current
//! question and goes straight to the clarification node (the spec's rule); no search effect is
//! ever produced in either case. `start` and `archive` run on every turn and are not listed in
//! the trace.
//!
//! An article that needs a person never hands the session over by itself: its answer comes first
//! (spec §5.2), ends by saying a person is needed and offers one, and the handoff happens when the
//! user accepts. A session handed over stays open for questions until an operator closes it.

use serde::{Deserialize, Serialize};

use super::doc::HelpDoc;
use super::prompt::{self, GenerationRequest, TranslationRequest};
use super::text::{cache_text, detect_language, fts_query, is_yes, wants_person};
use super::{HelpError, MAX_MESSAGE_CHARS};

/// The footer shown after the reply that hands the session to a person.
pub const HANDOFF_FOOTER: &str = "Connecting you to an agent…";
/// The reply that hands the session to a person (typed, or the "Talk to a person" button).
pub const HANDOFF_REPLY: &str = "I am handing this conversation to a person. They will see it, \
with your answers, and reply here. You can keep asking me questions meanwhile.";
/// The reply to a request for a person once one has the session.
pub const ALREADY_HANDED_OVER: &str = "A person already has this conversation and will reply \
here. You can keep asking me questions meanwhile.";
/// Ends an answer from an article that needs a person: what happens next, and how to accept.
pub const HANDOFF_OFFER: &str = "A person needs to take this further. Say yes, or press \
\"Talk to a person\", and I will hand this conversation over.";
/// The reply when no article passes the search threshold.
pub const NO_ANSWER: &str = "I could not find an answer to that in the help articles. You can \
rephrase the question, or ask to talk to a person.";

/// A node of the pipeline, as the trace names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Node {
    /// Checks the message (empty, too long).
    Guardrails,
    /// Sends a request for a person to the handoff node, an answer of an active loop to the
    /// clarification node, anything else to the cache.
    Router,
    /// Hands the session to a person (asked for, or the desk's offer accepted).
    Handoff,
    /// Starts the loop from a clarification task, or stores an answer and asks the next question.
    Clarification,
    /// Looks up a cached answer of the same question.
    CheckCache,
    /// Searches the knowledge base.
    HybridSearch,
    /// Builds the generation prompt from the article, the answers and the original query.
    PromptRouting,
    /// Asks the model for the answer.
    Generation,
}

/// Where the dialog stands after a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DialogState {
    /// A clarifying question waits for its answer.
    NeedsClarification,
    /// The question was answered (or the desk said it has no answer).
    AnswerProvided,
    /// The session was handed to a person.
    Escalated,
}

/// Why a session was handed to a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EscalationReason {
    /// The answer's article needs a person, and the user accepted the desk's offer.
    Article,
    /// The user asked for a person.
    Requested,
}

/// The clarification loop's state, exactly the spec's fields. `answers` is an object from
/// question to answer whose keys keep the questions' order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClarificationContext {
    /// Whether the loop is running: the next message answers `questions[current_index]`.
    pub active: bool,
    /// The article's questions, in order.
    pub questions: Vec<String>,
    /// The question waiting for its answer.
    pub current_index: usize,
    /// Each asked question's answer, verbatim, in the questions' order.
    pub answers: Answers,
    /// The article, kept so generation needs no second fetch.
    pub original_doc_content: String,
    /// Hand the session to a person after answering.
    pub requires_handoff: bool,
}

/// Answers in the questions' order, written as a JSON object (`{"Version?": "12"}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answers(pub Vec<(String, String)>);

impl Serialize for Answers {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (question, answer) in &self.0 {
            map.serialize_entry(question, answer)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Answers {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Ordered;
        impl<'de> serde::de::Visitor<'de> for Ordered {
            type Value = Answers;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of question → answer")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Answers, A::Error> {
                let mut pairs = Vec::new();
                while let Some(pair) = map.next_entry::<String, String>()? {
                    pairs.push(pair);
                }
                Ok(Answers(pairs))
            }
        }
        deserializer.deserialize_map(Ordered)
    }
}

/// The article an answer or a loop comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocRef {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its language.
    pub language: String,
}

impl From<&HelpDoc> for DocRef {
    fn from(doc: &HelpDoc) -> Self {
        DocRef {
            id: doc.id.clone(),
            title: doc.title.clone(),
            language: doc.language.clone(),
        }
    }
}

/// The state a session carries from turn to turn (loaded at start, saved by the archive).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelpState {
    /// The loop, while or after it ran for the current question.
    pub clarification_context: Option<ClarificationContext>,
    /// The question that started the loop (or the last question answered).
    pub original_query: Option<String>,
    /// The language the user asked in, when it could be told.
    pub user_language: Option<String>,
    /// The article of the loop or of the last answer.
    pub doc: Option<DocRef>,
    /// Where the dialog stands.
    pub dialog_state: Option<DialogState>,
    /// The last answer came from an article that needs a person and offered one: a yes, a
    /// request for a person or the button hands the session over, the article being the reason.
    #[serde(default)]
    pub pending_handoff: bool,
    /// A person has the session (set by the session when it is handed over).
    #[serde(default)]
    pub handed_over: bool,
}

impl HelpState {
    /// Whether the next message answers a clarifying question.
    pub fn clarifying(&self) -> bool {
        self.clarification_context
            .as_ref()
            .is_some_and(|c| c.active)
    }

    /// Why a handoff now would happen: the offer of the last answer's article, or the user's
    /// own request.
    pub fn handoff_reason(&self) -> EscalationReason {
        if self.pending_handoff {
            EscalationReason::Article
        } else {
            EscalationReason::Requested
        }
    }

    /// The state for a new question: nothing of the last one but the handoff.
    fn next_question(&self, message: &str) -> HelpState {
        HelpState {
            original_query: Some(message.to_owned()),
            user_language: detect_language(message).map(str::to_owned),
            handed_over: self.handed_over,
            ..HelpState::default()
        }
    }
}

/// A cached answer: the text and the article it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedAnswer {
    /// The answer.
    pub answer: String,
    /// Its article.
    pub doc: DocRef,
}

/// What the machine needs from the world before it can go on.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Look up the cached answer of this question text (answer with [`Input::Cached`]).
    LookupCache {
        /// The question's words ([`cache_text`]).
        text: String,
    },
    /// Search the knowledge base (answer with [`Input::Found`]).
    Search {
        /// The full-text query (`None`: the question has no content word to match).
        fts: Option<String>,
        /// The question as asked, for vector search.
        text: String,
    },
    /// Translate a clarifying question with a small model call (answer with
    /// [`Input::Translated`]; `None` when it failed, and the question is asked as written).
    Translate(TranslationRequest),
    /// Generate the answer (answer with [`Input::Generated`]; a failed call fails the turn, and
    /// nothing of it is kept).
    Generate(GenerationRequest),
}

/// The world's answer to an [`Effect`].
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// The cached answer, if any.
    Cached(Option<CachedAnswer>),
    /// The best article that passed the threshold, if any.
    Found(Option<HelpDoc>),
    /// The translated question, if the call succeeded.
    Translated(Option<String>),
    /// The generated answer.
    Generated(String),
}

/// A clarifying question as the client shows it ("Question 2 of 3").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionView {
    /// 1-based.
    pub number: usize,
    /// How many questions the loop has.
    pub total: usize,
    /// The question as asked (translated when the user writes another language).
    pub text: String,
}

/// The archive's record of a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The text shown to the user.
    pub reply: String,
    /// Shown after the reply (the handoff footer).
    pub footer: Option<String>,
    /// The state to persist.
    pub state: HelpState,
    /// Where the dialog stands.
    pub dialog_state: DialogState,
    /// The question asked, while clarifying.
    pub question: Option<QuestionView>,
    /// The article the reply answers from (answers only, not questions or handoffs).
    pub source: Option<DocRef>,
    /// The nodes visited, in order.
    pub trace: Vec<Node>,
    /// Whether the knowledge base was searched.
    pub searched: bool,
    /// The answer to cache under this question's text (answers that needed no clarification
    /// and no handoff).
    pub cache: Option<(String, CachedAnswer)>,
    /// Hand the session to a person now, for this reason.
    pub escalate: Option<EscalationReason>,
    /// The reply recommends a person: no article passed the floor, or the article needs one.
    pub offer_handoff: bool,
    /// No article passed the floor.
    pub no_answer: bool,
}

/// The machine's next move.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Perform this and [`Pipeline::resume`] with its input.
    Effect(Effect),
    /// The turn is over.
    Done(Box<Outcome>),
}

#[derive(Debug, Clone)]
enum Stage {
    AwaitCache,
    AwaitSearch,
    AwaitTranslation { question: QuestionView },
    AwaitGeneration { cacheable: bool, handoff: bool },
    Finished,
}

/// One turn in progress.
#[derive(Debug, Clone)]
pub struct Pipeline {
    state: HelpState,
    message: String,
    trace: Vec<Node>,
    searched: bool,
    stage: Stage,
}

impl Pipeline {
    /// Starts a turn on the session's `state` with the user's `message` (start, guardrails,
    /// router). A refused message is an error and nothing changes.
    ///
    /// ```
    /// use stepwise_core::help::{Effect, HelpState, Pipeline, Step};
    /// let (_, step) = Pipeline::start(&HelpState::default(), "Why did my research job fail?").unwrap();
    /// assert!(matches!(step, Step::Effect(Effect::LookupCache { .. })));
    /// let (_, step) = Pipeline::start(&HelpState::default(), "Can I talk to a person?").unwrap();
    /// assert!(matches!(step, Step::Done(outcome) if outcome.escalate.is_some()));
    /// assert_eq!(Pipeline::start(&HelpState::default(), "  ").unwrap_err().code(), "empty_message");
    /// ```
    pub fn start(state: &HelpState, message: &str) -> Result<(Pipeline, Step), HelpError> {
        check_message(message)?;
        let mut pipeline = Pipeline {
            state: state.clone(),
            message: message.to_owned(),
            trace: vec![Node::Guardrails, Node::Router],
            searched: false,
            stage: Stage::Finished,
        };
        let accepts_offer = state.pending_handoff && is_yes(message);
        if wants_person(message) || accepts_offer {
            let mut outcome = handoff_outcome(&pipeline.state, message);
            pipeline.trace.push(Node::Handoff);
            outcome.trace = pipeline.trace.clone();
            return Ok((pipeline, Step::Done(Box::new(outcome))));
        }
        // Anything else moves on from the offer of the last answer.
        pipeline.state.pending_handoff = false;
        let step = if pipeline.state.clarifying() {
            pipeline.answer_question()
        } else {
            pipeline.trace.push(Node::CheckCache);
            pipeline.stage = Stage::AwaitCache;
            Step::Effect(Effect::LookupCache {
                text: cache_text(message),
            })
        };
        Ok((pipeline, step))
    }

    /// Resumes with the world's answer to the last effect. An input that does not match the
    /// effect counts as its empty answer (a cache miss, nothing found, no translation).
    pub fn resume(&mut self, input: Input) -> Step {
        match (std::mem::replace(&mut self.stage, Stage::Finished), input) {
            (Stage::AwaitCache, Input::Cached(Some(hit))) => self.cached(hit),
            (Stage::AwaitCache, _) => {
                self.trace.push(Node::HybridSearch);
                self.searched = true;
                self.stage = Stage::AwaitSearch;
                Step::Effect(Effect::Search {
                    fts: fts_query(&self.message),
                    text: self.message.clone(),
                })
            }
            (Stage::AwaitSearch, Input::Found(Some(doc))) => self.found(doc),
            (Stage::AwaitSearch, _) => self.no_answer(),
            (Stage::AwaitTranslation { mut question }, input) => {
                if let Input::Translated(Some(text)) = input {
                    question.text = text;
                }
                self.ask(question)
            }
            (Stage::AwaitGeneration { cacheable, handoff }, input) => {
                let text = match input {
                    Input::Generated(text) => text,
                    _ => String::new(),
                };
                self.answered(text, cacheable, handoff)
            }
            (Stage::Finished, _) => self.done(String::new(), DialogState::AnswerProvided),
        }
    }

    /// Hybrid search found `doc`: a clarification task when it carries questions (the
    /// clarification node starts the loop; search never does), else straight to generation.
    fn found(&mut self, doc: HelpDoc) -> Step {
        self.state.doc = Some(DocRef::from(&doc));
        self.state.original_query = Some(self.message.clone());
        self.state.user_language = detect_language(&self.message).map(str::to_owned);
        if doc.clarifying_questions.is_empty() {
            self.state.clarification_context = None;
            return self.generate(&doc.body, doc.requires_handoff, true);
        }
        let task = ClarificationTask {
            questions: doc.clarifying_questions,
            doc_content: doc.body,
            requires_handoff: doc.requires_handoff,
        };
        self.start_loop(task)
    }

    /// The clarification node, case A: initialize the context from the task, ask question 1.
    fn start_loop(&mut self, task: ClarificationTask) -> Step {
        self.trace.push(Node::Clarification);
        let total = task.questions.len();
        let first = task.questions[0].clone();
        self.state.clarification_context = Some(ClarificationContext {
            active: true,
            questions: task.questions,
            current_index: 0,
            answers: Answers::default(),
            original_doc_content: task.doc_content,
            requires_handoff: task.requires_handoff,
        });
        self.translate_then_ask(QuestionView {
            number: 1,
            total,
            text: first,
        })
    }

    /// The clarification node, case B: the message answers the current question, verbatim;
    /// ask the next one, or close the loop and generate.
    fn answer_question(&mut self) -> Step {
        self.trace.push(Node::Clarification);
        let Some(context) = self.state.clarification_context.as_mut() else {
            return self.no_answer();
        };
        if let Some(question) = context.questions.get(context.current_index) {
            context
                .answers
                .0
                .push((question.clone(), self.message.clone()));
        }
        context.current_index += 1;
        if let Some(next) = context.questions.get(context.current_index) {
            let view = QuestionView {
                number: context.current_index + 1,
                total: context.questions.len(),
                text: next.clone(),
            };
            return self.translate_then_ask(view);
        }
        context.active = false;
        let (body, handoff) = (
            context.original_doc_content.clone(),
            context.requires_handoff,
        );
        self.generate(&body, handoff, false)
    }

    fn translate_then_ask(&mut self, question: QuestionView) -> Step {
        let doc_language = self.state.doc.as_ref().map(|d| d.language.as_str());
        match (self.state.user_language.as_deref(), doc_language) {
            (Some(user), Some(doc)) if user != doc => {
                let request = prompt::translation(&question.text, doc, user);
                self.stage = Stage::AwaitTranslation { question };
                Step::Effect(Effect::Translate(request))
            }
            _ => self.ask(question),
        }
    }

    fn ask(&mut self, question: QuestionView) -> Step {
        let reply = question.text.clone();
        let mut outcome = self.outcome(reply, DialogState::NeedsClarification);
        outcome.question = Some(question);
        Step::Done(Box::new(outcome))
    }

    /// Prompt routing, then the generation call.
    fn generate(&mut self, body: &str, handoff: bool, cacheable: bool) -> Step {
        self.trace.push(Node::PromptRouting);
        let answers = self
            .state
            .clarification_context
            .as_ref()
            .map(|c| c.answers.0.as_slice())
            .unwrap_or_default();
        let query = self
            .state
            .original_query
            .as_deref()
            .unwrap_or(&self.message);
        let title = self.state.doc.as_ref().map_or("", |d| d.title.as_str());
        let request = prompt::generation(title, body, answers, query);
        self.trace.push(Node::Generation);
        self.stage = Stage::AwaitGeneration { cacheable, handoff };
        Step::Effect(Effect::Generate(request))
    }

    /// The archive after generation. When the article needs a person, the answer comes first and
    /// ends with the offer of one (spec §5.2's order); the user's yes hands the session over.
    fn answered(&mut self, text: String, cacheable: bool, handoff: bool) -> Step {
        let mut reply = if text.trim().is_empty() {
            "The model gave no answer; please ask again.".to_owned()
        } else {
            text.trim().to_owned()
        };
        let offer = handoff && !self.state.handed_over;
        if offer {
            reply.push_str("\n\n");
            reply.push_str(HANDOFF_OFFER);
            self.state.pending_handoff = true;
        }
        let mut outcome = self.outcome(reply, DialogState::AnswerProvided);
        outcome.source = self.state.doc.clone();
        outcome.offer_handoff = offer;
        // An answer that needs a person is never cached: the offer goes with it.
        if cacheable
            && !handoff
            && let Some(doc) = &self.state.doc
        {
            let cached = CachedAnswer {
                answer: outcome.reply.clone(),
                doc: doc.clone(),
            };
            outcome.cache = Some((cache_text(&self.message), cached));
        }
        Step::Done(Box::new(outcome))
    }

    fn cached(&mut self, hit: CachedAnswer) -> Step {
        self.state = HelpState {
            doc: Some(hit.doc.clone()),
            ..self.state.next_question(&self.message)
        };
        let mut outcome = self.outcome(hit.answer, DialogState::AnswerProvided);
        outcome.source = Some(hit.doc);
        Step::Done(Box::new(outcome))
    }

    fn no_answer(&mut self) -> Step {
        self.state = self.state.next_question(&self.message);
        let mut outcome = self.outcome(NO_ANSWER.to_owned(), DialogState::AnswerProvided);
        outcome.no_answer = true;
        outcome.offer_handoff = true;
        Step::Done(Box::new(outcome))
    }

    fn done(&mut self, reply: String, dialog_state: DialogState) -> Step {
        Step::Done(Box::new(self.outcome(reply, dialog_state)))
    }

    fn outcome(&mut self, reply: String, dialog_state: DialogState) -> Outcome {
        self.state.dialog_state = Some(dialog_state);
        blank_outcome(
            reply,
            self.state.clone(),
            dialog_state,
            self.trace.clone(),
            self.searched,
        )
    }
}

fn blank_outcome(
    reply: String,
    state: HelpState,
    dialog_state: DialogState,
    trace: Vec<Node>,
    searched: bool,
) -> Outcome {
    Outcome {
        reply,
        footer: None,
        state,
        dialog_state,
        question: None,
        source: None,
        trace,
        searched,
        cache: None,
        escalate: None,
        offer_handoff: false,
        no_answer: false,
    }
}

/// The handoff node on its own: what the "Talk to a person" button does to a session in `state`,
/// and what the router does with a request for a person. The session is handed over (reason:
/// the pending offer of an article, else the user's request) with [`HANDOFF_REPLY`] and the
/// footer; a running clarification loop stops, keeping its answers for the person; a session a
/// person already has is told so and changes nothing.
///
/// ```
/// use stepwise_core::help::pipeline::{handoff, EscalationReason, HANDOFF_FOOTER};
/// use stepwise_core::help::HelpState;
/// let outcome = handoff(&HelpState::default());
/// assert_eq!(outcome.escalate, Some(EscalationReason::Requested));
/// assert_eq!(outcome.footer.as_deref(), Some(HANDOFF_FOOTER));
/// ```
pub fn handoff(state: &HelpState) -> Outcome {
    let mut outcome = handoff_outcome(state, "");
    outcome.trace = vec![Node::Handoff];
    outcome
}

fn handoff_outcome(state: &HelpState, message: &str) -> Outcome {
    let mut next = state.clone();
    let reason = next.handoff_reason();
    next.pending_handoff = false;
    if let Some(context) = next.clarification_context.as_mut() {
        context.active = false;
    }
    if next.original_query.is_none() && !message.trim().is_empty() {
        next.original_query = Some(message.to_owned());
    }
    next.dialog_state = Some(DialogState::Escalated);
    if state.handed_over {
        let reply = ALREADY_HANDED_OVER.to_owned();
        return blank_outcome(reply, next, DialogState::Escalated, Vec::new(), false);
    }
    let reply = HANDOFF_REPLY.to_owned();
    let mut outcome = blank_outcome(reply, next, DialogState::Escalated, Vec::new(), false);
    outcome.footer = Some(HANDOFF_FOOTER.to_owned());
    outcome.escalate = Some(reason);
    outcome
}

/// The guardrails node's checks, also run by a driver before it takes a session's turn: a
/// message must hold a non-blank character and at most [`MAX_MESSAGE_CHARS`].
pub fn check_message(message: &str) -> Result<(), HelpError> {
    if message.trim().is_empty() {
        return Err(HelpError::EmptyMessage);
    }
    let chars = message.chars().count();
    if chars > MAX_MESSAGE_CHARS {
        return Err(HelpError::MessageTooLong(chars));
    }
    Ok(())
}

/// What search hands the clarification node: the article's questions and content.
struct ClarificationTask {
    questions: Vec<String>,
    doc_content: String,
    requires_handoff: bool,
}
