//! A JSON Schema subset for tool inputs and payloads: `type` (one name or a list), `properties`,
//! `required`, `additionalProperties: false`, `items`, `enum`, `minLength`/`maxLength`,
//! `minimum`/`maximum`, `minItems`/`maxItems`. Other keywords (`description`, `default`...)
//! are annotations and are ignored. A value either passes or gets the first violation, with
//! the path where it was found.

use serde_json::{Map, Value};

/// Deepest nesting the checker follows; deeper values are refused.
const MAX_SCHEMA_DEPTH: usize = 32;

/// Why a value does not match its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// Where: `$` for the value itself, then `.field` and `[index]` steps.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Checks `value` against `schema`.
///
/// ```
/// use serde_json::json;
/// use stepwise_core::json::check_schema;
/// let schema = json!({"type": "object", "properties": {"query": {"type": "string", "minLength": 1}}, "required": ["query"]});
/// assert!(check_schema(&json!({"query": "EGFR"}), &schema).is_ok());
/// let why = check_schema(&json!({"query": ""}), &schema).unwrap_err();
/// assert_eq!(why.to_string(), "$.query: shorter than 1 characters");
/// ```
pub fn check_schema(value: &Value, schema: &Value) -> Result<(), SchemaViolation> {
    let mut path = String::from("$");
    check(value, schema, &mut path, 0).map_err(|message| SchemaViolation { path, message })
}

/// Whether `schema` uses only what [`check_schema`] understands, with well-formed values; the
/// first problem otherwise (registries check their schemas when they load).
pub fn check_schema_form(schema: &Value) -> Result<(), String> {
    form(schema, 0)
}

fn check(value: &Value, schema: &Value, path: &mut String, depth: usize) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        return Ok(()); // `true` or an empty schema: anything goes
    };
    if depth > MAX_SCHEMA_DEPTH {
        return Err("nested too deeply".into());
    }
    if let Some(expected) = schema.get("type") {
        let names: Vec<&str> = match expected {
            Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
            other => other.as_str().into_iter().collect(),
        };
        if !names.iter().any(|name| is_type(value, name)) {
            return Err(format!(
                "expected {}, found {}",
                names.join(" or "),
                type_of(value)
            ));
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        return Err("not one of the allowed values".into());
    }
    match value {
        Value::String(text) => {
            let length = text.chars().count() as u64;
            if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
                && length < min
            {
                return Err(format!("shorter than {min} characters"));
            }
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
                && length > max
            {
                return Err(format!("longer than {max} characters"));
            }
        }
        Value::Number(number) => {
            // Bounds are shown as the schema writes them.
            let number = number.as_f64().unwrap_or(0.0);
            if let Some(min) = schema.get("minimum")
                && min.as_f64().is_some_and(|min| number < min)
            {
                return Err(format!("less than {min}"));
            }
            if let Some(max) = schema.get("maximum")
                && max.as_f64().is_some_and(|max| number > max)
            {
                return Err(format!("more than {max}"));
            }
        }
        Value::Array(items) => {
            let count = items.len() as u64;
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && count < min
            {
                return Err(format!("fewer than {min} items"));
            }
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && count > max
            {
                return Err(format!("more than {max} items"));
            }
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{index}]"));
                    check(item, item_schema, path, depth + 1)?;
                    path.truncate(len);
                }
            }
        }
        Value::Object(fields) => check_object(fields, schema, path, depth)?,
        Value::Null | Value::Bool(_) => {}
    }
    Ok(())
}

fn check_object(
    fields: &Map<String, Value>,
    schema: &Map<String, Value>,
    path: &mut String,
    depth: usize,
) -> Result<(), String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !fields.contains_key(name) {
            return Err(format!("`{name}` is required"));
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, field) in fields {
        let len = path.len();
        path.push('.');
        path.push_str(name);
        match properties.and_then(|p| p.get(name)) {
            Some(field_schema) => check(field, field_schema, path, depth + 1)?,
            None if closed => {
                path.truncate(len);
                return Err(format!("unknown field `{name:.64}`"));
            }
            None => {}
        }
        path.truncate(len);
    }
    Ok(())
}

fn is_type(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => value.as_i64().is_some() || value.as_u64().is_some(),
        _ => false,
    }
}

fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

const TYPES: [&str; 7] = [
    "object", "array", "string", "boolean", "null", "number", "integer",
];

