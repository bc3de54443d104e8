//! The committed contract and TypeScript declarations are what the wire types say: a change to a
//! wire type fails here until `cargo run -p stepwise-contract` writes them again.

use std::path::PathBuf;

#[test]
fn openapi_yaml_and_wire_d_ts_are_written_from_the_current_wire_types() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (file, expected) in stepwise_contract::generated(&root) {
        let committed = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        assert!(
            committed == expected,
            "{file} differs from what the wire types say: run `cargo run -p stepwise-contract`"
        );
    }
}

#[test]
fn every_reference_names_a_schema() {
    let schemas = stepwise_contract::schemas();
    let text = serde_json::to_string(&schemas).unwrap();
    for reference in text.split("\"$ref\":\"").skip(1) {
        let name = reference
            .split('"')
            .next()
            .unwrap()
            .trim_start_matches(stepwise_contract::SCHEMAS_PATH);
        assert!(
            schemas.contains_key(name),
            "{name} is referenced but not defined"
        );
    }
}
