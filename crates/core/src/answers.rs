//! Answers of the HTTP API besides turns: the server's health and who the caller is.

use serde::{Deserialize, Serialize};

use crate::llm::ProviderKind;
use crate::owner::OwnerKind;
use crate::spend::Usage;

/// A provider as the server lists it: its name and kind, never its URL or key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProviderInfo {
    /// Its name (what requests name in `provider`).
    pub name: String,
    /// Its protocol.
    pub kind: ProviderKind,
}

/// `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Health {
    /// Always `ok` when the server answers.
    pub status: String,
    /// The provider guided and assistant turns use by default.
    pub provider: ProviderInfo,
    /// Every configured provider.
    pub providers: Vec<ProviderInfo>,
}

/// The caller as the server knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OwnerInfo {
    /// The owner id: hex SHA-256 of the identity, what the caller's data is keyed by.
    pub id: String,
    /// How the caller proved who they are.
    pub kind: OwnerKind,
    /// An Access identity's e-mail address.
    pub email: Option<String>,
}

/// `GET /api/me`: who the caller is and what they spent today against the daily caps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Me {
    /// The caller.
    pub owner: OwnerInfo,
    /// Model calls and estimated tokens counted today.
    pub usage: Usage,
    /// Whether Cloudflare Access decides who owners are (owner tokens are then ignored).
    pub access: bool,
}
