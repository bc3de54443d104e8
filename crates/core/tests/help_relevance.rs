//! The relevance floor of the help desk's BM25 search, replayed from the scores measured on the
//! starter knowledge base (tests/vectors/help_relevance.json; the e2e suite asks the running desk
//! the same questions): a match below the floor is no match, the floor sits where only unrelated
//! questions scored, and the core's query of each question is the one measured.

use serde::Deserialize;
use stepwise_core::help::search::MIN_BM25;
use stepwise_core::help::text::fts_query;
use stepwise_core::help::{Candidate, Thresholds, fuse};

#[derive(Deserialize)]
struct Vectors {
    floor: f64,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    question: String,
    relevant: Vec<String>,
    fts: Option<String>,
    hits: Vec<Candidate>,
    answer: Option<String>,
}

impl Case {
    fn best(&self) -> f64 {
        self.hits.first().map_or(0.0, |h| h.score)
    }

    /// Whether BM25's best hit is an article that answers the question.
    fn ranked_right(&self) -> bool {
        self.hits
            .first()
            .is_some_and(|h| self.relevant.contains(&h.id))
    }
}

fn vectors() -> Vectors {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/help_relevance.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_measured_queries_are_the_cores() {
    for case in vectors().cases {
        assert_eq!(fts_query(&case.question), case.fts, "{}", case.question);
    }
}

#[test]
fn a_match_below_the_floor_is_no_match() {
    let vectors = vectors();
    assert_eq!(Thresholds::default().min_bm25, MIN_BM25);
    assert_eq!(MIN_BM25, vectors.floor);
    for case in &vectors.cases {
        let ranked = fuse(&case.hits, &[], Thresholds::default());
        let answer = ranked.first().map(|r| r.id.clone());
        assert_eq!(answer, case.answer, "{}", case.question);
    }
    let excel = vectors
        .cases
        .iter()
        .find(|c| c.question == "can I export my streams to Excel?")
        .unwrap();
    assert!(!excel.hits.is_empty() && excel.answer.is_none());
}

#[test]
fn the_floor_lies_where_only_unrelated_questions_scored() {
    let cases = vectors().cases;
    let (below, above): (Vec<&Case>, Vec<&Case>) = cases
        .iter()
        .filter(|c| c.ranked_right())
        .partition(|c| c.best() < MIN_BM25);
    let highest_missed = below.iter().map(|c| c.best()).fold(0.0, f64::max);
    let lowest_found = above.iter().map(|c| c.best()).fold(f64::MAX, f64::min);
    for case in &cases {
        let score = case.best();
        if score > highest_missed && score < lowest_found {
            assert!(case.relevant.is_empty(), "{} ({score})", case.question);
        }
    }
    // The measured trade: 57 relevant questions answered from the right article, 6 unrelated
    // ones answered (1.0 answered 14).
    let unrelated = cases.iter().filter(|c| c.relevant.is_empty());
    let answered = unrelated.filter(|c| c.best() >= MIN_BM25).count();
    assert!(answered <= 6, "{answered} unrelated questions answered");
    assert!(
        above.len() >= 57,
        "{} relevant questions answered",
        above.len()
    );
}
