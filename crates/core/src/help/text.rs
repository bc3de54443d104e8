//! The words of a question: its full-text query (safe to hand to SQLite FTS5), the text its
//! cached answer is keyed by, and a guess at its language from common function words.

/// Most terms of one search query.
pub const MAX_QUERY_TERMS: usize = 16;

/// Function words of the languages the desk recognizes, by ISO 639-1 code.
const FUNCTION_WORDS: &[(&str, &str, &[&str])] = &[
    (
        "en",
        "English",
        &[
            "the", "a", "an", "is", "are", "was", "do", "does", "did", "i", "my", "you", "your",
            "how", "what", "why", "when", "where", "can", "to", "of", "in", "on", "for", "with",
            "it", "and", "or", "not", "this", "that", "be", "have", "has", "me", "there",
        ],
    ),
    (
        "de",
        "German",
        &[
            "der", "die", "das", "ist", "sind", "ich", "mein", "meine", "wie", "was", "warum",
            "wann", "wo", "kann", "nicht", "und", "oder", "mit", "ein", "eine", "einen", "den",
            "dem", "zu", "auf", "für", "von", "mich", "mir", "es", "wird", "habe", "hat",
        ],
    ),
    (
        "fr",
        "French",
        &[
            "le", "la", "les", "est", "sont", "je", "mon", "ma", "mes", "comment", "quoi",
            "pourquoi", "quand", "où", "peux", "pas", "et", "ou", "avec", "un", "une", "des", "du",
            "de", "pour", "sur", "ne", "il", "elle", "ce", "cette", "j", "ai",
        ],
    ),
    (
        "es",
        "Spanish",
        &[
            "el", "la", "los", "las", "es", "son", "yo", "mi", "mis", "cómo", "como", "qué", "por",
            "cuándo", "dónde", "puedo", "no", "y", "o", "con", "un", "una", "del", "para", "en",
            "se", "lo", "al", "está", "mis",
        ],
    ),
    (
        "it",
        "Italian",
        &[
            "il", "lo", "la", "gli", "le", "è", "sono", "io", "mio", "mia", "come", "cosa",
            "perché", "quando", "dove", "posso", "non", "e", "o", "con", "un", "una", "del",
            "della", "per", "su", "di", "che",
        ],
    ),
    (
        "nl",
        "Dutch",
        &[
            "de", "het", "een", "is", "zijn", "ik", "mijn", "hoe", "wat", "waarom", "wanneer",
            "waar", "kan", "niet", "en", "of", "met", "van", "voor", "op", "te", "dat", "er",
        ],
    ),
    (
        "pt",
        "Portuguese",
        &[
            "o", "a", "os", "as", "é", "são", "eu", "meu", "minha", "como", "que", "porque",
            "quando", "onde", "posso", "não", "e", "ou", "com", "um", "uma", "do", "da", "para",
            "em", "no", "na",
        ],
    ),
];

/// The English name of a language code the desk recognizes (`None` otherwise).
pub fn language_name(code: &str) -> Option<&'static str> {
    FUNCTION_WORDS
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, name, _)| *name)
}

/// The words of `text`, lowercased: runs of letters and digits.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
}

/// The function words of `code` (none for a code the desk does not recognize).
fn function_words(code: &str) -> &'static [&'static str] {
    FUNCTION_WORDS
        .iter()
        .find(|(c, _, _)| *c == code)
        .map_or(&[], |(_, _, list)| *list)
}

/// The FTS5 query of a question: its distinct content words, each quoted, joined by `OR`
/// (at most [`MAX_QUERY_TERMS`]); `None` when no content word is left. Function words are
/// those of the question's language (English when it cannot be told), so "AI" stays a term
/// of an English question although it is a French function word.
///
/// ```
/// use stepwise_core::help::text::fts_query;
/// assert_eq!(fts_query("Why did my research job fail?").as_deref(), Some(r#""research" OR "job" OR "fail""#));
/// assert_eq!(fts_query("how do I?"), None);
/// ```
pub fn fts_query(question: &str) -> Option<String> {
    let stop = function_words(detect_language(question).unwrap_or("en"));
    let mut terms: Vec<String> = Vec::new();
    for word in words(question) {
        let short = word.chars().count() < 2 && !word.chars().all(|c| c.is_ascii_digit());
        if short || stop.contains(&word.as_str()) || terms.contains(&word) {
            continue;
        }
        terms.push(word);
        if terms.len() == MAX_QUERY_TERMS {
            break;
        }
    }
    if terms.is_empty() {
        return None;
    }
    // Words hold only letters and digits, so quoting needs no escapes.
    let quoted: Vec<String> = terms.iter().map(|t| format!("\"{t}\"")).collect();
    Some(quoted.join(" OR "))
}

/// The text a question's cached answer is keyed by: its words, lowercased, one space apart.
///
/// ```
/// use stepwise_core::help::text::cache_text;
/// assert_eq!(cache_text("  How do I SHARE a report? "), cache_text("how do i share a report"));
/// ```
pub fn cache_text(question: &str) -> String {
    words(question).collect::<Vec<_>>().join(" ")
}

/// A guess at the language of `text` from its function words: the code of the language with
/// the most (at least two, and more than any other), else `None`. "12" has no language.
///
/// ```
/// use stepwise_core::help::text::detect_language;
/// assert_eq!(detect_language("Wie kann ich einen Bericht teilen?"), Some("de"));
/// assert_eq!(detect_language("How can I share a report?"), Some("en"));
/// assert_eq!(detect_language("12"), None);
/// ```
pub fn detect_language(text: &str) -> Option<&'static str> {
    let words: Vec<String> = words(text).collect();
    let mut best: Option<(&'static str, usize)> = None;
    let mut tied = false;
    for (code, _, list) in FUNCTION_WORDS {
        let hits = words.iter().filter(|w| list.contains(&w.as_str())).count();
        match best {
            Some((_, most)) if hits == most => tied = true,
            Some((_, most)) if hits < most => {}
            _ => {
                best = Some((code, hits));
                tied = false;
            }
        }
    }
    match best {
        Some((code, hits)) if hits >= 2 && !tied => Some(code),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_hold_only_quoted_words() {
        let q = fts_query(r#"rate "limit" OR x; DROP -- 429 NEAR(a b)"#).unwrap();
        assert_eq!(q, r#""rate" OR "limit" OR "drop" OR "429" OR "near""#);
        let many = (0..40)
            .map(|i| format!("word{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(
            fts_query(&many).unwrap().matches(" OR ").count(),
            MAX_QUERY_TERMS - 1
        );
        assert_eq!(
            fts_query("How do I use AI?").as_deref(),
            Some(r#""use" OR "ai""#)
        );
        let german = fts_query("Wie kann ich den Bericht teilen?");
        assert_eq!(german.as_deref(), Some(r#""bericht" OR "teilen""#));
    }

    #[test]
    fn languages_are_told_apart() {
        assert_eq!(
            detect_language("Comment puis-je partager mon rapport avec une équipe ?"),
            Some("fr")
        );
        assert_eq!(
            detect_language("¿Cómo puedo compartir mi informe con el equipo?"),
            Some("es")
        );
        assert_eq!(detect_language("Android"), None);
        assert_eq!(language_name("de"), Some("German"));
    }
}
