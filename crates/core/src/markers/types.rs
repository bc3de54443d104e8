//! Data produced by the marker parser: streaming events, markers, diagnostics and the whole parse.

use serde::{Deserialize, Serialize};

use super::MAX_LIST_ITEMS;
use crate::json::JsonText;

/// One event of a streamed parse. Adjacent `Text` events may be split differently for different
/// chunkings; their concatenation, and every other event, is the same for any chunking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
#[cfg_attr(feature = "schema", schemars(rename = "MarkerEvent"))]
pub enum Event {
    /// Display text, with marker lines removed.
    Text {
        /// The text.
        text: String,
    },
    /// A completed marker.
    Marker(Marker),
    /// Something malformed was met and dropped; the parse went on.
    Diagnostic(Diagnostic),
}

/// A completed marker with its parsed value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Marker {
    /// `SUGGESTIONS: a, b, c`: single-select chips.
    Suggestions(Vec<String>),
    /// `OPTIONS: A|B|C`: multi-select checkboxes.
    Options(Vec<String>),
    /// `EXTRACTED_DATA: field=value`: one extracted field.
    ExtractedData(ExtractedField),
    /// `PROPOSED_MESSAGE: text`: the label of the Continue button.
    ProposedMessage(String),
    /// `TARGET_FIELD: field`: the field the model is asking about.
    TargetField(String),
    /// `SUGGESTED_VALUES: [{"label","value"}]`: chips that send a prepared message.
    SuggestedValues(Vec<SuggestedValue>),
    /// `SUGGESTED_ACTIONS: [{"label","action","handler"}]`: action buttons.
    SuggestedActions(Vec<SuggestedAction>),
    /// A registered payload marker such as `SCHEMA_PROPOSAL: {...}`.
    Payload(Payload),
}

impl Marker {
    /// The `kind` tag, spelled as on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            Marker::Suggestions(_) => "suggestions",
            Marker::Options(_) => "options",
            Marker::ExtractedData(_) => "extracted_data",
            Marker::ProposedMessage(_) => "proposed_message",
            Marker::TargetField(_) => "target_field",
            Marker::SuggestedValues(_) => "suggested_values",
            Marker::SuggestedActions(_) => "suggested_actions",
            Marker::Payload(_) => "payload",
        }
    }
}

/// One `field=value` pair of an `EXTRACTED_DATA` marker, as the model wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExtractedField {
    /// The field name.
    pub field: String,
    /// The raw value (lists are comma-separated or a JSON array).
    pub value: String,
}

/// A chip that sends `value` as the user's next message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SuggestedValue {
    /// Text on the chip.
    pub label: String,
    /// Message sent when clicked.
    pub value: String,
}

/// Who handles a suggested action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ActionHandler {
    /// The browser (navigation, UI changes).
    Client,
    /// The server (sent back as an action request).
    Server,
}

impl ActionHandler {
    /// The handler spelled as on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionHandler::Client => "client",
            ActionHandler::Server => "server",
        }
    }
}

/// A button that triggers a named action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SuggestedAction {
    /// Text on the button.
    pub label: String,
    /// The action's name.
    pub action: String,
    /// Who runs it.
    pub handler: ActionHandler,
    /// What it acts on (an id, a page, a question), when the action needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// A registered payload: its type (the marker name in snake_case) and its JSON body.
///
/// The body is kept as validated JSON text: it is checked while it streams and never rebuilt,
/// so a large payload costs one pass. Read it with `serde_json::from_str(data.as_str())`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Payload {
    /// Payload type, e.g. `schema_proposal` for `SCHEMA_PROPOSAL:`.
    #[serde(rename = "type")]
    pub payload_type: String,
    /// The JSON body, validated, exactly as the model wrote it.
    pub data: JsonText,
}

/// Something malformed in the stream, dropped with a reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Diagnostic {
    /// Stable machine code (see [`DiagnosticCode`]).
    pub code: DiagnosticCode,
    /// Human explanation.
    pub message: String,
    /// 1-based line of the stream where the marker started.
    pub line: u32,
}

/// Stable codes of parser diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DiagnosticCode {
    /// A marker's value does not have the marker's form (e.g. `EXTRACTED_DATA` without `=`).
    MalformedMarker,
    /// A JSON body is not valid JSON.
    MalformedJson,
    /// A JSON body is valid JSON of the wrong shape.
    InvalidShape,
    /// A marker line is longer than 64 KiB.
    LineTooLong,
    /// A JSON body is larger than 256 KiB.
    PayloadTooLarge,
    /// The stream ended inside a JSON body.
    UnterminatedPayload,
    /// A JSON marker was not followed by `{` or `[`.
    MissingPayloadBody,
    /// Text after a JSON body on the same line was dropped.
    TrailingText,
    /// A list marker had more items than allowed; the rest were dropped.
    TooManyItems,
    /// `feed` was called after `end`.
    FeedAfterEnd,
}

impl DiagnosticCode {
    /// The code as written on the wire (its serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticCode::MalformedMarker => "malformed_marker",
            DiagnosticCode::MalformedJson => "malformed_json",
            DiagnosticCode::InvalidShape => "invalid_shape",
            DiagnosticCode::LineTooLong => "line_too_long",
            DiagnosticCode::PayloadTooLarge => "payload_too_large",
            DiagnosticCode::UnterminatedPayload => "unterminated_payload",
            DiagnosticCode::MissingPayloadBody => "missing_payload_body",
            DiagnosticCode::TrailingText => "trailing_text",
            DiagnosticCode::TooManyItems => "too_many_items",
            DiagnosticCode::FeedAfterEnd => "feed_after_end",
        }
    }
}

