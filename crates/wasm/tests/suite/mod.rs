//! The wasm test suite, shared by the node and the browser runs: it replays the shared JSON
//! vectors of `tests/vectors/` through the exported API, as a browser calls it.

use serde_json::{Value, json};
use stepwise_core::markers::{MarkerParser, MarkerRegistry};
use stepwise_wasm::{
    BLOB_READY, CHUNK_AS_TEXT, DIAGNOSTIC, EARLIER, EVENTS_READY, HOLDING, IN_CHUNK, KINDS, MARKER,
    MarkerStream, NO_EVENTS, PIECES, REF, SPAN, SPANS_READY, TEXT, WINDOW_ADD, WINDOW_OPEN,
    Workflow,
};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

const MARKERS: &str = include_str!("../../../../tests/vectors/markers.json");
const GUIDED: &str = include_str!("../../../../tests/vectors/guided_workflow.json");
const INFER: &str = include_str!("../../../../tests/vectors/infer_step.json");
const SPECS: &str = include_str!("../../../../tests/vectors/workflow_specs.json");

fn cases(file: &str) -> Vec<Value> {
    let value: Value = serde_json::from_str(file).expect("vector file is JSON");
    value["cases"].as_array().expect("a cases array").clone()
}

fn js(value: &Value) -> JsValue {
    use serde::Serialize;
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap()
}

fn rust(value: JsValue) -> Value {
    serde_wasm_bindgen::from_value(value).unwrap()
}

/// The `code` property of a thrown error, which must be a real `Error`.
fn error_code(error: JsValue) -> (String, String) {
    let error: js_sys::Error = error.dyn_into().expect("thrown value is an Error");
    let code = js_sys::Reflect::get(&error, &"code".into())
        .unwrap()
        .as_string()
        .expect("Error has a string code");
    (code, error.message().into())
}

/// The core's parser, run natively inside the test: the reference for the events' JS shape.
fn native_parser(payload_markers: Option<&[String]>) -> MarkerParser {
    let mut registry = MarkerRegistry::new();
    for name in payload_markers.unwrap_or_default() {
        registry.register_payload(name).unwrap();
    }
    MarkerParser::with_registry(registry)
}

