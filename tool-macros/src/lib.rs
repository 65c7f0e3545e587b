//! The `#[tool]` and `#[derive(Schema)]` macros of `tool-runtime`, and its MCP server's
//! `#[resource]` and `#[prompt]` (`catalog`).
//!
//! Use them through `tool-runtime`, which re-exports them with the types the generated code
//! names. Each macro parses its input into a typed view (`ast`, over the darling receivers of
//! `attr`; a handler's parameters sorted by where their values come from in `params`), checks
//! every rule in one place (`valid`), and generates code (`expand`); when a
//! rule is broken, it reports every problem at the token it is about (`error`) and still emits
//! the user's item (`fallback`). The rules it shares with the runtime (tool names, formats,
//! the pattern dialect) come from `tool-rules`, so this crate never depends on the runtime.
//!
//! The examples below are compiled as tests of the `tool-tests` crate (`tests/ui/pass`).

#![deny(unreachable_pub)]

mod ast;
mod attr;
mod catalog;
mod error;
mod expand;
mod fallback;
mod field;
mod params;
mod valid;

use proc_macro::TokenStream;

/// Derives `Schema`: the JSON Schema of a struct or enum, and the parser that enforces it
/// ([S1–S5]). The type needs no `serde::Deserialize`.
///
/// ```ignore
/// use tool_runtime::Schema;
///
/// /// Input of the maintenance lookup.
/// #[derive(Schema)]
/// struct WindowQuery {
///     /// The service identifier supplied by the user.
///     #[schema(min_len = 1, max_len = 64, pattern = "^[a-z0-9-]+$")]
///     service_id: String,
///     /// How many days ahead to look.
///     #[schema(default = 7, range = 1..=30)]
///     days: u32,
/// }
/// ```
///
/// # Shapes
///
/// - A struct with named fields is an object: each field a property, `required` listing every
///   field that is neither an `Option` nor defaulted, `additionalProperties: false`. A unit or
///   empty struct is an object without properties. Tuple structs are rejected.
/// - An enum of unit variants is a string with an `enum` of the variants' names; their doc
///   comments are listed in the schema's `description`.
/// - An enum with struct variants is an `anyOf` of objects, each told apart by a required
///   string property (the tag, `"type"` unless `#[schema(tag = "…")]`). Tuple variants are
///   rejected.
/// - A type that contains itself renders through `$defs`/`$ref` (`"$ref": "#"` for the root).
///
/// # On the type: `#[schema(...)]`
///
/// | key | meaning |
/// |---|---|
/// | `description = "…"` | the schema's description (else the doc comment) |
/// | `rename_all = "…"` | serde's rules: `lowercase`, `UPPERCASE`, `PascalCase`, `camelCase`, `snake_case`, `SCREAMING_SNAKE_CASE`, `kebab-case`, `SCREAMING-KEBAB-CASE`; fields of a struct, variants of an enum |
/// | `tag = "…"` | the tag property of an enum |
/// | `crate = path` | the path of `tool-runtime` (default `::tool_runtime`) |
///
/// On a variant: `rename = "…"`, `describe = "…"` (else the doc comment), `rename_all = "…"`
/// (for its fields).
///
/// # On a field: `#[schema(...)]`
///
/// | key | applies to | meaning |
/// |---|---|---|
/// | `describe = "…"` | any | the description (else the doc comment) |
/// | `rename = "…"` | any | the property's name |
/// | `default`, `default = expr` | not `Option` | the value when absent or `null`: `Default::default()`, or `expr` (a string literal converts to a `String`); rendered as `default`, and the field is not required |
/// | `example = expr` | any | rendered in `examples` |
/// | `min_len`, `max_len` | strings | length in characters |
/// | `pattern = "regex"` | strings | ECMA-262, as JSON Schema says (`\d`, `\w`, `\b` are ASCII), unanchored, enforced with the same meaning; checked at compile time; no lookaround or backreferences |
/// | `format = "…"` | strings | `email`, `uri`, `uuid`, `date`, `date-time`, enforced |
/// | `one_of = ["a", "b"]` | strings | the allowed values |
/// | `range = a..=b` (`a..b`, `a..`, `..=b`) | numbers | `minimum`/`maximum` (`a..b`: exclusive maximum) |
/// | `min`, `max`, `exclusive_min`, `exclusive_max`, `multiple_of` | numbers | integer or float literals |
/// | `min_items`, `max_items`, `unique_items` | lists | |
/// | `items(...)` | lists (`Vec<T>`, `Option<Vec<T>>`) | the constraints of each item, among those of strings and numbers above: `items(pattern = "^[a-z]+$", max_len = 32)`, `items(range = 1..=5)`; rendered in the list's `items`, and a violation names the item (`/tags/0`) |
/// | `validate = path` | any | `fn(&T) -> Result<(), Invalid>` (also `&str` for a `String`, `&[T]` for a `Vec<T>`): `Invalid::violation` goes to the model, `Invalid::error` is redacted ([S5]) |
///
/// A constraint on a type it does not apply to, a contradiction (`min_len` above `max_len`,
/// `range` with `min`), an invalid pattern (or one with lookaround or backreferences, which
/// cannot be matched in linear time), an unknown format, an unknown or repeated key, a
/// `default` on an `Option`, or `items(...)` on a field that is not a list (or holding a
/// constraint its items do not take, or one of the list itself such as `min_items`) is a
/// compile error at the attribute.
///
#[doc = concat!("[S1–S5]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#3-schema-and-parsing")]
#[doc = concat!("[S5]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#3-schema-and-parsing")]
#[proc_macro_derive(Schema, attributes(schema))]
pub fn derive_schema(input: TokenStream) -> TokenStream {
    expand::derive(&syn::parse_macro_input!(input as syn::DeriveInput)).into()
}

