//! Cloudflare Access identities: the `Cf-Access-Jwt-Assertion` token read and its claims
//! checked, with no I/O. Verifying the RS256 signature needs the team's keys and a crypto
//! implementation, so it is the caller's: [`AccessToken`] hands over the key id, the signing
//! input and the signature to verify.

use serde_json::Value;

use super::{AuthError, base64url_decode};

/// Most bytes of a token read.
const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Clock difference tolerated on `exp` and `nbf`, in seconds.
pub const LEEWAY_SECONDS: u64 = 60;

/// A parsed Access token whose signature is still to be verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessToken {
    /// The id of the team key that signed it (`kid`).
    pub kid: String,
    /// `header.payload`, the bytes the signature covers.
    pub signing_input: String,
    /// The RS256 signature.
    pub signature: Vec<u8>,
    /// The claims.
    pub claims: Claims,
}

/// The claims Stepwise reads. (Read from a `serde_json::Value`: the Worker already links that
/// reader, and a derived one would add its own code for two small structs.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    /// The user's stable id: the owner.
    pub sub: String,
    /// The user's e-mail address, shown to the user.
    pub email: Option<String>,
    /// The applications the token is for (Access sends an array; a single string is read too).
    pub aud: Vec<String>,
    /// The team domain that issued it.
    pub iss: String,
    /// Expiry, seconds since the epoch.
    pub exp: u64,
    /// Not valid before, seconds since the epoch.
    pub nbf: Option<u64>,
}

