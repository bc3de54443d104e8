//! A browser's WebSocket: its upgrade admitted before it reaches an object (it must ask for one,
//! `Upgrade: websocket`, and come from this Worker's own origin or one in `ALLOWED_ORIGINS`,
//! `super::cors::may_connect`, since an upgrade is not subject to CORS), and what the objects
//! that hold such sockets do alike with their messages and closes.

use serde_json::Value;
use worker::{Env, Request, WebSocket, WebSocketIncomingMessage};

use super::cors::may_connect;
use super::error::{AppError, AppResult};
use super::settings::var;

/// Admits `req` as a WebSocket upgrade from a page that may connect: 422 when it is no upgrade,
/// 403 for another site's page.
pub fn admit(req: &Request, env: &Env) -> AppResult<()> {
    let upgrade = req.headers().get("upgrade")?.unwrap_or_default();
    if !upgrade.eq_ignore_ascii_case("websocket") {
        return Err(AppError::invalid_request(
            "this route speaks WebSocket (`Upgrade: websocket`)",
        ));
    }
    let origin = req.headers().get("origin")?;
    let own = req.url()?.origin().ascii_serialization();
    let allowed = var(env, "ALLOWED_ORIGINS").unwrap_or_default();
    if !may_connect(origin.as_deref(), &own, &allowed) {
        return Err(AppError::forbidden(
            "this page's origin may not open the conversation's WebSocket",
        ));
    }
    Ok(())
}

/// What a watching tab asks: its `{"type": "resume", …}` message, once a `ping` is answered
/// (`pong`); `None` for anything else.
pub fn resume_asked(ws: &WebSocket, message: WebSocketIncomingMessage) -> Option<Value> {
    let WebSocketIncomingMessage::String(text) = message else {
        return None;
    };
    if text == "ping" {
        let _ = ws.send_with_str("pong");
        return None;
    }
    let asked: Value = serde_json::from_str(&text).ok()?;
    (asked["type"] == "resume").then_some(asked)
}

/// Closes a socket its tab closed, with the tab's code (1000 for the codes that mean none was
/// given).
pub fn close_as_asked(ws: &WebSocket, code: usize) {
    let code = match code {
        1005 | 1006 => 1000,
        code => code as u16,
    };
    let _ = ws.close(Some(code), Some("closed"));
}

/// Closes a socket that failed.
pub fn close_on_error(ws: &WebSocket) {
    let _ = ws.close(Some(1011), Some("error"));
}
