//! The words of a question: its full-text query (safe to hand to SQLite FTS5), the text its
//! cached answer is keyed by, a guess at its language from common function words, and what a
//! message asks of the desk itself (a person, or yes to the offer of one), in each of those
//! languages.

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
            "it", "and", "or", "not", "this", "that", "be", "have", "has", "me", "there", "all",
            "any", "some", "if", "from", "at", "by", "as", "about", "just", "they", "we", "our",
            "us", "its", "which", "who", "would", "should", "could", "been", "were", "please",
            "here", "than", "then", "into",
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

/// The codes of the languages the desk recognizes.
pub fn languages() -> impl Iterator<Item = &'static str> {
    FUNCTION_WORDS.iter().map(|(code, _, _)| *code)
}

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

// What a message asks of the desk itself rather than of the knowledge base: a person ("I want
// to talk to a person", "Ich möchte mit einem Menschen sprechen"), or yes to the desk's offer of
// one. The router asks this before any search or clarification, so such a message is never
// searched or stored as an answer. Each language the desk detects has its phrases.
//
// A request for a person is recognised by its shape, not by a word alone, so "share a report with
// a person" or "the agent keeps asking me" stay questions:
// - a verb of talking, then a person within a few filler words ("talk to a real person",
//   "verbinden Sie mich mit einem Mitarbeiter");
// - a person, then a verb of talking within a few filler words ("mit einem Menschen sprechen",
//   "a human I can talk to");
// - a short message of only request and filler words around a person ("human please", "I need
//   an agent", "un humain svp").

/// Most filler words between a verb and the person it asks for.
const MAX_GAP: usize = 5;
/// Longest message, in words, that can be a bare request ("I need a real person please").
const MAX_BARE_WORDS: usize = 7;

/// One language's phrases: lowercase words as [`words`] splits them, one space apart.
struct Phrases {
    /// The ISO 639-1 code, as [`detect_language`] answers.
    code: &'static str,
    /// Verbs of talking to someone.
    verbs: &'static str,
    /// Who the user asks for.
    people: &'static str,
    /// Words that may stand between a verb and a person (articles, pronouns, "real").
    fillers: &'static str,
    /// Words of a bare request around a person ("need", "please").
    requests: &'static str,
    /// Words of a yes to an offer ("yes please", "ok").
    yes: &'static str,
}

/// Whether `word` is one of the space-separated `list`.
fn listed(list: &str, word: &str) -> bool {
    list.split(' ').any(|w| w == word)
}

const PHRASES: &[Phrases] = &[
    Phrases {
        code: "en",
        verbs: "talk speak chat connect transfer contact reach escalate hand",
        people: "person human humans people agent operator representative rep someone somebody \
            anyone anybody staff support",
        fillers: "to with a an the some real actual live human me i can could may please you your \
            over member of one there",
        requests: "want need ask for like would d get give just now is",
        yes: "yes yeah yep ok okay sure please do it go ahead",
    },
    Phrases {
        code: "de",
        verbs: "sprechen reden chatten verbinden verbinde kontaktieren erreichen weiterleiten",
        people: "mensch menschen person mitarbeiter mitarbeiterin berater beraterin agent agenten \
            support kundendienst jemand jemandem jemanden",
        fillers: "mit einem einer einen ein echten echter echte richtigen richtiger realen bitte \
            mich ich sie zu an den der die dem kann könnte möchte mal gerne gern lieber doch",
        requests: "will brauche möchte hätte gern gerne bitte einen",
        yes: "ja gerne gern bitte okay ok klar machen sie das",
    },
    Phrases {
        code: "fr",
        verbs: "parler discuter contacter joindre passer passez mettre mettez transférer \
            transférez",
        people: "humain humaine personne conseiller conseillère agent opérateur opératrice quelqu",
        fillers: "à a avec un une le la l vrai vraie véritable réel réelle moi je en relation svp \
            s il vous plaît plait peux puis pourrais veux voudrais j aimerais souhaite du",
        requests: "veux voudrais besoin ai j un une svp merci",
        yes: "oui d accord ok volontiers svp s il vous plaît plait allez y",
    },
    Phrases {
        code: "es",
        verbs: "hablar comunicarme contactar conversar chatear pasar pásame transferir",
        people: "persona humano humana agente operador operadora asesor asesora representante \
            alguien",
        fillers: "con una un el la real de verdad a al me por favor quiero quisiera puedo podría \
            yo alguna algún",
        requests: "quiero quisiera necesito por favor un una",
        yes: "sí si vale claro ok por favor adelante",
    },
    Phrases {
        code: "it",
        verbs: "parlare contattare passare passarmi mettere mettermi chattare comunicare",
        people: "persona umano operatore operatrice agente consulente qualcuno",
        fillers: "con una un uno l a al mi vera vero reale voglio vorrei posso potrei per favore \
            in contatto io di",
        requests: "voglio vorrei ho bisogno di per favore un una",
        yes: "sì si certo va bene ok per favore grazie",
    },
    Phrases {
        code: "nl",
        verbs: "praten spreken chatten bellen doorverbinden verbind verbinden",
        people: "mens persoon medewerker medewerkster agent iemand klantenservice",
        fillers: "met een echte echt de het ik wil graag kan mij me zou even alstublieft aub door \
            u",
        requests: "wil graag nodig heb ik een alstublieft aub",
        yes: "ja graag oké ok prima goed doe maar",
    },
    Phrases {
        code: "pt",
        verbs: "falar conversar contatar contactar chamar transferir passar",
        people: "pessoa humano humana atendente agente operador operadora representante alguém \
            consultor",
        fillers: "com uma um o a de verdade real me por favor quero queria gostaria posso eu ao à \
            para alguma",
        requests: "quero queria preciso de por favor um uma",
        yes: "sim claro pode ok por favor ser",
    },
];

