//! The marker names a parser recognizes: the built-in ones and registered payload markers.

use thiserror::Error;

/// Most payload markers one registry may hold.
pub const MAX_PAYLOAD_MARKERS: usize = 32;
/// Longest marker name, in bytes.
pub const MAX_MARKER_NAME_LEN: usize = 48;

/// A recognized marker, by what its value looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MarkerId {
    Suggestions,
    Options,
    ExtractedData,
    ProposedMessage,
    TargetField,
    SuggestedValues,
    SuggestedActions,
    /// Index into the registry's payload names.
    Payload(usize),
}

impl MarkerId {
    /// Whether the value is a JSON body (possibly spanning lines) rather than the rest of a line.
    pub(crate) fn takes_json_body(self) -> bool {
        matches!(
            self,
            MarkerId::SuggestedValues | MarkerId::SuggestedActions | MarkerId::Payload(_)
        )
    }
}

const BUILTIN: [(&str, MarkerId); 7] = [
    ("SUGGESTIONS", MarkerId::Suggestions),
    ("OPTIONS", MarkerId::Options),
    ("EXTRACTED_DATA", MarkerId::ExtractedData),
    ("PROPOSED_MESSAGE", MarkerId::ProposedMessage),
    ("TARGET_FIELD", MarkerId::TargetField),
    ("SUGGESTED_VALUES", MarkerId::SuggestedValues),
    ("SUGGESTED_ACTIONS", MarkerId::SuggestedActions),
];

/// Why a payload marker name was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name is not 1-48 characters of `A-Z`, `0-9`, `_`, starting with a letter and not ending with `_`.
    #[error(
        "marker name `{0}` must be 1-48 characters of A-Z, 0-9 and _, starting with a letter and not ending with _"
    )]
    InvalidName(String),
    /// The name is already known (built-in or registered).
    #[error("marker name `{0}` is already registered")]
    Duplicate(String),
    /// The registry is full.
    #[error("at most 32 payload markers can be registered")]
    Full,
}

impl RegistryError {
    /// Stable machine code for the wire.
    pub fn code(&self) -> &'static str {
        match self {
            RegistryError::InvalidName(_) => "invalid_marker_name",
            RegistryError::Duplicate(_) => "duplicate_marker",
            RegistryError::Full => "too_many_markers",
        }
    }
}

/// The payload markers a parser should recognize besides the built-in ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MarkerRegistry {
    payloads: Vec<String>,
    /// The registered payload names' first letters, bit `b - b'A'` each (the built-in ones are
    /// in [`BUILTIN_INITIALS`]): a line's first byte is tested against every name at once.
    payload_initials: u32,
}

/// The built-in names' first letters, as [`MarkerRegistry::payload_initials`] holds the rest.
const BUILTIN_INITIALS: u32 = {
    let mut bits = 0;
    let mut at = 0;
    while at < BUILTIN.len() {
        bits |= 1 << (BUILTIN[at].0.as_bytes()[0] - b'A');
        at += 1;
    }
    bits
};

impl MarkerRegistry {
    /// A registry with the built-in markers only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a payload marker such as `SCHEMA_PROPOSAL`; its JSON body becomes a
    /// [`Payload`](super::Payload) of type `schema_proposal`.
    pub fn register_payload(&mut self, name: &str) -> Result<(), RegistryError> {
        let valid = !name.is_empty()
            && name.len() <= MAX_MARKER_NAME_LEN
            && name.as_bytes()[0].is_ascii_uppercase()
            && !name.ends_with('_')
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        if !valid {
            return Err(RegistryError::InvalidName(name.to_owned()));
        }
        if self.lookup(name.as_bytes()).is_some() {
            return Err(RegistryError::Duplicate(name.to_owned()));
        }
        if self.payloads.len() >= MAX_PAYLOAD_MARKERS {
            return Err(RegistryError::Full);
        }
        self.payload_initials |= 1 << (name.as_bytes()[0] - b'A');
        self.payloads.push(name.to_owned());
        Ok(())
    }

    /// The registered payload marker names.
    pub fn payload_names(&self) -> &[String] {
        &self.payloads
    }

    pub(crate) fn payload_type(&self, index: usize) -> String {
        self.payloads[index].to_ascii_lowercase()
    }

    /// The marker with exactly this name.
    pub(crate) fn lookup(&self, name: &[u8]) -> Option<MarkerId> {
        BUILTIN
            .iter()
            .find(|(n, _)| n.as_bytes() == name)
            .map(|(_, id)| *id)
            .or_else(|| {
                self.payloads
                    .iter()
                    .position(|n| n.as_bytes() == name)
                    .map(MarkerId::Payload)
            })
    }

    /// The first letters of every name, bit `b - b'A'` each.
    pub(crate) fn initials(&self) -> u32 {
        BUILTIN_INITIALS | self.payload_initials
    }

    /// Whether some marker name starts with the byte `first`.
    pub(crate) fn has_initial(&self, first: u8) -> bool {
        first.is_ascii_uppercase() && self.initials() & (1 << (first - b'A')) != 0
    }

    /// Whether some marker name starts with `prefix`.
    pub(crate) fn has_prefix(&self, prefix: &[u8]) -> bool {
        BUILTIN
            .iter()
            .any(|(n, _)| n.as_bytes().starts_with(prefix))
            || self
                .payloads
                .iter()
                .any(|n| n.as_bytes().starts_with(prefix))
    }
}
