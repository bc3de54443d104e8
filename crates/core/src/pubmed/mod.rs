//! PubMed's E-utilities, sans-IO: the URLs of a search (`esearch`), of its summaries
//! (`esummary`) and of abstracts (`efetch`), and readers of their answers (JSON for the first
//! two, XML for abstracts). The Worker performs the requests; nothing here invents an article:
//! an answer that cannot be read is an error.

mod fetch;
mod search;

pub use fetch::{Abstract, parse_efetch};
pub use search::{ArticleSummary, SearchIds, parse_esearch, parse_esummary};

use thiserror::Error;

/// NCBI's E-utilities, the default base URL.
pub const DEFAULT_BASE_URL: &str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils";
/// Most results a page may hold.
pub const MAX_PER_PAGE: u32 = 50;
/// Most PMIDs fetched at once.
pub const MAX_IDS: usize = 50;
/// Longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 2000;
/// Deepest result reachable by paging (E-utilities serve the first 10,000 of a search).
const MAX_RESULT_INDEX: u32 = 9_999;

/// Why a search could not be made or read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PubmedError {
    /// The search itself is invalid (code `invalid_search`).
    #[error("{0}")]
    InvalidSearch(String),
    /// E-utilities answered something that is not a search result (code `upstream_error`).
    #[error("PubMed's answer could not be read: {0}")]
    BadAnswer(String),
}

impl PubmedError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            PubmedError::InvalidSearch(_) => "invalid_search",
            PubmedError::BadAnswer(_) => "upstream_error",
        }
    }
}

/// How results are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sort {
    /// PubMed's best match.
    #[default]
    Relevance,
    /// Newest publication first.
    Date,
}

impl Sort {
    /// Reads `relevance` or `date`.
    pub fn parse(text: &str) -> Result<Sort, PubmedError> {
        match text {
            "relevance" => Ok(Sort::Relevance),
            "date" => Ok(Sort::Date),
            _ => Err(invalid("`sort` must be `relevance` or `date`")),
        }
    }

    /// The name as clients write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Sort::Relevance => "relevance",
            Sort::Date => "date",
        }
    }
}

/// A literature search: the query, an optional publication-date range, the order and the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    /// The PubMed query.
    pub query: String,
    /// Earliest publication date, `YYYY[/MM[/DD]]`.
    pub mindate: Option<String>,
    /// Latest publication date, `YYYY[/MM[/DD]]`.
    pub maxdate: Option<String>,
    /// The order.
    pub sort: Sort,
    /// The page, from 1.
    pub page: u32,
    /// Results a page, 1 to [`MAX_PER_PAGE`].
    pub per_page: u32,
}

