//! Owners: who a piece of user data belongs to. A Cloudflare Access identity (a JWT whose claims
//! are checked here and whose signature the edge verifies) or an anonymous owner token the
//! client made itself (128 random bits as 32 lowercase hex digits). The edge keys everything by
//! a SHA-256 of the identity and never stores a token.

mod base64url;
mod jwt;

use thiserror::Error;

pub use base64url::base64url_decode;
pub use jwt::{AccessToken, Claims, LEEWAY_SECONDS};

/// Why a request has no owner. Every variant answers 401.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No credential was sent.
    #[error(
        "this route needs an owner: send `Authorization: Bearer <owner token>` (32 random lowercase hex digits made by the client)"
    )]
    OwnerRequired,
    /// An owner token that is not 32 lowercase hex digits.
    #[error("the owner token must be 32 lowercase hex digits")]
    InvalidOwnerToken,
    /// Access is configured and the request carries no assertion.
    #[error("this deployment is behind Cloudflare Access: sign in first")]
    AccessRequired,
    /// The token is not a well-formed JWT.
    #[error("the access token is malformed: {0}")]
    Malformed(&'static str),
    /// The token is signed with another algorithm than RS256.
    #[error("the access token's algorithm `{0}` is not accepted")]
    UnsupportedAlgorithm(String),
    /// The token has expired.
    #[error("the access token has expired")]
    Expired,
    /// The token is not valid yet.
    #[error("the access token is not valid yet")]
    NotYetValid,
    /// The token is for another application.
    #[error("the access token is for another application")]
    WrongAudience,
    /// The token comes from another team.
    #[error("the access token comes from another issuer")]
    WrongIssuer,
    /// No key of the team has the token's key id.
    #[error("the access token is signed with an unknown key")]
    UnknownKey,
    /// The signature does not verify.
    #[error("the access token's signature does not verify")]
    BadSignature,
}

impl AuthError {
    /// Stable machine code: `owner_required` when nothing usable was sent, else `invalid_token`.
    pub fn code(&self) -> &'static str {
        match self {
            AuthError::OwnerRequired | AuthError::AccessRequired => "owner_required",
            _ => "invalid_token",
        }
    }
}

/// Whether `token` is an anonymous owner token: 32 lowercase hex digits.
///
/// ```
/// use stepwise_core::owner::is_owner_token;
/// assert!(is_owner_token("0123456789abcdef0123456789abcdef"));
/// assert!(!is_owner_token("0123456789ABCDEF0123456789ABCDEF"));
/// ```
pub fn is_owner_token(token: &str) -> bool {
    token.len() == 32
        && token
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Lowercase hex of `bytes` (an owner id is the hex SHA-256 of its identity).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 15)]));
    }
    out
}

/// The text an owner id is the SHA-256 of: `access:<sub>` or `token:<owner token>`, so the two
/// kinds never share an id.
pub fn identity(kind: OwnerKind, subject: &str) -> String {
    match kind {
        OwnerKind::Access => format!("access:{subject}"),
        OwnerKind::Anonymous => format!("token:{subject}"),
    }
}

/// How an owner proved who they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum OwnerKind {
    /// A Cloudflare Access identity.
    Access,
    /// An anonymous owner token.
    Anonymous,
}
