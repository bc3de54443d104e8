//! The offline assistant: the offline provider's answers on the assistant's pages. Rule-based
//! and labelled as such: it reads the wording of the message and what is on screen, calls a
//! tool when the wording asks for one the page has (search, list or compare research, fetch
//! details, prepare a research question), writes a payload the page allows (a query, a filter,
//! a settings change), answers counting questions from the item summaries, answers questions
//! about the research job in view from what the page shows of it (its synthesis, points of
//! interest and every provider's report), and otherwise says what it can do here. It never
//! invents data: numbers and findings come from the screen or a tool, and text it quotes can
//! never start a marker line.

use std::fmt::Write;

use serde_json::{Value, json};

use super::answer::{OfflineAnswer, calls};
use super::job_view::{JOB_WORDS, JobInView, compare_in_view, unmarked};
use super::{OFFLINE_LABEL, counted};
use crate::llm::Round;
use crate::registry::{ChatContext, Resolution};

const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "all",
    "an",
    "and",
    "any",
    "are",
    "article",
    "articles",
    "can",
    "could",
    "do",
    "find",
    "for",
    "give",
    "help",
    "i",
    "in",
    "is",
    "latest",
    "literature",
    "look",
    "me",
    "new",
    "of",
    "on",
    "papers",
    "please",
    "pubmed",
    "query",
    "recent",
    "research",
    "search",
    "show",
    "some",
    "studies",
    "study",
    "the",
    "to",
    "up",
    "want",
    "what",
    "with",
    "write",
    "you",
];

