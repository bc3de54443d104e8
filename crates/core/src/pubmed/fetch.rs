//! A reader of `efetch` PubMed XML: for each `PubmedArticle`, its PMID, title, journal, year
//! and abstract (labelled sections kept as `LABEL: text`). It reads only the elements it
//! needs, strips inline markup (`<i>`, `<sup>`...) and decodes entities; linear in the text.

use serde::Serialize;

/// One article's abstract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ArticleAbstract"))]
pub struct Abstract {
    /// PubMed id.
    pub pmid: String,
    /// Title.
    pub title: String,
    /// Journal title.
    pub journal: String,
    /// Publication year, when given.
    pub year: Option<u32>,
    /// The abstract's text (empty when the article has none).
    pub text: String,
}

/// Reads the articles of an `efetch` answer, in order.
///
/// ```
/// let xml = r#"<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID Version="1">31</PMID>
/// <Article><Journal><JournalIssue><PubDate><Year>2021</Year></PubDate></JournalIssue><Title>Nature</Title></Journal>
/// <ArticleTitle>EGFR &amp; <i>resistance</i></ArticleTitle>
/// <Abstract><AbstractText Label="BACKGROUND">Why.</AbstractText><AbstractText Label="RESULTS">What.</AbstractText></Abstract>
/// </Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"#;
/// let articles = stepwise_core::pubmed::parse_efetch(xml);
/// assert_eq!(articles[0].title, "EGFR & resistance");
/// assert_eq!(articles[0].text, "BACKGROUND: Why.\nRESULTS: What.");
/// assert_eq!(articles[0].year, Some(2021));
/// ```
pub fn parse_efetch(xml: &str) -> Vec<Abstract> {
    let mut articles = Vec::new();
    let mut rest = xml;
    while let Some((article, after)) = element(rest, "PubmedArticle") {
        rest = after;
        let Some(pmid) = element(article.inner, "PMID").map(|(e, _)| text_of(e.inner)) else {
            continue;
        };
        let title =
            element(article.inner, "ArticleTitle").map_or(String::new(), |(e, _)| text_of(e.inner));
        let journal = element(article.inner, "Journal")
            .and_then(|(journal, _)| element(journal.inner, "Title"))
            .map_or(String::new(), |(e, _)| text_of(e.inner));
        let year = element(article.inner, "PubDate").and_then(|(date, _)| {
            let year = element(date.inner, "Year").map(|(e, _)| text_of(e.inner));
            let medline = element(date.inner, "MedlineDate").map(|(e, _)| text_of(e.inner));
            year.or(medline)?.get(..4)?.parse().ok()
        });
        let mut sections = Vec::new();
        if let Some((abstract_, _)) = element(article.inner, "Abstract") {
            let mut parts = abstract_.inner;
            while let Some((part, after)) = element(parts, "AbstractText") {
                parts = after;
                let text = text_of(part.inner);
                match attribute(part.start_tag, "Label") {
                    Some(label) if !label.is_empty() => sections.push(format!("{label}: {text}")),
                    _ => sections.push(text),
                }
            }
        }
        articles.push(Abstract {
            pmid,
            title,
            journal,
            year,
            text: sections.join("\n"),
        });
    }
    articles
}

/// An element found in the text.
struct Element<'a> {
    /// The start tag, `<Name attr="...">`.
    start_tag: &'a str,
    /// What is between the start and end tags.
    inner: &'a str,
}

/// The first element `name` in `text`, and the text after it.
fn element<'a>(text: &'a str, name: &str) -> Option<(Element<'a>, &'a str)> {
    let mut from = 0;
    loop {
        let at = from + text[from..].find('<')?;
        let after_name = at + 1 + name.len();
        let is_start = text[at + 1..].starts_with(name)
            && text[after_name..]
                .starts_with(|c: char| c == '>' || c == '/' || c.is_ascii_whitespace());
        if !is_start {
            from = at + 1;
            continue;
        }
        let tag_end = after_name + text[after_name..].find('>')?;
        let start_tag = &text[at..=tag_end];
        if start_tag.ends_with("/>") {
            return Some((
                Element {
                    start_tag,
                    inner: "",
                },
                &text[tag_end + 1..],
            ));
        }
        let close = format!("</{name}>");
        let inner_end = tag_end + 1 + text[tag_end + 1..].find(&close)?;
        let element = Element {
            start_tag,
            inner: &text[tag_end + 1..inner_end],
        };
        return Some((element, &text[inner_end + close.len()..]));
    }
}

/// The value of attribute `name` in a start tag.
fn attribute(start_tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let at = start_tag.find(&key)? + key.len();
    let len = start_tag[at..].find('"')?;
    Some(decode(&start_tag[at..at + len]))
}

/// The text of an element's content: tags removed, entities decoded, whitespace collapsed.
fn text_of(inner: &str) -> String {
    let mut plain = String::with_capacity(inner.len());
    let mut in_tag = false;
    for c in inner.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => plain.push(c),
            _ => {}
        }
    }
    decode(&plain)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Decodes the five XML entities and character references.
fn decode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        // `;` is ASCII, so its byte position is a character boundary.
        let Some(end) = rest.bytes().take(12).position(|b| b == b';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..end];
        let decoded = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .map(|hex| u32::from_str_radix(hex, 16))
                .or_else(|| entity.strip_prefix('#').map(str::parse::<u32>))
                .and_then(Result::ok)
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_and_character_references_are_decoded() {
        assert_eq!(
            decode("a &lt;b&gt; &amp;&#945;&#x3B2; &bogus; & x"),
            "a <b> &αβ &bogus; & x"
        );
    }

    #[test]
    fn similar_names_and_self_closed_elements_are_told_apart() {
        let xml = "<AbstractTextual>no</AbstractTextual><Abstract/><Abstract><AbstractText>yes</AbstractText></Abstract>";
        let (first, rest) = element(xml, "Abstract").unwrap();
        assert_eq!(first.inner, "");
        let (second, _) = element(rest, "Abstract").unwrap();
        assert_eq!(text_of(second.inner), "yes");
    }

    #[test]
    fn articles_without_an_abstract_or_a_pmid() {
        let xml = "<PubmedArticle><MedlineCitation><Article><ArticleTitle>No id</ArticleTitle></Article></MedlineCitation></PubmedArticle>\
                   <PubmedArticle><MedlineCitation><PMID>7</PMID><Article><ArticleTitle>T</ArticleTitle>\
                   <Journal><JournalIssue><PubDate><MedlineDate>1998 Dec-1999 Jan</MedlineDate></PubDate></JournalIssue><Title>J</Title></Journal>\
                   </Article></MedlineCitation></PubmedArticle><PubmedArticle><PMID>8</PMID>";
        let articles = parse_efetch(xml);
        assert_eq!(articles.len(), 1);
        assert_eq!(
            (
                articles[0].pmid.as_str(),
                articles[0].year,
                articles[0].text.as_str()
            ),
            ("7", Some(1998), "")
        );
    }
}
