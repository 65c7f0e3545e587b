//! Property tests: nothing the model sends panics the decoder or the parser (S2, S4), and no
//! text of an error without a `ToolError` ever reaches the model (E2).

mod common;

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::fmt;

use common::{Query, block_on};
use proptest::prelude::*;
use serde_json::Value;
use tool_core::json::{Json, decode};
use tool_core::schema::parse_root;
use tool_core::{BoxError, Context, FAILED, OutcomeKind, Tool, ToolError};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map("(id|[a-z]{0,4}|.{0,6})", inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

type Nested = BTreeMap<String, Vec<Option<i32>>>;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// S2: arbitrary bytes decode to a value or a clear error; never a panic.
    #[test]
    fn s2_arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = decode(&bytes);
    }

    /// S2, S4: any JSON parses into a typed value or gives at least one violation with a
    /// well-formed pointer; never a panic.
    #[test]
    fn s2_arbitrary_json_never_panics_the_parser(value in arb_json()) {
        let bytes = serde_json::to_vec(&value).unwrap_or_default();
        let json = decode(&bytes).unwrap_or(Json::Null);
        fn check<T: tool_core::Schema>(json: Json) -> Result<(), TestCaseError> {
            if let Err(cx) = parse_root::<T>(json) {
                let (violations, _, failure) = cx.finish();
                prop_assert!(!violations.is_empty() || failure.is_some());
                for v in violations {
                    prop_assert!(v.path.is_empty() || v.path.starts_with('/'));
                    prop_assert!(v.message.chars().count() < 400);
                }
            }
            Ok(())
        }
        check::<Query>(json.clone())?;
        check::<Nested>(json.clone())?;
        check::<BTreeMap<String, Value>>(json.clone())?;
        check::<BTreeMap<String, u8>>(json)?;
    }

    /// S2: nesting of any depth is a value or an error, never a stack overflow.
    #[test]
    fn s2_any_depth_is_handled(depth in 0_usize..20_000) {
        let text = format!("{{\"id\":{}\"x\"{}}}", "[".repeat(depth), "]".repeat(depth));
        let tool = Tool::builder("t", "x")
            .handler(|_: Context, q: Query| async move { Ok::<_, std::convert::Infallible>(q.id) })
            .build();
        let out = block_on(tool.invoke(&Context::new(), text.as_bytes()));
        if depth == 0 {
            prop_assert_eq!(out.kind(), OutcomeKind::Success);
        } else {
            prop_assert_eq!(out.kind(), OutcomeKind::InvalidArguments);
        }
    }

    /// E2: whatever a handler's error says, and however deeply it is wrapped, the model reads
    /// `the tool failed` unless a `ToolError` is in the chain; then exactly its text.
    #[test]
    fn e2_no_error_text_leaks(
        // Upper case, so it can never be a piece of the lower-case approved text.
        secret in "[A-Z0-9]{6,40}",
        depth in 0_usize..5,
        approved in prop::option::of("[a-z ]{1,20}"),
    ) {
        let secret_for_tool = secret.clone();
        let approved_for_tool = approved.clone();
        let tool = Tool::builder("t", "x")
            .handler(move |_: Context, _: Query| {
                let secret = secret_for_tool.clone();
                let approved = approved_for_tool.clone();
                async move {
                    let mut error: BoxError = match approved {
                        Some(text) => Box::new(ToolError::new(text)),
                        None => Box::new(std::io::Error::other(format!("root {secret}"))),
                    };
                    for level in 0..depth {
                        error = Box::new(Layer { text: format!("{secret} at {level}"), source: error });
                    }
                    Err::<String, _>(error)
                }
            })
            .build();
        let out = block_on(tool.invoke(&Context::new(), br#"{"id":"a"}"#));
        match approved {
            Some(text) => {
                prop_assert_eq!(out.kind(), OutcomeKind::Rejected);
                prop_assert_eq!(out.text(), text.as_str());
            }
            None => {
                prop_assert_eq!(out.kind(), OutcomeKind::Failed);
                prop_assert_eq!(out.text(), FAILED);
            }
        }
        prop_assert!(!out.text().contains(secret.as_str()));
    }
}

#[derive(Debug)]
struct Layer {
    text: String,
    source: BoxError,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl StdError for Layer {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.source)
    }
}
