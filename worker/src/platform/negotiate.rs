//! Content negotiation: whether a client prefers one JSON answer to an event stream.

use worker::Request;

use super::error::AppResult;

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