impl Claims {
    fn read(claims: &Value) -> Option<Claims> {
        let text = |key: &str| claims.get(key).and_then(Value::as_str).map(str::to_owned);
        let aud = match claims.get("aud")? {
            Value::String(one) => vec![one.clone()],
            Value::Array(many) => many
                .iter()
                .map(|a| a.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()?,
            _ => return None,
        };
        Some(Claims {
            sub: text("sub")?,
            email: text("email"),
            aud,
            iss: text("iss")?,
            exp: claims.get("exp")?.as_u64()?,
            nbf: claims.get("nbf").and_then(Value::as_u64),
        })
    }
}

impl AccessToken {
    /// Reads a token: three base64url parts, a header naming RS256 and a key id, and claims of
    /// the expected shape. Any other algorithm (`none` included) is refused.
    ///
    /// ```
    /// use stepwise_core::owner::AccessToken;
    /// // {"alg":"none"} . {"sub":"u"} . (no signature)
    /// let error = AccessToken::parse("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1In0.").unwrap_err();
    /// assert_eq!(error.code(), "invalid_token");
    /// ```
    pub fn parse(token: &str) -> Result<AccessToken, AuthError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(AuthError::Malformed("the token is too long"));
        }
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(AuthError::Malformed("a JWT has three parts"));
        };
        let decode = |part: &str| {
            base64url_decode(part).ok_or(AuthError::Malformed("a part is not base64url"))
        };
        let header: Value = serde_json::from_slice(&decode(header)?)
            .map_err(|_| AuthError::Malformed("the header is not JSON"))?;
        let alg = header.get("alg").and_then(Value::as_str).unwrap_or("");
        if alg != "RS256" {
            return Err(AuthError::UnsupportedAlgorithm(alg.to_owned()));
        }
        let kid = header
            .get("kid")
            .and_then(Value::as_str)
            .ok_or(AuthError::Malformed("the header has no key id"))?
            .to_owned();
        let claims: Value = serde_json::from_slice(&decode(payload)?)
            .map_err(|_| AuthError::Malformed("the claims are not JSON"))?;
        let claims = Claims::read(&claims)
            .ok_or(AuthError::Malformed("the claims lack sub, aud, iss or exp"))?;
        let signature = decode(signature)?;
        if signature.is_empty() {
            return Err(AuthError::Malformed("the token is not signed"));
        }
        let signed = token.len() - token.rsplit('.').next().map_or(0, str::len) - 1;
        Ok(AccessToken {
            kid,
            signing_input: token[..signed].to_owned(),
            signature,
            claims,
        })
    }

    /// Checks the claims at `now` (seconds since the epoch): not expired, already valid, for
    /// this application (`audience`), from this team (`issuer`, compared without a trailing
    /// slash).
    pub fn check(&self, now: u64, audience: &str, issuer: &str) -> Result<(), AuthError> {
        let claims = &self.claims;
        if claims.exp + LEEWAY_SECONDS <= now {
            return Err(AuthError::Expired);
        }
        if claims.nbf.is_some_and(|nbf| nbf > now + LEEWAY_SECONDS) {
            return Err(AuthError::NotYetValid);
        }
        if !claims.aud.iter().any(|aud| aud == audience) {
            return Err(AuthError::WrongAudience);
        }
        if claims.iss.trim_end_matches('/') != issuer.trim_end_matches('/') {
            return Err(AuthError::WrongIssuer);
        }
        if claims.sub.is_empty() {
            return Err(AuthError::Malformed("the subject is empty"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUD: &str = "aud-1";
    const ISS: &str = "https://team.cloudflareaccess.com";
    const NOW: u64 = 1_800_000_000;

    fn b64(bytes: &[u8]) -> String {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n =
                chunk.iter().fold(0u32, |n, &b| (n << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
            for i in 0..=chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            }
        }
        out
    }

    fn token(header: &str, claims: &str) -> String {
        format!(
            "{}.{}.{}",
            b64(header.as_bytes()),
            b64(claims.as_bytes()),
            b64(b"sig")
        )
    }

    fn claims(extra: &str) -> String {
        format!(
            r#"{{"sub":"u1","email":"ada@example.com","aud":["{AUD}"],"iss":"{ISS}","exp":{},"nbf":{}{extra}}}"#,
            NOW + 600,
            NOW - 5
        )
    }

    const RS256: &str = r#"{"alg":"RS256","kid":"k1"}"#;

    #[test]
    fn a_well_formed_token_gives_its_key_id_signing_input_and_claims() {
        let jwt = token(RS256, &claims(""));
        let parsed = AccessToken::parse(&jwt).unwrap();
        assert_eq!(parsed.kid, "k1");
        assert_eq!(parsed.signature, b"sig");
        assert_eq!(parsed.signing_input, jwt[..jwt.rfind('.').unwrap()]);
        assert_eq!(parsed.claims.email.as_deref(), Some("ada@example.com"));
        assert_eq!(parsed.check(NOW, AUD, &format!("{ISS}/")), Ok(()));
    }

    #[test]
    fn a_single_audience_string_is_read_too() {
        let claims = format!(
            r#"{{"sub":"u1","aud":"{AUD}","iss":"{ISS}","exp":{}}}"#,
            NOW + 1
        );
        let parsed = AccessToken::parse(&token(RS256, &claims)).unwrap();
        assert_eq!(parsed.claims.aud, [AUD]);
        assert_eq!(parsed.check(NOW, AUD, ISS), Ok(()));
    }

    #[test]
    fn every_bad_token_is_refused_with_its_reason() {
        let check = |jwt: &str| AccessToken::parse(jwt).and_then(|t| t.check(NOW, AUD, ISS));
        let cases: [(&str, String, AuthError); 9] = [
            (
                "alg none",
                token(r#"{"alg":"none","kid":"k1"}"#, &claims("")),
                AuthError::UnsupportedAlgorithm("none".into()),
            ),
            (
                "HS256",
                token(r#"{"alg":"HS256","kid":"k1"}"#, &claims("")),
                AuthError::UnsupportedAlgorithm("HS256".into()),
            ),
            (
                "no kid",
                token(r#"{"alg":"RS256"}"#, &claims("")),
                AuthError::Malformed("the header has no key id"),
            ),
            (
                "two parts",
                "a.b".into(),
                AuthError::Malformed("a JWT has three parts"),
            ),
            (
                "no signature",
                format!("{}.{}.", b64(RS256.as_bytes()), b64(claims("").as_bytes())),
                AuthError::Malformed("the token is not signed"),
            ),
            (
                "no sub",
                token(
                    RS256,
                    &format!(r#"{{"aud":"{AUD}","iss":"{ISS}","exp":{}}}"#, NOW + 1),
                ),
                AuthError::Malformed("the claims lack sub, aud, iss or exp"),
            ),
            (
                "expired",
                token(
                    RS256,
                    &format!(
                        r#"{{"sub":"u","aud":"{AUD}","iss":"{ISS}","exp":{}}}"#,
                        NOW - LEEWAY_SECONDS
                    ),
                ),
                AuthError::Expired,
            ),
            (
                "wrong audience",
                token(
                    RS256,
                    &format!(
                        r#"{{"sub":"u","aud":["x"],"iss":"{ISS}","exp":{}}}"#,
                        NOW + 1
                    ),
                ),
                AuthError::WrongAudience,
            ),
            (
                "wrong issuer",
                token(
                    RS256,
                    &format!(
                        r#"{{"sub":"u","aud":"{AUD}","iss":"https://evil","exp":{}}}"#,
                        NOW + 1
                    ),
                ),
                AuthError::WrongIssuer,
            ),
        ];
        for (name, jwt, error) in cases {
            assert_eq!(check(&jwt), Err(error.clone()), "{name}");
            assert_eq!(error.code(), "invalid_token", "{name}");
        }
        let early = token(
            RS256,
            &claims(&format!(r#","nbf":{}"#, NOW + LEEWAY_SECONDS + 1)).replacen(
                &format!(r#","nbf":{}"#, NOW - 5),
                "",
                1,
            ),
        );
        assert_eq!(check(&early), Err(AuthError::NotYetValid));
    }
}