/// The whole parse of a reply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Parsed {
    /// Display text with marker lines removed, trimmed.
    pub message: String,
    /// Chips from `SUGGESTIONS` lines, in order, without repeats, at most [`MAX_LIST_ITEMS`].
    pub suggestions: Vec<String>,
    /// Checkboxes from `OPTIONS` lines, in order, without repeats, at most [`MAX_LIST_ITEMS`].
    pub options: Vec<String>,
    /// Every `EXTRACTED_DATA` pair, in order (a later pair for the same field wins when applied).
    pub extracted: Vec<ExtractedField>,
    /// The last `PROPOSED_MESSAGE`.
    pub proposed_message: Option<String>,
    /// The last `TARGET_FIELD`.
    pub target_field: Option<String>,
    /// Every `SUGGESTED_VALUES` entry, in order.
    pub suggested_values: Vec<SuggestedValue>,
    /// Every `SUGGESTED_ACTIONS` entry, in order.
    pub suggested_actions: Vec<SuggestedAction>,
    /// Every registered payload, in order.
    pub payloads: Vec<Payload>,
    /// Every diagnostic, in order.
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    /// Empties the parse, keeping the lists' memory (for a parser that starts over).
    pub(crate) fn clear(&mut self) {
        // Every field named, so that a field added later is not forgotten here.
        let Parsed {
            message,
            suggestions,
            options,
            extracted,
            proposed_message,
            target_field,
            suggested_values,
            suggested_actions,
            payloads,
            diagnostics,
        } = self;
        message.clear();
        suggestions.clear();
        options.clear();
        extracted.clear();
        *proposed_message = None;
        *target_field = None;
        suggested_values.clear();
        suggested_actions.clear();
        payloads.clear();
        diagnostics.clear();
    }

    /// Folds one event into the parse; returns how many chips or checkboxes were dropped
    /// because the parse already held [`MAX_LIST_ITEMS`] of them.
    pub(crate) fn absorb(&mut self, event: &Event) -> usize {
        match event {
            Event::Text { text } => self.message.push_str(text),
            Event::Diagnostic(d) => self.diagnostics.push(d.clone()),
            Event::Marker(marker) => match marker {
                Marker::Suggestions(items) => return extend_unique(&mut self.suggestions, items),
                Marker::Options(items) => return extend_unique(&mut self.options, items),
                Marker::ExtractedData(pair) => self.extracted.push(pair.clone()),
                Marker::ProposedMessage(text) => self.proposed_message = Some(text.clone()),
                Marker::TargetField(field) => self.target_field = Some(field.clone()),
                Marker::SuggestedValues(values) => self.suggested_values.extend_from_slice(values),
                Marker::SuggestedActions(actions) => {
                    self.suggested_actions.extend_from_slice(actions)
                }
                Marker::Payload(payload) => self.payloads.push(payload.clone()),
            },
        }
        0
    }
}

/// Appends the new items, keeping the list at most [`MAX_LIST_ITEMS`] long so that the
/// repeat check stays bounded (linear total work); returns how many new items did not fit.
fn extend_unique(list: &mut Vec<String>, items: &[String]) -> usize {
    let mut dropped = 0;
    for item in items {
        if list.contains(item) {
            continue;
        }
        if list.len() < MAX_LIST_ITEMS {
            list.push(item.clone());
        } else {
            dropped += 1;
        }
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::DiagnosticCode::{self, *};
    use super::{ActionHandler, ExtractedField, Marker, Payload};

    #[test]
    fn kind_and_handler_names_are_spelled_as_serde_does() {
        let payload = Payload {
            payload_type: "p".into(),
            data: crate::json::JsonText::parse("{}").unwrap(),
        };
        let field = ExtractedField {
            field: "f".into(),
            value: "v".into(),
        };
        for marker in [
            Marker::Suggestions(vec![]),
            Marker::Options(vec![]),
            Marker::ExtractedData(field),
            Marker::ProposedMessage(String::new()),
            Marker::TargetField(String::new()),
            Marker::SuggestedValues(vec![]),
            Marker::SuggestedActions(vec![]),
            Marker::Payload(payload),
        ] {
            assert_eq!(
                serde_json::to_value(&marker).unwrap()["kind"],
                marker.kind()
            );
        }
        for handler in [ActionHandler::Client, ActionHandler::Server] {
            assert_eq!(serde_json::to_value(handler).unwrap(), handler.as_str());
        }
    }

    #[test]
    fn as_str_spells_every_code_as_serde_does() {
        let all = [
            MalformedMarker,
            MalformedJson,
            InvalidShape,
            LineTooLong,
            PayloadTooLarge,
            UnterminatedPayload,
            MissingPayloadBody,
            TrailingText,
            TooManyItems,
            FeedAfterEnd,
        ];
        for code in all {
            let serde: String =
                serde_json::from_value(serde_json::to_value(code).unwrap()).unwrap();
            assert_eq!(code.as_str(), serde);
            let _: DiagnosticCode =
                serde_json::from_value(serde_json::Value::String(serde)).unwrap();
        }
    }
}