fn chunkings(text: &str) -> Vec<Vec<&str>> {
    let chars: Vec<&str> = text
        .char_indices()
        .map(|(i, c)| &text[i..i + c.len_utf8()])
        .collect();
    let mut out = vec![vec![text], chars];
    for size in [3usize, 16] {
        let mut chunks = Vec::new();
        let mut start = 0;
        while start < text.len() {
            let mut end = (start + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            chunks.push(&text[start..end]);
            start = end;
        }
        out.push(chunks);
    }
    out
}

fn with_defaults(defaults: Value, expect: &Value) -> Value {
    let mut merged = defaults;
    for (key, value) in expect.as_object().unwrap() {
        merged[key] = value.clone();
    }
    merged
}

#[wasm_bindgen_test]
fn marker_vectors_parse_in_wasm_as_natively_at_every_chunking() {
    let defaults = json!({"message": "", "suggestions": [], "options": [], "extracted": [], "proposed_message": null,
        "target_field": null, "suggested_values": [], "suggested_actions": [], "payloads": [], "diagnostics": []});
    for case in cases(MARKERS) {
        let name = case["name"].as_str().unwrap();
        let text = case["text"].as_str().unwrap();
        let names: Option<Vec<String>> = case
            .get("payload_markers")
            .map(|v| serde_json::from_value(v.clone()).unwrap());
        let expected = with_defaults(defaults.clone(), &case["expect"]);
        for chunks in chunkings(text) {
            let mut stream = MarkerStream::new(names.as_deref().map(js_strings)).unwrap();
            let mut native = native_parser(names.as_deref());
            let mut display = String::new();
            let mut payloads = Vec::new();
            let mut entry = Entry::default();
            for chunk in &chunks {
                let events = feed(&mut stream, &mut entry, chunk);
                let want = serde_json::to_value(native.feed(chunk).collect::<Vec<_>>()).unwrap();
                assert_eq!(events, want, "{name}: events of chunk {chunk:?}");
                for event in events.as_array().unwrap() {
                    if event["type"] == "text" {
                        display.push_str(event["text"].as_str().unwrap());
                    }
                    if event["kind"] == "payload" {
                        payloads.push(event["value"].clone());
                    }
                }
            }
            let code = stream.end_input(0, 0, false);
            let events = match code & 3 {
                NO_EVENTS => json!([]),
                _ => read_tape(&stream, &mut entry, "", code),
            };
            let want = serde_json::to_value(native.end().collect::<Vec<_>>()).unwrap();
            assert_eq!(events, want, "{name}: events at the end");
            for event in events.as_array().unwrap() {
                if event["type"] == "text" {
                    display.push_str(event["text"].as_str().unwrap());
                }
            }
            let mut parsed = finish(&mut stream, &entry, &display, &payloads);
            let codes: Vec<Value> = parsed["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["code"].clone())
                .collect();
            parsed["diagnostics"] = Value::Array(codes);
            assert_eq!(parsed, expected, "{name} ({} chunks)", chunks.len());
            if let Some(want) = case.get("display") {
                assert_eq!(display, want.as_str().unwrap(), "{name}: display");
            }
        }
    }
}

#[wasm_bindgen_test]
fn guided_workflow_vectors_validate_and_apply_actions_in_wasm() {
    let workflow = Workflow::builtin("research_stream").unwrap();
    for case in cases(GUIDED) {
        let name = case["name"].as_str().unwrap();
        let request = &case["request"];
        let response = &case["expect"]["response"];
        let skipped = request.get("skipped").cloned().unwrap_or(json!([]));
        let step = match request.get("current_step") {
            Some(step) => step.clone(),
            None => Value::String(
                workflow
                    .infer_step(js(&request["current_config"]), js(&skipped), None)
                    .unwrap(),
            ),
        };
        let state =
            json!({"current_step": step, "config": request["current_config"], "skipped": skipped});
        let action = request
            .get("user_action")
            .cloned()
            .unwrap_or(json!({"type": "text_input"}));
        let validation = rust(workflow.validate_action(js(&state), js(&action)));
        match response.get("error") {
            Some(error) => {
                assert_eq!(validation, json!({"ok": false, "error": error}), "{name}");
                let (code, message) =
                    error_code(workflow.apply_action(js(&state), js(&action)).unwrap_err());
                assert_eq!(
                    (code.as_str(), message.as_str()),
                    (
                        error["code"].as_str().unwrap(),
                        error["message"].as_str().unwrap()
                    ),
                    "{name}"
                );
            }
            None => {
                assert_eq!(validation, json!({"ok": true}), "{name}");
                let next = rust(workflow.apply_action(js(&state), js(&action)).unwrap());
                match case["expect"].get("context_step") {
                    // The model is called at the step the action led to.
                    Some(context) => assert_eq!(&next["current_step"], context, "{name}"),
                    // An inline edit answers at once: the state is the response's.
                    None => {
                        assert_eq!(next["current_step"], response["next_step"], "{name}");
                        assert_eq!(next["config"], response["updated_config"], "{name}");
                    }
                }
            }
        }
    }
}

#[wasm_bindgen_test]
fn infer_step_vectors_give_the_same_step_in_wasm() {
    let workflow = Workflow::builtin("research_stream").unwrap();
    for case in cases(INFER) {
        let step = workflow
            .infer_step(
                js(&case["config"]),
                js(&case["skipped"]),
                case["confirmed"].as_bool(),
            )
            .unwrap();
        assert_eq!(step, case["expect"].as_str().unwrap(), "{}", case["name"]);
    }
}

#[wasm_bindgen_test]
fn workflow_spec_vectors_load_or_throw_coded_errors_in_wasm() {
    for case in cases(SPECS) {
        let name = case["name"].as_str().unwrap();
        match (Workflow::new(js(&case["spec"])), case["error"].as_object()) {
            (Ok(workflow), None) => {
                assert_eq!(rust(workflow.to_json())["id"], case["spec"]["id"], "{name}")
            }
            (Err(error), Some(expected)) => {
                let (code, message) = error_code(error);
                assert_eq!(code, expected["code"].as_str().unwrap(), "{name}");
                if let Some(want) = expected["message"].as_str() {
                    assert_eq!(message, want, "{name}");
                }
            }
            (Ok(_), Some(_)) => panic!("{name}: expected an error"),
            (Err(error), None) => panic!("{name}: unexpected error {:?}", error_code(error)),
        }
    }
}

#[wasm_bindgen_test]
fn bad_inputs_throw_errors_with_codes() {
    let workflow = Workflow::builtin("research_stream").unwrap();
    assert_eq!(
        error_code(Workflow::builtin("nope").err().unwrap()).0,
        "unknown_workflow"
    );
    assert_eq!(
        error_code(
            workflow
                .infer_step(JsValue::from(42), JsValue::UNDEFINED, None)
                .unwrap_err()
        )
        .0,
        "invalid_input"
    );
    let bad_action = json!({"type": "teleport"});
    let validation =
        rust(workflow.validate_action(js(&json!({"current_step": "purpose"})), js(&bad_action)));
    assert_eq!(validation["ok"], false);
    assert_eq!(validation["error"]["code"], "invalid_input");
    assert_eq!(
        error_code(
            MarkerStream::new(Some(js_strings(&["lower".into()])))
                .err()
                .unwrap()
        )
        .0,
        "invalid_marker_name"
    );
    let not_names = js(&json!(["SCHEMA_PROPOSAL", 7])).unchecked_into();
    assert_eq!(
        error_code(MarkerStream::new(Some(not_names)).err().unwrap()),
        (
            "invalid_input".into(),
            "payload markers: invalid type: floating point `7.0`, expected a string".into()
        )
    );
}

#[wasm_bindgen_test]
fn type_errors_name_what_was_found_and_expected() {
    let workflow = Workflow::builtin("research_stream").unwrap();
    let message = |config: Value| {
        error_code(
            workflow
                .infer_step(js(&config), JsValue::UNDEFINED, None)
                .unwrap_err(),
        )
        .1
    };
    assert_eq!(
        message(json!({"purpose": 1.5})),
        "config: invalid type: floating point `1.5`, expected a string or a list of strings"
    );
    assert_eq!(
        message(json!({"purpose": true})),
        "config: invalid type: boolean `true`, expected a string or a list of strings"
    );
    assert_eq!(
        message(json!({"purpose": ["a", null]})),
        "config: invalid type: null, expected a string"
    );
    let long = "x".repeat(100);
    let spec = json!({"id": "demo", "title": "T", "steps": [{"id": "s", "kind": long}]});
    let error = error_code(Workflow::new(js(&spec)).err().unwrap());
    assert_eq!(error.0, "invalid_spec_json");
    assert!(
        error
            .1
            .starts_with(&format!("workflow spec: unknown variant `{long}`")),
        "{}",
        error.1
    );
    let spec = json!({"id": "demo", "title": "T", "steps": [{"id": "s", "kind": "list", "max_items": 2.5}]});
    assert_eq!(
        error_code(Workflow::new(js(&spec)).err().unwrap()).1,
        "workflow spec: invalid type: floating point `2.5`, expected usize"
    );
}

/// What the entry's `finish` returns (js/stepwise.js): the rest of the parse from
/// `finishRest`, with the display text it kept (trimmed) and the payloads it gave out.
fn finish(stream: &mut MarkerStream, entry: &Entry, display: &str, payloads: &[Value]) -> Value {
    let length = stream.finish_rest() as usize;
    assert_eq!(length, stream.tape().len());
    let mut reader = TapeReader {
        tape: stream.tape(),
        at: 0,
        blob: stream.blob().encode_utf16().collect(),
        chunk: Vec::new(),
        in_chunk: false,
        kept: entry.kept.clone(),
        finishing: true,
    };
    let strings = |reader: &mut TapeReader| {
        json!(
            (0..reader.word())
                .map(|_| reader.string())
                .collect::<Vec<_>>()
        )
    };
    let optional = |reader: &mut TapeReader| match reader.word() {
        1 => json!(reader.string()),
        _ => Value::Null,
    };
    let suggestions = strings(&mut reader);
    let options = strings(&mut reader);
    let extracted: Vec<Value> = (0..reader.word())
        .map(|_| json!({"field": reader.string(), "value": reader.string()}))
        .collect();
    let proposed_message = optional(&mut reader);
    let target_field = optional(&mut reader);
    let suggested_values = reader.marker_value("suggested_values");
    let suggested_actions = reader.marker_value("suggested_actions");
    let diagnostics: Vec<Value> = (0..reader.word())
        .map(
            |_| json!({"code": reader.string(), "message": reader.string(), "line": reader.word()}),
        )
        .collect();
    assert_eq!(reader.at, length, "the whole tape is read");
    json!({
        "message": display.trim(),
        "suggestions": suggestions,
        "options": options,
        "extracted": extracted,
        "proposed_message": proposed_message,
        "target_field": target_field,
        "suggested_values": suggested_values,
        "suggested_actions": suggested_actions,
        "payloads": payloads,
        "diagnostics": diagnostics,
    })
}

/// What the entry keeps between chunks (js/stepwise.js): the chunks kept while a JSON body
/// streams (`window`), and the text since an undecided line start (`pending`).
#[derive(Default)]
struct Entry {
    window: Vec<String>,
    pending: String,
    /// The kept strings of the markers given out (`finish` refers to them).
    kept: Vec<String>,
}

/// What the package's JS `feed` returns for a chunk (js/stepwise.js), built as the entry
/// builds it from `feedInput` and the tape: text cut from the chunk (and the pending text), the
/// rest from the values, payload data from the window.
fn feed(stream: &mut MarkerStream, entry: &mut Entry, chunk: &str) -> Value {
    let code = stream.feed_str_copied(chunk);
    if code & WINDOW_ADD != 0 {
        entry.window.push(chunk.to_owned());
    }
    let events = match code & 3 {
        NO_EVENTS => json!([]),
        CHUNK_AS_TEXT => json!([{"type": "text", "text": chunk}]),
        EVENTS_READY => read_tape(stream, &mut *entry, chunk, code),
        other => panic!("unknown feedInput code {other}"),
    };
    if code & WINDOW_OPEN == 0 {
        entry.window.clear();
    }
    if code & HOLDING != 0 {
        entry.pending.push_str(chunk);
    } else {
        entry.pending.clear();
    }
    events
}

fn read_tape(stream: &MarkerStream, entry: &mut Entry, chunk: &str, code: u32) -> Value {
    let units: Vec<u16> = chunk.encode_utf16().collect();
    let pending: Vec<u16> = entry.pending.encode_utf16().collect();
    let blob: Vec<u16> = if code & BLOB_READY != 0 {
        stream.blob().encode_utf16().collect()
    } else {
        Vec::new()
    };
    let tape = stream.tape();
    let mut reader = TapeReader {
        tape,
        at: 0,
        blob,
        chunk: units.clone(),
        in_chunk: false,
        kept: std::mem::take(&mut entry.kept),
        finishing: false,
    };
    let mut events = Vec::new();
    while reader.at < tape.len() {
        match reader.word() {
            TEXT => {
                let (start, end) = (reader.word() as usize, reader.word() as usize);
                let text = String::from_utf16(&units[start..end]).unwrap();
                events.push(json!({"type": "text", "text": text}));
            }
            PIECES => {
                let mut text = String::new();
                for _ in 0..reader.word() {
                    match reader.word() {
                        SPAN => {
                            let (start, end) = (reader.word() as usize, reader.word() as usize);
                            text += &String::from_utf16(&units[start..end]).unwrap();
                        }
                        EARLIER => {
                            let units = &pending[pending.len() - reader.word() as usize..];
                            text += &String::from_utf16(units).unwrap();
                        }
                        other => panic!("unknown piece word {other}"),
                    }
                }
                events.push(json!({"type": "text", "text": text}));
            }
            MARKER => {
                let number = reader.word();
                reader.in_chunk = number & IN_CHUNK != 0;
                let kind = KINDS[(number & !IN_CHUNK) as usize];
                let value = reader.marker_value(kind);
                events.push(json!({"type": "marker", "kind": kind, "value": value}));
            }
            DIAGNOSTIC => {
                let (code, message) = (reader.string(), reader.string());
                events.push(json!({"type": "diagnostic", "code": code, "message": message, "line": reader.word()}));
            }
            other => panic!("unknown tape word {other}"),
        }
    }
    entry.kept = reader.kept;
    if code & SPANS_READY != 0 {
        let window: Vec<u16> = entry.window.concat().encode_utf16().collect();
        for span in stream.spans().chunks(3) {
            let body = String::from_utf16(&window[span[1] as usize..span[2] as usize]).unwrap();
            events[span[0] as usize]["value"]["data"] = serde_json::from_str(&body).unwrap();
        }
    }
    Value::Array(events)
}

/// Reads the tape as the entry does (js/stepwise.js).
struct TapeReader<'a> {
    tape: &'a [u32],
    at: usize,
    blob: Vec<u16>,
    /// The chunk, where a marker's kept strings are when `in_chunk`.
    chunk: Vec<u16>,
    in_chunk: bool,
    /// The kept strings read so far (`finish`'s `REF` strings).
    kept: Vec<String>,
    /// Reading `finishRest`'s tape, whose strings are references or ranges of the blob.
    finishing: bool,
}

impl TapeReader<'_> {
    fn word(&mut self) -> u32 {
        self.at += 1;
        self.tape[self.at - 1]
    }

    fn string(&mut self) -> String {
        let (start, end) = (self.word(), self.word());
        if start == REF {
            return self.kept[end as usize].clone();
        }
        String::from_utf16(&self.blob[start as usize..end as usize]).unwrap()
    }

    /// A marker's kept string: from the chunk or the blob, and kept.
    fn kept(&mut self) -> String {
        if self.finishing {
            return self.string();
        }
        let (start, end) = (self.word() as usize, self.word() as usize);
        let source = if self.in_chunk {
            &self.chunk
        } else {
            &self.blob
        };
        let text = String::from_utf16(&source[start..end]).unwrap();
        self.kept.push(text.clone());
        text
    }

    fn marker_value(&mut self, kind: &str) -> Value {
        match kind {
            "suggestions" | "options" => (0..self.word()).map(|_| json!(self.kept())).collect(),
            "extracted_data" => json!({"field": self.kept(), "value": self.kept()}),
            "suggested_values" => (0..self.word())
                .map(|_| json!({"label": self.kept(), "value": self.kept()}))
                .collect(),
            "suggested_actions" => (0..self.word())
                .map(|_| {
                    let (label, action) = (self.kept(), self.kept());
                    let handler = if self.word() == 1 { "server" } else { "client" };
                    let mut action = json!({"label": label, "action": action, "handler": handler});
                    if self.word() == 1 {
                        action["target"] = json!(self.kept());
                    }
                    action
                })
                .collect(),
            "payload" => {
                let kind = self.string();
                let data = match self.word() {
                    1 => serde_json::from_str(&self.string()).unwrap(),
                    _ => Value::Null,
                };
                json!({"type": kind, "data": data})
            }
            _ => json!(self.kept()),
        }
    }
}

