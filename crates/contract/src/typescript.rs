//! TypeScript declarations from JSON Schemas: one `export type` or `export interface` a schema,
//! with the Rust doc comments (the schemas' descriptions) as TSDoc. Only the forms schemars
//! writes for serde types are read: objects with properties, maps, arrays, nullable types,
//! string enums and consts, unions (`oneOf`, `anyOf`), intersections (`allOf`) and `$ref`s.

use serde_json::{Map, Value};

/// The declarations of `schemas` (name → schema), in name order.
pub fn declarations(schemas: &Map<String, Value>) -> String {
    let mut names: Vec<&String> = schemas.keys().collect();
    names.sort();
    let mut out = String::new();
    for name in names {
        let schema = &schemas[name];
        doc(&mut out, schema.get("description"), "");
        if let Some(body) = interface_body(schema, "") {
            out.push_str(&format!("export interface {name} {body}\n"));
        } else {
            out.push_str(&format!("export type {name} = {};\n", type_of(schema, "")));
        }
    }
    out
}

/// `{ ... }` for a plain object schema (properties only), else `None`.
fn interface_body(schema: &Value, indent: &str) -> Option<String> {
    let object = schema.as_object()?;
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    let properties = object.get("properties")?.as_object()?;
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let inner = format!("{indent}  ");
    let mut body = String::from("{\n");
    for (key, property) in properties {
        doc(&mut body, property.get("description"), &inner);
        let optional = if required.contains(&key.as_str()) {
            ""
        } else {
            "?"
        };
        body.push_str(&format!(
            "{inner}{}{optional}: {};\n",
            property_name(key),
            type_of(property, &inner)
        ));
    }
    if object.get("additionalProperties") == Some(&Value::Bool(true)) {
        body.push_str(&format!("{inner}[key: string]: unknown;\n"));
    } else if let Some(extra) = object.get("additionalProperties").filter(|v| v.is_object()) {
        body.push_str(&format!(
            "{inner}[key: string]: {};\n",
            type_of(extra, &inner)
        ));
    }
    body.push_str(indent);
    body.push('}');
    Some(body)
}

/// The TypeScript type of a schema.
fn type_of(schema: &Value, indent: &str) -> String {
    let Some(object) = schema.as_object() else {
        return "unknown".into();
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or(reference).to_owned();
        // A reference with properties beside it (an internally tagged variant): both hold.
        return match object.contains_key("properties") {
            true => format!(
                "({}) & {name}",
                own_type(object, indent).unwrap_or_default()
            ),
            false => name,
        };
    }
    if let Some(constant) = object.get("const") {
        return constant.to_string();
    }
    if let Some(values) = object.get("enum").and_then(Value::as_array) {
        return union(values.iter().map(Value::to_string).collect());
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(variants) = object.get(key).and_then(Value::as_array) {
            let mut types: Vec<String> = variants.iter().map(|v| type_of(v, indent)).collect();
            if let Some(own) = own_type(object, indent) {
                types = types
                    .into_iter()
                    .map(|t| format!("({own}) & ({t})"))
                    .collect();
            }
            return union(types);
        }
    }
    if let Some(parts) = object.get("allOf").and_then(Value::as_array) {
        let mut types: Vec<String> = parts.iter().map(|p| type_of(p, indent)).collect();
        types.extend(own_type(object, indent));
        return types.join(" & ");
    }
    own_type(object, indent).unwrap_or_else(|| "unknown".into())
}

/// The type a schema states itself (`type` with its properties or items), if it states one.
fn own_type(object: &Map<String, Value>, indent: &str) -> Option<String> {
    let kinds: Vec<&str> = match object.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    let types = kinds
        .iter()
        .map(|kind| match *kind {
            "string" => "string".to_owned(),
            "integer" | "number" => "number".to_owned(),
            "boolean" => "boolean".to_owned(),
            "null" => "null".to_owned(),
            "array" => {
                let item = object
                    .get("items")
                    .map_or("unknown".into(), |items| type_of(items, indent));
                if item.contains(' ') {
                    format!("({item})[]")
                } else {
                    format!("{item}[]")
                }
            }
            "object" => {
                let schema = Value::Object(object.clone());
                if let Some(body) = interface_body(&schema, indent) {
                    return body;
                }
                match object.get("additionalProperties") {
                    Some(extra) if extra.is_object() => {
                        format!("Record<string, {}>", type_of(extra, indent))
                    }
                    _ => "Record<string, unknown>".to_owned(),
                }
            }
            _ => "unknown".to_owned(),
        })
        .collect();
    Some(union(types))
}

fn union(types: Vec<String>) -> String {
    let mut unique: Vec<String> = Vec::new();
    for t in types {
        if !unique.contains(&t) {
            unique.push(t);
        }
    }
    unique.join(" | ")
}

/// A property name as TypeScript writes it (quoted unless it is an identifier).
fn property_name(key: &str) -> String {
    let identifier = key.chars().enumerate().all(|(i, c)| {
        c == '_' || c == '$' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())
    });
    if identifier && !key.is_empty() {
        key.to_owned()
    } else {
        format!("{key:?}")
    }
}

/// A TSDoc comment from a description.
fn doc(out: &mut String, description: Option<&Value>, indent: &str) {
    let Some(text) = description.and_then(Value::as_str) else {
        return;
    };
    let text = text.replace("*/", "*\\/");
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() == 1 {
        out.push_str(&format!("{indent}/** {} */\n", lines[0]));
        return;
    }
    out.push_str(&format!("{indent}/**\n"));
    for line in lines {
        if line.is_empty() {
            out.push_str(&format!("{indent} *\n"));
        } else {
            out.push_str(&format!("{indent} * {line}\n"));
        }
    }
    out.push_str(&format!("{indent} */\n"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(schema: Value) -> String {
        let mut schemas = Map::new();
        schemas.insert("T".into(), schema);
        declarations(&schemas)
    }

    #[test]
    fn objects_become_interfaces_with_optional_fields_and_docs() {
        let text = one(json!({"type": "object", "description": "A thing.",
            "properties": {"a": {"type": "string", "description": "The a."}, "b": {"type": ["integer", "null"]}},
            "required": ["a"]}));
        assert_eq!(
            text,
            "/** A thing. */\nexport interface T {\n  /** The a. */\n  a: string;\n  b?: number | null;\n}\n"
        );
    }

    #[test]
    fn tagged_unions_maps_arrays_and_references() {
        let text = one(json!({"oneOf": [
            {"type": "object", "properties": {"type": {"type": "string", "const": "x"},
                "items": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}}},
             "required": ["type", "items"]},
            {"type": "object", "properties": {"type": {"type": "string", "enum": ["y"]},
                "map": {"type": "object", "additionalProperties": {"type": "boolean"}}},
             "required": ["type"]}]}));
        assert_eq!(
            text,
            "export type T = {\n  items: Item[];\n  type: \"x\";\n} | {\n  map?: Record<string, boolean>;\n  type: \"y\";\n};\n"
        );
    }

    #[test]
    fn a_reference_with_a_tag_beside_it_is_an_intersection() {
        let text = one(json!({"oneOf": [{"$ref": "#/components/schemas/Marker",
            "properties": {"type": {"const": "marker", "type": "string"}}, "required": ["type"], "type": "object"}]}));
        assert_eq!(
            text,
            "export type T = ({\n  type: \"marker\";\n}) & Marker;\n"
        );
    }

    #[test]
    fn a_schema_with_nothing_to_say_is_unknown() {
        assert_eq!(
            one(json!({"description": "Any JSON value."})),
            "/** Any JSON value. */\nexport type T = unknown;\n"
        );
    }
}
