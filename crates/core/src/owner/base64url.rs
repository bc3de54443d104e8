//! Base64url decoding (RFC 4648 §5, no padding), for the parts of a JWT.

/// The bytes `text` encodes, or `None` when it is not unpadded base64url.
///
/// ```
/// use stepwise_core::owner::base64url_decode;
/// assert_eq!(base64url_decode("eyJhIjoxfQ").as_deref(), Some(&b"{\"a\":1}"[..]));
/// assert_eq!(base64url_decode("a+b/"), None);
/// ```
pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    // A single leftover character (6 bits) cannot end an encoding; leftover bits must be zero.
    (bits < 6 && buffer == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_length_and_refuses_what_is_not_base64url() {
        assert_eq!(base64url_decode("").as_deref(), Some(&b""[..]));
        assert_eq!(base64url_decode("Zg").as_deref(), Some(&b"f"[..]));
        assert_eq!(base64url_decode("Zm8").as_deref(), Some(&b"fo"[..]));
        assert_eq!(base64url_decode("Zm9v").as_deref(), Some(&b"foo"[..]));
        assert_eq!(base64url_decode("_-8").as_deref(), Some(&[0xff, 0xef][..]));
        assert_eq!(
            base64url_decode("Zm9v="),
            None,
            "padding is not base64url in a JWT"
        );
        assert_eq!(
            base64url_decode("Z"),
            None,
            "one character cannot end an encoding"
        );
        assert_eq!(base64url_decode("Zh"), None, "leftover bits must be zero");
    }
}