/// The offline answer to `message` on a page, given the rounds of tool calls so far.
///
/// ```
/// use stepwise_core::offline::assistant_reply;
/// use stepwise_core::registry::{ChatContext, Registry};
/// let registry = Registry::builtin();
/// let context = ChatContext::from_value(serde_json::json!({"current_page": "streams", "active_tab": "articles"})).unwrap();
/// let resolution = registry.resolve("streams", Some("articles"), None);
/// let answer = assistant_reply("EGFR resistance articles", &context, &resolution, &[], false);
/// assert!(answer.text.contains("QUERY_SUGGESTION: {\"explanation\""));
/// assert!(answer.text.contains("EGFR[Title/Abstract] AND resistance[Title/Abstract]"));
/// ```
pub fn assistant_reply(
    message: &str,
    context: &ChatContext,
    resolution: &Resolution<'_>,
    rounds: &[Round],
    answer_now: bool,
) -> OfflineAnswer {
    if let Some(round) = rounds.last() {
        // The first round's text carried the label; this answer continues it.
        let mut text = String::new();
        after_tools(&mut text, round);
        return OfflineAnswer {
            text,
            calls: Vec::new(),
        };
    }
    let mut text = format!("{OFFLINE_LABEL} ");
    let lower = message.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    let tool = |name: &str| !answer_now && resolution.tool(name).is_some();
    let payload = |name: &str| resolution.payload(name).is_some();
    let call = |name: &str, input: Value| calls(name, vec![input]);
    let job = JobInView::read(context);
    let named = job
        .as_ref()
        .map(|job| job.named_in(&lower))
        .unwrap_or_default();

    let compares = has(&["compare", "comparison", "differ", "disagree", "agree"]);
    if compares
        && tool("compare_reports")
        && let Some(id) = &context.report_id
    {
        return match &job {
            // Like a model that sees every report on screen: each pair, or the two named.
            Some(job) if job.has_reports() => compare_in_view(id, job, &named, &mut text),
            _ => call("compare_reports", json!({"research_id": id})),
        };
    }
    if has(&[
        "my research",
        "list research",
        "research jobs",
        "which research",
        "what research",
    ]) && tool("list_research")
    {
        return call("list_research", json!({}));
    }
    let starts = has(&[
        "start research",
        "start a research",
        "run research",
        "run a research",
        "launch research",
    ]);
    if starts && !has(&["draft"]) && tool("start_research") {
        // Starting calls models and costs: the call waits for the user's approval.
        return call(
            "start_research",
            json!({"prompt": research_prompt(message, context)}),
        );
    }
    if has(&["apply", "update the stream", "change the stream now"])
        && tool("update_stream_settings")
        && let Some(stream_id) = &context.stream_id
        && let Some(mut change) = settings_change(message, context)
    {
        // Done, not suggested: the change waits for the user's approval.
        if let Some(fields) = change.as_object_mut() {
            fields.remove("explanation");
            fields.insert("stream_id".into(), json!(stream_id));
        }
        return call("update_stream_settings", change);
    }
    if has(&[
        "draft",
        "research question",
        "start research",
        "prepare research",
        "set up research",
    ]) && tool("create_research_draft")
    {
        return call(
            "create_research_draft",
            json!({"prompt": research_prompt(message, context)}),
        );
    }
    if has(&["status", "how is the job", "how is my job"])
        && tool("get_research")
        && let Some(id) = &context.report_id
    {
        return call("get_research", json!({"research_id": id}));
    }
    if let Some(id) = &context.report_id
        && (!named.is_empty() || has(JOB_WORDS))
        && !compares
        && !has(&["pubmed", "search for", "look up"])
    {
        match &job {
            Some(job) if job.has_reports() || job.synthesis.is_some() => {
                job.describe(&named, resolution, &mut text);
                return OfflineAnswer {
                    text,
                    calls: Vec::new(),
                };
            }
            // The page names the job but does not show its reports: read them, as a model would.
            _ if tool("retrieve_items") => return call("retrieve_items", json!({"ids": [id]})),
            _ => {}
        }
    }
    if has(&["abstract", "details", "full text", "summarize", "summarise"])
        && tool("retrieve_items")
    {
        let ids = ids_in_view(context);
        if !ids.is_empty() {
            return call("retrieve_items", json!({"ids": ids}));
        }
    }
    if has(&[
        "which year",
        "what year",
        "most common year",
        "years",
        "which journal",
        "most common journal",
    ]) && !context.item_summaries().is_empty()
    {
        let key = if has(&["journal"]) { "journal" } else { "year" };
        count_items(&mut text, context.item_summaries(), key);
        return OfflineAnswer {
            text,
            calls: Vec::new(),
        };
    }
    let terms = query_terms(message);
    if has(&["search pubmed", "search for", "look up"])
        && tool("search_pubmed")
        && !terms.is_empty()
    {
        return call(
            "search_pubmed",
            json!({"query": terms.join(" AND "), "max_results": 10}),
        );
    }
    if has(&[
        "since",
        "after",
        "before",
        "until",
        "between",
        "newest",
        "latest first",
        "sort by date",
        "by date",
    ]) && payload("filter_suggestion")
        && let Some(filter) = filter_from(&lower)
    {
        text.push_str("Here is a filter for the results; Accept applies it and searches again.\n");
        let _ = writeln!(text, "FILTER_SUGGESTION: {filter}");
        return OfflineAnswer {
            text,
            calls: Vec::new(),
        };
    }
    if has(&["instruction", "keyword", "rename", "change the", "add "])
        && payload("stream_config_suggestion")
        && let Some(change) = settings_change(message, context)
    {
        text.push_str(
            "Here is the change; Accept applies it to the stream (the server checks it).\n",
        );
        let _ = writeln!(text, "STREAM_CONFIG_SUGGESTION: {change}");
        return OfflineAnswer {
            text,
            calls: Vec::new(),
        };
    }
    // "find", not "findings": a question about findings is not a wish for articles.
    let asks_to_find = lower
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == "find" || w == "finding");
    if (asks_to_find || has(&["article", "paper", "query", "studies", "literature"]))
        && !terms.is_empty()
    {
        if payload("query_suggestion") {
            let query: Vec<String> = terms
                .iter()
                .map(|t| format!("{t}[Title/Abstract]"))
                .collect();
            let suggestion = json!({
                "query": query.join(" AND "),
                "explanation": format!("Articles mentioning {} in their title or abstract.", terms.join(" and ")),
            });
            text.push_str("Here is a PubMed query for that; Accept puts it in the search field and runs it.\n");
            let _ = writeln!(text, "QUERY_SUGGESTION: {suggestion}");
            let _ = writeln!(
                text,
                "SUGGESTED_VALUES: {}",
                json!([{"label": "Only recent ones", "value": "Only articles since 2020"}])
            );
            return OfflineAnswer {
                text,
                calls: Vec::new(),
            };
        }
        if tool("search_pubmed") {
            return call(
                "search_pubmed",
                json!({"query": terms.join(" AND "), "max_results": 10}),
            );
        }
    }
    help(&mut text, context, resolution);
    OfflineAnswer {
        text,
        calls: Vec::new(),
    }
}

