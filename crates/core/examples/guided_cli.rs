//! A terminal walkthrough of a guided workflow with the offline provider: real turns (begin →
//! offline reply streamed through the marker parser → finish), no network, no API key.
//!
//! Run: `cargo run -p stepwise-core --example guided_cli` (or `scripts/dev.sh`). Type an answer,
//! a chip number (`2`), checkbox numbers (`1,3`), `/skip`, `/confirm`, `/back STEP`,
//! `/edit FIELD=VALUE` (commas make a list) or `/quit`. Input may also be piped in.

use std::io::{self, BufRead, Write};

use stepwise_core::markers::{Event, MarkerParser};
use stepwise_core::offline;
use stepwise_core::protocol::{ChatMessage, ChatRequest, ChatResponse, Role};
use stepwise_core::turn::{self, Rejection, TurnStart};
use stepwise_core::workflow::{FieldValue, StepKind, UserAction, WorkflowSpec};

fn main() -> io::Result<()> {
    let spec = WorkflowSpec::builtin("research_stream").expect("built-in spec");
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "Stepwise: {} (offline provider; type /quit to leave)\n",
        spec.title
    )?;
    let mut last = ChatResponse {
        next_step: "purpose".into(),
        ..ChatResponse::default()
    };
    let mut history: Vec<ChatMessage> = Vec::new();
    writeln!(out, "assistant> {}", spec.steps[0].question)?;
    for line in io::stdin().lock().lines() {
        let line = line?;
        let input = line.trim();
        if input == "/quit" {
            break;
        }
        if input.is_empty() {
            continue;
        }
        let action = action_for(&spec, &last, input);
        let request = ChatRequest {
            message: input.to_owned(),
            current_step: Some(last.next_step.clone()),
            current_config: last.updated_config.clone(),
            conversation_history: history.clone(),
            user_action: Some(action),
            skipped: last.skipped.clone(),
            ..ChatRequest::default()
        };
        write!(out, "assistant> ")?;
        let response = match turn::begin(&spec, &request) {
            Ok(TurnStart::Respond(response)) | Err(Rejection { response, .. }) => response,
            Ok(TurnStart::CallModel(plan)) => {
                let reply = offline::reply(&spec, &plan);
                let mut parser = MarkerParser::new();
                // Stream the reply in small chunks, as a provider would.
                for chunk in reply.as_bytes().chunks(7).map(String::from_utf8_lossy) {
                    for event in parser.feed(&chunk) {
                        if let Event::Text { text } = event {
                            write!(out, "{text}")?;
                        }
                    }
                }
                turn::finish(&spec, &plan, parser.finish()).response
            }
        };
        if let Some(error) = &response.error {
            writeln!(out, "[{}] {}", error.code, error.message)?;
            continue;
        }
        writeln!(
            out,
            "{}",
            if response.message.is_empty() {
                "Updated."
            } else {
                ""
            }
        )?;
        show_choices(&mut out, &response)?;
        writeln!(
            out,
            "   (step: {}; config: {})",
            response.next_step,
            serde_json::to_string(&response.updated_config).unwrap_or_default()
        )?;
        history.push(ChatMessage::new(Role::User, input.to_owned()));
        history.push(ChatMessage::new(Role::Assistant, response.message.clone()));
        last = response;
        if last.next_step == "done" {
            break;
        }
    }
    Ok(())
}

fn show_choices(out: &mut impl Write, response: &ChatResponse) -> io::Result<()> {
    for (i, chip) in response.suggestions.iter().enumerate() {
        writeln!(out, "   [{}] {chip}", i + 1)?;
    }
    for (i, option) in response.options.iter().enumerate() {
        writeln!(
            out,
            "   [{}] {} {}",
            i + 1,
            if option.checked { "☑" } else { "☐" },
            option.label
        )?;
    }
    if let Some(label) = &response.proposed_message {
        writeln!(out, "   (numbers separated by commas: {label})")?;
    }
    Ok(())
}

/// Maps what was typed to the typed action the browser would send.
fn action_for(spec: &WorkflowSpec, last: &ChatResponse, input: &str) -> UserAction {
    let field = last.target_field.clone().unwrap_or_default();
    let picks: Option<Vec<usize>> = input
        .split(',')
        .map(|n| n.trim().parse::<usize>().ok().filter(|&n| n >= 1))
        .collect();
    match (input, picks) {
        ("/skip", _) => UserAction::SkipStep {
            target_field: field,
        },
        ("/confirm", _) => UserAction::Confirm,
        (_, Some(picks)) if !last.options.is_empty() => UserAction::OptionsSelected {
            target_field: field,
            selected_values: picks
                .iter()
                .filter_map(|&n| last.options.get(n - 1))
                .map(|o| o.value.clone())
                .collect(),
        },
        (_, Some(picks)) if picks.len() == 1 && picks[0] <= last.suggestions.len() => {
            UserAction::OptionSelected {
                target_field: field,
                selected_value: last.suggestions[picks[0] - 1].clone(),
            }
        }
        _ if input.starts_with("/back ") => UserAction::GoToStep {
            step: input["/back ".len()..].trim().to_owned(),
        },
        _ if input.starts_with("/edit ") => {
            let (name, value) = input["/edit ".len()..]
                .split_once('=')
                .unwrap_or((input, ""));
            let is_list = spec
                .step_for_field(name.trim())
                .is_some_and(|s| matches!(s.kind, StepKind::List | StepKind::MultiChoice));
            let value = if is_list {
                FieldValue::List(value.split(',').map(|v| v.trim().to_owned()).collect())
            } else {
                FieldValue::Text(value.trim().to_owned())
            };
            UserAction::FieldEdit {
                target_field: name.trim().to_owned(),
                value,
            }
        }
        _ => UserAction::TextInput,
    }
}
