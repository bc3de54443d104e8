//! Streaming marker parser for model output (guided-workflow.md §3, chat-architecture.md §3–4).
//!
//! Models signal structure with marker lines such as `SUGGESTIONS: a, b`, `OPTIONS: A|B`,
//! `EXTRACTED_DATA: field=value` or a registered payload `SCHEMA_PROPOSAL: {...}`. A marker
//! counts only at the start of a line and is final only at the end of its line (or, for JSON
//! bodies, at their balanced close), or at the end of the stream. Parsing never fails:
//! malformed markers become [`Diagnostic`]s and the stream goes on.

mod bracket_scan;
mod line;
mod parser;
mod registry;
mod text_pieces;
mod types;
mod values;

pub use parser::{MAX_LINE_LEN, MAX_PAYLOAD_LEN, MarkerParser, TextPosition};
pub use registry::{MAX_MARKER_NAME_LEN, MAX_PAYLOAD_MARKERS, MarkerRegistry, RegistryError};
pub use text_pieces::{TextPiece, TextSource};
pub use types::{
    ActionHandler, Diagnostic, DiagnosticCode, Event, ExtractedField, Marker, Parsed, Payload,
    SuggestedAction, SuggestedValue,
};
pub use values::MAX_LIST_ITEMS;
