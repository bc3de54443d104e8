//! Server-held conversations (chat-architecture.md §6): one Durable Object per conversation,
//! guided or assistant, owning its record and serializing its turns; the rules are
//! `core::conversation`'s. The assistant's conversations are listed per owner from KV.

pub mod client;
pub mod index;
pub mod object;
mod rows;
