//! Prompt sheets in KV: `GET /api/prompt-sheets/:id` (the override, or the built-in sheet) and
//! `PUT /api/prompt-sheets/:id` (admin token; the sheet is checked whole by the core and
//! refused with its line and reason, so a turn never meets a broken one). A turn uses the
//! override of `<page>.<mode>`, else of `default.<mode>`, else the built-in sheet.

use serde::Deserialize;
use serde_json::json;
use stepwise_core::handshake::{BUILTIN_SHEET, PromptSheet, is_sheet_id};
use worker::{Env, Request, Response};

use crate::platform::body::read_json;
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::Kv;
use crate::registry;

const PREFIX: &str = "prompt-sheet:";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SheetBody {
    text: String,
}

fn checked_id(id: &str) -> AppResult<()> {
    let pages: Vec<&str> = registry::page_names();
    if is_sheet_id(id, &pages) {
        return Ok(());
    }
    Err(AppError::not_found(&format!(
        "prompt sheet `{id:.64}` (ids are `<page>.<mode>`: page `default` or one of {}, mode `question` or `action`)",
        pages.join(", ")
    )))
}

/// `GET /api/prompt-sheets/:id`.
pub async fn get(env: &Env, id: &str) -> AppResult<Response> {
    checked_id(id)?;
    let stored = Kv::new(env)?.text(&format!("{PREFIX}{id}")).await?;
    let (source, text) = match stored {
        Some(text) => ("override", text),
        None => ("builtin", BUILTIN_SHEET.to_owned()),
    };
    let sheet = PromptSheet::parse(&text)?;
    Ok(Response::from_json(&json!({
        "id": id,
        "source": source,
        "text": text,
        "sections": sheet.section_names().collect::<Vec<_>>(),
        "styles": sheet.styles().collect::<Vec<_>>(),
    }))?)
}

/// `PUT /api/prompt-sheets/:id` `{text}`: stored when it reads whole; 422 `invalid_prompt_sheet`
/// naming the line otherwise.
pub async fn put(mut req: Request, env: &Env, id: &str) -> AppResult<Response> {
    checked_id(id)?;
    let body: SheetBody = read_json(&mut req).await?;
    let sheet = PromptSheet::parse(&body.text)?;
    Kv::new(env)?
        .put_text(&format!("{PREFIX}{id}"), &body.text, None)
        .await?;
    Ok(Response::from_json(&json!({
        "id": id,
        "source": "override",
        "sections": sheet.section_names().collect::<Vec<_>>(),
        "styles": sheet.styles().collect::<Vec<_>>(),
    }))?)
}

/// The sheet a turn on `page` in `mode` renders with.
pub async fn for_turn(env: &Env, page: &str, mode: &str) -> PromptSheet {
    let Ok(kv) = Kv::new(env) else {
        return PromptSheet::builtin();
    };
    for id in [format!("{page}.{mode}"), format!("default.{mode}")] {
        if let Ok(Some(text)) = kv.text(&format!("{PREFIX}{id}")).await {
            match PromptSheet::parse(&text) {
                Ok(sheet) => return sheet,
                Err(error) => worker::console_error!("prompt sheet {id}: {error}; skipped"),
            }
        }
    }
    PromptSheet::builtin()
}
