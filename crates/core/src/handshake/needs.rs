//! The `ContextNeedsAnalyzer` (context-handshake.md §4.1.2): before the model is called, it
//! decides from policy data (which intents, on which pages, need which artifacts) whether the
//! turn needs context it does not hold. Inputs are the page, the message and its class
//! (question or action), the active phase, the stream's goal, the stream and job in view, the
//! candidate jobs, the key paths the conversation already holds and what the page shows (a rule
//! may be met by the screen itself, like the search results on it); the output is what is
//! wanted, which [`super::build_request`] turns into a request (filling what the system can).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

use super::carried::held_key;
use super::request::Urgency;
use crate::registry::ChatContext;

/// The built-in policy, per page (`*`: every page).
pub const BUILTIN_POLICY: &str = include_str!("policy.json");

/// A question or an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageClass {
    /// The user asks something.
    Question,
    /// The user wants something done.
    Action,
}

/// What a message is, by its form: a question mark or an opening interrogative makes a
/// question; an opening imperative verb an action; anything else is a question.
///
/// ```
/// use stepwise_core::handshake::{classify, MessageClass};
/// assert_eq!(classify("What did the models find?"), MessageClass::Question);
/// assert_eq!(classify("Draft a plan for next quarter"), MessageClass::Action);
/// ```
pub fn classify(message: &str) -> MessageClass {
    const QUESTION_WORDS: [&str; 16] = [
        "what", "why", "how", "which", "who", "when", "where", "is", "are", "does", "do", "can",
        "could", "should", "would", "explain",
    ];
    const ACTION_WORDS: [&str; 20] = [
        "create",
        "start",
        "run",
        "search",
        "find",
        "add",
        "set",
        "change",
        "publish",
        "draft",
        "make",
        "write",
        "plan",
        "prioritize",
        "prioritise",
        "list",
        "summarize",
        "compare",
        "build",
        "prepare",
    ];
    let text = message.trim();
    if text.ends_with('?') {
        return MessageClass::Question;
    }
    let first = text
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_lowercase();
    if QUESTION_WORDS.contains(&first.as_str()) {
        MessageClass::Question
    } else if ACTION_WORDS.contains(&first.as_str()) {
        MessageClass::Action
    } else {
        MessageClass::Question
    }
}

/// The analyzer's policy: rules per page.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Rules by page id; `*` applies on every page, after the page's own.
    pub pages: BTreeMap<String, Vec<Rule>>,
}

/// One intent and what it needs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The intent's name.
    pub intent: String,
    /// Only messages of this class (any when `None`).
    #[serde(default)]
    pub class: Option<MessageClass>,
    /// Phrases, lower case; the rule applies when the message contains one.
    pub when_any: Vec<String>,
    /// Only when the active phase is at least this.
    #[serde(default)]
    pub min_phase: u8,
    /// Only when there is no goal (no stream with a purpose in view).
    #[serde(default)]
    pub when_no_goal: bool,
    /// Not when the page shows any of these (dotted paths of the page context holding
    /// something): what is on screen is in the prompt already.
    #[serde(default)]
    pub unless_on_screen: Vec<String>,
    /// What the intent needs.
    pub needs: Vec<Need>,
}

/// A need: an artifact by key-path template (`{stream_id}`, `{research_id}`), or (no path)
/// something only the user can give.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Need {
    /// Its phase.
    pub phase: u8,
    /// Its artifact type.
    pub artifact_type: String,
    /// Its key-path template; `None` for a note only the user can give.
    #[serde(default)]
    pub key_path: Option<String>,
    /// Most characters taken.
    pub size_limit: usize,
    /// Required or optional.
    pub urgency: Urgency,
    /// What and why, for people.
    pub description: String,
}

impl Policy {
    /// The built-in policy, read once.
    pub fn builtin() -> &'static Policy {
        static POLICY: OnceLock<Policy> = OnceLock::new();
        POLICY.get_or_init(|| serde_json::from_str(BUILTIN_POLICY).expect("a valid policy"))
    }
}

/// What the analyzer looks at.
#[derive(Debug, Clone, Copy)]
pub struct NeedsInput<'a> {
    /// The page.
    pub page: &'a str,
    /// The user's message.
    pub message: &'a str,
    /// Its class.
    pub class: MessageClass,
    /// The furthest phase the owner's data in view has reached (0 to 4).
    pub active_phase: u8,
    /// The synthesized goal (empty: none).
    pub goal: &'a str,
    /// The stream in view.
    pub stream_id: Option<&'a str>,
    /// The job whose artifacts apply (in view, or the stream's latest).
    pub research_id: Option<&'a str>,
    /// Other jobs of the owner to choose among when none applies, `(id, title)`, newest first.
    pub candidates: &'a [(String, String)],
    /// What the conversation already holds: key paths (the baseline's, earlier supplies') and
    /// the [`held_key`]s of what the user typed for earlier requests.
    pub held: &'a [String],
    /// The page context, when there is one.
    pub screen: Option<&'a ChatContext>,
}