fn form(schema: &Value, depth: usize) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        return match schema {
            Value::Bool(true) => Ok(()),
            _ => Err("a schema must be an object".into()),
        };
    };
    if depth > MAX_SCHEMA_DEPTH {
        return Err("the schema is nested too deeply".into());
    }
    for (keyword, value) in schema {
        let fine = match keyword.as_str() {
            "type" => match value {
                Value::String(name) => TYPES.contains(&name.as_str()),
                Value::Array(names) => names
                    .iter()
                    .all(|n| n.as_str().is_some_and(|n| TYPES.contains(&n))),
                _ => false,
            },
            "properties" => match value.as_object() {
                Some(properties) => {
                    for property in properties.values() {
                        form(property, depth + 1)?;
                    }
                    true
                }
                None => false,
            },
            "items" => {
                form(value, depth + 1)?;
                true
            }
            "required" => value
                .as_array()
                .is_some_and(|names| names.iter().all(Value::is_string)),
            "enum" => value.is_array(),
            "additionalProperties" => value.is_boolean(),
            "minLength" | "maxLength" | "minItems" | "maxItems" => value.is_u64(),
            "minimum" | "maximum" => value.is_number(),
            "description" | "title" | "default" | "examples" | "format" => true,
            other => return Err(format!("unsupported schema keyword `{other:.64}`")),
        };
        if !fine {
            return Err(format!("schema keyword `{keyword}` has an invalid value"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn violation(value: Value, schema: Value) -> String {
        check_schema(&value, &schema).unwrap_err().to_string()
    }

    #[test]
    fn types_lists_and_integers_are_told_apart() {
        let schema = json!({"type": ["integer", "null"]});
        assert!(check_schema(&json!(3), &schema).is_ok());
        assert!(check_schema(&Value::Null, &schema).is_ok());
        assert_eq!(
            violation(json!(2.5), schema),
            "$: expected integer or null, found number"
        );
    }

    #[test]
    fn nested_paths_point_at_the_violation() {
        let schema = json!({"type": "object", "properties": {"edits": {"type": "array", "maxItems": 3,
            "items": {"type": "object", "required": ["field"], "additionalProperties": false,
                "properties": {"field": {"type": "string"}, "value": {}}}}}});
        assert!(check_schema(&json!({"edits": [{"field": "a", "value": [1]}]}), &schema).is_ok());
        assert_eq!(
            violation(
                json!({"edits": [{"field": "a"}, {"value": 1}]}),
                schema.clone()
            ),
            "$.edits[1]: `field` is required"
        );
        assert_eq!(
            violation(json!({"edits": [{"field": "a", "x": 1}]}), schema.clone()),
            "$.edits[0]: unknown field `x`"
        );
        assert_eq!(
            violation(json!({"edits": [{"field": 1}]}), schema.clone()),
            "$.edits[0].field: expected string, found integer"
        );
        assert_eq!(
            violation(
                json!({"edits": [{"field": "a"}, {"field": "b"}, {"field": "c"}, {"field": "d"}]}),
                schema
            ),
            "$.edits: more than 3 items"
        );
    }

    #[test]
    fn bounds_and_enums_are_checked() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 50},
            "sort": {"enum": ["relevance", "date"]},
            "q": {"type": "string", "maxLength": 3}}});
        assert_eq!(
            violation(json!({"n": 0}), schema.clone()),
            "$.n: less than 1"
        );
        assert_eq!(
            violation(json!({"n": 51}), schema.clone()),
            "$.n: more than 50"
        );
        assert_eq!(
            violation(json!({"sort": "x"}), schema.clone()),
            "$.sort: not one of the allowed values"
        );
        assert_eq!(
            violation(json!({"q": "abcd"}), schema.clone()),
            "$.q: longer than 3 characters"
        );
        // Lengths count characters, not bytes.
        assert!(check_schema(&json!({"q": "äöü"}), &schema).is_ok());
    }

    #[test]
    fn schema_forms_are_checked_when_registries_load() {
        assert!(
            check_schema_form(&json!({"type": "object", "properties": {"a": {"type": "string", "description": "x"}}, "required": ["a"]}))
                .is_ok()
        );
        assert_eq!(
            check_schema_form(&json!({"type": "object", "patternProperties": {}})).unwrap_err(),
            "unsupported schema keyword `patternProperties`"
        );
        assert_eq!(
            check_schema_form(&json!({"type": "text"})).unwrap_err(),
            "schema keyword `type` has an invalid value"
        );
        assert!(check_schema_form(&json!({"properties": {"a": 3}})).is_err());
        assert!(check_schema_form(&json!("string")).is_err());
    }

    #[test]
    fn deep_values_are_refused_not_overflowed() {
        let mut schema = json!({"type": "array"});
        let mut value = json!([]);
        for _ in 0..40 {
            schema = json!({"type": "array", "items": schema});
            value = json!([value]);
        }
        assert!(
            check_schema(&value, &schema)
                .unwrap_err()
                .message
                .contains("nested too deeply")
        );
    }
}
