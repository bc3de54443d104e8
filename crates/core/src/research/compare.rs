//! Two providers' reports of one job side by side (the assistant's `compare_reports` tool):
//! the key terms both use, those only one uses, and the pair of sentences that agree most. A
//! measure of overlap in wording, said as such; the model reads it and judges.

use super::{LlmStatus, Research};

/// Key terms listed at most in each group.
const MAX_TERMS: usize = 12;
/// Shortest key term, in characters.
const MIN_TERM_CHARS: usize = 4;

const STOP_WORDS: &[&str] = &[
    "about", "above", "after", "also", "among", "because", "been", "before", "being", "between",
    "both", "could", "does", "each", "from", "have", "however", "into", "more", "most", "much",
    "only", "other", "over", "report", "should", "since", "some", "such", "than", "that", "their",
    "them", "then", "there", "these", "they", "this", "those", "through", "under", "very", "were",
    "what", "when", "where", "which", "while", "will", "with", "would", "your",
];

/// Compares the completed reports of `provider_a` and `provider_b` (by default the first two
/// completed ones) and describes where they agree and differ, or says why it cannot.
///
/// ```
/// use stepwise_core::research::{compare_reports, Research};
/// let mut research: Research = serde_json::from_value(serde_json::json!({
///     "id": "r1", "title": "Heat pumps", "prompt": "Heat pumps?", "selected_llms": ["a", "b"],
///     "synthesis_llm": "a", "status": "completed", "created_at": 0,
///     "llm_results": [
///         {"provider": "a", "status": "completed", "attempt": 1, "dispatched_at": 0, "result": "Heat pumps save energy in insulated houses."},
///         {"provider": "b", "status": "completed", "attempt": 1, "dispatched_at": 0, "result": "Insulated houses suit heat pumps; boilers cost less upfront."}]})).unwrap();
/// let text = compare_reports(&research, None, None).unwrap();
/// assert!(text.contains("Both use: heat, houses, insulated, pumps"));
/// assert!(text.contains("Only a: energy, save"));
/// assert!(text.contains("Only b: boilers, cost, less, suit, upfront"));
/// ```
pub fn compare_reports(
    research: &Research,
    provider_a: Option<&str>,
    provider_b: Option<&str>,
) -> Result<String, String> {
    let completed: Vec<(&str, &str)> = research
        .llm_results
        .iter()
        .filter(|r| r.status == LlmStatus::Completed)
        .filter_map(|r| Some((r.provider.as_str(), r.result.as_deref()?)))
        .collect();
    let pick = |name: Option<&str>, skip: Option<&str>| -> Result<(&str, &str), String> {
        match name {
            Some(name) => completed
                .iter()
                .find(|(p, _)| *p == name)
                .copied()
                .ok_or_else(|| format!("`{name}` has no completed report in this job")),
            None => completed
                .iter()
                .find(|(p, _)| Some(*p) != skip)
                .copied()
                .ok_or_else(|| "this job has fewer than two completed reports".to_owned()),
        }
    };
    let a = pick(provider_a, provider_b)?;
    let b = pick(provider_b, Some(a.0))?;
    if a.0 == b.0 {
        return Err("choose two different providers".into());
    }
    let (terms_a, terms_b) = (terms(a.1), terms(b.1));
    let both: Vec<&str> = terms_a
        .iter()
        .filter(|(t, _)| has(&terms_b, t))
        .map(|(t, _)| t.as_str())
        .collect();
    let only = |mine: &Terms, theirs: &Terms| -> Vec<String> {
        let mut unique: Vec<(&String, &usize)> = mine
            .iter()
            .filter(|(t, _)| !has(theirs, t))
            .map(|(t, n)| (t, n))
            .collect();
        unique.sort_unstable_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
        let mut top: Vec<String> = unique
            .into_iter()
            .take(MAX_TERMS)
            .map(|(t, _)| t.clone())
            .collect();
        top.sort_unstable();
        top
    };
    let union = terms_a.len() + terms_b.len() - both.len();
    // Rounded to the nearest whole percent.
    let percent_shared = (both.len() * 100 + union / 2)
        .checked_div(union)
        .unwrap_or(0);
    let mut text = format!(
        "Reports of {} and {} for \"{}\": {} and {} words; {}% of their key terms are shared (a measure of wording, not of truth).\n",
        a.0,
        b.0,
        research.title,
        a.1.split_whitespace().count(),
        b.1.split_whitespace().count(),
        percent_shared
    );
    let list = |terms: &[String]| {
        if terms.is_empty() {
            "(none)".to_owned()
        } else {
            terms.join(", ")
        }
    };
    let shared: Vec<String> = both
        .iter()
        .take(MAX_TERMS * 2)
        .map(|t| (*t).to_owned())
        .collect();
    text.push_str(&format!("Both use: {}\n", list(&shared)));
    text.push_str(&format!(
        "Only {}: {}\n",
        a.0,
        list(&only(&terms_a, &terms_b))
    ));
    text.push_str(&format!(
        "Only {}: {}\n",
        b.0,
        list(&only(&terms_b, &terms_a))
    ));
    if let Some((x, y)) = closest_sentences(a.1, b.1) {
        text.push_str(&format!(
            "Closest agreement: {} said \"{x}\"; {} said \"{y}\"\n",
            a.0, b.0
        ));
    }
    Ok(text.trim_end().to_owned())
}

/// Key terms and how often each occurs, sorted by term.
type Terms = Vec<(String, usize)>;

fn terms(text: &str) -> Terms {
    let mut words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .map(|word| word.trim_matches('-').to_lowercase())
        .filter(|word| {
            word.chars().count() >= MIN_TERM_CHARS && !STOP_WORDS.contains(&word.as_str())
        })
        .collect();
    words.sort_unstable();
    let mut counts: Terms = Vec::new();
    for word in words {
        match counts.last_mut() {
            Some((last, n)) if *last == word => *n += 1,
            _ => counts.push((word, 1)),
        }
    }
    counts
}

fn has(terms: &Terms, term: &str) -> bool {
    terms
        .binary_search_by(|(t, _)| t.as_str().cmp(term))
        .is_ok()
}

fn sentences(text: &str) -> Vec<&str> {
    text.split(['.', '!', '?', '\n'])
        .map(str::trim)
        .filter(|s| s.split_whitespace().count() >= 3)
        .take(200)
        .collect()
}

/// The pair of sentences, one of each report, whose key terms overlap most.
fn closest_sentences<'a>(a: &'a str, b: &'a str) -> Option<(&'a str, &'a str)> {
    let b_sentences: Vec<(&str, Terms)> = sentences(b).into_iter().map(|s| (s, terms(s))).collect();
    let mut best: Option<(f64, &str, &str)> = None;
    for x in sentences(a) {
        let tx = terms(x);
        for (y, ty) in &b_sentences {
            let shared = tx.iter().filter(|(t, _)| has(ty, t)).count();
            let union = tx.len() + ty.len() - shared;
            if shared == 0 || union == 0 {
                continue;
            }
            let score = shared as f64 / union as f64;
            if best.is_none_or(|(s, _, _)| score > s) {
                best = Some((score, x, y));
            }
        }
    }
    best.map(|(_, x, y)| (x, y))
}
