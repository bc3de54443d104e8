//! The shareable read-only report of a completed research job: one self-contained HTML page
//! (inline style, no script), every model-written text escaped.

use std::fmt::Write;

use super::{LlmStatus, Research};

/// Renders the report page: title, question, the synthesis (or "Synthesis not available" when
/// [`Research::synthesis_not_available`] holds), each provider's report or error code, the
/// external reports' titles, and until when the page is shared.
///
/// ```
/// use stepwise_core::research::{DraftFields, Research, share_html};
/// let fields = DraftFields { title: "<b>T</b>".into(), prompt: "Q?".into(),
///     selected_llms: vec!["a".into()], synthesis_llm: "a".into(), external_reports: vec![], stream_id: None };
/// let job = Research::draft("r1".into(), "me".into(), fields, 0).unwrap();
/// let page = share_html(&job);
/// assert!(page.contains("&lt;b&gt;T&lt;/b&gt;") && !page.contains("<b>T"));
/// ```
pub fn share_html(research: &Research) -> String {
    let mut out = String::with_capacity(4096 + research.prompt.len());
    let title = escape(&research.title);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\"><title>{title} · Stepwise research</title>\
         <style>{STYLE}</style></head><body><main>\n<h1>{title}</h1>\n"
    );
    if let Some(at) = research.finished_at {
        let _ = write!(
            out,
            "<p class=\"meta\">Completed {} UTC",
            crate::dates::minute(at)
        );
        if let Some(share) = &research.share_info {
            let until = crate::dates::minute(share.expires_at);
            let _ = write!(out, " · shared until {until} UTC");
        }
        out.push_str("</p>\n");
    }
    let _ = writeln!(
        out,
        "<h2>Question</h2>\n<div class=\"text\">{}</div>",
        escape(&research.prompt)
    );
    match &research.synthesized_result {
        Some(synthesis) => {
            let _ = writeln!(
                out,
                "<h2>Synthesis <span class=\"by\">by {}</span></h2>\n<div class=\"text\">{}</div>",
                escape(&research.synthesis_llm),
                escape(synthesis)
            );
        }
        None if research.synthesis_not_available() => {
            out.push_str("<h2>Synthesis</h2>\n<p class=\"note\">Synthesis not available</p>\n");
        }
        None => {}
    }
    out.push_str("<h2>Individual reports</h2>\n");
    for result in &research.llm_results {
        let _ = write!(out, "<section><h3>{}</h3>", escape(&result.provider));
        match (result.status, &result.result, &result.error) {
            (LlmStatus::Completed, Some(text), _) => {
                let _ = write!(out, "<div class=\"text\">{}</div>", escape(text));
            }
            (_, _, Some(error)) => {
                let _ = write!(
                    out,
                    "<p class=\"note\">Failed ({}): {}</p>",
                    error.code.as_str(),
                    escape(&error.message)
                );
            }
            _ => out.push_str("<p class=\"note\">No report</p>"),
        }
        out.push_str("</section>\n");
    }
    if !research.external_reports.is_empty() {
        out.push_str("<h2>External reports</h2>\n<ul>\n");
        for report in &research.external_reports {
            let _ = writeln!(out, "<li>{}</li>", escape(&report.title));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</main></body></html>\n");
    out
}

const STYLE: &str = "body{font:16px/1.55 system-ui,sans-serif;margin:0;background:#f7f7f5;color:#1d1d1b}\
main{max-width:46rem;margin:0 auto;padding:1.5rem 1rem}h1{font-size:1.6rem}\
h2{font-size:1.2rem;margin-top:2rem}h3{font-size:1rem;margin:0 0 .5rem}\
.text{white-space:pre-wrap;overflow-wrap:anywhere}.meta,.by,.note{color:#5b5b57}\
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:1rem;margin:.75rem 0}";

/// Escapes text for HTML element content and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_markup_character_is_escaped() {
        assert_eq!(
            escape("<a href='x'>\"&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&quot;&amp;&quot;&lt;/a&gt;"
        );
    }
}
