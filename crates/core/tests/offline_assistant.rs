//! The offline assistant through the whole agent loop: its payloads pass their schemas, its
//! tool calls are ones the page has, and its counts come from the screen.

use serde_json::{Value, json};
use stepwise_core::agent::{Agent, AgentLimits, AssistantResponse, Step, ToolOutcome, finish};
use stepwise_core::markers::MarkerParser;
use stepwise_core::offline::assistant_reply;
use stepwise_core::registry::{ChatContext, Registry};

/// Runs a turn with the offline assistant; tools answer with `tool_text`.
fn turn(message: &str, context: Value, tool_text: &str) -> (AssistantResponse, Vec<String>) {
    let registry = Registry::builtin();
    let context = ChatContext::from_value(context).unwrap();
    let resolution = registry.resolve(&context.current_page, context.active_tab.as_deref(), None);
    let mut agent = Agent::new(&resolution, AgentLimits::default());
    let mut parser = MarkerParser::with_registry(resolution.marker_registry());
    let mut tools = Vec::new();
    let mut step = agent.start();
    loop {
        step = match step {
            Step::CallModel { answer_now } => {
                let answer =
                    assistant_reply(message, &context, &resolution, agent.rounds(), answer_now);
                parser.feed(&answer.text);
                parser.feed("\n");
                agent.model_answered(&answer.text, answer.calls)
            }
            Step::RunTools(runs) => {
                let mut next = None;
                for run in runs {
                    tools.push(format!("{} {}", run.tool, run.input));
                    let outcome = ToolOutcome::Done {
                        text: tool_text.into(),
                        payload: None,
                    };
                    next = agent.tool_finished(run.index, outcome).or(next);
                }
                next.unwrap()
            }
            Step::Done => break,
        };
    }
    parser.end();
    (finish(&resolution, parser.finish(), agent), tools)
}

#[test]
fn a_wish_for_articles_becomes_a_valid_query_suggestion() {
    let (answer, tools) = turn(
        "EGFR resistance articles",
        json!({"current_page": "streams", "active_tab": "articles"}),
        "",
    );
    assert!(tools.is_empty());
    let payload = answer.custom_payload.expect("a query suggestion");
    assert_eq!(payload.payload_type, "query_suggestion");
    let data: Value = serde_json::from_str(payload.data.as_str()).unwrap();
    assert_eq!(
        data["query"],
        "EGFR[Title/Abstract] AND resistance[Title/Abstract]"
    );
    assert!(answer.diagnostics.is_empty(), "{:?}", answer.diagnostics);
    assert!(
        answer
            .message
            .starts_with("[offline assistant: rule-based, not an LLM]")
    );
    assert!(!answer.message.contains("QUERY_SUGGESTION"));
    assert_eq!(answer.suggested_values.len(), 1);
}

#[test]
fn counting_questions_are_answered_from_the_item_summaries() {
    let items: Vec<Value> = [2021, 2023, 2023, 2022, 2023, 2021]
        .iter()
        .enumerate()
        .map(|(i, y)| json!({"pmid": format!("{}", 100 + i), "title": "t", "year": y, "journal": if i % 2 == 0 { "Lancet" } else { "BMJ" }}))
        .collect();
    let context =
        json!({"current_page": "streams", "active_tab": "articles", "item_summaries": items});
    let (answer, _) = turn(
        "Which year is most common among these?",
        context.clone(),
        "",
    );
    assert!(answer.message.contains("Among the 6 items on screen, the most common year is 2023 (3 items), then 2021 (2), 2022 (1)."), "{}", answer.message);
    let (answer, _) = turn("which journal is most common?", context, "");
    assert!(
        answer
            .message
            .contains("the most common journal is BMJ (3 items), then Lancet (3)"),
        "{}",
        answer.message
    );
}

