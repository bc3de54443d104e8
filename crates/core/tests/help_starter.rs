//! The starter knowledge base (`docs/help/starter-kb.json`): it passes the import checks, and
//! its articles for users speak of the app while operator topics are kept apart.

use stepwise_core::help::HelpDoc;
use stepwise_core::help::doc::Audience;
use stepwise_core::help::text::words;

fn starter_docs() -> Vec<HelpDoc> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/help/starter-kb.json"
    );
    stepwise_core::help::read_import(&std::fs::read_to_string(path).unwrap(), 1).unwrap()
}

#[test]
fn the_starter_knowledge_base_passes_the_import_checks() {
    let docs = starter_docs();
    assert!(docs.len() >= 12);
    assert!(
        docs.iter()
            .filter(|d| !d.clarifying_questions.is_empty())
            .count()
            >= 4
    );
    assert!(docs.iter().any(|d| d.requires_handoff));
}

/// Words of running Stepwise rather than using it: what the users' articles must not ask about.
const OPERATOR_WORDS: &[&str] = &[
    "wrangler",
    "worker",
    "deployed",
    "deployment",
    "deploy",
    "secret",
    "secrets",
    "vars",
    "e",
    "mail",
    "email",
    "healthz",
    "localhost",
    "d1",
    "kv",
    "env",
    "webhook",
];

#[test]
fn the_starter_articles_for_users_speak_of_the_app_and_operator_topics_are_kept_apart() {
    let docs = starter_docs();
    let (users, operators): (Vec<&HelpDoc>, Vec<&HelpDoc>) = docs
        .iter()
        .partition(|d| Audience::of(&d.id) == Audience::User);
    assert!(users.len() >= 12 && !operators.is_empty());
    for doc in &users {
        let mut texts = vec![doc.title.as_str(), doc.body.as_str()];
        texts.extend(doc.clarifying_questions.iter().map(String::as_str));
        for text in texts {
            let operator_word = words(text).find(|w| OPERATOR_WORDS.contains(&w.as_str()));
            assert_eq!(operator_word, None, "article `{}` says: {text}", doc.id);
            // A setting's name (RESEARCH_TIMEOUT_MS) is for whoever configures the service.
            let setting = text
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .find(|w| w.contains('_') && w.chars().all(|c| !c.is_ascii_lowercase()));
            assert_eq!(setting, None, "article `{}` names a setting", doc.id);
        }
    }
    // What a user does in the app each has its article.
    for topic in [
        "guided-chat",
        "streams",
        "research-jobs",
        "sharing-reports",
        "assistant-tray",
        "owner-token-lost",
        "deleting-data",
    ] {
        assert!(users.iter().any(|d| d.id == topic), "no article `{topic}`");
    }
}
