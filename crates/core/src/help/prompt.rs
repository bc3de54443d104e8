//! The help desk's model calls: the generation prompt of spec §5.1 (the article, each question
//! with its answer, the original query), the small translation call for clarifying questions,
//! and what the offline provider answers to each (no network, labelled as not an LLM).

use super::text::{language_name, words};

/// Instructions of the generation call.
pub const GENERATION_SYSTEM: &str = "You are the help desk of Stepwise. Answer the user's query \
from the context only, using the details the user provided. If the context does not answer \
the query, say so plainly. Answer in the language of the user's query.";

/// Most tokens of a generated answer.
pub const GENERATION_MAX_TOKENS: u32 = 800;
/// Most tokens of a translated question.
pub const TRANSLATION_MAX_TOKENS: u32 = 200;

/// The generation call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenerationRequest {
    /// Instructions.
    pub system: String,
    /// The user message: spec §5.1's prompt.
    pub prompt: String,
    /// The article's title (the offline answer names it).
    pub doc_title: String,
    /// The article.
    pub doc_body: String,
    /// Each question with its answer.
    pub answers: Vec<(String, String)>,
    /// The original query.
    pub query: String,
}

/// The call translating one clarifying question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranslationRequest {
    /// Instructions.
    pub system: String,
    /// The question as the article has it.
    pub question: String,
    /// The article's language code.
    pub from: String,
    /// The user's language code.
    pub to: String,
}

/// Spec §5.1's prompt; without answers the details section is left out.
///
/// ```
/// use stepwise_core::help::prompt::generation;
/// let answers = [("Version?".to_owned(), "12".to_owned())];
/// let request = generation("Crashes", "Update the app.", &answers, "The app crashes");
/// assert_eq!(request.prompt, "Context: Update the app.\n\nThe user has provided the following details:\n- Question: Version? -> Answer: 12\n\nUser Query: The app crashes");
/// ```
pub fn generation(
    title: &str,
    body: &str,
    answers: &[(String, String)],
    query: &str,
) -> GenerationRequest {
    let mut prompt = format!("Context: {body}\n\n");
    if !answers.is_empty() {
        prompt.push_str("The user has provided the following details:\n");
        for (question, answer) in answers {
            prompt.push_str(&format!("- Question: {question} -> Answer: {answer}\n"));
        }
        prompt.push('\n');
    }
    prompt.push_str(&format!("User Query: {query}"));
    GenerationRequest {
        system: GENERATION_SYSTEM.to_owned(),
        prompt,
        doc_title: title.to_owned(),
        doc_body: body.to_owned(),
        answers: answers.to_vec(),
        query: query.to_owned(),
    }
}

/// The translation call of `question` from language `from` to `to` (codes).
pub fn translation(question: &str, from: &str, to: &str) -> TranslationRequest {
    let name = |code: &str| language_name(code).map_or_else(|| code.to_owned(), str::to_owned);
    TranslationRequest {
        system: format!(
            "Translate the user's message from {} into {}. Answer with the translation only, \
             keeping it a question.",
            name(from),
            name(to)
        ),
        question: question.to_owned(),
        from: from.to_owned(),
        to: to.to_owned(),
    }
}

/// Longest article excerpt in an offline answer, in characters.
const OFFLINE_EXCERPT_CHARS: usize = 900;

/// The offline provider's answer, labelled as not written by a model: the article's opening,
/// then its lines that mention what the user answered (or, without answers, asked), then the
/// details the user gave.
///
/// ```
/// use stepwise_core::help::prompt::{generation, offline_answer};
/// let body = "Intro.\n\n- timeout: press Retry.\n- auth: fix the key.";
/// let answers = [("Code?".to_owned(), "timeout".to_owned())];
/// let text = offline_answer(&generation("Failures", body, &answers, "It failed"));
/// assert!(text.contains("Intro.") && text.contains("press Retry") && !text.contains("fix the key"));
/// assert!(text.contains("Code? timeout") && text.contains("offline"));
/// ```
pub fn offline_answer(request: &GenerationRequest) -> String {
    let wanted: Vec<String> = if request.answers.is_empty() {
        words(&request.query)
            .filter(|w| w.chars().count() > 3)
            .collect()
    } else {
        request
            .answers
            .iter()
            .flat_map(|(_, answer)| words(answer).collect::<Vec<_>>())
            .filter(|w| w.chars().count() > 2)
            .collect()
    };
    let opening = request.doc_body.split("\n\n").next().unwrap_or_default();
    let mut excerpt = opening.to_owned();
    let relevant = request
        .doc_body
        .lines()
        .filter(|line| !opening.contains(line.trim()) && words(line).any(|w| wanted.contains(&w)));
    for line in relevant {
        if excerpt.chars().count() + line.chars().count() > OFFLINE_EXCERPT_CHARS {
            break;
        }
        excerpt.push('\n');
        excerpt.push_str(line);
    }
    let mut text = format!(
        "From the help article \"{}\":\n\n{excerpt}",
        request.doc_title
    );
    if !request.answers.is_empty() {
        text.push_str("\n\nYou told me:");
        for (question, answer) in &request.answers {
            text.push_str(&format!("\n- {question} {}", answer.trim()));
        }
    }
    text.push_str("\n\n(Answered by the offline provider, not an LLM: it quotes the article.)");
    text
}

/// The offline provider's translation: the question unchanged.
pub fn offline_translation(request: &TranslationRequest) -> String {
    request.question.clone()
}
