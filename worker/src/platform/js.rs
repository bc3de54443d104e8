//! The hot path's JavaScript I/O, called directly: Durable Object stubs fetched with plain
//! `RequestInit`s and answered as text, and bodies read whole by the runtime's own `text()`.
//! workers-rs's wrappers build a Rust `Request` per call and read every body through a Rust
//! stream whose reader is released after each read; on a guided turn those were a fifth of the
//! isolate's CPU (bench/README.md "What a turn costs").

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::web_sys;
use worker::{Env, js_sys, wasm_bindgen, wasm_bindgen_futures};

use super::error::{AppError, AppResult};

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// A Durable Object stub as the runtime gives it.
    type RawStub;

    #[wasm_bindgen(method)]
    fn fetch(this: &RawStub, url: &str, init: &web_sys::RequestInit) -> js_sys::Promise;
}

/// A request to a Durable Object: the method, the URL (only its path and query mean anything to
/// the object), headers and an optional text body.
pub struct ObjectCall<'a> {
    /// `GET`, `POST`, ...
    pub method: &'a str,
    /// The URL the object sees.
    pub url: &'a str,
    /// Headers to send.
    pub headers: &'a [(&'a str, &'a str)],
    /// The body.
    pub body: Option<&'a str>,
}

/// Sends `call` to the object `name` of `binding`: its status and its body as text.
pub async fn call_object(
    env: &Env,
    binding: &str,
    name: &str,
    call: ObjectCall<'_>,
) -> AppResult<(u16, String)> {
    let stub: RawStub = env
        .durable_object(binding)?
        .id_from_name(name)?
        .get_stub()?
        .into_rpc();
    let init = web_sys::RequestInit::new();
    init.set_method(call.method);
    if !call.headers.is_empty() {
        let headers = web_sys::Headers::new().map_err(js_error)?;
        for (header, value) in call.headers {
            headers.set(header, value).map_err(js_error)?;
        }
        init.set_headers(&headers);
    }
    if let Some(body) = call.body {
        init.set_body(&JsValue::from_str(body));
    }
    let response: web_sys::Response = JsFuture::from(stub.fetch(call.url, &init))
        .await
        .map_err(js_error)?
        .unchecked_into();
    let status = response.status();
    Ok((status, response_text(&response).await?))
}

/// A response's whole body as text, read by the runtime.
pub async fn response_text(response: &web_sys::Response) -> AppResult<String> {
    let text = JsFuture::from(response.text().map_err(js_error)?)
        .await
        .map_err(js_error)?;
    Ok(text.as_string().unwrap_or_default())
}

/// A JavaScript exception as an internal error (its message is logged, never shown).
pub fn js_error(error: JsValue) -> AppError {
    let message = error
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| error.as_string())
        .unwrap_or_else(|| "a JavaScript call failed".to_owned());
    AppError::internal(&message)
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// The runtime's `fetch`.
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(url: &str, init: &web_sys::RequestInit) -> js_sys::Promise;
}

/// An outbound HTTP request.
#[derive(Clone, Copy)]
pub struct Outbound<'a> {
    /// Its URL.
    pub url: &'a str,
    /// Headers to send.
    pub headers: &'a [(String, String)],
    /// Its body (a POST), or none (a GET).
    pub body: Option<&'a str>,
    /// Aborting it closes the connection, even mid-body.
    pub signal: Option<&'a web_sys::AbortSignal>,
}

/// Sends `request`: the response once its head arrived (an `Err` when the connection failed).
pub async fn fetch(request: Outbound<'_>) -> Result<web_sys::Response, JsValue> {
    let init = web_sys::RequestInit::new();
    let headers = web_sys::Headers::new()?;
    for (header, value) in request.headers {
        headers.set(header, value)?;
    }
    init.set_headers(&headers);
    if let Some(body) = request.body {
        init.set_method("POST");
        init.set_body(&JsValue::from_str(body));
    }
    if let Some(signal) = request.signal {
        init.set_signal(Some(signal));
    }
    Ok(JsFuture::from(global_fetch(request.url, &init))
        .await?
        .unchecked_into())
}

/// A response body read chunk by chunk, straight from its stream's reader (one runtime call and
/// one copy into wasm memory a chunk).
pub struct BodyReader {
    reader: web_sys::ReadableStreamDefaultReader,
}

impl BodyReader {
    /// The reader of `response`'s body; `None` for a response without one.
    pub fn of(response: &web_sys::Response) -> Option<BodyReader> {
        let reader = response.body()?.get_reader().unchecked_into();
        Some(BodyReader { reader })
    }

    /// The next chunk's read, to be awaited (kept across timers: a read in flight is not lost).
    pub fn read(&self) -> JsFuture {
        JsFuture::from(self.reader.read())
    }

    /// A finished read's chunk, `Ok(None)` at the end of the body, `Err` when the connection
    /// was lost.
    pub fn chunk(read: Result<JsValue, JsValue>) -> Result<Option<Vec<u8>>, JsValue> {
        let result = read?;
        if js_sys::Reflect::get(&result, &JsValue::from_str("done"))?.is_truthy() {
            return Ok(None);
        }
        let value = js_sys::Reflect::get(&result, &JsValue::from_str("value"))?;
        Ok(Some(js_sys::Uint8Array::new(&value).to_vec()))
    }
}
