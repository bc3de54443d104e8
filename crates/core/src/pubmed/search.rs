//! Readers of `esearch` (the count and a page of PMIDs) and `esummary` (one summary a PMID)
//! JSON answers.

use serde::Serialize;
use serde_json::Value;

use super::{PubmedError, is_pmid};

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchIds {
    /// Articles matching, in all.
    pub count: u64,
    /// This page's PMIDs, in order.
    pub pmids: Vec<String>,
    /// How PubMed read the query (its `querytranslation`), when it says.
    pub translation: Option<String>,
}

/// An article as a results list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ArticleSummary {
    /// PubMed id.
    pub pmid: String,
    /// Title.
    pub title: String,
    /// Journal (abbreviated, as PubMed gives it).
    pub journal: String,
    /// Publication date as PubMed writes it (`2023 Jan 5`).
    pub pub_date: String,
    /// Publication year, when the date has one.
    pub year: Option<u32>,
    /// Authors, as `Last Initials`, the first ten.
    pub authors: Vec<String>,
    /// DOI, when listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doi: Option<String>,
}

/// Most authors kept a summary.
const MAX_AUTHORS: usize = 10;

/// Reads an `esearch` JSON answer.
///
/// ```
/// let ids = stepwise_core::pubmed::parse_esearch(r#"{"esearchresult": {"count": "2", "idlist": ["31", "32"]}}"#).unwrap();
/// assert_eq!((ids.count, ids.pmids.len()), (2, 2));
/// ```
pub fn parse_esearch(body: &str) -> Result<SearchIds, PubmedError> {
    let value = json(body)?;
    let result = &value["esearchresult"];
    if let Some(error) = result["ERROR"].as_str().or(value["error"].as_str()) {
        return Err(PubmedError::BadAnswer(cut(error)));
    }
    let count = match &result["count"] {
        Value::String(text) => text.parse::<u64>().ok(),
        other => other.as_u64(),
    }
    .ok_or_else(|| PubmedError::BadAnswer("no result count".into()))?;
    let pmids = result["idlist"]
        .as_array()
        .ok_or_else(|| PubmedError::BadAnswer("no id list".into()))?
        .iter()
        .map(|id| id.as_str().filter(|id| is_pmid(id)).map(str::to_owned))
        .collect::<Option<Vec<String>>>()
        .ok_or_else(|| PubmedError::BadAnswer("an id is not a PMID".into()))?;
    Ok(SearchIds {
        count,
        pmids,
        translation: result["querytranslation"].as_str().map(str::to_owned),
    })
}

/// Reads an `esummary` JSON answer: the summaries in the order of `pmids`, skipping those
/// PubMed has none for.
pub fn parse_esummary(body: &str, pmids: &[String]) -> Result<Vec<ArticleSummary>, PubmedError> {
    let value = json(body)?;
    if let Some(error) = value["error"].as_str() {
        return Err(PubmedError::BadAnswer(cut(error)));
    }
    let result = value["result"]
        .as_object()
        .ok_or_else(|| PubmedError::BadAnswer("no result".into()))?;
    let mut summaries = Vec::with_capacity(pmids.len());
    for pmid in pmids {
        let Some(entry) = result.get(pmid).filter(|e| e.get("error").is_none()) else {
            continue;
        };
        let text = |key: &str| entry[key].as_str().unwrap_or("").trim().to_owned();
        let pub_date = text("pubdate");
        let year = pub_date
            .get(..4)
            .and_then(|y| y.parse::<u32>().ok())
            .filter(|y| (1000..3000).contains(y));
        let authors = entry["authors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a["name"].as_str())
            .take(MAX_AUTHORS)
            .map(str::to_owned)
            .collect();
        let doi = entry["articleids"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|id| id["idtype"] == "doi")
            .and_then(|id| id["value"].as_str())
            .map(str::to_owned);
        summaries.push(ArticleSummary {
            pmid: pmid.clone(),
            title: text("title"),
            journal: text("source"),
            pub_date,
            year,
            authors,
            doi,
        });
    }
    Ok(summaries)
}

fn json(body: &str) -> Result<Value, PubmedError> {
    serde_json::from_str(body).map_err(|_| PubmedError::BadAnswer("not JSON".into()))
}

fn cut(message: &str) -> String {
    message.chars().take(200).collect()
}
