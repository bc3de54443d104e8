//! The assistant's built-in tools, run for the agent loop: each gets its checked input, may
//! report progress (`tool_progress` events) and answers a [`ToolOutcome`]: text for the model,
//! and a payload for the client when the tool has a payload type. A tool that fails answers
//! `Failed` with a message the model reads; one that takes too long is cut off by the caller.
//! The tools that change data (`changes`) are called only once their call was approved.

mod changes;
mod pubmed;

pub use changes::summary;
mod research;

use serde_json::Value;
use stepwise_core::agent::ToolOutcome;
use worker::Env;

use crate::platform::error::AppError;
use crate::platform::output::Output;
use crate::platform::owner::Owner;
use crate::platform::settings::Settings;

/// What a tool runs with.
pub struct ToolContext<'a> {
    /// The Worker's bindings.
    pub env: &'a Env,
    /// Its settings.
    pub settings: &'a Settings,
    /// Whose turn it is (tools read only this owner's data).
    pub owner: &'a Owner,
}

/// Runs tool `name` with `input`, reporting progress to `out`.
pub async fn run(
    ctx: &ToolContext<'_>,
    name: &str,
    input: &Value,
    out: &mut Output,
) -> ToolOutcome {
    let outcome = match name {
        "search_pubmed" => pubmed::search(ctx, input, out).await,
        "retrieve_items" => research::retrieve_items(ctx, input, out).await,
        "list_research" => research::list(ctx, input).await,
        "get_research" => research::get(ctx, input).await,
        "create_research_draft" => research::draft(ctx, input),
        "compare_reports" => research::compare(ctx, input).await,
        "start_research" => changes::start_research(ctx, input, out).await,
        "update_stream_settings" => changes::update_stream_settings(ctx, input).await,
        other => Err(AppError::invalid_request(format!(
            "the tool `{other}` is not built in"
        ))),
    };
    outcome.unwrap_or_else(|error| {
        ToolOutcome::Failed(format!("{}: {}", error.code(), error.message()))
    })
}

/// A string input, trimmed (`None` when absent or blank).
fn text<'v>(input: &'v Value, key: &str) -> Option<&'v str> {
    input[key].as_str().map(str::trim).filter(|s| !s.is_empty())
}

/// `text` cut to `max` characters, marked when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push_str(" […]");
    out
}
