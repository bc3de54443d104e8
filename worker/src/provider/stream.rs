//! A model answer being received: the offline provider's reply handed over in small chunks, or
//! an upstream HTTP stream decoded by the core. Every read waits at most the per-chunk timeout
//! and never past the whole call's deadline; failures become [`ProviderError`]s with
//! normalized codes, and the key is scrubbed from any upstream message.
//!
//! The upstream body is read straight from its reader, and the per-chunk timeout is one timer
//! for as long as chunks keep coming: when it fires, it checks since when the caller has been
//! waiting and waits on for the rest of the window. A timer per chunk (set, then cleared) and a Rust stream
//! around the reader cost more CPU than decoding the chunk (bench/README.md).

use std::pin::Pin;
use std::time::Duration;

use futures::future::{Either, select};
use stepwise_core::llm::{
    ErrorCode, ModelCall, ProviderConfig, ProviderError, ProviderKind, StreamDecoder, StreamItem,
    ToolCall, build_request,
};
use stepwise_core::offline::OfflineAnswer;
use worker::wasm_bindgen_futures::JsFuture;
use worker::web_sys::AbortController;
use worker::{Delay, console_warn, web_sys};

use crate::platform::deadline::{now_ms, within};
use crate::platform::js::{self, BodyReader, Outbound};

/// Bytes of an offline reply handed over at a time, so it streams like a real answer.
const OFFLINE_CHUNK: usize = 24;
/// Largest upstream error body read.
const MAX_ERROR_BODY: usize = 16 * 1024;

/// How long a call may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallLimits {
    /// For the answer to start, and between two chunks, in ms.
    pub chunk_timeout_ms: u32,
    /// For the whole call, from the request to the last byte, in ms.
    pub deadline_ms: u32,
    /// Most bytes of the answer's text; past it the call fails with `answer_too_long`.
    pub max_answer_bytes: usize,
}

/// A model answer being received.
pub struct ModelStream {
    decoder: StreamDecoder,
    source: Source,
    chunk_timeout: Duration,
    /// Milliseconds since the epoch after which the call fails with `timeout`.
    deadline_at: u64,
    key: Option<String>,
    done: bool,
    /// Bytes of text received, and the most allowed.
    received: usize,
    max_answer_bytes: usize,
    /// Aborts the upstream fetch: when the stream is dropped (the client went away, or the
    /// call failed), the connection to the provider is closed at once.
    abort: Option<AbortController>,
    /// Tool calls completed so far, for [`ModelStream::take_tool_calls`].
    tool_calls: Vec<ToolCall>,
}

/// An upstream call's abort, called when this is dropped unless [`AbortUnlessKept::keep`]
/// handed it on.
struct AbortUnlessKept(Option<AbortController>);

impl AbortUnlessKept {
    fn abort(&self) {
        if let Some(abort) = &self.0 {
            abort.abort();
        }
    }

    fn keep(mut self) -> Option<AbortController> {
        self.0.take()
    }
}

impl Drop for AbortUnlessKept {
    fn drop(&mut self) {
        self.abort();
    }
}

impl Drop for ModelStream {
    fn drop(&mut self) {
        if let Some(abort) = self.abort.take()
            && !self.done
        {
            abort.abort();
        }
    }
}

enum Source {
    Text { text: String, at: usize },
    Http(Upstream),
}

/// An upstream body being read, with its one timer.
struct Upstream {
    reader: BodyReader,
    /// The read in flight, if any (a timer firing does not cancel it).
    pending: Option<JsFuture>,
    /// The timer, and the time (ms since the epoch) it was set to fire at.
    timer: Option<(Pin<Box<Delay>>, u64)>,
    /// Since when the caller has been waiting for the next chunk (ms since the epoch): the time
    /// it spends with a chunk does not count against the provider.
    waiting_since: u64,
}

