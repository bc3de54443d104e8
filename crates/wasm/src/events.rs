//! The parse that `finish` returns, written as JSON text for one `JSON.parse` in the JS entry.
//!
//! Once per stream, so the plainest way across: the fields the entry does not keep itself (it
//! keeps the display text and the payloads), and only those that are not empty. The objects
//! have exactly the shape `Parsed` declares; the shared vectors check them against the core's
//! serde output. A chunk's events come by the tape instead (`tape.rs`).

use stepwise_core::markers::{Diagnostic, ExtractedField, Parsed, SuggestedAction, SuggestedValue};

/// JSON text being written (a reused buffer).
#[derive(Debug, Default)]
pub(crate) struct JsonOut(pub(crate) String);

impl JsonOut {
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// A JSON string.
    pub(crate) fn string(&mut self, text: &str) {
        let out = &mut self.0;
        out.push('"');
        let mut plain = 0;
        for (at, &b) in text.as_bytes().iter().enumerate() {
            let escape = match b {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0..=0x1f => "",
                _ => continue,
            };
            out.push_str(&text[plain..at]);
            if escape.is_empty() {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(HEX[usize::from(b >> 4)] as char);
                out.push(HEX[usize::from(b & 15)] as char);
            } else {
                out.push_str(escape);
            }
            plain = at + 1;
        }
        out.push_str(&text[plain..]);
        out.push('"');
    }

    fn key(&mut self, key: &str) {
        self.0.push('"');
        self.0.push_str(key);
        self.0.push_str("\":");
    }

    /// `"key":"value"` (`key` needs no escaping).
    fn field(&mut self, key: &str, value: &str) {
        self.key(key);
        self.string(value);
    }

    fn array<T>(&mut self, items: &[T], mut write: impl FnMut(&mut Self, &T)) {
        self.0.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.0.push(',');
            }
            write(self, item);
        }
        self.0.push(']');
    }

    fn strings(&mut self, items: &[String]) {
        self.array(items, |out, item| out.string(item));
    }

    fn optional(&mut self, value: Option<&str>) {
        match value {
            Some(value) => self.string(value),
            None => self.0.push_str("null"),
        }
    }

    fn diagnostic_fields(&mut self, d: &Diagnostic) {
        self.field("code", d.code.as_str());
        self.0.push(',');
        self.field("message", &d.message);
        self.0.push_str(",\"line\":");
        self.0.push_str(&d.line.to_string());
    }

    fn extracted_field(&mut self, f: &ExtractedField) {
        self.0.push('{');
        self.field("field", &f.field);
        self.0.push(',');
        self.field("value", &f.value);
        self.0.push('}');
    }

    fn suggested_value(&mut self, v: &SuggestedValue) {
        self.0.push('{');
        self.field("label", &v.label);
        self.0.push(',');
        self.field("value", &v.value);
        self.0.push('}');
    }

    fn suggested_action(&mut self, a: &SuggestedAction) {
        self.0.push('{');
        self.field("label", &a.label);
        self.0.push(',');
        self.field("action", &a.action);
        self.0.push(',');
        self.field("handler", a.handler.as_str());
        if let Some(target) = &a.target {
            self.0.push(',');
            self.field("target", target);
        }
        self.0.push('}');
    }

    /// What the JS entry's `finish` does not keep itself: the parse without the message and
    /// the payloads (it built the display text and gave out the payloads), and only the
    /// fields that are not empty (it fills in the rest); nothing at all when every one is.
    pub(crate) fn parsed(&mut self, parse: &Parsed) {
        let mut fields = Fields {
            out: self,
            written: false,
        };
        if let Some(out) = fields.next("suggestions", parse.suggestions.is_empty()) {
            out.strings(&parse.suggestions);
        }
        if let Some(out) = fields.next("options", parse.options.is_empty()) {
            out.strings(&parse.options);
        }
        if let Some(out) = fields.next("extracted", parse.extracted.is_empty()) {
            out.array(&parse.extracted, Self::extracted_field);
        }
        if let Some(out) = fields.next("proposed_message", parse.proposed_message.is_none()) {
            out.optional(parse.proposed_message.as_deref());
        }
        if let Some(out) = fields.next("target_field", parse.target_field.is_none()) {
            out.optional(parse.target_field.as_deref());
        }
        if let Some(out) = fields.next("suggested_values", parse.suggested_values.is_empty()) {
            out.array(&parse.suggested_values, Self::suggested_value);
        }
        if let Some(out) = fields.next("suggested_actions", parse.suggested_actions.is_empty()) {
            out.array(&parse.suggested_actions, Self::suggested_action);
        }
        if let Some(out) = fields.next("diagnostics", parse.diagnostics.is_empty()) {
            out.array(&parse.diagnostics, |out, d| {
                out.0.push('{');
                out.diagnostic_fields(d);
                out.0.push('}');
            });
        }
        if fields.written {
            fields.out.0.push('}');
        }
    }
}

/// Writes the fields of an object, opening it at the first one.
struct Fields<'a> {
    out: &'a mut JsonOut,
    /// A field was written (the object is open).
    written: bool,
}

impl Fields<'_> {
    /// Writes the key of the next field and returns the writer for its value, unless the
    /// field is `empty`.
    fn next(&mut self, key: &str, empty: bool) -> Option<&mut JsonOut> {
        if empty {
            return None;
        }
        self.out.0.push(if self.written { ',' } else { '{' });
        self.written = true;
        self.out.key(key);
        Some(&mut *self.out)
    }
}
