//! Turning a completed marker's raw value (the rest of its line, or its JSON body) into a marker.

use std::ops::Range;

use super::registry::{MarkerId, MarkerRegistry};
use super::{
    ActionHandler, DiagnosticCode, ExtractedField, Marker, Payload, SuggestedAction, SuggestedValue,
};
use crate::json::{JsonError, JsonText, read_records};

/// Most items a `SUGGESTIONS` or `OPTIONS` line may carry; the rest are dropped.
pub const MAX_LIST_ITEMS: usize = 50;

/// A marker, or why its value was dropped.
pub(crate) type Outcome =
    Result<(Marker, Option<(DiagnosticCode, String)>), (DiagnosticCode, String)>;

/// Where the strings of a line marker parsed in place lie in the chunk (span mode): each
/// string's byte range, from its address, tagged with the event's index, in the order of the
/// marker's strings.
pub(crate) struct Places<'a> {
    /// The chunk's address.
    pub(crate) chunk: usize,
    /// The index the marker's event will have.
    pub(crate) event: usize,
    pub(crate) to: &'a mut Vec<(usize, Range<usize>)>,
}

/// `text` as an owned string, its place recorded when `places` are kept.
fn own(text: &str, places: &mut Option<Places<'_>>) -> String {
    if let Some(places) = places {
        let start = text.as_ptr() as usize - places.chunk;
        places.to.push((places.event, start..start + text.len()));
    }
    text.to_owned()
}

/// Parses the value of a one-line marker (everything after its colon); with `places`, `raw`
/// lies in the chunk and its strings' places are recorded.
pub(crate) fn line_marker(id: MarkerId, raw: &str, mut places: Option<Places<'_>>) -> Outcome {
    let value = clean(raw);
    let places = &mut places;
    match id {
        MarkerId::Suggestions => Ok(list(value, ',', Marker::Suggestions, places)),
        MarkerId::Options => Ok(list(value, '|', Marker::Options, places)),
        MarkerId::ProposedMessage => {
            Ok((Marker::ProposedMessage(own(unquote(value), places)), None))
        }
        MarkerId::TargetField => {
            let field = unquote(value);
            if is_field_name(field) {
                Ok((Marker::TargetField(own(field, places)), None))
            } else {
                Err((
                    DiagnosticCode::MalformedMarker,
                    format!("TARGET_FIELD `{field}` is not a field name"),
                ))
            }
        }
        MarkerId::ExtractedData => {
            let Some((field, value)) = value.split_once('=') else {
                return Err((
                    DiagnosticCode::MalformedMarker,
                    "EXTRACTED_DATA needs `field=value`".into(),
                ));
            };
            let (field, value) = (unquote(field.trim()), unquote(value.trim()));
            if !is_field_name(field) {
                return Err((
                    DiagnosticCode::MalformedMarker,
                    format!("EXTRACTED_DATA field `{field}` is not a field name"),
                ));
            }
            if value.is_empty() {
                return Err((
                    DiagnosticCode::MalformedMarker,
                    format!("EXTRACTED_DATA `{field}` has no value"),
                ));
            }
            Ok((
                Marker::ExtractedData(ExtractedField {
                    field: own(field, places),
                    value: own(value, places),
                }),
                None,
            ))
        }
        MarkerId::SuggestedValues | MarkerId::SuggestedActions | MarkerId::Payload(_) => {
            unreachable!("JSON-body markers are completed by json_marker")
        }
    }
}