/// The codes of the languages whose requests for a person are recognised.
pub fn request_languages() -> impl Iterator<Item = &'static str> {
    PHRASES.iter().map(|p| p.code)
}

/// Whether `message` asks for a person, in any language the desk detects.
///
/// ```
/// use stepwise_core::help::text::wants_person;
/// assert!(wants_person("I want to talk to a person"));
/// assert!(wants_person("Kann ich bitte mit einem Menschen sprechen?"));
/// assert!(!wants_person("How do I share a report with a person on my team?"));
/// ```
pub fn wants_person(message: &str) -> bool {
    let words: Vec<String> = words(message).collect();
    PHRASES.iter().any(|phrases| asks_person(phrases, &words))
}

/// Whether `message` is a plain yes ("yes", "yes please", "ok", "ja gerne", "oui").
///
/// ```
/// use stepwise_core::help::text::is_yes;
/// assert!(is_yes("Yes, please!"));
/// assert!(!is_yes("yes, but how do I share it?"));
/// ```
pub fn is_yes(message: &str) -> bool {
    let words: Vec<String> = words(message).collect();
    !words.is_empty()
        && words.len() <= MAX_BARE_WORDS
        && PHRASES
            .iter()
            .any(|p| words.iter().all(|w| listed(p.yes, w)))
}

fn asks_person(p: &Phrases, words: &[String]) -> bool {
    let is = |list: &str, w: &String| listed(list, w);
    let filler = |w: &String| is(p.fillers, w);
    // A verb, then a person; or a person, then a verb: only fillers between, at most MAX_GAP.
    let near = |from: &dyn Fn(&String) -> bool, to: &dyn Fn(&String) -> bool| {
        words
            .iter()
            .enumerate()
            .filter(|(_, w)| from(w))
            .any(|(i, _)| {
                words[i + 1..]
                    .iter()
                    .take(MAX_GAP + 1)
                    .position(|w| !filler(w) || to(w))
                    .is_some_and(|j| to(&words[i + 1 + j]))
            })
    };
    let verb = |w: &String| is(p.verbs, w);
    let person = |w: &String| is(p.people, w);
    if near(&verb, &person) || near(&person, &verb) {
        return true;
    }
    // A bare request: nothing but request and filler words around a person.
    words.len() <= MAX_BARE_WORDS
        && words.iter().any(person)
        && words
            .iter()
            .all(|w| person(w) || verb(w) || filler(w) || is(p.requests, w))
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

    #[test]
    fn a_filler_that_is_also_a_person_word_still_ends_the_gap() {
        // "human" is a filler ("a human agent") and a person: either way this asks for one.
        assert!(wants_person("talk to a human"));
        assert!(wants_person("speak with a human agent"));
        // Too many words between the verb and the person: not a request.
        assert!(!wants_person(
            "talk to the team about a report that a person shared"
        ));
    }
}