impl ModelStream {
    /// The offline provider's answer, its text streamed in small chunks, its tool calls given
    /// out once the text is read.
    pub fn offline(answer: OfflineAnswer) -> ModelStream {
        ModelStream {
            decoder: StreamDecoder::new(ProviderKind::Offline),
            source: Source::Text {
                text: answer.text,
                at: 0,
            },
            chunk_timeout: Duration::ZERO,
            deadline_at: u64::MAX,
            key: None,
            done: false,
            received: 0,
            max_answer_bytes: usize::MAX,
            abort: None,
            tool_calls: answer.calls,
        }
    }

    /// Opens the upstream stream: sends the request and waits for the response head.
    pub async fn open(
        provider: &ProviderConfig,
        key: Option<String>,
        call: &ModelCall<'_>,
        limits: CallLimits,
    ) -> Result<ModelStream, ProviderError> {
        let deadline_at = now_ms() + u64::from(limits.deadline_ms);
        let chunk_timeout = Duration::from_millis(u64::from(limits.chunk_timeout_ms));
        let request = build_request(provider, key.as_deref(), call).ok_or_else(|| {
            ProviderError::new(
                ErrorCode::UpstreamError,
                "the offline provider has no upstream",
            )
        })?;
        let abort = AbortController::new()
            .map_err(|_| ProviderError::new(ErrorCode::UpstreamError, "no abort controller"))?;
        let signal = abort.signal();
        // Dropped before the stream is built (its owner stopped the turn while the provider had
        // not answered yet): the call is aborted, so the provider sees its connection closed.
        let abort = AbortUnlessKept(Some(abort));
        let outbound = Outbound {
            url: &request.url,
            headers: &request.headers,
            body: Some(&request.body),
            signal: Some(&signal),
        };
        // A connection that fails at once, before any answer (a pooled connection the provider
        // has just closed, a reset), is tried once more, as providers' own SDKs do. An answer of
        // any kind, a connection dropped after the provider held the call, or the time running
        // out is never sent again.
        let mut attempt = 1;
        let (response, wait) = loop {
            let wait = chunk_timeout.min(remaining(deadline_at));
            let sent_at = now_ms();
            match within(wait, js::fetch(outbound)).await {
                Some(Ok(response)) => break (response, wait),
                Some(Err(_))
                    if attempt < CONNECT_ATTEMPTS
                        && now_ms().saturating_sub(sent_at) < QUICK_FAILURE_MS
                        && remaining(deadline_at) > Duration::ZERO =>
                {
                    console_warn!(
                        "provider {}: the connection failed before an answer; trying again",
                        provider.name
                    );
                    attempt += 1;
                }
                Some(Err(_)) => {
                    return Err(ProviderError::new(
                        ErrorCode::UpstreamError,
                        "could not reach the provider",
                    ));
                }
                None => {
                    abort.abort();
                    return Err(ProviderError::new(
                        ErrorCode::Timeout,
                        "the provider did not answer in time",
                    ));
                }
            }
        };
        let status = response.status();
        if !(200..300).contains(&status) {
            let body = read_error_body(&response, wait).await;
            abort.abort();
            return Err(ProviderError::from_status(status, &body).for_client(key.as_deref()));
        }
        let reader = BodyReader::of(&response)
            .ok_or_else(|| ProviderError::new(ErrorCode::BadStream, "the provider sent no body"))?;
        let body = Upstream {
            reader,
            pending: None,
            timer: None,
            waiting_since: now_ms(),
        };
        Ok(ModelStream {
            decoder: StreamDecoder::new(provider.kind),
            source: Source::Http(body),
            chunk_timeout,
            deadline_at,
            key,
            done: false,
            received: 0,
            max_answer_bytes: limits.max_answer_bytes,
            abort: abort.keep(),
            tool_calls: Vec::new(),
        })
    }

    /// The next piece of the answer's text; `Ok(None)` once it has ended. Reads on until a
    /// chunk completes some text: a chunk may hold only part of a line.
    pub async fn next_text(&mut self) -> Result<Option<String>, ProviderError> {
        while !self.done {
            let mut text = String::new();
            for item in self.read().await {
                match item {
                    StreamItem::Text { text: piece } => text.push_str(&piece),
                    StreamItem::ToolCall(call) => self.tool_calls.push(call),
                    StreamItem::Finished { .. } => self.done = true,
                    StreamItem::Failed(error) => {
                        self.done = true;
                        return Err(error.for_client(self.key.as_deref()));
                    }
                }
            }
            self.received += text.len();
            if self.received > self.max_answer_bytes {
                self.done = true;
                if let Some(abort) = self.abort.take() {
                    abort.abort();
                }
                let message = "the answer is longer than the server reads";
                return Err(ProviderError::new(ErrorCode::AnswerTooLong, message));
            }
            if !text.is_empty() {
                return Ok(Some(text));
            }
        }
        Ok(None)
    }