#[test]
fn tools_are_called_when_the_wording_asks_and_the_page_has_them() {
    let research = json!({"current_page": "research", "report_id": "r1"});
    let (answer, tools) = turn("Compare the reports", research.clone(), "Both use: heat");
    assert_eq!(tools, [r#"compare_reports {"research_id":"r1"}"#]);
    assert!(
        answer
            .message
            .contains("From `compare_reports`:\nBoth use: heat"),
        "{}",
        answer.message
    );
    assert_eq!(answer.tool_history.len(), 1);
    // compare_reports is not offered on the Streams page.
    let (_, tools) = turn(
        "Compare the reports",
        json!({"current_page": "streams", "report_id": "r1"}),
        "",
    );
    assert!(tools.is_empty());
    let (_, tools) = turn(
        "List my research",
        json!({"current_page": "chat"}),
        "none yet",
    );
    assert_eq!(tools, ["list_research {}"]);
    let (_, tools) = turn(
        "Draft a research question about heat pumps in old houses",
        json!({"current_page": "streams"}),
        "ok",
    );
    assert_eq!(
        tools,
        [r#"create_research_draft {"prompt":"heat pumps in old houses"}"#]
    );
    let with_items =
        json!({"current_page": "streams", "active_tab": "articles", "selection": ["31", "32"]});
    let (_, tools) = turn("Summarize the abstracts of these", with_items, "abstracts");
    assert_eq!(tools, [r#"retrieve_items {"ids":["31","32"]}"#]);
    let (answer, tools) = turn(
        "search pubmed for KRAS G12C",
        json!({"current_page": "research"}),
        "",
    );
    assert_eq!(
        tools,
        [r#"search_pubmed {"max_results":10,"query":"KRAS AND G12C"}"#]
    );
    assert!(answer.message.contains("From `search_pubmed`:"));
}

#[test]
fn filters_and_settings_changes_are_payloads_of_their_pages() {
    let articles = json!({"current_page": "streams", "active_tab": "articles"});
    let (answer, _) = turn("Only articles since 2020, newest first", articles, "");
    let payload = answer.custom_payload.expect("a filter");
    assert_eq!(payload.payload_type, "filter_suggestion");
    let data: Value = serde_json::from_str(payload.data.as_str()).unwrap();
    assert_eq!(
        (data["mindate"].as_str(), data["sort"].as_str()),
        (Some("2020"), Some("date"))
    );
    let settings = json!({"current_page": "streams", "active_tab": "settings",
        "stream": {"config": {"keywords": ["EGFR"]}}});
    let (answer, _) = turn("Add keyword osimertinib", settings.clone(), "");
    let data: Value = serde_json::from_str(answer.custom_payload.unwrap().data.as_str()).unwrap();
    assert_eq!(
        data["edits"],
        json!([{"field": "keywords", "value": ["EGFR", "osimertinib"]}])
    );
    let (answer, _) = turn(
        "Set the instructions: Focus on phase 3 trials.",
        settings.clone(),
        "",
    );
    let data: Value = serde_json::from_str(answer.custom_payload.unwrap().data.as_str()).unwrap();
    assert_eq!(data["chat_instructions"], "Focus on phase 3 trials.");
    // Lowercasing the Kelvin sign shortens it: the wording is found at the message's own offsets.
    let (answer, _) = turn("\u{212A} instructions: be brief", settings.clone(), "");
    let data: Value = serde_json::from_str(answer.custom_payload.unwrap().data.as_str()).unwrap();
    assert_eq!(data["chat_instructions"], "be brief");
    let (answer, _) = turn("\u{212A} add keyword osimertinib", settings, "");
    let data: Value = serde_json::from_str(answer.custom_payload.unwrap().data.as_str()).unwrap();
    assert_eq!(
        data["edits"],
        json!([{"field": "keywords", "value": ["EGFR", "osimertinib"]}])
    );
}

#[test]
fn anything_else_gets_what_the_page_offers_with_working_chips_and_buttons() {
    let (answer, tools) = turn(
        "hello",
        json!({"current_page": "research", "report_id": "r9"}),
        "",
    );
    assert!(tools.is_empty());
    assert!(answer.message.contains("compare two providers' reports"));
    assert!(
        answer
            .suggested_values
            .iter()
            .any(|v| v.value == "Compare the reports")
    );
    let targets: Vec<_> = answer
        .suggested_actions
        .iter()
        .map(|a| a.target.clone().unwrap())
        .collect();
    assert_eq!(targets, ["streams", "chat"]);
    assert!(answer.diagnostics.is_empty(), "{:?}", answer.diagnostics);
}

#[test]
fn starting_research_and_applying_a_settings_change_are_held_for_approval() {
    let (answer, tools) = turn(
        "Start research on heat pumps in old houses",
        json!({"current_page": "streams"}),
        "",
    );
    assert!(tools.is_empty(), "nothing runs: {tools:?}");
    let held = answer.approval.expect("held for approval");
    assert_eq!(held.tool, "start_research");
    assert_eq!(held.arguments["prompt"], "heat pumps in old houses");
    assert!(answer.message.starts_with("[offline"), "{}", answer.message);
    let settings = json!({"current_page": "streams", "active_tab": "settings", "stream_id": "s1",
        "stream": {"config": {"keywords": ["EGFR"]}}});
    let (answer, tools) = turn("Apply: add keyword osimertinib", settings, "");
    assert!(tools.is_empty());
    let held = answer.approval.expect("held for approval");
    assert_eq!(held.tool, "update_stream_settings");
    assert_eq!(
        held.arguments,
        json!({"stream_id": "s1", "edits": [{"field": "keywords", "value": ["EGFR", "osimertinib"]}]})
    );
    assert_eq!(
        held.summary,
        "Change the settings of stream s1: keywords to [EGFR, osimertinib]."
    );
}
