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
