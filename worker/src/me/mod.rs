//! `GET /api/me`: who the caller is to this server (an Access identity with its e-mail, or an
//! anonymous owner) and what they spent today against the daily caps; and the owner's data in
//! one piece: `GET /api/me/export` ([`export`]) and `DELETE /api/me` ([`erase`]).

pub mod erase;
pub mod export;
mod owned;

use stepwise_core::answers::{Me, OwnerInfo};
use worker::{Env, Response};

use crate::platform::error::AppResult;
use crate::platform::owner::{self, Owner};
use crate::platform::spend;

/// `GET /api/me`: `{owner: {id, kind, email}, usage: {calls, tokens}, access}`.
pub async fn get(env: &Env, owner: &Owner) -> AppResult<Response> {
    let usage = spend::usage(env, owner).await?;
    let me = Me {
        owner: OwnerInfo {
            id: owner.id.clone(),
            kind: owner.kind,
            email: owner.email.clone(),
        },
        usage,
        access: owner::uses_access(env),
    };
    Ok(Response::from_json(&me)?)
}