fn js_strings(names: &[String]) -> js_sys::Array {
    names.iter().map(|name| JsValue::from_str(name)).collect()
}

const REGISTRY: &str = include_str!("../../../../tests/vectors/assistant_registry.json");

#[wasm_bindgen_test]
fn registry_resolution_vectors_resolve_in_wasm_as_natively() {
    let file: Value = serde_json::from_str(REGISTRY).unwrap();
    for case in file["resolution"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let answer = stepwise_wasm::resolve_chat(
            js(&file["registry"]),
            case["page"].as_str().unwrap(),
            case["tab"].as_str().map(str::to_owned),
            case["subtab"].as_str().map(str::to_owned),
        )
        .unwrap();
        let answer = rust(answer);
        let payload_names: Vec<Value> = answer["payloads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].clone())
            .collect();
        let got = json!({
            "payloads": payload_names,
            "tools": answer["tools"],
            "client_actions": answer["client_actions"],
            "markers": answer["markers"],
        });
        assert_eq!(got, case["expect"], "{name}");
        assert_eq!(answer["server_actions"], json!(["do_it"]), "{name}");
    }
}

#[wasm_bindgen_test]
fn a_registry_of_the_wrong_shape_is_refused_with_a_code() {
    let refused = |registry: JsValue| {
        error_code(stepwise_wasm::resolve_chat(registry, "home", None, None).unwrap_err())
    };
    let (code, message) = refused(js(&json!({"pages": [{"page": 7}]})));
    assert_eq!(code, "invalid_input", "{message}");
    assert!(message.starts_with("registry: "), "{message}");
    assert_eq!(refused(JsValue::from_str("{}")).0, "invalid_input");
}
