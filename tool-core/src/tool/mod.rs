//! [`Tool`]: a name, a description, an input schema with its parser, a handler and an optional
//! availability policy, bundled, immutable and cheap to clone (D1).

mod catalog;
mod content;
mod declaration;
mod dynamic;
mod gate;
mod invoke;
mod metadata;
mod needs;
mod outcome;
mod registry;
mod scopes;
mod validate;

pub use content::{Image, Rendered, Resource, WithImages, render_rich};
pub use declaration::{DeclarationError, Site};
pub use dynamic::ArgumentValidator;
pub use invoke::{DEFAULT_MAX_ARGUMENT_BYTES, Limits};
pub use metadata::{Annotations, OutputSchema, WRAPPED_OUTPUT_KEY};
pub use outcome::{
    AWAITING_APPROVAL, CANCELLED, DEFERRED, FAILED, Outcome, OutcomeKind, RECORDED_ERROR,
    TIMED_OUT, UNAVAILABLE,
};
pub use registry::{NameIndex, Registration, index_by_name, registered, registry};

use std::any::{Any, TypeId, type_name};
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::context::Context;
use crate::error::BoxError;
use crate::json::DecodeError;
use crate::policy::{AsyncPolicy, AsyncPolicyFn, BoxFuture, Policy, SyncPolicy};
use crate::schema::{Schema, SchemaError, parse_arguments, render_root};
use crate::violation::ParseCx;
use gate::{Gate, GateSpec};
use needs::Need;

/// A tool the model can call.
///
/// Build one with `#[tool]` (which generates a handle implementing [`IntoTool`]) or at run time
/// with [`Tool::builder`]. A tool is immutable, `Send + Sync` and cheap to clone: its schema is
/// rendered and copied once, at construction (D1). A tool declared wrong is still a `Tool`,
/// but an unusable one: [`Tool::declaration_error`] returns the problem and an agent holding it fails to
/// build (D2).
#[derive(Clone)]
pub struct Tool {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    description: String,
    schema: Arc<Value>,
    schema_text: Arc<str>,
    handler: Option<Arc<dyn ErasedHandler>>,
    /// The input parser of a deferred tool, which has no handler here (H5).
    deferred: Option<Arc<dyn ErasedInput>>,
    /// Whether calls need approval (H1).
    gate: Option<Gate>,
    /// Whether a call can pause (`gate` or `deferred` is set): the one branch the calls of
    /// every other tool pay for the feature.
    pauses: bool,
    /// The explicit policy, preceded by the check of the context values the handler takes
    /// (C1) when it takes any.
    policy: Option<Arc<dyn Policy>>,
    /// The context values the handler takes (C1).
    needs: Vec<Need>,
    site: Site,
    error: Option<DeclarationError>,
    annotations: Annotations,
    output: Option<OutputSchema>,
    /// Its own retry budget (L1), where it sets one.
    retries: Option<u32>,
    /// Whether its calls run alone (L4).
    sequential: bool,
    /// The scopes a call needs (Z3).
    scopes: Arc<[String]>,
    /// Its loading on search (Q1) and its examples (Q3).
    catalog: catalog::Catalog,
}

/// Anything that becomes a [`Tool`]: a `Tool`, or the handle `#[tool]` generates.
pub trait IntoTool {
    /// The tool.
    fn into_tool(self) -> Tool;
}

impl IntoTool for Tool {
    fn into_tool(self) -> Tool {
        self
    }
}

impl IntoTool for &Tool {
    fn into_tool(self) -> Tool {
        self.clone()
    }
}

