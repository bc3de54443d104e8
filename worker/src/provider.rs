//! Calling the chat's model: the offline provider in-process, or an upstream HTTP stream decoded
//! by the core. Upstream failures become [`ProviderError`]s with normalized codes; the key is
//! only ever placed in request headers and is scrubbed from any upstream message.

use std::time::Duration;

use futures_util::future::{Either, select};
use futures_util::{FutureExt, StreamExt};
use stepwise_core::llm::{
    ErrorCode, ModelCall, ProviderConfig, ProviderError, ProviderKind, StreamDecoder, StreamItem,
    build_request,
};
use worker::{ByteStream, Delay, Fetch, Headers, Method, Request, RequestInit};

/// Bytes of an offline reply handed over at a time, so it streams like a real answer.
const OFFLINE_CHUNK: usize = 24;
/// Largest upstream error body read.
const MAX_ERROR_BODY: usize = 16 * 1024;

/// A model answer being received.
pub struct ModelStream {
    decoder: StreamDecoder,
    source: Source,
    timeout: Duration,
    key: Option<String>,
    done: bool,
}

enum Source {
    Text { text: String, at: usize },
    Http(ByteStream),
}

impl ModelStream {
    /// The offline provider's reply, streamed in small chunks.
    pub fn offline(reply: String) -> ModelStream {
        ModelStream {
            decoder: StreamDecoder::new(ProviderKind::Offline),
            source: Source::Text { text: reply, at: 0 },
            timeout: Duration::ZERO,
            key: None,
            done: false,
        }
    }

    /// Opens the upstream stream: sends the request and waits for the response head.
    pub async fn open(
        provider: &ProviderConfig,
        key: Option<String>,
        call: &ModelCall<'_>,
        timeout_ms: u32,
    ) -> Result<ModelStream, ProviderError> {
        let timeout = Duration::from_millis(u64::from(timeout_ms));
        let request = build_request(provider, key.as_deref(), call).ok_or_else(|| {
            ProviderError::new(
                ErrorCode::UpstreamError,
                "the offline provider has no upstream",
            )
        })?;
        let headers = Headers::new();
        for (name, value) in &request.headers {
            headers.set(name, value).map_err(|_| {
                ProviderError::new(ErrorCode::UpstreamError, "invalid request header")
            })?;
        }
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(request.body.into()));
        let outbound = Request::new_with_init(&request.url, &init)
            .map_err(|_| ProviderError::new(ErrorCode::UpstreamError, "invalid provider URL"))?;
        let fetch = Fetch::Request(outbound);
        let sent = fetch.send();
        let mut response = match select(Box::pin(sent), Box::pin(Delay::from(timeout))).await {
            Either::Left((Ok(response), _)) => response,
            Either::Left((Err(_), _)) => {
                return Err(ProviderError::new(
                    ErrorCode::UpstreamError,
                    "could not reach the provider",
                ));
            }
            Either::Right(_) => {
                return Err(ProviderError::new(
                    ErrorCode::Timeout,
                    "the provider did not answer in time",
                ));
            }
        };
        let status = response.status_code();
        if !(200..300).contains(&status) {
            let body = read_error_body(&mut response, timeout).await;
            return Err(ProviderError::from_status(status, &body).for_client(key.as_deref()));
        }
        let body = response
            .stream()
            .map_err(|_| ProviderError::new(ErrorCode::BadStream, "the provider sent no body"))?;
        Ok(ModelStream {
            decoder: StreamDecoder::new(provider.kind),
            source: Source::Http(body),
            timeout,
            key,
            done: false,
        })
    }

    /// The next items of the answer; `None` once it has ended (after `Finished` or `Failed`).
    /// Reads on until a chunk completes something: a chunk may hold only part of a line.
    pub async fn next(&mut self) -> Option<Vec<StreamItem>> {
        while !self.done {
            let items = self.read().await;
            if !items.is_empty() {
                return Some(items);
            }
        }
        None
    }

    async fn read(&mut self) -> Vec<StreamItem> {
        let mut items = match &mut self.source {
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
            Source::Http(body) => {
                match select(body.next(), Box::pin(Delay::from(self.timeout))).await {
                    Either::Left((Some(Ok(bytes)), _)) => self.decoder.feed(&bytes),
                    Either::Left((None, _)) => self.decoder.finish(),
                    Either::Left((Some(Err(_)), _)) => {
                        vec![StreamItem::Failed(ProviderError::new(
                            ErrorCode::BadStream,
                            "the connection to the provider was lost",
                        ))]
                    }
                    Either::Right(_) => vec![StreamItem::Failed(ProviderError::new(
                        ErrorCode::Timeout,
                        "the provider stopped answering",
                    ))],
                }
            }
        };
        for item in &mut items {
            match item {
                StreamItem::Failed(error) => {
                    *error = error.clone().for_client(self.key.as_deref());
                    self.done = true;
                }
                StreamItem::Finished { .. } => self.done = true,
                StreamItem::Text { .. } => {}
            }
        }
        items
    }
}

async fn read_error_body(response: &mut worker::Response, timeout: Duration) -> String {
    let Ok(mut stream) = response.stream() else {
        return String::new();
    };
    let mut body = Vec::new();
    let read = async {
        while let Some(Ok(chunk)) = stream.next().await {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_ERROR_BODY {
                break;
            }
        }
    };
    let _ = select(Box::pin(read.fuse()), Box::pin(Delay::from(timeout))).await;
    String::from_utf8_lossy(&body).into_owned()
}