impl Search {
    /// A checked search: a non-blank query of at most [`MAX_QUERY_CHARS`] without control
    /// characters, dates as `YYYY`, `YYYY/MM` or `YYYY/MM/DD` (`-` also accepted) with the
    /// earliest first, a page within the first 10,000 results.
    ///
    /// ```
    /// use stepwise_core::pubmed::{Search, Sort};
    /// let search = Search::new("EGFR resistance", Some("2020-01"), None, Sort::Date, 2, 20).unwrap();
    /// let url = search.esearch_url("http://127.0.0.1:9/eutils", None);
    /// assert_eq!(url, "http://127.0.0.1:9/eutils/esearch.fcgi?db=pubmed&retmode=json&term=EGFR%20resistance&retstart=20&retmax=20&sort=pub_date&datetype=pdat&mindate=2020%2F01&maxdate=3000&tool=stepwise");
    /// assert!(Search::new(" ", None, None, Sort::Relevance, 1, 20).is_err());
    /// ```
    pub fn new(
        query: &str,
        mindate: Option<&str>,
        maxdate: Option<&str>,
        sort: Sort,
        page: u32,
        per_page: u32,
    ) -> Result<Search, PubmedError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(invalid("the query is empty"));
        }
        if query.chars().count() > MAX_QUERY_CHARS {
            return Err(invalid(&format!(
                "the query is longer than {MAX_QUERY_CHARS} characters"
            )));
        }
        if query.chars().any(char::is_control) {
            return Err(invalid("the query holds control characters"));
        }
        if !(1..=MAX_PER_PAGE).contains(&per_page) {
            return Err(invalid(&format!("`per_page` must be 1 to {MAX_PER_PAGE}")));
        }
        if page == 0 || (page - 1).saturating_mul(per_page) > MAX_RESULT_INDEX {
            return Err(invalid(
                "`page` must be 1 or more, within the first 10,000 results",
            ));
        }
        let mindate = mindate.map(|d| date("mindate", d)).transpose()?;
        let maxdate = maxdate.map(|d| date("maxdate", d)).transpose()?;
        if let (Some(min), Some(max)) = (&mindate, &maxdate)
            && min > max
        {
            return Err(invalid("`mindate` is after `maxdate`"));
        }
        Ok(Search {
            query: query.to_owned(),
            mindate,
            maxdate,
            sort,
            page,
            per_page,
        })
    }

    /// The `esearch` URL: JSON, the page's PMIDs and the total count.
    pub fn esearch_url(&self, base: &str, api_key: Option<&str>) -> String {
        let mut url = format!(
            "{}/esearch.fcgi?db=pubmed&retmode=json&term={}&retstart={}&retmax={}",
            base.trim_end_matches('/'),
            encode(&self.query),
            (self.page - 1) * self.per_page,
            self.per_page
        );
        if self.sort == Sort::Date {
            url.push_str("&sort=pub_date");
        }
        if self.mindate.is_some() || self.maxdate.is_some() {
            // E-utilities take a range only with both ends.
            let min = self.mindate.as_deref().unwrap_or("1800");
            let max = self.maxdate.as_deref().unwrap_or("3000");
            url.push_str(&format!(
                "&datetype=pdat&mindate={}&maxdate={}",
                encode(min),
                encode(max)
            ));
        }
        with_key(url, api_key)
    }
}

/// The `esummary` URL of `pmids` (JSON).
pub fn esummary_url(base: &str, pmids: &[String], api_key: Option<&str>) -> String {
    let url = format!(
        "{}/esummary.fcgi?db=pubmed&retmode=json&id={}",
        base.trim_end_matches('/'),
        pmids.join(",")
    );
    with_key(url, api_key)
}

/// The `efetch` URL of `pmids`' abstracts (XML).
pub fn efetch_url(base: &str, pmids: &[String], api_key: Option<&str>) -> String {
    let url = format!(
        "{}/efetch.fcgi?db=pubmed&retmode=xml&rettype=abstract&id={}",
        base.trim_end_matches('/'),
        pmids.join(",")
    );
    with_key(url, api_key)
}

/// Whether `id` is a PMID (1 to 10 digits).
pub fn is_pmid(id: &str) -> bool {
    (1..=10).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_digit())
}

fn with_key(mut url: String, api_key: Option<&str>) -> String {
    url.push_str("&tool=stepwise");
    if let Some(key) = api_key.filter(|k| !k.is_empty()) {
        url.push_str("&api_key=");
        url.push_str(&encode(key));
    }
    url
}

fn invalid(message: &str) -> PubmedError {
    PubmedError::InvalidSearch(message.to_owned())
}

/// A date as E-utilities take it: `YYYY`, `YYYY/MM` or `YYYY/MM/DD`.
fn date(name: &str, text: &str) -> Result<String, PubmedError> {
    let text = text.trim().replace('-', "/");
    let parts: Vec<&str> = text.split('/').collect();
    let number = |part: &str, digits: usize, range: std::ops::RangeInclusive<u32>| {
        part.len() == digits
            && part.bytes().all(|b| b.is_ascii_digit())
            && part.parse().is_ok_and(|n| range.contains(&n))
    };
    let fine = match parts.as_slice() {
        [year] => number(year, 4, 1000..=2999),
        [year, month] => number(year, 4, 1000..=2999) && number(month, 2, 1..=12),
        [year, month, day] => {
            number(year, 4, 1000..=2999) && number(month, 2, 1..=12) && number(day, 2, 1..=31)
        }
        _ => false,
    };
    if fine {
        Ok(text)
    } else {
        Err(invalid(&format!(
            "`{name}` must be YYYY, YYYY/MM or YYYY/MM/DD"
        )))
    }
}

/// Percent-encodes a query parameter's value (RFC 3986 unreserved characters stay as they are).
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
