//! Server-Sent Events responses with the headers every SSE answer needs (no caching, no proxy
//! buffering): a Rust stream of frames (research job events), or a sink a turn writes its
//! frames into as they happen (chat and assistant turns).

use std::cell::Cell;
use std::rc::Rc;

use futures_util::TryStream;
use worker::wasm_bindgen::closure::Closure;
use worker::wasm_bindgen::{self, JsValue};
use worker::{Response, ResponseBody, Result, js_sys, web_sys};

/// A `text/event-stream` response streaming the frames `frames` yields.
pub fn response<S>(frames: S) -> Result<Response>
where
    S: TryStream + 'static,
    S::Ok: Into<Vec<u8>>,
    S::Error: Into<worker::Error>,
{
    let mut response = Response::from_stream(frames)?;
    set_headers(&mut response)?;
    Ok(response)
}

/// The headers every event stream needs: its type, no caching, no proxy buffering.
fn set_headers(response: &mut Response) -> Result<()> {
    let headers = response.headers_mut();
    headers.set("content-type", "text/event-stream; charset=utf-8")?;
    headers.set("cache-control", "no-cache, no-transform")?;
    headers.set("x-accel-buffering", "no")?;
    Ok(())
}

/// The writing end of an event stream answered with [`stream_response`]: frames go straight into
/// the response body's pipe, one runtime call each, without waiting for the client to read them
/// (a turn's events are bounded by the answer's size limit). Dropping it ends the body.
pub struct EventSink {
    writer: web_sys::WritableStreamDefaultWriter,
    /// Set once a write failed or the pipe errored: the client went away.
    gone: Rc<Cell<bool>>,
    /// Marks the sink gone; handles every write's and the pipe's failure.
    on_failure: Closure<dyn FnMut(JsValue)>,
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// workerd's byte pipe: what is written to its writable side is read from its readable side
    /// by the runtime itself, with no JavaScript between them.
    type IdentityTransformStream;

    #[wasm_bindgen(constructor, catch)]
    fn new() -> std::result::Result<IdentityTransformStream, JsValue>;

    #[wasm_bindgen(method, getter)]
    fn readable(this: &IdentityTransformStream) -> web_sys::ReadableStream;

    #[wasm_bindgen(method, getter)]
    fn writable(this: &IdentityTransformStream) -> web_sys::WritableStream;
}

/// A `text/event-stream` response and the sink its frames are written to.
pub fn stream_response() -> Result<(Response, EventSink)> {
    let pipe = IdentityTransformStream::new()?;
    let writer = pipe.writable().get_writer()?;
    let mut response = Response::from_body(ResponseBody::Stream(pipe.readable()))?;
    set_headers(&mut response)?;
    let gone = Rc::new(Cell::new(false));
    let flag = Rc::clone(&gone);
    let on_failure = Closure::new(move |_| flag.set(true));
    let _ = writer.closed().catch(&on_failure);
    let sink = EventSink {
        writer,
        gone,
        on_failure,
    };
    Ok((response, sink))
}

impl EventSink {
    /// Writes a frame; false once the client has gone away (the body was cancelled).
    pub fn write(&self, frame: &[u8]) -> bool {
        if !self.is_open() {
            return false;
        }
        let chunk = js_sys::Uint8Array::from(frame);
        let _ = self.writer.write_with_chunk(&chunk).catch(&self.on_failure);
        true
    }

    /// Whether the client is still reading: no write has failed, and the pipe has not errored
    /// (which cancelling it does).
    pub fn is_open(&self) -> bool {
        !self.gone.get() && matches!(self.writer.desired_size(), Ok(Some(_)))
    }
}

impl Drop for EventSink {
    fn drop(&mut self) {
        let _ = self.writer.close().catch(&self.on_failure);
    }
}
