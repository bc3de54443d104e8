//! Knowledge-base articles: what an admin imports (`PUT /api/help/docs/:id` one at a time, or a
//! bulk import), checked whole before anything is stored, and whom each is for: the app's users,
//! or (an id starting `operator-`) the people who run it, whose articles the users' search never
//! returns.

use serde::{Deserialize, Serialize};

use super::HelpError;

/// The id prefix of an article for operators (settings, deployment, webhooks): listed with the
/// others, never returned by the users' search.
pub const OPERATOR_PREFIX: &str = "operator-";

/// Whom an article is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Audience {
    /// The app's users: the Help page's search finds it.
    User,
    /// The people who run Stepwise: kept apart from the users' search.
    Operator,
}

impl Audience {
    /// The audience of the article `id`: its prefix says.
    ///
    /// ```
    /// use stepwise_core::help::doc::Audience;
    /// assert_eq!(Audience::of("operator-webhooks"), Audience::Operator);
    /// assert_eq!(Audience::of("sharing-reports"), Audience::User);
    /// ```
    pub fn of(id: &str) -> Audience {
        if id.starts_with(OPERATOR_PREFIX) {
            Audience::Operator
        } else {
            Audience::User
        }
    }
}

/// Longest article id.
pub const MAX_ID_LEN: usize = 64;
/// Longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// Longest body, in bytes.
pub const MAX_BODY_BYTES: usize = 32 * 1024;
/// Most clarifying questions of one article.
pub const MAX_QUESTIONS: usize = 8;
/// Longest clarifying question, in characters.
pub const MAX_QUESTION_CHARS: usize = 300;
/// Most articles in one bulk import.
pub const MAX_IMPORT_DOCS: usize = 200;

/// An article of the knowledge base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelpDoc {
    /// Lowercase letters, digits and `-`, at most [`MAX_ID_LEN`].
    pub id: String,
    /// The title, searched with more weight than the body.
    pub title: String,
    /// The article (plain text or Markdown).
    pub body: String,
    /// The article's language, an ISO 639-1 code (`en`).
    pub language: String,
    /// Questions to ask, in order, before answering from this article.
    #[serde(default)]
    pub clarifying_questions: Vec<String>,
    /// After answering from this article, hand the session to a person.
    #[serde(default)]
    pub requires_handoff: bool,
    /// When the article last changed, in ms since the epoch (set by the server).
    #[serde(default)]
    pub updated_at: u64,
}

/// An article as an admin sends it (`updated_at` is the server's; an `id` in the body must
/// match the path's).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct DocInput {
    #[serde(default)]
    id: Option<String>,
    title: String,
    body: String,
    #[serde(default = "english")]
    language: String,
    #[serde(default)]
    clarifying_questions: Vec<String>,
    #[serde(default)]
    requires_handoff: bool,
}

