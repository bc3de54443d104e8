//! Helpers of the help desk's tests: an article, a small in-memory world that answers the
//! pipeline's effects and records them, a session inside a clarification loop, and sessions
//! begun and turned through `handle`.

use stepwise_core::help::pipeline::{Answers, CachedAnswer, DocRef};
use stepwise_core::help::session::TurnRecord;
use stepwise_core::help::{
    Caller, ClarificationContext, DialogState, Effect, HelpCommand, HelpDoc, HelpSession,
    HelpState, Input, Outcome, Pipeline, Step, handle,
};

/// An article with its clarifying questions.
pub fn doc(id: &str, questions: &[&str], handoff: bool, language: &str) -> HelpDoc {
    HelpDoc {
        id: id.into(),
        title: format!("Article {id}"),
        body: format!("The body of {id}."),
        language: language.into(),
        clarifying_questions: questions.iter().map(|q| q.to_string()).collect(),
        requires_handoff: handoff,
        updated_at: 1,
    }
}

/// A world: one article found by any search, an optional cached answer; it records effects.
pub struct World {
    pub found: Option<HelpDoc>,
    pub cached: Option<CachedAnswer>,
    pub effects: Vec<Effect>,
}

impl World {
    pub fn new(found: Option<HelpDoc>) -> Self {
        World {
            found,
            cached: None,
            effects: Vec::new(),
        }
    }

    pub fn turn(&mut self, state: &HelpState, message: &str) -> Outcome {
        let (mut pipeline, mut step) = Pipeline::start(state, message).unwrap();
        loop {
            match step {
                Step::Done(outcome) => return *outcome,
                Step::Effect(effect) => {
                    let input = match &effect {
                        Effect::LookupCache { .. } => Input::Cached(self.cached.clone()),
                        Effect::Search { .. } => Input::Found(self.found.clone()),
                        Effect::Translate(request) => Input::Translated(Some(format!(
                            "[{}] {}",
                            request.to, request.question
                        ))),
                        Effect::Generate(request) => {
                            Input::Generated(format!("ANSWER<{}>", request.prompt))
                        }
                    };
                    self.effects.push(effect);
                    step = pipeline.resume(input);
                }
            }
        }
    }

    pub fn searches(&self) -> usize {
        self.effects
            .iter()
            .filter(|e| matches!(e, Effect::Search { .. }))
            .count()
    }
}

pub fn looping(questions: &[&str], index: usize, answers: &[(&str, &str)]) -> HelpState {
    HelpState {
        clarification_context: Some(ClarificationContext {
            active: true,
            questions: questions.iter().map(|q| q.to_string()).collect(),
            current_index: index,
            answers: Answers(
                answers
                    .iter()
                    .map(|(q, a)| (q.to_string(), a.to_string()))
                    .collect(),
            ),
            original_doc_content: "Restart the app.".into(),
            requires_handoff: false,
        }),
        original_query: Some("The app crashes".into()),
        user_language: Some("en".into()),
        doc: Some(DocRef {
            id: "crash".into(),
            title: "Crashes".into(),
            language: "en".into(),
        }),
        dialog_state: Some(DialogState::NeedsClarification),
        ..HelpState::default()
    }
}

/// Session `s1` of `owner`, created with a first turn's lease (`t1`, held until 1010).
pub fn begun(owner: &str) -> HelpSession {
    let begin = HelpCommand::Begin {
        lease_id: "t1".into(),
        lease_ms: 1000,
        create: true,
    };
    handle(None, "s1", &Caller::Owner(owner.into()), &begin, 10)
        .unwrap()
        .record
        .unwrap()
}

/// What `world` makes of `message` on `state`, as a turn's record.
pub fn outcome_of(world: &mut World, state: &HelpState, message: &str) -> TurnRecord {
    TurnRecord::new(message, &world.turn(state, message))
}

/// One turn of `session`'s owner: begun under `lease` at `at`, committed a ms later.
pub fn turn_on(
    session: &HelpSession,
    world: &mut World,
    lease: &str,
    message: &str,
    at: u64,
) -> HelpSession {
    let owner = Caller::Owner(session.owner.clone());
    let begin = HelpCommand::Begin {
        lease_id: lease.into(),
        lease_ms: 1000,
        create: false,
    };
    let session = handle(Some(session), "s1", &owner, &begin, at)
        .unwrap()
        .record
        .unwrap();
    let commit = HelpCommand::Commit {
        lease_id: lease.into(),
        turn: Box::new(outcome_of(world, &session.state, message)),
    };
    handle(Some(&session), "s1", &owner, &commit, at + 1)
        .unwrap()
        .record
        .unwrap()
}