/// The answer once tools have run: what each returned (its first lines) or how it failed.
fn after_tools(text: &mut String, round: &Round) {
    for reply in &round.replies {
        if reply.is_error {
            let _ = writeln!(
                text,
                "The tool `{}` failed: {}",
                reply.name,
                first_line(&reply.content)
            );
            continue;
        }
        let _ = writeln!(text, "From `{}`:", reply.name);
        for line in reply.content.lines().take(12) {
            let _ = writeln!(text, "{}", unmarked(line));
        }
        if reply.content.lines().count() > 12 {
            text.push_str("(more in the tool's result)\n");
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ")
}

/// The most common values of `key` among the items on screen.
fn count_items(text: &mut String, items: &[Value], key: &str) {
    let mut ranked: Vec<(String, usize)> = Vec::new();
    for item in items {
        let value = match &item[key] {
            Value::String(s) if !s.is_empty() => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => continue,
        };
        match ranked.iter_mut().find(|(v, _)| *v == value) {
            Some((_, n)) => *n += 1,
            None => ranked.push((value, 1)),
        }
    }
    ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let Some((top, n)) = ranked.first() else {
        if items.len() == 1 {
            let _ = write!(text, "The one item on screen does not say its {key}.");
        } else {
            let _ = write!(
                text,
                "The {} items on screen do not say their {key}.",
                items.len()
            );
        }
        return;
    };
    if items.len() == 1 {
        let _ = writeln!(text, "The one item on screen has {key} {top}.");
        return;
    }
    let _ = write!(
        text,
        "Among the {} items on screen, the most common {key} is {top} ({})",
        items.len(),
        counted(*n, "item", "items")
    );
    let rest: Vec<String> = ranked
        .iter()
        .skip(1)
        .take(3)
        .map(|(v, n)| format!("{v} ({n})"))
        .collect();
    if !rest.is_empty() {
        let _ = write!(text, ", then {}", rest.join(", "));
    }
    text.push_str(".\n");
}

/// The words of a message worth searching for, acronyms kept as written.
fn query_terms(message: &str) -> Vec<String> {
    message
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(&w.to_lowercase().as_str()))
        .take(6)
        .map(str::to_owned)
        .collect()
}

/// A date filter from years in the wording (`since 2020`, `before 2015`, `between 2018 and
/// 2021`) and an order (`newest`, `by date`).
fn filter_from(lower: &str) -> Option<Value> {
    let years: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| w.len() == 4 && (w.starts_with("19") || w.starts_with("20")))
        .collect();
    let mut filter = serde_json::Map::new();
    match years.as_slice() {
        [from, to, ..] => {
            filter.insert("mindate".into(), json!(from));
            filter.insert("maxdate".into(), json!(to));
        }
        [year] if lower.contains("before") || lower.contains("until") => {
            filter.insert("maxdate".into(), json!(year));
        }
        [year] => {
            filter.insert("mindate".into(), json!(year));
        }
        [] => {}
    }
    if ["newest", "latest", "by date", "sort"]
        .iter()
        .any(|w| lower.contains(w))
    {
        filter.insert("sort".into(), json!("date"));
    }
    (!filter.is_empty()).then(|| {
        filter.insert(
            "explanation".into(),
            json!("From the dates and order you asked for."),
        );
        Value::Object(filter)
    })
}

/// A settings change: new chat instructions (`instructions: ...`) or an added keyword.
fn settings_change(message: &str, context: &ChatContext) -> Option<Value> {
    // Found in an ASCII-lowercased copy: its byte offsets are the message's own (full
    // lowercasing can change lengths, e.g. the Kelvin sign).
    let ascii = message.to_ascii_lowercase();
    if let Some(at) = ascii.find("instruction") {
        let rest = &message[at..];
        let text = rest.split_once(':').map_or("", |(_, t)| t).trim();
        return (!text.is_empty()).then(|| {
            json!({"chat_instructions": text, "explanation": "New instructions for the assistant on this stream."})
        });
    }
    let at = ascii.find("keyword")?;
    let added = message[at..]
        .split_once(|c: char| c == ':' || c.is_whitespace())
        .map_or("", |(_, t)| t)
        .trim()
        .trim_matches('"');
    if added.is_empty() {
        return None;
    }
    let mut keywords: Vec<Value> = context
        .get("stream.config.keywords")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    keywords.push(json!(added));
    Some(
        json!({"edits": [{"field": "keywords", "value": keywords}], "explanation": format!("Adds {added} to the keywords.")}),
    )
}

/// A research question from the message, or from the stream in view.
fn research_prompt(message: &str, context: &ChatContext) -> String {
    for marker in [" about ", " on ", ": "] {
        if let Some((_, rest)) = message.split_once(marker) {
            let rest = rest.trim();
            if rest.len() > 8 {
                return rest.to_owned();
            }
        }
    }
    match context.get("stream.config.purpose").and_then(Value::as_str) {
        Some(purpose) => format!("What is new and important for this purpose: {purpose}"),
        None => message.trim().to_owned(),
    }
}