fn english() -> String {
    "en".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportInput {
    docs: Vec<DocInput>,
}

impl HelpDoc {
    /// Reads and checks the article `id` from a `PUT` body, stamped `now`.
    ///
    /// ```
    /// use stepwise_core::help::HelpDoc;
    /// let doc = HelpDoc::read("sharing", r#"{"title":"Sharing","body":"Publish it."}"#, 7).unwrap();
    /// assert_eq!((doc.language.as_str(), doc.updated_at), ("en", 7));
    /// let bad = HelpDoc::read("Bad Id", r#"{"title":"x","body":"y"}"#, 7).unwrap_err();
    /// assert_eq!(bad.code(), "invalid_doc");
    /// ```
    pub fn read(id: &str, json: &str, now: u64) -> Result<HelpDoc, HelpError> {
        let input: DocInput = serde_json::from_str(json)
            .map_err(|e| HelpError::InvalidDoc(format!("the article is not acceptable: {e}")))?;
        if let Some(given) = &input.id
            && given != id
        {
            return Err(HelpError::InvalidDoc(format!(
                "the body's id `{given}` differs from the path's `{id}`"
            )));
        }
        from_input(id.to_owned(), input, now)
    }

    /// Checks an article whole: id, title, body, language and questions.
    pub fn check(&self) -> Result<(), HelpError> {
        let invalid = |why: String| {
            Err(HelpError::InvalidDoc(format!(
                "article `{}`: {why}",
                self.id
            )))
        };
        if !is_doc_id(&self.id) {
            return Err(HelpError::InvalidDoc(format!(
                "`{}` is not an article id: use 1 to {MAX_ID_LEN} lowercase letters, digits and `-`",
                self.id.chars().take(80).collect::<String>()
            )));
        }
        let title = self.title.chars().count();
        if self.title.trim().is_empty() || title > MAX_TITLE_CHARS {
            return invalid(format!(
                "the title must have 1 to {MAX_TITLE_CHARS} characters"
            ));
        }
        if self.body.trim().is_empty() || self.body.len() > MAX_BODY_BYTES {
            return invalid(format!("the body must have 1 to {MAX_BODY_BYTES} bytes"));
        }
        if !(self.language.len() == 2 && self.language.bytes().all(|b| b.is_ascii_lowercase())) {
            return invalid("the language must be a two-letter ISO 639-1 code such as `en`".into());
        }
        if self.clarifying_questions.len() > MAX_QUESTIONS {
            return invalid(format!("at most {MAX_QUESTIONS} clarifying questions"));
        }
        for (i, question) in self.clarifying_questions.iter().enumerate() {
            let chars = question.chars().count();
            if question.trim().is_empty() || chars > MAX_QUESTION_CHARS {
                return invalid(format!(
                    "clarifying question {} must have 1 to {MAX_QUESTION_CHARS} characters",
                    i + 1
                ));
            }
            if self.clarifying_questions[..i].contains(question) {
                return invalid(format!(
                    "clarifying question {} repeats an earlier one",
                    i + 1
                ));
            }
        }
        Ok(())
    }
}

/// Reads and checks a bulk import `{"docs": [{"id", "title", "body", …}]}`: every article is
/// checked and ids are unique, or nothing is imported.
pub fn read_import(json: &str, now: u64) -> Result<Vec<HelpDoc>, HelpError> {
    let input: ImportInput = serde_json::from_str(json)
        .map_err(|e| HelpError::InvalidDoc(format!("the import is not acceptable: {e}")))?;
    if input.docs.is_empty() || input.docs.len() > MAX_IMPORT_DOCS {
        return Err(HelpError::InvalidDoc(format!(
            "an import holds 1 to {MAX_IMPORT_DOCS} articles, not {}",
            input.docs.len()
        )));
    }
    let mut docs: Vec<HelpDoc> = Vec::with_capacity(input.docs.len());
    for (i, mut doc) in input.docs.into_iter().enumerate() {
        let Some(id) = doc.id.take() else {
            return Err(HelpError::InvalidDoc(format!(
                "article {} has no `id`",
                i + 1
            )));
        };
        if docs.iter().any(|d| d.id == id) {
            return Err(HelpError::InvalidDoc(format!(
                "article id `{id}` appears twice"
            )));
        }
        docs.push(from_input(id, doc, now)?);
    }
    Ok(docs)
}

fn from_input(id: String, input: DocInput, now: u64) -> Result<HelpDoc, HelpError> {
    let doc = HelpDoc {
        id,
        title: input.title.trim().to_owned(),
        body: input.body.trim().to_owned(),
        language: input.language,
        clarifying_questions: input
            .clarifying_questions
            .into_iter()
            .map(|q| q.trim().to_owned())
            .collect(),
        requires_handoff: input.requires_handoff,
        updated_at: now,
    };
    doc.check()?;
    Ok(doc)
}

/// Whether `id` is an article id: 1 to [`MAX_ID_LEN`] of `a-z`, `0-9`, `-`, not starting with `-`.
pub fn is_doc_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && !id.starts_with('-')
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_is_checked_whole() {
        let twice =
            r#"{"docs":[{"id":"a","title":"A","body":"x"},{"id":"a","title":"B","body":"y"}]}"#;
        assert!(
            read_import(twice, 1)
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
        let one_bad =
            r#"{"docs":[{"id":"a","title":"A","body":"x"},{"id":"b","title":"","body":"y"}]}"#;
        assert!(
            read_import(one_bad, 1)
                .unwrap_err()
                .to_string()
                .contains("title")
        );
        let ok = r#"{"docs":[{"id":"a","title":" A ","body":"x","clarifying_questions":[" Q? "],"requires_handoff":true}]}"#;
        let docs = read_import(ok, 5).unwrap();
        assert_eq!(docs[0].title, "A");
        assert_eq!(docs[0].clarifying_questions, vec!["Q?"]);
        assert!(docs[0].requires_handoff);
    }

    #[test]
    fn questions_are_bounded_and_unique() {
        let repeated = r#"{"title":"A","body":"x","clarifying_questions":["Q?","Q?"]}"#;
        assert!(HelpDoc::read("a", repeated, 1).is_err());
        let many = format!(
            r#"{{"title":"A","body":"x","clarifying_questions":[{}]}}"#,
            (0..9)
                .map(|i| format!("\"q{i}\""))
                .collect::<Vec<_>>()
                .join(",")
        );
        assert!(HelpDoc::read("a", &many, 1).is_err());
        let unknown = r#"{"title":"A","body":"x","colour":"red"}"#;
        assert!(HelpDoc::read("a", unknown, 1).is_err());
        let other_id = r#"{"id":"b","title":"A","body":"x"}"#;
        assert!(HelpDoc::read("a", other_id, 1).is_err());
    }
}
