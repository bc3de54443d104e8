//! The ground floor every feature stands on: errors, settings, request bodies, ids, CORS,
//! content negotiation, SSE responses, deadlines, KV, Durable Object stubs, queues, admin
//! checks, WebCrypto, owners and limits (rate limits, the kill switch, the spending guard).
//! Nothing here knows a feature; features import from here, never the other way.

pub mod admin;
pub mod body;
pub mod cors;
pub mod crypto;
pub mod deadline;
pub mod ended;
pub mod error;
pub mod ids;
pub mod js;
pub mod kv;
pub mod limits;
pub mod live;
pub mod negotiate;
pub mod objects;
pub mod output;
pub mod owner;
pub mod queues;
pub mod settings;
pub mod spend;
pub mod spend_objects;
pub mod sse;
pub mod stop;
pub mod turnstile;
pub mod upgrade;
pub mod url_parts;
pub mod warm;
pub mod webhook;
