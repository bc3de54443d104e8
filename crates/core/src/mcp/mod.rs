//! The Model Context Protocol server's rules, with no I/O: JSON-RPC messages read and answered
//! ([`jsonrpc`]), requests routed with their params checked and `initialize` negotiated
//! ([`server`]), the tools and their input schemas ([`tools`]), the resources and their URIs
//! ([`resources`]), the forms asked through elicitation ([`elicitation`]) and a guided workflow
//! walked through them ([`guided`]). The Worker's `/mcp` route (Streamable HTTP) performs the
//! calls.

pub mod elicitation;
pub mod guided;
pub mod jsonrpc;
pub mod resources;
pub mod server;
pub mod tools;
