//! Context on request (context-handshake.md): an assistant turn starts from a fixed
//! [`Baseline`], decides with the [`ContextNeedsAnalyzer`] (or the model's `CONTEXT_REQUEST:`
//! marker) what else it needs, gets it from the owner's [artifacts](artifacts) where the system
//! holds it and from the user where only the user can give it ([`ContextRequest`]), and only
//! then answers, with the supplies rendered by a [`PromptSheet`] as attachments. Sans-IO: the
//! edge loads the sources, stores the request on the conversation and calls the model.

pub mod artifacts;
mod baseline;
mod carried;
mod fill;
mod needs;
mod redact;
mod request;
mod sheet;

pub use artifacts::{
    AbstractNote, ArticleNote, ArtifactError, ArtifactInfo, Excerpt, Literature, Sources, exists,
    kind_of, list, phase_of, slice,
};
pub use baseline::{BASELINE_ORDER, Baseline, MAX_ATTACHMENT_PROMPT_CHARS, attachments};
pub use carried::{Carried, MAX_CARRIED_PROMPT_CHARS, carried, carried_window, held_key};
pub use fill::{SUGGESTION_CHARS, build_request, wanted_from_marker};
pub use needs::{
    BUILTIN_POLICY, ContextNeedsAnalyzer, MessageClass, Need, NeedsInput, Policy, Rule, Wanted,
    classify,
};
pub use redact::redact;
pub use request::{
    ContextRequest, DEFAULT_SLA_MS, MAX_SLOTS, MAX_SUPPLY_CHARS, Origin, Outcome, RequestStatus,
    Slot, SlotState, Suggestion, Supplier, Supply, SupplyError, Urgency,
};
pub use sheet::{BUILTIN_SHEET, MAX_SHEET_BYTES, MODES, PromptSheet, SheetError, is_sheet_id};

/// The message class as the sheet's interaction mode.
pub fn mode_of(class: MessageClass) -> &'static str {
    match class {
        MessageClass::Question => "question",
        MessageClass::Action => "action",
    }
}
