//! Inputs whose schema schemars writes (C3): [`Parameters`], for a type that derives
//! `schemars::JsonSchema` and `serde::Deserialize`, as rmcp's tools take it.
//!
//! The schema schemars writes (draft 2020-12) is published with its `$ref`s inlined (a
//! recursive type keeps its own in `$defs`, as a derived type does), every object that declares
//! properties closed (S4), optional properties admitting `null` (T3), and integer formats
//! given their range. A keyword the parser cannot enforce is a declaration error naming it.
//! The arguments are checked against that schema with the violations a derived type gives
//! (S2–S4), and only then deserialized by serde.

mod check;
mod compile;
mod publish;

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use serde::de::DeserializeOwned;
use serde_json::Value;

use check::Checker;
pub use check::{CheckError, MAX_DEPTH};
use compile::Nodes;

use super::{Schema, SchemaError, SchemaGen};
use crate::json::{Json, decode};
use crate::preview::preview;
use crate::violation::{ParseCx, Rule};

/// The longest piece of serde's message a violation quotes when a type's `Deserialize`
/// refuses arguments the schema admits (S3).
const DESERIALIZE_MESSAGE_CHARS: usize = 64;

/// A tool input whose schema comes from `schemars::JsonSchema` and whose value from
/// `serde::Deserialize`: what rmcp's `Parameters<T>` wraps, taken the same way (C3).
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use tool_core::schema::Parameters;
/// use tool_core::{Context, Tool};
///
/// /// Two numbers to add.
/// #[derive(Deserialize, JsonSchema)]
/// struct Sum {
///     a: i32,
///     b: i32,
/// }
///
/// let sum = Tool::builder("sum", "Adds two numbers.")
///     .handler(|_ctx: Context, Parameters(Sum { a, b }): Parameters<Sum>| async move {
///         Ok::<_, std::convert::Infallible>(i64::from(a) + i64::from(b))
///     })
///     .build();
/// assert!(sum.declaration_error().is_none());
/// assert_eq!(sum.schema()["required"], serde_json::json!(["a", "b"]));
/// ```
///
/// `Parameters` is a whole input, not a field of a derived type. Its [`Schema::to_json`] is
/// `null` (`T` need not implement `Serialize`): a paused call and a hook see the validated
/// arguments as they were sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Parameters<T>(pub T);

/// A schemars input made ready once: what is published and what the parser walks.
#[derive(Debug)]
struct Compiled {
    published: Value,
    nodes: Nodes,
}

/// The compiled schema of `T`, made on first use and kept for the process: one per type, as
/// a derived type's parser is one per type.
fn compiled<T: schemars::JsonSchema + 'static>() -> Arc<Result<Compiled, SchemaError>> {
    type Cache = RwLock<HashMap<TypeId, Arc<Result<Compiled, SchemaError>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Cache::default);
    let key = TypeId::of::<T>();
    if let Some(found) = cache
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return Arc::clone(found);
    }
    let made = Arc::new(compile_type::<T>());
    let mut cache = cache.write().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(cache.entry(key).or_insert(made))
}

fn compile_type<T: schemars::JsonSchema>() -> Result<Compiled, SchemaError> {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let root = generator.into_root_schema_for::<T>().to_value();
    let published = publish::publish(&root)?;
    let nodes = compile::compile(&published)?;
    Ok(Compiled { published, nodes })
}

/// The schema `T`'s input publishes (C3), or why it cannot be a tool's input.
///
/// # Errors
///
/// Returns [`SchemaError::Unsupported`] naming the first keyword the parser cannot enforce.
pub fn schemars_schema<T: schemars::JsonSchema + 'static>() -> Result<Value, SchemaError> {
    match &*compiled::<T>() {
        Ok(compiled) => Ok(compiled.published.clone()),
        Err(error) => Err(error.clone()),
    }
}

impl<T> Schema for Parameters<T>
where
    T: schemars::JsonSchema + DeserializeOwned + 'static,
{
    fn schema(generator: &mut SchemaGen) -> Value {
        match &*compiled::<T>() {
            Ok(compiled) => compiled.published.clone(),
            Err(error) => {
                generator.reject(error.clone());
                Value::Null
            }
        }
    }

    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
        let compiled = compiled::<T>();
        let compiled = match &*compiled {
            Ok(compiled) => compiled,
            Err(error) => {
                cx.fail(Box::new(error.clone()));
                return None;
            }
        };
        let before = cx.error_count();
        let mut checker = Checker::new(&compiled.nodes.nodes);
        checker.check(0, &value, cx, false);
        if cx.error_count() != before {
            return None;
        }
        let value = checker.value_of(0, &value);
        match serde_json::from_value::<T>(value) {
            Ok(input) => Some(Parameters(input)),
            Err(error) => {
                // The type's own `Deserialize` refused what the schema admits (a custom
                // implementation, a string that is no IP address): its word, cut short (S3).
                cx.violate(
                    Rule::Custom,
                    format!(
                        "does not fit the input type: {}",
                        preview(&error.to_string(), DESERIALIZE_MESSAGE_CHARS)
                    ),
                );
                None
            }
        }
    }

    fn to_json(&self) -> Value {
        Value::Null
    }

    fn arguments_json(&self, args: &[u8]) -> Value {
        let Ok(value) = decode(args) else {
            return Value::Null;
        };
        match &*compiled::<T>() {
            Ok(compiled) => Checker::new(&compiled.nodes.nodes).value_of(0, &value),
            Err(_) => value.into_value(),
        }
    }
}
