//! E-utilities answers in their real formats (`tests/fixtures/eutils/`): search ids, summaries
//! and abstracts read; errors reported, never results made up.

use stepwise_core::pubmed::{
    PubmedError, Search, Sort, efetch_url, esummary_url, parse_efetch, parse_esearch,
    parse_esummary,
};

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/../../tests/fixtures/eutils/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

#[test]
fn a_search_answer_gives_the_count_the_ids_and_the_translation() {
    let ids = parse_esearch(&fixture("esearch.json")).unwrap();
    assert_eq!(ids.count, 1843);
    assert_eq!(ids.pmids, ["39012345", "38877001", "38650422"]);
    assert!(ids.translation.unwrap().contains("[MeSH Terms]"));
}

#[test]
fn a_search_error_is_an_error_not_an_empty_result() {
    let error = parse_esearch(&fixture("esearch_error.json")).unwrap_err();
    assert_eq!(error, PubmedError::BadAnswer("Invalid query".into()));
    assert_eq!(error.code(), "upstream_error");
    assert!(parse_esearch("<html>Service unavailable</html>").is_err());
    assert!(parse_esearch(r#"{"esearchresult": {"count": "1", "idlist": ["x1"]}}"#).is_err());
    assert!(parse_esearch(r#"{"error": "API rate limit exceeded"}"#).is_err());
}

#[test]
fn summaries_follow_the_ids_and_skip_those_without_one() {
    let pmids: Vec<String> = ["39012345", "38877001", "38650422"]
        .map(String::from)
        .to_vec();
    let summaries = parse_esummary(&fixture("esummary.json"), &pmids).unwrap();
    assert_eq!(summaries.len(), 2);
    let first = &summaries[0];
    assert_eq!(first.journal, "Fixture J Oncol");
    assert_eq!(first.year, Some(2024));
    assert_eq!(first.authors, ["Abel K", "Baker LM"]);
    assert_eq!(first.doi.as_deref(), Some("10.0000/fixture.1"));
    assert_eq!(summaries[1].year, Some(2023));
    assert!(summaries[1].authors.is_empty() && summaries[1].doi.is_none());
}

#[test]
fn an_ampersand_before_multibyte_text_is_kept_whole() {
    let xml = "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article>\
        <ArticleTitle>p &lt; 0.001 \u{b1} x &amp \u{3b1}\u{3b2}\u{3b3}\u{3b4}\u{3b5}\u{3b6}</ArticleTitle>\
        </Article></MedlineCitation></PubmedArticle></PubmedArticleSet>";
    let articles = parse_efetch(xml);
    assert_eq!(
        articles[0].title,
        "p < 0.001 \u{b1} x &amp \u{3b1}\u{3b2}\u{3b3}\u{3b4}\u{3b5}\u{3b6}"
    );
}

#[test]
fn abstracts_are_read_with_their_sections_and_entities() {
    let articles = parse_efetch(&fixture("efetch.xml"));
    assert_eq!(articles.len(), 2);
    assert_eq!(articles[0].pmid, "39012345");
    assert_eq!(articles[0].journal, "Fixture journal of oncology");
    assert_eq!(
        articles[0].text,
        "BACKGROUND: Resistance to EGFR tyrosine kinase inhibitors (TKIs) limits benefit; T790M & C797S are described.\n\
         RESULTS: In 120 patients, median PFS was 10.2 months (95% CI 8.1–12.0) with p < 0.05."
    );
    assert_eq!(
        articles[1].title,
        "Fixture article two with italic and H2O."
    );
    assert_eq!(articles[1].year, Some(2023));
    assert_eq!(
        articles[1].text,
        "A single unlabelled paragraph spread over lines."
    );
}

#[test]
fn searches_are_checked_before_any_request() {
    let bad = |q: &str, min: Option<&str>, max: Option<&str>, page: u32, per: u32| {
        Search::new(q, min, max, Sort::Relevance, page, per)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        bad("x", Some("2020/13"), None, 1, 20),
        "`mindate` must be YYYY, YYYY/MM or YYYY/MM/DD"
    );
    assert_eq!(
        bad("x", Some("2024"), Some("2020"), 1, 20),
        "`mindate` is after `maxdate`"
    );
    assert_eq!(bad("x", None, None, 1, 51), "`per_page` must be 1 to 50");
    assert_eq!(
        bad("x", None, None, 501, 20),
        "`page` must be 1 or more, within the first 10,000 results"
    );
    assert_eq!(
        bad("a\nb", None, None, 1, 20),
        "the query holds control characters"
    );
    assert!(Search::new(&"x".repeat(2001), None, None, Sort::Relevance, 1, 20).is_err());
    let search = Search::new("a&b=c #1", None, Some("2021"), Sort::Relevance, 1, 10).unwrap();
    let url = search.esearch_url("http://h/e/", Some("k y"));
    assert_eq!(
        url,
        "http://h/e/esearch.fcgi?db=pubmed&retmode=json&term=a%26b%3Dc%20%231&retstart=0&retmax=10&datetype=pdat&mindate=1800&maxdate=2021&tool=stepwise&api_key=k%20y"
    );
    let ids = vec!["1".to_owned(), "22".to_owned()];
    assert_eq!(
        esummary_url("http://h/e", &ids, None),
        "http://h/e/esummary.fcgi?db=pubmed&retmode=json&id=1,22&tool=stepwise"
    );
    assert_eq!(
        efetch_url("http://h/e", &ids, None),
        "http://h/e/efetch.fcgi?db=pubmed&retmode=xml&rettype=abstract&id=1,22&tool=stepwise"
    );
}
