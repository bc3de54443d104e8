//! Server-Sent Events responses: a stream of frames with the headers every SSE answer needs
//! (no caching, no proxy buffering), shared by chat turns and research job events.

use futures_util::TryStream;
use worker::{Response, Result};

/// A `text/event-stream` response streaming the frames `frames` yields.
pub fn response<S>(frames: S) -> Result<Response>
where
    S: TryStream + 'static,
    S::Ok: Into<Vec<u8>>,
    S::Error: Into<worker::Error>,
{
    let mut response = Response::from_stream(frames)?;
    let headers = response.headers_mut();
    headers.set("content-type", "text/event-stream; charset=utf-8")?;
    headers.set("cache-control", "no-cache, no-transform")?;
    headers.set("x-accel-buffering", "no")?;
    Ok(response)
}
