//! Cloudflare Access identities: the `Cf-Access-Jwt-Assertion` token read and its claims
//! checked, with no I/O. Verifying the RS256 signature needs the team's keys and a crypto
//! implementation, so it is the caller's: [`AccessToken`] hands over the key id, the signing
//! input and the signature to verify.

use serde::Deserialize;

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

/// The claims Stepwise reads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Claims {
    /// The user's stable id: the owner.
    pub sub: String,
    /// The user's e-mail address, shown to the user.
    #[serde(default)]
    pub email: Option<String>,
    /// The applications the token is for (Access sends an array).
    #[serde(deserialize_with = "one_or_many")]
    pub aud: Vec<String>,
    /// The team domain that issued it.
    pub iss: String,
    /// Expiry, seconds since the epoch.
    pub exp: u64,
    /// Not valid before, seconds since the epoch.
    #[serde(default)]
    pub nbf: Option<u64>,
}

#[derive(Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
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
        let header: Header = serde_json::from_slice(&decode(header)?)
            .map_err(|_| AuthError::Malformed("the header is not a JWT header"))?;
        if header.alg != "RS256" {
            return Err(AuthError::UnsupportedAlgorithm(header.alg));
        }
        let kid = header
            .kid
            .ok_or(AuthError::Malformed("the header has no key id"))?;
        let claims: Claims = serde_json::from_slice(&decode(payload)?)
            .map_err(|_| AuthError::Malformed("the claims lack sub, aud, iss or exp"))?;
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

fn one_or_many<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(one) => vec![one],
        OneOrMany::Many(many) => many,
    })
}
