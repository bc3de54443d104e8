//! Reading request bodies: a JSON content type (415: a cross-site form cannot post one), a size
//! limit (413), JSON syntax (400 `invalid_json`) and shape (422 `invalid_request`, saying what
//! is wrong and where: "unknown field `colour`, expected one of ... at line 1 column 22"). The
//! body is read straight into its type: going through a `Value` to name the field's path cost
//! 16 KB of the Worker bundle.

use futures::StreamExt;
use serde::de::DeserializeOwned;
use worker::Request;

use super::error::{AppError, AppResult};

/// Largest accepted request body.
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// Reads and parses a JSON body of type `T`.
pub async fn read_json<T: DeserializeOwned>(req: &mut Request) -> AppResult<T> {
    require_json(req)?;
    let bytes = read_limited(req).await?;
    parse_json(&bytes)
}

/// Reads a JSON body as text (content type and size checked) for a reader of the core, whose
/// errors say what is wrong.
pub async fn read_json_text(req: &mut Request) -> AppResult<String> {
    require_json(req)?;
    let bytes = read_limited(req).await?;
    String::from_utf8(bytes).map_err(|_| AppError::invalid_json("the body is not UTF-8"))
}

/// 415 unless the request declares `Content-Type: application/json` (parameters allowed). Every
/// POST and PUT of the API needs it, even with no body: a cross-site HTML form can only send
/// form or text content types, so it can never reach these routes.
pub fn require_json(req: &Request) -> AppResult<()> {
    let content_type = req.headers().get("content-type")?.unwrap_or_default();
    let media = content_type.split(';').next().unwrap_or("").trim();
    if media.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(AppError::unsupported_media_type())
    }
}

/// Parses JSON bytes as `T`, with errors that say what and where. Read as text, as every other
/// JSON in the Worker is: serde_json's byte and text readers would each link their own copy of
/// every type's deserializer.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> AppResult<T> {
    let text =
        std::str::from_utf8(bytes).map_err(|_| AppError::invalid_json("the body is not UTF-8"))?;
    serde_json::from_str(text).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => AppError::invalid_request(e.to_string()),
        _ => AppError::invalid_json(e),
    })
}

/// The body's bytes, at most [`MAX_BODY_BYTES`] (413 past them).
pub async fn read_limited(req: &mut Request) -> AppResult<Vec<u8>> {
    let declared = req
        .headers()
        .get("content-length")?
        .and_then(|v| v.parse::<usize>().ok());
    match declared {
        Some(len) if len > MAX_BODY_BYTES => return Err(AppError::body_too_large(MAX_BODY_BYTES)),
        // A declared length is what the runtime reads (it refuses a body of another length):
        // read whole, in one call, instead of chunk by chunk through a Rust stream.
        Some(_) => return Ok(req.bytes().await?),
        None => {}
    }
    let mut body = Vec::new();
    let mut stream = req.stream()?;
    while let Some(chunk) = stream.next().await {
        body.extend_from_slice(&chunk?);
        if body.len() > MAX_BODY_BYTES {
            return Err(AppError::body_too_large(MAX_BODY_BYTES));
        }
    }
    Ok(body)
}
