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

/// Compares secrets in constant time (`subtle`): the time depends on the lengths, never on where
/// the bytes differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    use subtle::ConstantTimeEq;
    bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_match_only_when_equal() {
        assert!(same_secret("s3cret-token", "s3cret-token"));
        assert!(!same_secret("s3cret-token", "s3cret-tokem"));
        assert!(!same_secret("s3cret-token", "s3cret-token-longer"));
        assert!(!same_secret("", "s3cret-token"));
        assert!(same_secret("", ""));
    }
}
