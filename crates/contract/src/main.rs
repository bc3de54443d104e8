//! Writes `openapi.yaml`'s schemas and `crates/wasm/js/wire.d.ts` from the wire types:
//! `cargo run -p stepwise-contract` (run it after changing a wire type; its test fails until then).

use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (file, text) in stepwise_contract::generated(&root) {
        std::fs::write(root.join(file), text).unwrap_or_else(|e| panic!("writing {file}: {e}"));
        println!("wrote {file}");
    }
}