impl Tool {
    /// Starts a tool named `name`, described to the model by `description`.
    ///
    /// Nothing is checked until [`ToolBuilder::build`], which never fails: a tool declared
    /// wrong carries its [`DeclarationError`] (D2).
    ///
    /// ```
    /// use tool_core::{Context, Tool};
    ///
    /// type Args = std::collections::BTreeMap<String, serde_json::Value>;
    ///
    /// let echo = Tool::builder("echo", "Repeats the arguments.")
    ///     .handler(|_ctx: Context, input: Args| async move {
    ///         Ok::<_, std::convert::Infallible>(input)
    ///     })
    ///     .build();
    /// assert!(echo.declaration_error().is_none());
    ///
    /// let bad = Tool::builder("Echo", "Repeats.").build();
    /// assert!(bad.declaration_error().is_some());
    /// ```
    #[track_caller]
    pub fn builder(name: impl Into<String>, description: impl Into<String>) -> ToolBuilder {
        ToolBuilder {
            name: name.into(),
            description: description.into(),
            body: None,
            gate: None,
            policy: None,
            needs: Vec::new(),
            site: Site::caller(),
            annotations: Annotations::default(),
            output: None,
            retries: None,
            sequential: false,
            scopes: Vec::new(),
            catalog: catalog::Catalog::default(),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The description the model reads.
    pub fn description(&self) -> &str {
        &self.inner.description
    }

    /// The input schema (a JSON Schema object; `null` for a tool declared wrong).
    pub fn schema(&self) -> &Value {
        &self.inner.schema
    }

    /// The input schema as JSON text, rendered once at construction.
    pub fn schema_json(&self) -> &str {
        &self.inner.schema_text
    }

    /// The input schema, shared rather than copied: what a holder of many tools keeps (the
    /// schema cannot change behind the tool: nothing can mutate an `Arc<Value>`, D1).
    pub fn schema_shared(&self) -> Arc<Value> {
        Arc::clone(&self.inner.schema)
    }

    /// The input schema's JSON text, shared rather than copied.
    pub fn schema_json_shared(&self) -> Arc<str> {
        Arc::clone(&self.inner.schema_text)
    }

    /// The tool's own retry budget (L1): how many failed calls in a row (invalid arguments,
    /// or a [`ToolError::retry`](crate::ToolError::retry)) a run allows before it ends; `None`
    /// takes the agent's.
    pub fn retries(&self) -> Option<u32> {
        self.inner.retries
    }

    /// Whether a call of this tool runs with no other call of the run in flight (L4).
    pub fn is_sequential(&self) -> bool {
        self.inner.sequential
    }

    /// The hints the tool declares (O4).
    pub fn annotations(&self) -> &Annotations {
        &self.inner.annotations
    }

    /// The schema of what the tool returns, when its result type declares one (O1).
    pub fn output_schema(&self) -> Option<&OutputSchema> {
        self.inner.output.as_ref()
    }

    /// Where the tool was declared.
    pub fn site(&self) -> Site {
        self.inner.site
    }

    /// Whether the tool has an availability policy, or takes context values (C1), which
    /// are checked the same way.
    pub fn has_policy(&self) -> bool {
        self.inner.policy.is_some()
    }

    /// The types of the context values the handler takes (C1), as `std::any::type_name`
    /// spells them, in declaration order. A context that lacks one makes the tool unavailable.
    pub fn required_context(&self) -> impl ExactSizeIterator<Item = &'static str> + '_ {
        self.inner.needs.iter().map(|need| need.name())
    }

    /// Whether some calls of this tool wait for approval before they run (H1): always, or
    /// when its predicate says so.
    pub fn requires_approval(&self) -> bool {
        self.inner.gate.is_some()
    }

    /// Whether this tool is deferred: it has no handler here, and its calls pause the run
    /// until their results are given (H5).
    pub fn is_deferred(&self) -> bool {
        self.inner.deferred.is_some()
    }

    /// Whether a call of this tool can pause a run: it requires approval or is deferred.
    pub fn can_pause(&self) -> bool {
        self.inner.pauses
    }

    /// The declaration problem that makes this tool unusable, if any (D2).
    pub fn declaration_error(&self) -> Option<&DeclarationError> {
        self.inner.error.as_ref()
    }

    /// Previews the availability policy for `ctx` without parsing arguments or running the
    /// handler (A7). A tool without a policy is available (A1). A tool whose handler takes a
    /// context value that `ctx` lacks is not, and its explicit policy is not asked (C1).
    ///
    /// # Errors
    ///
    /// Returns the policy's error, or a [`Panicked`](crate::error::Panicked) for a panicking
    /// policy.
    pub async fn available(&self, ctx: &Context) -> Result<bool, BoxError> {
        match &self.inner.policy {
            None => Ok(true),
            Some(policy) => match crate::panic::CatchUnwind::boxed(policy.check(ctx)).await {
                Ok(result) => result,
                Err(panic) => Err(Box::new(crate::error::Panicked::new(format!(
                    "the availability policy panicked: {panic}"
                )))),
            },
        }
    }

    pub(crate) fn policy(&self) -> Option<&Arc<dyn Policy>> {
        self.inner.policy.as_ref()
    }

    pub(crate) fn handler(&self) -> Option<&Arc<dyn ErasedHandler>> {
        self.inner.handler.as_ref()
    }

    pub(crate) fn deferred_input(&self) -> Option<&Arc<dyn ErasedInput>> {
        self.inner.deferred.as_ref()
    }

    pub(crate) fn gate(&self) -> Option<&Gate> {
        self.inner.gate.as_ref()
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.inner.name)
            .field("site", &self.inner.site)
            .field("policy", &self.inner.policy.is_some())
            .field("context", &self.inner.needs)
            .field("approval", &self.inner.gate.is_some())
            .field("deferred", &self.inner.deferred.is_some())
            .field("error", &self.inner.error)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Tool`] at run time, with the checks `#[tool]` does at compile time done here.
#[must_use = "a builder does nothing until `build` is called"]
pub struct ToolBuilder {
    name: String,
    description: String,
    body: Option<(Body, Result<Value, SchemaError>)>,
    gate: Option<GateSpec>,
    policy: Option<Arc<dyn Policy>>,
    needs: Vec<Need>,
    site: Site,
    annotations: Annotations,
    output: Option<OutputSchema>,
    retries: Option<u32>,
    sequential: bool,
    scopes: Vec<String>,
    catalog: catalog::Catalog,
}

/// What runs a call: a handler, or nothing here (a deferred tool, H5).
enum Body {
    Handler(Arc<dyn ErasedHandler>),
    Deferred(Arc<dyn ErasedInput>),
}

impl Body {
    /// The input type the body parses arguments into.
    fn input_type(&self) -> (TypeId, &'static str) {
        match self {
            Body::Handler(handler) => handler.input_type(),
            Body::Deferred(input) => input.input_type(),
        }
    }

    /// The parser of the body's input.
    fn input(&self) -> &dyn ErasedInput {
        match self {
            Body::Handler(handler) => &**handler,
            Body::Deferred(input) => &**input,
        }
    }
}

impl ToolBuilder {
    /// Sets the handler: an async function of the call's [`Context`] and the parsed input.
    ///
    /// The input type's [`Schema`] is the tool's input schema; the model's arguments are
    /// parsed and validated against it before the handler runs (S2). A result that serializes
    /// to a JSON string goes to the model as that text; anything else as JSON (E1).
    pub fn handler<I, F, Fut, T, E>(self, f: F) -> Self
    where
        I: Schema + Send + 'static,
        F: Fn(Context, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        T: Serialize,
        E: Into<BoxError>,
    {
        self.rendered_handler(move |ctx: Context, input: I| {
            let fut = f(ctx, input);
            async move {
                let output = fut.await.map_err(Into::into)?;
                render_rich(&output)
            }
        })
    }

    /// Sets a handler whose result type declares its schema (O1): as [`ToolBuilder::handler`],
    /// and the tool's [`Tool::output_schema`] is `T`'s (for a `T` that derives `Schema`, or an
    /// `Option`, `Vec` or `Box` of one), which MCP lists as `outputSchema`, sending each
    /// result as `structuredContent` beside its text.
    pub fn structured_handler<I, F, Fut, T, E>(mut self, f: F) -> Self
    where
        I: Schema + Send + 'static,
        F: Fn(Context, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        T: Serialize + Schema,
        E: Into<BoxError>,
    {
        self.output = OutputSchema::of::<T>();
        self.handler(f)
    }

    /// Sets the output schema (O1); `#[tool]` sets it from the fn's return type.
    #[doc(hidden)]
    pub fn output_schema(mut self, output: Option<OutputSchema>) -> Self {
        self.output = output;
        self
    }

    /// Sets this tool's retry budget (L1): a run ends when more than `n` calls of it in a row
    /// fail (invalid arguments, or a [`ToolError::retry`](crate::ToolError::retry)); a
    /// success resets the count. Without it the agent's budget applies (3 by default).
    pub fn retries(mut self, n: u32) -> Self {
        self.retries = Some(n);
        self
    }

    /// Runs each call of this tool with no other call of the run in flight (L4); results
    /// still go back in the model's order.
    pub fn sequential(mut self) -> Self {
        self.sequential = true;
        self
    }

    /// Sets every hint at once (O4).
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Sets the human-readable title (O4).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.annotations.title = Some(title.into());
        self
    }

    /// Marks the tool read-only: it does not change its environment (O4).
    pub fn read_only(mut self) -> Self {
        self.annotations.read_only = Some(true);
        self
    }

    /// Marks the tool destructive: a change it makes may destroy something (O4).
    pub fn destructive(mut self) -> Self {
        self.annotations.destructive = Some(true);
        self
    }

    /// Marks the tool idempotent: calling it again with the same arguments changes nothing
    /// more (O4).
    pub fn idempotent(mut self) -> Self {
        self.annotations.idempotent = Some(true);
        self
    }

    /// Says whether the tool reaches entities outside a closed set (O4).
    pub fn open_world(mut self, open: bool) -> Self {
        self.annotations.open_world = Some(open);
        self
    }

    /// Sets a handler whose future yields the model-facing text itself (already rendered
    /// with [`render_result`]) or the error. `#[tool]` uses this; prefer
    /// [`ToolBuilder::handler`].
    #[doc(hidden)]
    pub fn rendered_handler<I, F, Fut>(self, f: F) -> Self
    where
        I: Schema + Send + 'static,
        F: Fn(Context, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Rendered, BoxError>> + Send + 'static,
    {
        let schema = render_root::<I>();
        let handler: Arc<dyn ErasedHandler> = Arc::new(TypedHandler {
            f,
            _input: PhantomData,
        });
        self.with_handler(handler, schema)
    }

    pub(crate) fn with_handler(
        mut self,
        handler: Arc<dyn ErasedHandler>,
        schema: Result<Value, SchemaError>,
    ) -> Self {
        self.body = Some((Body::Handler(handler), schema));
        self
    }

    pub(crate) fn with_deferred(
        mut self,
        input: Arc<dyn ErasedInput>,
        schema: Result<Value, SchemaError>,
    ) -> Self {
        self.body = Some((Body::Deferred(input), schema));
        self
    }

    /// Sets the availability policy (A1).
    pub fn available(mut self, policy: impl Policy) -> Self {
        self.policy = Some(Arc::new(policy));
        self
    }

    /// Sets a plain function as the availability policy.
    pub fn available_fn<F, E>(self, f: F) -> Self
    where
        F: Fn(&Context) -> Result<bool, E> + Send + Sync + 'static,
        E: Into<BoxError>,
    {
        self.available(SyncPolicy(f))
    }

    /// Sets an `async fn(&Context) -> Result<bool, E>` as the availability policy.
    pub fn available_async<F>(self, f: F) -> Self
    where
        F: for<'a> AsyncPolicyFn<'a>,
    {
        self.available(AsyncPolicy(f))
    }

    /// Sets where the tool was declared (by default, the call to [`Tool::builder`]).
    pub fn site(mut self, site: Site) -> Self {
        self.site = site;
        self
    }

    /// Builds the tool. Never fails: a problem is kept in the tool (D2, [`Tool::declaration_error`]).
    pub fn build(self) -> Tool {
        let Self {
            name,
            description,
            body,
            gate,
            policy,
            needs,
            site,
            annotations,
            output,
            retries,
            sequential,
            scopes,
            catalog,
        } = self;
        let policy = needs::policy(&needs, policy);
        let mut error = declaration::problem(&name, &description, site, &annotations, &scopes);
        if let (Some((body, _)), Some(gate)) = (&body, &gate)
            && error.is_none()
        {
            error = gate::check(&name, site, body, gate);
        }
        if let Some((body, Ok(_))) = &body
            && error.is_none()
        {
            error = catalog::check_examples(&name, site, &catalog.examples, body.input());
        }
        let (handler, deferred, schema) = match body {
            Some((body, Ok(schema))) => match body {
                Body::Handler(handler) => (Some(handler), None, schema),
                Body::Deferred(input) => (None, Some(input), schema),
            },
            Some((_, Err(source))) => {
                error.get_or_insert(DeclarationError::Schema {
                    name: name.clone(),
                    site,
                    source,
                });
                (None, None, Value::Null)
            }
            None => {
                error.get_or_insert(DeclarationError::MissingHandler {
                    name: name.clone(),
                    site,
                });
                (None, None, Value::Null)
            }
        };
        let gate = gate.map(GateSpec::into_gate);
        let pauses = gate.is_some() || deferred.is_some();
        let schema_text = Arc::from(schema.to_string());
        Tool {
            inner: Arc::new(Inner {
                name,
                description,
                schema: Arc::new(schema),
                schema_text,
                handler,
                deferred,
                gate,
                pauses,
                policy,
                needs,
                site,
                error,
                annotations,
                output,
                retries,
                sequential,
                scopes: scopes.into(),
                catalog,
            }),
        }
    }
}

impl fmt::Debug for ToolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolBuilder")
            .field("name", &self.name)
            .field("site", &self.site)
            .finish_non_exhaustive()
    }
}

/// The future of a handler whose input was parsed: the model-facing result text, or the
/// handler's error.
pub(crate) type HandlerFuture = BoxFuture<'static, Result<Rendered, BoxError>>;

/// Arguments parsed into the tool's input type, with the type erased: what a call that can
/// pause holds between validation, the approval predicate and the handler.
pub(crate) type ParsedInput = Box<dyn Any + Send>;

/// A tool's input parser with its input type erased.
pub(crate) trait ErasedInput: Send + Sync + 'static {
    /// Decodes and parses the argument bytes `args` into the input. Returns `None` when `cx`
    /// holds violations or a failure.
    ///
    /// # Errors
    ///
    /// Returns the decode error when `args` is not one JSON value or holds a key twice.
    fn parse(&self, args: &[u8], cx: &mut ParseCx) -> Result<Option<ParsedInput>, DecodeError>;

    /// The input type, and its name for diagnostics.
    fn input_type(&self) -> (TypeId, &'static str);

    /// An input that `parse` made from the argument bytes `args`, rendered as JSON (`null`
    /// for one of another type).
    fn to_json(&self, input: &ParsedInput, args: &[u8]) -> Value;
}

/// A handler with its input type erased: parses the arguments, then runs.
pub(crate) trait ErasedHandler: ErasedInput {
    /// Decodes and parses the argument bytes `args`; on success returns the handler's future.
    /// Returns `None` when `cx` holds violations or a failure. The path of every call that
    /// cannot pause: no box for the input.
    ///
    /// # Errors
    ///
    /// Returns the decode error when `args` is not one JSON value or holds a key twice.
    fn prepare(
        &self,
        ctx: Context,
        args: &[u8],
        cx: &mut ParseCx,
    ) -> Result<Option<HandlerFuture>, DecodeError>;

    /// The handler's future for an input that [`ErasedInput::parse`] made; `None` for an
    /// input of another type (which `parse` never makes).
    fn run(&self, ctx: Context, input: ParsedInput) -> Option<HandlerFuture>;
}

struct TypedHandler<I, F> {
    f: F,
    _input: PhantomData<fn(I)>,
}

impl<I, F, Fut> ErasedInput for TypedHandler<I, F>
where
    I: Schema + Send + 'static,
    F: Fn(Context, I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Rendered, BoxError>> + Send + 'static,
{
    fn parse(&self, args: &[u8], cx: &mut ParseCx) -> Result<Option<ParsedInput>, DecodeError> {
        let input = parse_arguments::<I>(args, cx)?;
        Ok(input.map(|input| Box::new(input) as ParsedInput))
    }

    fn input_type(&self) -> (TypeId, &'static str) {
        (TypeId::of::<I>(), type_name::<I>())
    }

    fn to_json(&self, input: &ParsedInput, args: &[u8]) -> Value {
        input
            .downcast_ref::<I>()
            .map_or(Value::Null, |input| input.arguments_json(args))
    }
}

impl<I, F, Fut> ErasedHandler for TypedHandler<I, F>
where
    I: Schema + Send + 'static,
    F: Fn(Context, I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Rendered, BoxError>> + Send + 'static,
{
    fn prepare(
        &self,
        ctx: Context,
        args: &[u8],
        cx: &mut ParseCx,
    ) -> Result<Option<HandlerFuture>, DecodeError> {
        let input = parse_arguments::<I>(args, cx)?;
        Ok(input.map(|input| Box::pin((self.f)(ctx, input)) as HandlerFuture))
    }

    fn run(&self, ctx: Context, input: ParsedInput) -> Option<HandlerFuture> {
        let input = input.downcast::<I>().ok()?;
        Some(Box::pin((self.f)(ctx, *input)))
    }
}

/// Renders a handler's result for the model (E1): a JSON string as its text, unchanged;
/// anything else as its JSON encoding.
///
/// # Errors
///
/// Returns the serialization error (a map with keys that are not strings, say).
pub fn render_result<T: Serialize + ?Sized>(output: &T) -> Result<String, BoxError> {
    let encoded = serde_json::to_string(output)?;
    if encoded.starts_with('"') {
        Ok(serde_json::from_str::<String>(&encoded)?)
    } else {
        Ok(encoded)
    }
}
