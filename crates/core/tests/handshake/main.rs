//! Context on request (context-handshake.md): artifacts by key path, the needs analyzer and
//! what it never asks for, supplies carried from earlier turns (`analyzer.rs`); the baseline's
//! order, prompt sheets and redaction (`prompt.rs`); the request's life on a conversation
//! (deferral, partial supply, quota met, reminder, fallback, force, outcome), with a property
//! over supplies and skips (`lifecycle.rs`). Shared fixtures are in `fixtures.rs`.

mod analyzer;
mod fixtures;
mod lifecycle;
mod prompt;
