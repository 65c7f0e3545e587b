//! A hand-written `Schema` input, so the pipeline can be tested without the macros.
#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tool_core::Schema;
use tool_core::json::Json;
use tool_core::schema::SchemaGen;
use tool_core::violation::{ParseCx, Rule};

/// `{"id": string}`, required, no other member.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub id: String,
}

/// How many times `CountedQuery`'s schema was rendered.
pub static QUERY_RENDERS: AtomicUsize = AtomicUsize::new(0);

/// A `Query` that counts how often its schema is rendered.
pub struct CountedQuery(pub Query);

impl Schema for CountedQuery {
    fn schema(g: &mut SchemaGen) -> Value {
        QUERY_RENDERS.fetch_add(1, Ordering::SeqCst);
        Query::schema(g)
    }

    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
        Query::parse(value, cx).map(Self)
    }

    fn to_json(&self) -> Value {
        self.0.to_json()
    }
}

impl Schema for Query {
    fn schema(_: &mut SchemaGen) -> Value {
        json!({
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": false
        })
    }

    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
        let Json::Object(members) = value else {
            cx.wrong_type("an object", &value);
            return None;
        };
        let mut id = None;
        for (key, v) in members {
            cx.enter_key(&key);
            if key == "id" {
                id = String::parse(v, cx);
            } else {
                cx.violate(Rule::AdditionalProperties, "is not a property");
            }
            cx.leave();
        }
        if id.is_none() && cx.is_clean() {
            cx.violate_at("id", Rule::Required, "is required");
        }
        Some(Self { id: id? }).filter(|_| cx.is_clean())
    }

    fn to_json(&self) -> Value {
        json!({"id": self.id})
    }
}

/// An input whose parser panics.
pub struct Exploding;

impl Schema for Exploding {
    fn schema(_: &mut SchemaGen) -> Value {
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    }

    fn parse(_: Json, _: &mut ParseCx) -> Option<Self> {
        panic!("parser exploded")
    }

    fn to_json(&self) -> Value {
        json!({})
    }
}

pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(f)
}
