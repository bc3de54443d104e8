//! Questions the server asks the person through the client mid-call (`elicitation/create`):
//! the approval of a research start, as a one-field form, and the client's answer read into
//! what the person decided. A client that did not declare the `elicitation` capability is never
//! asked; the tool says so instead.

use serde_json::{Value, json};

/// What the person decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Accepted the form with its box ticked.
    Approved,
    /// Declined, or accepted with the box left unticked.
    Declined,
    /// Dismissed the question without deciding (or the client answered with an error).
    Cancelled,
}

impl Decision {
    /// The decision's name in a tool's structured result.
    pub fn name(self) -> &'static str {
        match self {
            Decision::Approved => "approved",
            Decision::Declined => "declined",
            Decision::Cancelled => "cancelled",
        }
    }
}

/// `elicitation/create`'s params asking the person to approve `what` (a sentence saying what
/// will happen and the model calls it will use, as `approval::describe` writes it): a form with
/// one required boolean.
///
/// ```
/// use stepwise_core::mcp::elicitation::approval_request;
/// let params = approval_request("Start research “EGFR” with 2 providers: about 4 model calls.");
/// assert_eq!(params["requestedSchema"]["required"][0], "approve");
/// assert!(params["message"].as_str().unwrap().ends_with("They count against your daily allowance. Start it?"));
/// ```
pub fn approval_request(what: &str) -> Value {
    json!({
        "message": format!("{what} They count against your daily allowance. Start it?"),
        "requestedSchema": {
            "type": "object",
            "properties": {"approve": {"type": "boolean", "title": "Start this research job",
                "description": "Tick to start it; leave it to start nothing.", "default": false}},
            "required": ["approve"]
        }
    })
}

/// `elicitation/create`'s params asking the help desk's clarifying question `text` (question
/// `number` of `total`): a form with one required text field, the answer.
///
/// ```
/// use stepwise_core::mcp::elicitation::question_request;
/// let params = question_request("Do you want a copy of your data, or your data erased?", 1, 1);
/// assert_eq!(params["message"], "The help desk asks: Do you want a copy of your data, or your data erased?");
/// assert_eq!(params["requestedSchema"]["properties"]["answer"]["maxLength"], 4000);
/// ```
pub fn question_request(text: &str, number: usize, total: usize) -> Value {
    let message = if total > 1 {
        format!("The help desk asks ({number} of {total}): {text}")
    } else {
        format!("The help desk asks: {text}")
    };
    json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {"answer": {"type": "string", "title": "Your answer", "description": text,
                "minLength": 1, "maxLength": 4000}},
            "required": ["answer"]
        }
    })
}

/// The person's answer to a clarifying question: the text, or `None` when they declined,
/// dismissed it or left it empty.
///
/// ```
/// use serde_json::json;
/// use stepwise_core::mcp::elicitation::read_answer;
/// assert_eq!(read_answer(&Ok(json!({"action": "accept", "content": {"answer": " a copy "}}))), Some("a copy".into()));
/// assert_eq!(read_answer(&Ok(json!({"action": "accept", "content": {"answer": "  "}}))), None);
/// assert_eq!(read_answer(&Ok(json!({"action": "decline"}))), None);
/// ```
pub fn read_answer(answer: &Result<Value, Value>) -> Option<String> {
    let result = answer.as_ref().ok()?;
    if result["action"] != "accept" {
        return None;
    }
    let text = result["content"]["answer"].as_str()?.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Reads the client's answer to an approval (`Ok`: the response's result, `Err`: its error).
///
/// ```
/// use serde_json::json;
/// use stepwise_core::mcp::elicitation::{read_approval, Decision};
/// assert_eq!(read_approval(&Ok(json!({"action": "accept", "content": {"approve": true}}))), Decision::Approved);
/// assert_eq!(read_approval(&Ok(json!({"action": "accept", "content": {"approve": false}}))), Decision::Declined);
/// assert_eq!(read_approval(&Ok(json!({"action": "decline"}))), Decision::Declined);
/// assert_eq!(read_approval(&Ok(json!({"action": "cancel"}))), Decision::Cancelled);
/// assert_eq!(read_approval(&Err(json!({"code": -1, "message": "no"}))), Decision::Cancelled);
/// ```
pub fn read_approval(answer: &Result<Value, Value>) -> Decision {
    let Ok(result) = answer else {
        return Decision::Cancelled;
    };
    match result["action"].as_str() {
        Some("accept") if result["content"]["approve"] == true => Decision::Approved,
        Some("accept" | "decline") => Decision::Declined,
        _ => Decision::Cancelled,
    }
}

/// Whether a client's `initialize` capabilities include elicitation (forms).
///
/// ```
/// use serde_json::json;
/// use stepwise_core::mcp::elicitation::supports_forms;
/// assert!(supports_forms(&json!({"elicitation": {}})));
/// assert!(supports_forms(&json!({"elicitation": {"form": {}}})));
/// assert!(!supports_forms(&json!({"elicitation": {"url": {}}})));
/// assert!(!supports_forms(&json!({"sampling": {}})));
/// ```
pub fn supports_forms(capabilities: &Value) -> bool {
    match capabilities.get("elicitation").and_then(Value::as_object) {
        // An empty object is forms (the 2025-06-18 meaning, kept by 2025-11-25).
        Some(modes) => modes.is_empty() || modes.contains_key("form"),
        None => false,
    }
}
