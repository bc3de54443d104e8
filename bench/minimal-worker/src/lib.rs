//! A minimal workers-rs Worker (a benchmark baseline, not part of the app): `GET /healthz`
//! answers `ok`, anything else 404. bench/startup.mjs starts it beside the project's Worker.

use worker::{Context, Env, Method, Request, Response, Result, event};

/// The one route: `GET /healthz` → `200 ok`.
#[event(fetch)]
async fn fetch(req: Request, _env: Env, _ctx: Context) -> Result<Response> {
    if req.method() == Method::Get && req.path() == "/healthz" {
        Response::ok("ok")
    } else {
        Response::error("not found", 404)
    }
}
