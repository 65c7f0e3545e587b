//! Tools whose input schema is known only at run time (a proxy, a config file, a remote MCP
//! server): the schema is a JSON value and an [`ArgumentValidator`] enforces it, so such a tool
//! gives the same guarantees as a typed one, checked at run time (S2, R5).

use std::any::{TypeId, type_name};
use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::context::Context;
use crate::error::BoxError;
use crate::json::{DecodeError, decode};
use crate::schema::SchemaError;
use crate::tool::{
    ErasedHandler, ErasedInput, HandlerFuture, ParsedInput, ToolBuilder, render_rich,
};
use crate::violation::ParseCx;

/// Checks arguments against a schema known only at run time.
///
/// `validate` must record every violation it finds in `cx` (with its JSON pointer, entered
/// with [`ParseCx::enter_key`] / [`ParseCx::enter_index`] or given in the message) and may
/// record an operational failure with [`ParseCx::fail`]. The handler runs only when nothing was
/// recorded.
pub trait ArgumentValidator: Send + Sync + 'static {
    /// Records every way `value` breaks the schema.
    fn validate(&self, value: &Value, cx: &mut ParseCx);
}

impl<F> ArgumentValidator for F
where
    F: Fn(&Value, &mut ParseCx) + Send + Sync + 'static,
{
    fn validate(&self, value: &Value, cx: &mut ParseCx) {
        self(value, cx);
    }
}

impl ToolBuilder {
    /// Sets a handler whose input schema is the JSON value `schema` (an object root), enforced
    /// by `validator` before the handler runs.
    ///
    /// The handler receives the arguments as a `serde_json::Value` that passed the validator.
    ///
    /// ```
    /// use serde_json::{Value, json};
    /// use tool_core::violation::{ParseCx, Rule};
    /// use tool_core::{Context, Tool};
    ///
    /// let schema = json!({
    ///     "type": "object",
    ///     "properties": {"q": {"type": "string"}},
    ///     "required": ["q"],
    ///     "additionalProperties": false
    /// });
    /// let require_q = |v: &Value, cx: &mut ParseCx| {
    ///     if !v.get("q").is_some_and(Value::is_string) {
    ///         cx.violate_at("q", Rule::Required, "is required and must be a string");
    ///     }
    /// };
    /// let search = Tool::builder("search", "Searches the index.")
    ///     .dynamic_handler(schema, require_q, |_ctx: Context, args: Value| async move {
    ///         Ok::<_, std::convert::Infallible>(format!("results for {}", args["q"]))
    ///     })
    ///     .build();
    /// assert!(search.declaration_error().is_none());
    /// ```
    pub fn dynamic_handler<V, F, Fut, T, E>(self, schema: Value, validator: V, f: F) -> Self
    where
        V: ArgumentValidator,
        F: Fn(Context, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        T: Serialize,
        E: Into<BoxError>,
    {
        let checked = check_object_root(schema);
        let handler: Arc<dyn ErasedHandler> = Arc::new(DynamicHandler {
            input: DynamicInput { validator },
            f,
        });
        self.with_handler(handler, checked)
    }

    /// Declares the tool deferred (H5), with the JSON value `schema` (an object root) as its
    /// input schema, enforced by `validator`: a call is validated as any other, then the run
    /// pauses with it pending, to be resumed with its result. An approval predicate of such a
    /// tool's sibling takes `serde_json::Value`.
    pub fn deferred_dynamic<V: ArgumentValidator>(self, schema: Value, validator: V) -> Self {
        let checked = check_object_root(schema);
        self.with_deferred(Arc::new(DynamicInput { validator }), checked)
    }
}

/// Decodes `args` and runs `validator` over them.
fn validated<V: ArgumentValidator>(
    validator: &V,
    args: &[u8],
    cx: &mut ParseCx,
) -> Result<Option<Value>, DecodeError> {
    let value = decode(args)?.into_value();
    validator.validate(&value, cx);
    Ok(cx.is_clean().then_some(value))
}

/// The input parser of a deferred tool whose schema is a JSON value.
struct DynamicInput<V> {
    validator: V,
}

impl<V: ArgumentValidator> ErasedInput for DynamicInput<V> {
    fn parse(&self, args: &[u8], cx: &mut ParseCx) -> Result<Option<ParsedInput>, DecodeError> {
        Ok(validated(&self.validator, args, cx)?.map(|value| Box::new(value) as ParsedInput))
    }

    fn input_type(&self) -> (TypeId, &'static str) {
        (TypeId::of::<Value>(), type_name::<Value>())
    }

    fn to_json(&self, input: &ParsedInput, _args: &[u8]) -> Value {
        input
            .downcast_ref::<Value>()
            .cloned()
            .unwrap_or(Value::Null)
    }
}

fn check_object_root(schema: Value) -> Result<Value, SchemaError> {
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => Ok(schema),
        _ => Err(crate::schema::root_not_object(schema.get("type"))),
    }
}

/// A handler over a JSON value: its input parsed as a [`DynamicInput`]'s.
struct DynamicHandler<V, F> {
    input: DynamicInput<V>,
    f: F,
}

impl<V, F, Fut, T, E> ErasedInput for DynamicHandler<V, F>
where
    V: ArgumentValidator,
    F: Fn(Context, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, E>> + Send + 'static,
    T: Serialize,
    E: Into<BoxError>,
{
    fn parse(&self, args: &[u8], cx: &mut ParseCx) -> Result<Option<ParsedInput>, DecodeError> {
        self.input.parse(args, cx)
    }

    fn input_type(&self) -> (TypeId, &'static str) {
        self.input.input_type()
    }

    fn to_json(&self, input: &ParsedInput, args: &[u8]) -> Value {
        self.input.to_json(input, args)
    }
}

impl<V, F, Fut, T, E> DynamicHandler<V, F>
where
    F: Fn(Context, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, E>> + Send + 'static,
    T: Serialize,
    E: Into<BoxError>,
{
    fn start(&self, ctx: Context, value: Value) -> HandlerFuture {
        let fut = (self.f)(ctx, value);
        Box::pin(async move {
            let output = fut.await.map_err(Into::into)?;
            render_rich(&output)
        })
    }
}

impl<V, F, Fut, T, E> ErasedHandler for DynamicHandler<V, F>
where
    V: ArgumentValidator,
    F: Fn(Context, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, E>> + Send + 'static,
    T: Serialize,
    E: Into<BoxError>,
{
    fn prepare(
        &self,
        ctx: Context,
        args: &[u8],
        cx: &mut ParseCx,
    ) -> Result<Option<HandlerFuture>, DecodeError> {
        Ok(validated(&self.input.validator, args, cx)?.map(|value| self.start(ctx, value)))
    }

    fn run(&self, ctx: Context, input: ParsedInput) -> Option<HandlerFuture> {
        let value = input.downcast::<Value>().ok()?;
        Some(self.start(ctx, *value))
    }
}