impl NeedsInput<'_> {
    /// Whether the page shows something at `path` (not null, not empty).
    fn shows(&self, path: &str) -> bool {
        let value = self.screen.and_then(|screen| screen.get(path));
        match value {
            None => false,
            Some(Value::Array(items)) => !items.is_empty(),
            Some(Value::Object(map)) => !map.is_empty(),
            Some(Value::String(text)) => !text.trim().is_empty(),
            Some(_) => true,
        }
    }
}

/// One wanted slot: the need, its key path when resolved, and the candidate key paths the user
/// may choose among when it is not.
#[derive(Debug, Clone, PartialEq)]
pub struct Wanted {
    /// The need.
    pub need: Need,
    /// Its resolved key path.
    pub key_path: Option<String>,
    /// Key paths to suggest.
    pub candidates: Vec<String>,
}

/// The `ContextNeedsAnalyzer`: a policy applied to one message.
#[derive(Debug, Clone, Copy)]
pub struct ContextNeedsAnalyzer<'p> {
    policy: &'p Policy,
}

impl<'p> ContextNeedsAnalyzer<'p> {
    /// An analyzer of `policy`.
    pub fn new(policy: &'p Policy) -> Self {
        ContextNeedsAnalyzer { policy }
    }

    /// What the turn needs that it does not hold; empty when it can go ahead.
    pub fn analyze(&self, input: &NeedsInput<'_>) -> Vec<Wanted> {
        let lower = input.message.to_lowercase();
        let rules = self
            .policy
            .pages
            .get(input.page)
            .into_iter()
            .chain(self.policy.pages.get("*"))
            .flatten();
        let mut out: Vec<Wanted> = Vec::new();
        for rule in rules {
            let applies = rule.class.is_none_or(|c| c == input.class)
                && input.active_phase >= rule.min_phase
                && (!rule.when_no_goal || input.goal.trim().is_empty())
                && rule.when_any.iter().any(|p| lower.contains(p.as_str()))
                && !rule.unless_on_screen.iter().any(|p| input.shows(p));
            if !applies {
                continue;
            }
            for need in &rule.needs {
                let Some(wanted) = resolve(need, input) else {
                    continue;
                };
                let repeated = out
                    .iter()
                    .any(|w| w.key_path.is_some() && w.key_path == wanted.key_path);
                let held = match (&wanted.key_path, &need.key_path) {
                    (Some(path), _) => input.held.contains(path),
                    (None, None) => {
                        input
                            .held
                            .contains(&held_key(&need.artifact_type, None, &need.description))
                    }
                    // A choice among jobs: what was attached of one says nothing of the others.
                    (None, Some(_)) => false,
                };
                if !repeated && !held {
                    out.push(wanted);
                }
            }
        }
        out
    }
}

/// The need with its template filled; `None` when it names something absent with nothing to
/// choose among (asking would only stall the turn).
fn resolve(need: &Need, input: &NeedsInput<'_>) -> Option<Wanted> {
    let Some(template) = &need.key_path else {
        return Some(Wanted {
            need: need.clone(),
            key_path: None,
            candidates: Vec::new(),
        });
    };
    if template.contains("{stream_id}") {
        let stream = input.stream_id?;
        let path = template.replace("{stream_id}", stream);
        return Some(Wanted {
            need: need.clone(),
            key_path: Some(path),
            candidates: Vec::new(),
        });
    }
    if template.contains("{research_id}") {
        if let Some(id) = input.research_id {
            return Some(Wanted {
                need: need.clone(),
                key_path: Some(template.replace("{research_id}", id)),
                candidates: Vec::new(),
            });
        }
        if input.candidates.is_empty() {
            return None;
        }
        let candidates = input
            .candidates
            .iter()
            .map(|(id, _)| template.replace("{research_id}", id))
            .collect();
        return Some(Wanted {
            need: need.clone(),
            key_path: None,
            candidates,
        });
    }
    Some(Wanted {
        need: need.clone(),
        key_path: Some(template.clone()),
        candidates: Vec::new(),
    })
}
