//! From wanted slots to a [`ContextRequest`], supplying first what the system holds (spec
//! §7.1): a slot whose key path slices from the owner's artifacts is filled at once; a slot with
//! candidates gets them as one-click suggestions; what is left reaches the user. Also reads the
//! model's own `CONTEXT_REQUEST:` payload into wanted slots.

use serde::Deserialize;

use super::artifacts::{DEFAULT_SLICE_CHARS, Sources, exists, kind_of, slice};
use super::needs::{Need, Wanted};
use super::request::{
    ContextRequest, MAX_SLOTS, MAX_SUGGESTIONS, Origin, RequestStatus, Slot, SlotState, Suggestion,
    Supplier, Supply, Urgency,
};

/// Characters of a suggestion's excerpt.
pub const SUGGESTION_CHARS: usize = 400;

/// Builds the request of `user_message_id` from `wanted` at `now`, filling what `sources` hold;
/// it is already resolved when nothing required is left for the user. A slot naming an artifact
/// of the owner's data that does not exist (a job with no synthesis yet, a stream never
/// searched) is left out: the system cannot supply it and the user cannot attach it, so asking
/// would only stall the turn.
///
/// ```
/// use stepwise_core::handshake::{build_request, Origin, Sources};
/// let request = build_request("q1", "m1", Origin::Analyzer, Vec::new(), &Sources::default(), 5, 60_000);
/// assert!(request.ready());
/// ```
pub fn build_request(
    request_id: &str,
    user_message_id: &str,
    origin: Origin,
    wanted: Vec<Wanted>,
    sources: &Sources<'_>,
    now: u64,
    sla_ms: u64,
) -> ContextRequest {
    let mut slots = Vec::new();
    let can_exist = |w: &Wanted| {
        w.key_path
            .as_deref()
            .is_none_or(|path| kind_of(path).is_none() || exists(sources, path))
    };
    for (index, wanted) in wanted
        .into_iter()
        .filter(can_exist)
        .take(MAX_SLOTS)
        .enumerate()
    {
        let need = &wanted.need;
        let mut slot = Slot::open(
            format!("s{}", index + 1),
            need.phase,
            &need.artifact_type,
            wanted.key_path.clone(),
            need.size_limit,
            need.urgency,
            &need.description,
        );
        if let Some(path) = &wanted.key_path
            && let Ok(excerpt) = slice(sources, path, slot.size_limit)
        {
            slot.state = SlotState::Supplied;
            slot.supply = Some(Supply {
                by: Supplier::System,
                at: now,
                key_path: Some(path.clone()),
                truncated: excerpt.truncated(),
                text: excerpt.text,
            });
        }
        for path in wanted.candidates.iter().take(MAX_SUGGESTIONS) {
            if let Ok(excerpt) = slice(sources, path, SUGGESTION_CHARS) {
                slot.suggestions.push(Suggestion {
                    key_path: path.clone(),
                    title: path.clone(),
                    excerpt: excerpt.text,
                    start: excerpt.start,
                    end: excerpt.end,
                });
            }
        }
        slots.push(slot);
    }
    let mut request = ContextRequest {
        request_id: request_id.to_owned(),
        user_message_id: user_message_id.to_owned(),
        origin,
        created_at: now,
        sla_ms,
        reminded: false,
        status: RequestStatus::Open,
        resolved_at: None,
        slots,
    };
    if request.ready() {
        request.close(RequestStatus::Resolved, now);
    }
    request
}

#[derive(Deserialize)]
struct ModelRequest {
    slots: Vec<ModelSlot>,
}

#[derive(Deserialize)]
struct ModelSlot {
    phase: u8,
    artifact_type: String,
    #[serde(default)]
    key_path: Option<String>,
    #[serde(default)]
    size_limit: Option<usize>,
    #[serde(default)]
    urgency: Option<Urgency>,
    description: String,
}

/// The slots of the model's `CONTEXT_REQUEST:` payload (`{"slots": [{phase, artifact_type,
/// key_path?, size_limit?, urgency?, description}]}`). A key path without an artifact form, or
/// of another phase than stated, is refused with the reason.
///
/// ```
/// use stepwise_core::handshake::wanted_from_marker;
/// let wanted = wanted_from_marker(r#"{"slots": [{"phase": 3, "artifact_type": "points_of_interest",
///     "key_path": "research/r1/synthesis/points_of_interest", "description": "POIs"}]}"#).unwrap();
/// assert_eq!(wanted[0].key_path.as_deref(), Some("research/r1/synthesis/points_of_interest"));
/// assert!(wanted_from_marker(r#"{"slots": [{"phase": 1, "artifact_type": "x", "key_path": "research/r1/prompt", "description": "d"}]}"#).is_err());
/// ```
pub fn wanted_from_marker(data: &str) -> Result<Vec<Wanted>, String> {
    let request: ModelRequest =
        serde_json::from_str(data).map_err(|e| format!("CONTEXT_REQUEST: {e}"))?;
    if request.slots.is_empty() || request.slots.len() > MAX_SLOTS {
        return Err(format!("CONTEXT_REQUEST needs 1 to {MAX_SLOTS} slots"));
    }
    request
        .slots
        .into_iter()
        .map(|slot| {
            if let Some(path) = &slot.key_path {
                match kind_of(path) {
                    Some((phase, _)) if phase == slot.phase => {}
                    Some((phase, _)) => {
                        return Err(format!(
                            "`{path:.100}` is a phase {phase} artifact, not phase {}",
                            slot.phase
                        ));
                    }
                    None => return Err(format!("`{path:.100}` is not an artifact key path")),
                }
            }
            Ok(Wanted {
                need: Need {
                    phase: slot.phase.min(4),
                    artifact_type: slot.artifact_type,
                    key_path: slot.key_path.clone(),
                    size_limit: slot.size_limit.unwrap_or(DEFAULT_SLICE_CHARS),
                    urgency: slot.urgency.unwrap_or(Urgency::Required),
                    description: slot.description,
                },
                key_path: slot.key_path,
                candidates: Vec::new(),
            })
        })
        .collect()
}
