//! Supplies of a conversation's earlier turns, carried into its later ones: what the user gave
//! an earlier context request stays in the prompt (newest first, within a budget), and what is
//! carried counts as held, so the analyzer does not ask for it again. What the system supplied
//! is not carried: it is supplied again, with no user step, whenever a turn needs it.

use super::baseline::attachments;
use super::request::{ContextRequest, Slot, Supplier};

/// Most characters of earlier supplies carried into one turn's prompt.
pub const MAX_CARRIED_PROMPT_CHARS: usize = 12_000;

/// The earlier supplies a turn carries: their prompt text and the keys they hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Carried {
    /// The supplies as prompt attachments, one block per earlier request; empty when none.
    pub text: String,
    /// What they hold, as [`held_key`]s.
    pub held: Vec<String>,
}

/// The key under which a supply counts as held: the key path it came from, or for what was
/// typed (no path), its slot's artifact type and description (`note:Your notes…`).
pub fn held_key(artifact_type: &str, key_path: Option<&str>, description: &str) -> String {
    match key_path {
        Some(path) => path.to_owned(),
        None => format!("{artifact_type}:{description}"),
    }
}

fn slot_key(slot: &Slot, supplied_from: Option<&str>) -> String {
    let path = supplied_from.or(slot.key_path.as_deref());
    held_key(&slot.artifact_type, path, &slot.description)
}

/// The user's supplies of `earlier` requests (oldest first, as a conversation keeps them), the
/// request `current` left out (a resumed turn renders its own): newest first while they fit
/// [`MAX_CARRIED_PROMPT_CHARS`]; an older request that does not fit is not carried, nor held.
///
/// ```
/// use stepwise_core::handshake::carried;
/// assert_eq!(carried(&[], None).text, "");
/// ```
pub fn carried(earlier: &[ContextRequest], current: Option<&str>) -> Carried {
    let mut blocks: Vec<String> = Vec::new();
    let mut held = Vec::new();
    let mut used = 0;
    for request in earlier.iter().rev() {
        if Some(request.request_id.as_str()) == current {
            continue;
        }
        let (by_user, block) = by_user(request);
        if block.is_empty() {
            continue;
        }
        if used + block.len() > MAX_CARRIED_PROMPT_CHARS {
            break;
        }
        used += block.len();
        blocks.push(block);
        for (slot, supply) in by_user.attachments() {
            held.push(slot_key(slot, supply.key_path.as_deref()));
        }
    }
    blocks.reverse();
    Carried {
        text: blocks.join("\n"),
        held,
    }
}

/// The index of the oldest of `earlier` that [`carried`] reads, with `current` left out or
/// not: a turn that resumes `current`, or any other, needs only the requests from there on.
///
/// ```
/// use stepwise_core::handshake::carried_window;
/// assert_eq!(carried_window(&[], None), 0);
/// ```
pub fn carried_window(earlier: &[ContextRequest], current: Option<&str>) -> usize {
    let window = |current: Option<&str>| {
        let mut used = 0;
        for (at, request) in earlier.iter().enumerate().rev() {
            if Some(request.request_id.as_str()) == current {
                continue;
            }
            let block_len = by_user(request).1.len();
            if block_len > 0 && used + block_len > MAX_CARRIED_PROMPT_CHARS {
                return at;
            }
            used += block_len;
        }
        0
    };
    window(None).min(window(current))
}

/// `request` with the user's supplies only, and their attachment block.
fn by_user(request: &ContextRequest) -> (ContextRequest, String) {
    let mut by_user = request.clone();
    for slot in &mut by_user.slots {
        if slot.supply.as_ref().is_some_and(|s| s.by != Supplier::User) {
            slot.supply = None;
        }
    }
    let block = attachments(&by_user);
    (by_user, block)
}
