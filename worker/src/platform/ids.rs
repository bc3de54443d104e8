//! Random identifiers: conversation ids and access tokens, 128 bits from the platform's CSPRNG.

use super::error::{AppError, AppResult};

/// 128 random bits as 32 lowercase hex digits.
pub fn random_id() -> AppResult<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| AppError::internal(&e))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether a string looks like an id made by [`random_id`].
pub fn is_id(value: &str) -> bool {
    value.len() == 32
        && value
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Compares secrets in time that depends only on the longer length, not on where they differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..a.len().max(b.len()) {
        diff |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0);
    }
    diff == 0
}