/// Completes a JSON marker from its body and the verdict of the validator that checked it
/// while it streamed.
pub(crate) fn json_marker(
    id: MarkerId,
    body: String,
    verdict: Result<(), JsonError>,
    registry: &MarkerRegistry,
) -> Outcome {
    let name = match id {
        MarkerId::SuggestedValues => "SUGGESTED_VALUES",
        MarkerId::SuggestedActions => "SUGGESTED_ACTIONS",
        _ => "payload",
    };
    verdict.map_err(|e| {
        (
            DiagnosticCode::MalformedJson,
            format!("{name} is not valid JSON: {e}"),
        )
    })?;
    let shape_error = |shape: &str, why: String| {
        (
            DiagnosticCode::InvalidShape,
            format!("{name} must be {shape}: {why}"),
        )
    };
    let marker = match id {
        MarkerId::SuggestedValues => {
            const SHAPE: &str = "[{\"label\", \"value\"}]";
            let records = read_records(&body, &["label", "value"], 2)
                .map_err(|why| shape_error(SHAPE, why))?;
            Marker::SuggestedValues(
                records
                    .into_iter()
                    .map(|mut r| SuggestedValue {
                        value: r.pop().unwrap_or_default(),
                        label: r.pop().unwrap_or_default(),
                    })
                    .collect(),
            )
        }
        MarkerId::SuggestedActions => {
            const SHAPE: &str =
                "[{\"label\", \"action\", \"handler\": \"client\"|\"server\", \"target\"?}]";
            let records = read_records(&body, &["label", "action", "handler", "target"], 3)
                .map_err(|why| shape_error(SHAPE, why))?;
            let mut actions = Vec::with_capacity(records.len());
            for (index, mut record) in records.into_iter().enumerate() {
                let target = record.pop().filter(|t| !t.is_empty());
                let handler = match record.pop().as_deref() {
                    Some("client") => ActionHandler::Client,
                    Some("server") => ActionHandler::Server,
                    _ => {
                        let why = format!("item {} has an unknown handler", index + 1);
                        return Err(shape_error(SHAPE, why));
                    }
                };
                let action = record.pop().unwrap_or_default();
                let label = record.pop().unwrap_or_default();
                actions.push(SuggestedAction {
                    label,
                    action,
                    handler,
                    target,
                });
            }
            Marker::SuggestedActions(actions)
        }
        MarkerId::Payload(index) => Marker::Payload(Payload {
            payload_type: registry.payload_type(index),
            data: JsonText::checked(body),
        }),
        _ => unreachable!("line markers are completed by line_marker"),
    };
    Ok((marker, None))
}

fn list(
    value: &str,
    separator: char,
    make: fn(Vec<String>) -> Marker,
    places: &mut Option<Places<'_>>,
) -> (Marker, Option<(DiagnosticCode, String)>) {
    // One allocation for the list: its separators tell how many items it has at most.
    debug_assert!(separator.is_ascii(), "a separator is one byte");
    let most = memchr::memchr_iter(separator as u8, value.as_bytes()).count() + 1;
    let mut items: Vec<String> = Vec::with_capacity(most.min(MAX_LIST_ITEMS));
    let mut dropped = 0usize;
    for item in value
        .split(separator)
        .map(|i| unquote(i.trim()))
        .filter(|i| !i.is_empty())
    {
        if items.iter().any(|seen| seen == item) {
            continue;
        }
        if items.len() == MAX_LIST_ITEMS {
            dropped += 1;
        } else {
            items.push(own(item, places));
        }
    }
    let note = (dropped > 0).then(|| {
        (
            DiagnosticCode::TooManyItems,
            format!("{dropped} items past the first {MAX_LIST_ITEMS} were dropped"),
        )
    });
    (make(items), note)
}

/// Trims the value and the bold closing (`**NAME:** value`) models put after the colon.
fn clean(raw: &str) -> &str {
    let value = raw.trim();
    value
        .strip_prefix("**")
        .or_else(|| value.strip_prefix("__"))
        .unwrap_or(value)
        .trim()
}

/// Drops one pair of matching quotes around a value.
fn unquote(value: &str) -> &str {
    // Most values are not quoted: one byte tells (`“` begins with 0xE2).
    if !matches!(value.as_bytes().first(), Some(b'"' | b'\'' | b'`' | 0xE2)) {
        return value;
    }
    for quote in ['"', '\'', '`', '“'] {
        let close = if quote == '“' { '”' } else { quote };
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(close))
        {
            return inner.trim();
        }
    }
    value
}

fn is_field_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