/// Makes a typed LLM tool of a fn.
///
/// ```ignore
/// use tool_runtime::{tool, Approval, BoxError, Context, IntoTool};
///
/// /// Find the authorized maintenance window for a service.
/// #[tool(name = "lookup-window", available = can_view_maintenance, read_only)]
/// async fn find_window(windows: &Windows, op: &Operator, input: WindowQuery)
///     -> Result<WindowSummary, BoxError> {
///     /* `windows` and `op` come from the run's context, `input` from the model */
/// }
///
/// async fn can_view_maintenance(ctx: &Context) -> Result<bool, BoxError> { /* … */ }
///
/// /// Restart a service now.
/// #[tool(name = "restart-service", available = is_admin, approval = restart_needs_ok, destructive)]
/// async fn restart(#[context] pool: PgPool, input: RestartInput) -> Result<Restarted, BoxError> {
///     /* … */
/// }
///
/// async fn restart_needs_ok(ctx: &Context, input: &RestartInput) -> Result<Approval, BoxError> {
///     /* Approval::required("svc-42 serves production traffic"), or Approval::NotRequired */
/// }
///
/// let tool = LookupWindow.into_tool();      // the generated handle
/// assert_eq!(LookupWindow::NAME, "lookup-window");
/// ```
///
/// The fn stays as written. Next to it, the macro generates a unit struct named after the
/// tool (`lookup-window` → `LookupWindow`; a name that starts with a digit gets a `Tool`
/// prefix; `handle = Name` names it otherwise), with the fn's visibility and the description
/// as its doc, a `NAME` constant, an `IntoTool` impl that builds the tool once, and a
/// link-time registration ([R1]). An agent takes it with `.tool(LookupWindow)`. Users depend
/// on `tool-runtime` alone: import everything from `tool_runtime::…`.
///
/// # Arguments
///
/// | key | meaning |
/// |---|---|
/// | `name = "…"` | the tool's name; else the fn's name with `_` → `-`. Checked against [N1] at compile time, with a proposed fix |
/// | `description = "…"` | what the model reads; else the fn's doc comment. One of them is required |
/// | `handle = Name` | the name of the generated handle struct, an identifier; else the tool's name in `PascalCase`. Needed when a type of the signature has that name already (an input `struct AddNote` of the tool `add-note`), which is a compile error saying so |
/// | `title = "…"` | a human-readable title, shown by MCP clients ([O4]) |
/// | `read_only`, `destructive`, `idempotent`, `open_world` | hints ([O4]), written bare (`read_only`) or with a boolean (`open_world = false`); `read_only` with `destructive` is a compile error |
/// | `retries = n` | the tool's retry budget: failed calls in a row a run allows before it ends ([L1]); else the agent's (3 by default) |
/// | `sequential` | its calls run with no other call of the run in flight, in the model's order ([L4]) |
/// | `scopes = "a b"` | the OAuth scopes a call needs, separated by spaces ([Z3]): an MCP server that authorizes its callers offers the tool only to a token granting them, and answers a call without them `403`; a word that is not a scope token is a compile error |
/// | `available = path` | the availability policy: `async fn(&Context) -> Result<bool, E>` or `fn(&Context) -> Result<bool, E>` ([A1]), asked at discovery and before every call ([A4]) |
/// | `approval = always` | every call waits for approval: the run pauses with it pending ([H1], [H2]); over MCP the client's user is asked ([H6]) |
/// | `approval = path` | the approval predicate: `async fn(&Context, &Input) -> Result<Approval, E>` or the same plain `fn`, over the validated input ([H1]); the input must be one type that implements `Schema` (a predicate cannot name the hidden input of plain parameters) |
/// | `crate = path` | the path of `tool-runtime` (default `::tool_runtime`), for a crate that re-exports it |
///
/// A misspelt key or keyword proposes the nearest valid one (`approval = allways`: did you
/// mean `always`?; `read_only = ture`: did you mean `true`?); a predicate fn whose name is
/// one typo away from `always` is named by its path (`approval = self::alway`). Every misuse
/// is a compile error at the offending token that says the fix ([C4]).
///
/// # The handler
///
/// An `async fn` or a plain `fn`, not generic, without `self`. Each parameter takes its value
/// from one of three places ([C1]):
///
/// - **the call's context**: `ctx: Context` or `ctx: &Context`, at most once;
/// - **a value of the context**, looked up by its type: `op: &Operator` borrows it
///   (`Operator: Send + Sync + 'static`, what `Context::with` holds), and
///   `#[context] pool: PgPool` takes a clone of it (`PgPool: Clone`). These never appear in
///   the schema, so the model cannot supply them, and a tool whose context lacks one is
///   unavailable: not advertised, and a call of it is refused with `tool unavailable` (the
///   same answer as a policy that says no, on every transport). They are checked before the
///   `available` policy, which runs only when every value is present; both must allow.
///   Each type once; a `&mut T`, a lifetime, a trait object, `impl Trait` or a pattern is a
///   compile error that says what to take instead;
/// - **the model's arguments**: what remains is the input, taken by value (a `&Query`
///   parameter is a context value, not the input), either one parameter whose type
///   implements `Schema`, or plain parameters, each with `#[schema(describe = "…", …)]` (any
///   field attribute), which become the properties of a hidden input object (no parameters:
///   an empty object). Two undescribed inputs are a compile error that asks which one comes
///   from the context.
///
/// It returns `Result<T, E>` (any `Result` alias) or a plain `T`, where `T: serde::Serialize`
/// and `E: Into<BoxError>`; a `T` that derives `Schema` also gives the tool its output schema
/// ([O1]). A `ToolError` in the error's chain is what the model reads; anything else reaches
/// it as `the tool failed` ([E2]).
///
/// Rule ids refer to the [contract] the runtime keeps.
///
#[doc = concat!("[contract]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html")]
#[doc = concat!("[N1]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#1-names")]
#[doc = concat!("[A1]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#4-availability")]
#[doc = concat!("[A4]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#4-availability")]
#[doc = concat!("[E2]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#5-results-and-failures")]
#[doc = concat!("[R1]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#7-the-run")]
#[doc = concat!("[H1]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#9-the-next-capabilities")]
#[doc = concat!("[H2]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#9-the-next-capabilities")]
#[doc = concat!("[H6]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#9-the-next-capabilities")]
#[doc = concat!("[L1]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#9-the-next-capabilities")]
#[doc = concat!("[L4]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#9-the-next-capabilities")]
#[doc = concat!("[Z3]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#15-mcp-authorization")]
#[doc = concat!("[O1]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#9-the-next-capabilities")]
#[doc = concat!("[O4]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#9-the-next-capabilities")]
#[doc = concat!("[C1]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#12-contracts-a-build-proves")]
#[doc = concat!("[C4]: ", "https://docs.rs/tool-core/", env!("CARGO_PKG_VERSION"), "/tool_core/contract/index.html#12-contracts-a-build-proves")]
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}

