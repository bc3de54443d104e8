//! Helpers of the help desk's tests: an article, a small in-memory world that answers the
//! pipeline's effects and records them, and a session inside a clarification loop.

use stepwise_core::help::pipeline::{Answers, CachedAnswer, DocRef};
use stepwise_core::help::{
    ClarificationContext, DialogState, Effect, HelpDoc, HelpState, Input, Outcome, Pipeline, Step,
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
