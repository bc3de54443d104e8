//! The shareable read-only report of a completed research job: one self-contained HTML page
//! (inline style, no script), every model-written text escaped.

use std::fmt::Write;

use super::{LlmStatus, Research};

/// Renders the report page: title, question, the synthesis (or "Synthesis not available" when
/// [`Research::synthesis_not_available`] holds), each provider's report or error code, and the
/// external reports' titles.
///
/// ```
/// use stepwise_core::research::{Research, share_html};
/// let mut job = Research::draft("r1".into(), "<b>T</b>".into(), "Q?".into(),
///     vec!["a".into()], "a".into(), vec![], 0).unwrap();
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
        let _ = writeln!(out, "<p class=\"meta\">Completed {} UTC</p>", utc(at));
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

/// `YYYY-MM-DD HH:MM` for milliseconds since the epoch (proleptic Gregorian, UTC).
fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant's algorithm), for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00");
        assert_eq!(utc(1_795_000_000_000), "2026-11-18 11:06");
    }

    #[test]
    fn every_markup_character_is_escaped() {
        assert_eq!(
            escape("<a href='x'>\"&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&quot;&amp;&quot;&lt;/a&gt;"
        );
    }
}
