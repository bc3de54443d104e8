//! What a held call would do, for the owner deciding on it: its arguments with the defaults the
//! server would use written out, the model calls it would make, and one sentence saying so.
//! Known for the tools with side effects (`start_research`, `update_stream_settings`); any other
//! tool is described by its name and arguments and costs nothing.

use serde_json::{Value, json};

/// `arguments` of `tool` with the server's defaults written out: `start_research` gets the
/// `configured` providers when it names no list, and `synthesis` as its synthesis provider when
/// more than one provider is asked.
///
/// ```
/// use serde_json::json;
/// use stepwise_core::approval::complete_arguments;
/// let args = complete_arguments("start_research", &json!({"prompt": "EGFR"}), &["a".into(), "b".into()], "a");
/// assert_eq!(args, json!({"prompt": "EGFR", "providers": ["a", "b"], "synthesis_provider": "a"}));
/// let empty = complete_arguments("start_research", &json!({"prompt": "x", "providers": []}), &["a".into()], "a");
/// assert_eq!(empty["providers"], json!([]));
/// ```
pub fn complete_arguments(
    tool: &str,
    arguments: &Value,
    configured: &[String],
    synthesis: &str,
) -> Value {
    let mut args = arguments.clone();
    if tool != "start_research" {
        return args;
    }
    let Some(object) = args.as_object_mut() else {
        return args;
    };
    // Only an absent list is filled: an empty one is the owner's (and the schema refuses it).
    if !object.contains_key("providers") {
        object.insert("providers".into(), json!(configured));
    }
    let count = object["providers"].as_array().map_or(0, Vec::len);
    if count > 1 && !object.contains_key("synthesis_provider") {
        object.insert("synthesis_provider".into(), json!(synthesis));
    }
    args
}

/// Model calls a call of `tool` with `arguments` makes: for `start_research`, one a provider,
/// one for the synthesis when there are several, and one for the job's title.
///
/// ```
/// use serde_json::json;
/// use stepwise_core::approval::estimated_calls;
/// assert_eq!(estimated_calls("start_research", &json!({"prompt": "x", "providers": ["a", "b"]})), 4);
/// assert_eq!(estimated_calls("update_stream_settings", &json!({"stream_id": "s"})), 0);
/// ```
pub fn estimated_calls(tool: &str, arguments: &Value) -> u32 {
    match tool {
        "start_research" => {
            let providers = provider_names(arguments).len() as u32;
            let synthesis = u32::from(providers > 1);
            providers + synthesis + 1
        }
        _ => 0,
    }
}

/// One sentence: what a call of `tool` with `arguments` will do.
///
/// ```
/// use serde_json::json;
/// use stepwise_core::approval::describe;
/// let sentence = describe("update_stream_settings", &json!({"stream_id": "s1", "name": "EGFR watch"}));
/// assert_eq!(sentence, "Change the settings of stream s1: name to \"EGFR watch\".");
/// ```
pub fn describe(tool: &str, arguments: &Value) -> String {
    match tool {
        "start_research" => {
            let providers = provider_names(arguments);
            let prompt = clip(arguments["prompt"].as_str().unwrap_or(""), 120);
            let synthesis = match arguments["synthesis_provider"].as_str() {
                Some(s) if providers.len() > 1 => format!(", synthesized by {s}"),
                _ => String::new(),
            };
            format!(
                "Start a research job on \"{prompt}\" with {} ({}){synthesis}: about {} model calls.",
                plural(providers.len(), "provider"),
                providers.join(", "),
                estimated_calls(tool, arguments)
            )
        }
        "update_stream_settings" => {
            let stream = arguments["stream_id"].as_str().unwrap_or("?");
            format!(
                "Change the settings of stream {stream}: {}.",
                stream_changes(arguments)
            )
        }
        other => format!("Run `{other}` with {}.", clip(&arguments.to_string(), 160)),
    }
}

/// The changes an `update_stream_settings` call makes, in a phrase: `name to "X"; keywords to
/// [a, b]` (`nothing` when it makes none).
///
/// ```
/// use serde_json::json;
/// use stepwise_core::approval::stream_changes;
/// let args = json!({"stream_id": "s1", "chat_instructions": "", "edits": [{"field": "keywords", "value": ["a", "b"]}]});
/// assert_eq!(stream_changes(&args), "instructions cleared; keywords to [a, b]");
/// ```
pub fn stream_changes(arguments: &Value) -> String {
    let mut changes = Vec::new();
    if let Some(name) = arguments["name"].as_str() {
        changes.push(format!("name to \"{}\"", clip(name, 80)));
    }
    if let Some(text) = arguments["chat_instructions"].as_str() {
        changes.push(match text.trim() {
            "" => "instructions cleared".to_owned(),
            text => format!("instructions to \"{}\"", clip(text, 80)),
        });
    }
    for edit in arguments["edits"].as_array().into_iter().flatten() {
        let field = edit["field"].as_str().unwrap_or("?");
        let value = match &edit["value"] {
            Value::Array(items) => {
                let items: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                format!("[{}]", clip(&items.join(", "), 80))
            }
            other => format!("\"{}\"", clip(other.as_str().unwrap_or(""), 80)),
        };
        changes.push(format!("{field} to {value}"));
    }
    if changes.is_empty() {
        changes.push("nothing".into());
    }
    changes.join("; ")
}

/// The summary of a held call with what it acts on named for people: a stream by its `name`
/// rather than its id.
///
/// ```
/// use serde_json::json;
/// use stepwise_core::approval::describe_named;
/// let args = json!({"stream_id": "s1", "name": "EGFR watch"});
/// assert_eq!(describe_named("update_stream_settings", &args, Some("Lung")), "Change the settings of stream \"Lung\": name to \"EGFR watch\".");
/// ```
pub fn describe_named(tool: &str, arguments: &Value, subject: Option<&str>) -> String {
    match (tool, subject) {
        ("update_stream_settings", Some(name)) => format!(
            "Change the settings of stream \"{}\": {}.",
            clip(name, 80),
            stream_changes(arguments)
        ),
        _ => describe(tool, arguments),
    }
}

fn provider_names(arguments: &Value) -> Vec<&str> {
    arguments["providers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn clip(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let cut: String = line.chars().take(max - 1).collect();
    cut + "…"
}