/// PMIDs the user is looking at: the selection, the open article, or the first items.
fn ids_in_view(context: &ChatContext) -> Vec<String> {
    let as_ids = |value: Option<&Value>| -> Vec<String> {
        match value {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            Some(Value::String(id)) => vec![id.clone()],
            _ => Vec::new(),
        }
    };
    let mut ids = as_ids(context.get("selection"));
    if ids.is_empty() {
        ids = as_ids(context.get("viewer.pmid"));
    }
    if ids.is_empty() {
        ids = context
            .item_summaries()
            .iter()
            .filter_map(|item| item["pmid"].as_str().map(str::to_owned))
            .take(3)
            .collect();
    }
    ids.truncate(20);
    ids
}

/// What the assistant can do on this page, with chips to try.
fn help(text: &mut String, context: &ChatContext, resolution: &Resolution<'_>) {
    text.push_str("I answer from fixed rules here, not a language model. On this page I can:\n");
    let mut chips = Vec::new();
    if resolution.payload("query_suggestion").is_some() {
        text.push_str(
            "- write a PubMed query for what you want to find (ask: find articles about ...)\n",
        );
        chips.push(
            json!({"label": "Suggest a query", "value": "Find articles about EGFR resistance"}),
        );
    }
    if resolution.payload("filter_suggestion").is_some() {
        text.push_str("- set a date range or order (ask: only since 2020, newest first)\n");
    }
    if !context.item_summaries().is_empty() {
        text.push_str("- count what is on screen (ask: which year is most common?)\n");
        chips.push(
            json!({"label": "Most common year", "value": "Which year is most common among these?"}),
        );
    }
    if resolution.payload("stream_config_suggestion").is_some() {
        text.push_str(
            "- change the stream's settings (ask: add keyword osimertinib, or instructions: ...)\n",
        );
    }
    if resolution.tool("list_research").is_some() {
        text.push_str("- list your research jobs, or prepare a research question (ask: draft a research question about ...)\n");
        chips.push(json!({"label": "My research", "value": "List my research"}));
    }
    if context.report_id.is_some() {
        text.push_str("- say what the job in view found (ask: what do the findings say?)\n");
        chips.push(json!({"label": "Its findings", "value": "What do the findings say?"}));
    }
    if resolution.tool("compare_reports").is_some() && context.report_id.is_some() {
        text.push_str("- compare two providers' reports of this job (ask: compare the reports)\n");
        chips.push(json!({"label": "Compare reports", "value": "Compare the reports"}));
    }
    if resolution.tool("search_pubmed").is_some() {
        text.push_str("- search PubMed directly (ask: search pubmed for ...)\n");
    }
    if !chips.is_empty() {
        let _ = writeln!(text, "SUGGESTED_VALUES: {}", Value::Array(chips));
    }
    let pages: Vec<Value> = ["streams", "research", "chat"]
        .into_iter()
        .filter(|p| *p != context.current_page && resolution.has_client_action("navigate"))
        .map(|p| json!({"label": format!("Open {p}"), "action": "navigate", "handler": "client", "target": p}))
        .collect();
    if !pages.is_empty() {
        let _ = writeln!(text, "SUGGESTED_ACTIONS: {}", Value::Array(pages));
    }
}

/// The offline answer of a turn that has context supplied for it: it names each attachment
/// with its phase and the opening of its text, so the handshake can be followed without a
/// model. Labelled as not an LLM.
///
/// ```
/// use stepwise_core::handshake::{build_request, Origin, Sources};
/// use stepwise_core::offline::context_reply;
/// let request = build_request("q1", "m1", Origin::Analyzer, Vec::new(), &Sources::default(), 0, 1000);
/// let text = context_reply("Why?", &request).text;
/// assert!(text.contains("no context was supplied") && !text.contains("with the context supplied"));
/// ```
pub fn context_reply(message: &str, request: &crate::handshake::ContextRequest) -> OfflineAnswer {
    let asked: String = message.chars().take(80).collect();
    let mut supplied = String::new();
    for (slot, supply) in request.attachments() {
        let opening: String = supply
            .text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
            .chars()
            .take(160)
            .collect();
        supplied.push_str(&format!(
            "- [Phase {}] {}: {opening}\n",
            slot.phase, slot.description
        ));
    }
    let text = if supplied.is_empty() {
        format!(
            "{OFFLINE_LABEL} On \"{asked}\": no context was supplied; this answer uses only what is on screen.\n"
        )
    } else {
        format!("{OFFLINE_LABEL} On \"{asked}\", with the context supplied:\n{supplied}")
    };
    OfflineAnswer {
        text,
        calls: Vec::new(),
    }
}
