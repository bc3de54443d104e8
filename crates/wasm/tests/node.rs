//! The wasm test suite run in node (wasm-bindgen-test's default environment).
#![cfg(target_arch = "wasm32")]

mod suite;