/// Makes an MCP resource of a fn (rule M7): a fixed URI, or a URI template whose variables
/// are the fields of the fn's one typed parameter, parsed and validated like a tool's input.
///
/// ```ignore
/// use tool_runtime::mcp::{resource, Contents};
/// use tool_runtime::{Context, Schema, ToolError};
///
/// /// How maintenance windows are planned.
/// #[resource(uri = "docs://maintenance/guide", mime_type = "text/markdown")]
/// async fn maintenance_guide(ctx: Context) -> Result<Contents, ToolError> { /* … */ }
///
/// #[derive(Schema)]
/// struct History { service: String, limit: u32 }
///
/// /// A service's maintenance history.
/// #[resource(uri = "maint://{service}/history/{limit}", handle = HistoryResource, available = is_operator)]
/// async fn history(ctx: &Context, p: History) -> Result<String, ToolError> { /* … */ }
///
/// let server = McpServer::builder().resource(MaintenanceGuide).resource(HistoryResource).build()?;
/// ```
///
/// The fn stays as written; next to it a unit struct named after the resource
/// (`maintenance-guide` → `MaintenanceGuide`, or `handle = Name`: needed when that is the name
/// of the parameter's type, which is a compile error saying so) with `NAME` and `URI` constants implements `IntoResource`.
/// Keys: `uri` (required), `name` (else the fn's name with `_` → `-`; an MCP name, checked at
/// compile time), `title`, `description` (else the doc comment), `mime_type`, `available =
/// path` (a policy as `#[tool]` takes it), `scopes = "a b"` (the OAuth scopes a token must
/// grant for it to be offered), `handle = Name`, `crate = path`. The fn takes the
/// `Context` (by value or `&`) and, for a template, one parameter whose type derives
/// `Schema`; it returns `Result<C, E>` with `C: Into<Contents>`. A URI that is not one, a
/// template with variables but no parameter (or a parameter without variables), a bad name,
/// a misspelt key: each is a compile error at its token that says the fix.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    catalog::resource(args.into(), item.into()).into()
}

/// Makes an MCP prompt of a fn (rule M7): its arguments are the fields of the fn's one typed
/// parameter, validated like a tool's input before it runs; it returns the messages.
///
/// ```ignore
/// use tool_runtime::mcp::{prompt, Message};
///
/// /// Plan a service's maintenance.
/// #[prompt(name = "plan-maintenance")]
/// async fn plan(args: Plan) -> Result<Vec<Message>, ToolError> {
///     Ok(vec![Message::user(format!("Plan maintenance of {}.", args.service))])
/// }
/// ```
///
/// The fn stays as written; next to it a unit struct named after the prompt
/// (`plan-maintenance` → `PlanMaintenance`, or `handle = Name`) with a `NAME` constant
/// implements `IntoPrompt`. Keys: `name` (else the fn's name with `_` → `-`; an MCP name,
/// checked at compile time), `title`, `description` (else the doc comment; one of them is
/// required), `available = path`, `scopes = "a b"`, `handle = Name`, `crate = path`. The fn
/// takes the `Context` (by value or `&`) and at most one parameter whose type derives
/// `Schema`, and returns `Result<Vec<Message>, E>`. Each misuse is a compile error at its token that says the fix.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    catalog::prompt(args.into(), item.into()).into()
}
