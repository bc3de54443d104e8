//! JSON without a general-purpose parser: an incremental validator for streamed bodies, a
//! small reader for flat records of strings, [`JsonText`], validated JSON kept as text, and a
//! JSON Schema subset for tool inputs and payloads ([`check_schema`]).
//!
//! The marker parser checks payload bodies while they stream, so a body is validated once, in
//! the same pass that finds its end, and the browser build carries no JSON library. The
//! validator accepts exactly the JSON that `serde_json` accepts (RFC 8259), nested at most
//! [`MAX_DEPTH`] deep; a property test holds the two to the same verdicts.

mod check;
mod read;
mod schema;
mod text;

pub(crate) use check::{JsonCheck, Progress};
pub use check::{JsonError, MAX_DEPTH};
pub(crate) use read::read_records;
pub use schema::{SchemaViolation, check_schema, check_schema_form};
pub use text::JsonText;

#[cfg(test)]
mod tests;
