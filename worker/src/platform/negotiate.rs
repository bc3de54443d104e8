//! Content negotiation: whether a client prefers one JSON answer to an event stream, and which
//! dialect an event stream is written in.

use stepwise_core::interop::agui::AgUiEncoder;
use stepwise_core::interop::ui_message::UiMessageEncoder;
use worker::Request;

use super::error::{AppError, AppResult};
use super::ids;

/// The request header naming a stream dialect (`ui-message-stream`; absent: Stepwise's own).
pub const FORMAT_HEADER: &str = "x-stepwise-format";
/// The request header asking for `model_delta` events (value `model`) instead of `text_delta`.
pub const DELTAS_HEADER: &str = "x-stepwise-deltas";

/// The dialect of an event stream.
pub enum Wire {
    /// Stepwise's events (`text_delta` … `complete`); `model_deltas` sends the model's own text
    /// (`model_delta`) instead of display text.
    Stepwise {
        /// Whether to send `model_delta` events.
        model_deltas: bool,
    },
    /// The Vercel AI SDK's UI message stream.
    UiMessage(Box<UiMessageEncoder>),
    /// AG-UI events.
    AgUi(Box<AgUiEncoder>),
}

/// How a turn's answer is delivered.
pub enum Delivery {
    /// One JSON answer.
    Json,
    /// An event stream in this dialect.
    Stream(Wire),
    /// AG-UI events for the run `run_id` of `thread_id` (a guided run's step is known once the
    /// turn begins).
    AgUi {
        /// The client's thread id.
        thread_id: String,
        /// The client's run id.
        run_id: String,
    },
}

impl Delivery {
    /// What `req` asks for: one JSON answer when it prefers JSON, else an event stream in the
    /// dialect it names.
    pub fn of(req: &Request) -> AppResult<Delivery> {
        Ok(match wants_json(req)? {
            true => Delivery::Json,
            false => Delivery::Stream(stream_wire(req)?),
        })
    }

    /// The dialect to stream in (`None`: one JSON answer); an AG-UI run's steps open on `step`.
    pub fn wire(self, step: Option<&str>) -> AppResult<Option<Wire>> {
        Ok(match self {
            Delivery::Json => None,
            Delivery::Stream(wire) => Some(wire),
            Delivery::AgUi { thread_id, run_id } => {
                let message_id = format!("msg-{}", ids::random_id()?);
                let encoder = AgUiEncoder::new(&thread_id, &run_id, &message_id, step);
                Some(Wire::AgUi(Box::new(encoder)))
            }
        })
    }
}

/// The dialect a turn's event stream is written in: the AI SDK's UI message stream when
/// `x-stepwise-format: ui-message-stream`, else Stepwise's events (`model_delta` ones when
/// `x-stepwise-deltas: model`); 422 for an unknown format.
pub fn stream_wire(req: &Request) -> AppResult<Wire> {
    let headers = req.headers();
    match headers.get(FORMAT_HEADER)?.as_deref().map(str::trim) {
        None | Some("stepwise") => {
            let model_deltas = headers
                .get(DELTAS_HEADER)?
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("model"));
            Ok(Wire::Stepwise { model_deltas })
        }
        Some("ui-message-stream") => {
            let id = format!("msg-{}", ids::random_id()?);
            Ok(Wire::UiMessage(Box::new(UiMessageEncoder::new(id))))
        }
        Some(other) => Err(AppError::invalid_request(format!(
            "unknown `{FORMAT_HEADER}` `{other}`: use `ui-message-stream` or leave it out"
        ))),
    }
}

/// Whether `Accept` prefers `application/json` to `text/event-stream` (q-values honoured).
pub fn wants_json(req: &Request) -> AppResult<bool> {
    let accept = req
        .headers()
        .get("accept")?
        .unwrap_or_default()
        .to_ascii_lowercase();
    let quality = |wanted: &str| {
        accept
            .split(',')
            .filter_map(|range| {
                let mut parts = range.split(';').map(str::trim);
                let media = parts.next()?;
                let q = parts
                    .find_map(|p| p.strip_prefix("q="))
                    .and_then(|q| q.parse::<f32>().ok())
                    .unwrap_or(1.0);
                (media == wanted).then_some(q)
            })
            .fold(None, |best: Option<f32>, q| {
                Some(best.map_or(q, |b| b.max(q)))
            })
    };
    Ok(
        match (quality("application/json"), quality("text/event-stream")) {
            (Some(json), Some(sse)) => json > 0.0 && json > sse,
            (Some(json), None) => json > 0.0,
            _ => false,
        },
    )
}
