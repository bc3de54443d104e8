//! Server-Sent Events responses with the headers every SSE answer needs (no caching, no proxy
//! buffering): a Rust stream of frames (research job events), or a sink a turn writes its
//! frames into as they happen (chat and assistant turns).

use futures::TryStream;
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
    /// The JS side of the sink (`sink` below): the writer, and whether a write or the pipe
    /// failed. Its failure handler is a JS function, so it outlives this value for as long as a
    /// write it handles is pending.
    handle: JsValue,
}

#[wasm_bindgen::prelude::wasm_bindgen(inline_js = "
export function sink(writer) {
  const sink = { writer, gone: false, fail: () => { sink.gone = true; } };
  writer.closed.catch(sink.fail);
  return sink;
}
export function write(sink, chunk) { sink.writer.write(chunk).catch(sink.fail); }
export function open(sink) { return !sink.gone && sink.writer.desiredSize !== null; }
export function end(sink) { sink.writer.close().catch(sink.fail); }
")]
extern "C" {
    /// The sink of a writer: it notes when the pipe or a write fails (the client went away).
    fn sink(writer: &web_sys::WritableStreamDefaultWriter) -> JsValue;
    /// Writes a chunk without waiting for it to be read.
    fn write(sink: &JsValue, chunk: &js_sys::Uint8Array);
    /// Whether no write failed and the pipe is neither errored nor closed.
    fn open(sink: &JsValue) -> bool;
    /// Closes the pipe (the body ends).
    fn end(sink: &JsValue);
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
    let sink = EventSink {
        handle: sink(&writer),
    };
    Ok((response, sink))
}

impl EventSink {
    /// Writes a frame; false once the client has gone away (the body was cancelled).
    pub fn write(&self, frame: &[u8]) -> bool {
        if !self.is_open() {
            return false;
        }
        write(&self.handle, &js_sys::Uint8Array::from(frame));
        true
    }

    /// Whether the client is still reading: no write has failed, and the pipe has not errored
    /// (which cancelling it does).
    pub fn is_open(&self) -> bool {
        open(&self.handle)
    }
}

impl Drop for EventSink {
    fn drop(&mut self) {
        end(&self.handle);
    }
}
