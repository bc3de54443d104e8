//! JSON Schemas of the wire types whose serde code is written by hand (the others derive theirs
//! beside their serde derives), for stepwise-contract; built only with the `schema` feature.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::json;

use crate::json::JsonText;
use crate::registry::{ChatContext, MAX_ITEM_SUMMARIES};
use crate::workflow::{Config, FieldValue};

impl JsonSchema for Config {
    fn schema_name() -> Cow<'static, str> {
        "Config".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Collected fields by field name.",
            "type": "object",
            "additionalProperties": generator.subschema_for::<FieldValue>(),
        })
    }
}

impl JsonSchema for JsonText {
    fn schema_name() -> Cow<'static, str> {
        "JsonText".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"description": "Any JSON value."})
    }
}

impl JsonSchema for ChatContext {
    fn schema_name() -> Cow<'static, str> {
        "ChatContext".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let name = json!({"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"});
        let object = json!({"type": "object"});
        json_schema!({
            "description": "What a page shows, sent with each assistant message (chat-architecture.md §1): where the user is and what is on the screen, data items as summaries only (at most 200). Pages may add keys of their own; the whole context is at most 48 KiB of JSON.",
            "type": "object",
            "required": ["current_page"],
            "properties": {
                "current_page": name,
                "active_tab": name,
                "active_subtab": name,
                "stream_id": {"type": "string", "description": "The saved stream in view."},
                "report_id": {"type": "string", "description": "The research job in view."},
                "search_form": object,
                "pagination": object,
                "sort": object,
                "results": object,
                "viewer": {"type": ["object", "null"]},
                "selection": {"type": "array", "items": {"type": "string"}},
                "item_summaries": {"type": "array", "items": object, "maxItems": MAX_ITEM_SUMMARIES},
            },
            "additionalProperties": true,
        })
    }
}