    /// The tool calls the model made (each whole), taken out of the stream once it has ended.
    pub fn take_tool_calls(&mut self) -> Vec<ToolCall> {
        std::mem::take(&mut self.tool_calls)
    }

    async fn read(&mut self) -> Vec<StreamItem> {
        match &mut self.source {
            Source::Text { text, at } => {
                if *at >= text.len() {
                    self.decoder.finish()
                } else {
                    let end = (*at + OFFLINE_CHUNK).min(text.len());
                    let items = self.decoder.feed(&text.as_bytes()[*at..end]);
                    *at = end;
                    items
                }
            }
            Source::Http(body) => match body.next(self.chunk_timeout, self.deadline_at).await {
                Ok(Some(bytes)) => self.decoder.feed(&bytes),
                Ok(None) => self.decoder.finish(),
                Err(error) => vec![StreamItem::Failed(error)],
            },
        }
    }
}

impl Upstream {
    /// The next chunk, `Ok(None)` at the end; a timeout when no chunk comes within
    /// `chunk_timeout` or the call's `deadline_at` passes.
    async fn next(
        &mut self,
        chunk_timeout: Duration,
        deadline_at: u64,
    ) -> Result<Option<Vec<u8>>, ProviderError> {
        let window = chunk_timeout.as_millis() as u64;
        self.waiting_since = now_ms();
        loop {
            let now = now_ms();
            let due = self.waiting_since.saturating_add(window).min(deadline_at);
            if now >= due {
                return Err(if due == deadline_at {
                    ProviderError::new(ErrorCode::Timeout, "the provider did not finish in time")
                } else {
                    ProviderError::new(ErrorCode::Timeout, "the provider stopped answering")
                });
            }
            // The timer stands while chunks keep coming; it is set again only when it fired
            // (or was set for a later time than the window now ends). When it fires the read was
            // just polled and was not ready: the loop checks whether the window has passed.
            if self.timer.as_ref().is_none_or(|(_, at)| *at > due) {
                let delay = Delay::from(Duration::from_millis(due - now));
                self.timer = Some((Box::pin(delay), due));
            }
            let read = self.pending.get_or_insert_with(|| self.reader.read());
            let (timer, _) = self.timer.as_mut().expect("the timer was just set");
            match select(read, timer.as_mut()).await {
                Either::Left((read, _)) => {
                    self.pending = None;
                    return BodyReader::chunk(read).map_err(|_| {
                        ProviderError::new(
                            ErrorCode::BadStream,
                            "the connection to the provider was lost",
                        )
                    });
                }
                Either::Right(_) => self.timer = None,
            }
        }
    }
}

/// Time left until `deadline_at` (zero once it has passed).
/// How many times a model call is sent when its connection fails before any answer.
const CONNECT_ATTEMPTS: u32 = 2;

/// A connection failing within this long of sending (ms) failed before the provider held the
/// call: a stale pooled connection or a reset fails in milliseconds.
const QUICK_FAILURE_MS: u64 = 500;

fn remaining(deadline_at: u64) -> Duration {
    Duration::from_millis(deadline_at.saturating_sub(now_ms()))
}

async fn read_error_body(response: &web_sys::Response, limit: Duration) -> String {
    let Some(reader) = BodyReader::of(response) else {
        return String::new();
    };
    let mut body = Vec::new();
    let read = async {
        while let Ok(Some(chunk)) = BodyReader::chunk(reader.read().await) {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_ERROR_BODY {
                break;
            }
        }
    };
    let _ = within(limit, read).await;
    String::from_utf8_lossy(&body).into_owned()
}
