//! LLM providers, sans-IO: settings, the HTTP request for a model call, and decoders that turn
//! a provider's streamed bytes into text deltas, an end, or a normalized error.
//!
//! The Worker performs the request and feeds the response bytes in; keys are inputs that only
//! ever go into the request headers.

mod decode;
mod error;
mod request;
mod settings;
mod tools;

pub use decode::{MAX_ARGUMENT_BYTES, MAX_CALLS_PER_ANSWER, StreamDecoder, StreamItem};
pub use error::{ErrorCode, ProviderError};
pub use request::{HttpRequest, ModelCall, build_request};
pub use settings::{ProviderConfig, ProviderKind, ProviderSettings, SettingsError};
pub use tools::{Round, ToolCall, ToolReply, ToolSpec};
