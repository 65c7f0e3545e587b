//! The `#[tool]` and `#[derive(Schema)]` macros of `tool-runtime`.
//!
//! Use them through `tool-runtime`, which re-exports them with the types the generated code
//! names. Each macro parses its input into a typed view (`ast`, over the darling receivers of
//! `attr`), checks every rule in one place (`valid`), and generates code (`expand`); when a
//! rule is broken, it reports every problem at the token it is about (`error`) and still emits
//! the user's item (`fallback`). The rules it shares with the runtime (tool names, formats,
//! the pattern dialect) come from `tool-rules`, so this crate never depends on the runtime.
//!
//! The examples below are compiled as tests of the `tool-tests` crate (`tests/ui/pass`).

mod ast;
mod attr;
mod error;
mod expand;
mod fallback;
mod params;
mod valid;

use proc_macro::TokenStream;

/// Derives `Schema`: the JSON Schema of a struct or enum, and the parser that enforces it
/// (S1–S5). The type needs no `serde::Deserialize`.
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
/// | `validate = path` | any | `fn(&T) -> Result<(), Invalid>` (also `&str` for a `String`, `&[T]` for a `Vec<T>`): `Invalid::violation` goes to the model, `Invalid::error` is redacted (S5) |
///
/// A constraint on a type it does not apply to, a contradiction (`min_len` above `max_len`,
/// `range` with `min`), an invalid pattern (or one with lookaround or backreferences, which
/// cannot be matched in linear time), an unknown format, an unknown or repeated key, or a
/// `default` on an `Option` is a compile error at the attribute.
#[proc_macro_derive(Schema, attributes(schema))]
pub fn derive_schema(input: TokenStream) -> TokenStream {
    expand::derive(&syn::parse_macro_input!(input as syn::DeriveInput)).into()
}

/// Makes a typed LLM tool of a fn.
///
/// ```ignore
/// use tool_runtime::{tool, BoxError, Context};
///
/// /// Find the authorized maintenance window for a service.
/// #[tool(name = "lookup-window", available = can_view_maintenance)]
/// async fn find_window(ctx: Context, input: WindowQuery) -> Result<WindowSummary, BoxError> {
///     /* … */
/// }
///
/// async fn can_view_maintenance(ctx: &Context) -> Result<bool, BoxError> { /* … */ }
///
/// /// Restart a service now.
/// #[tool(name = "restart-service", available = is_admin, approval = restart_needs_ok)]
/// async fn restart(ctx: Context, input: RestartInput) -> Result<Restarted, BoxError> { /* … */ }
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
/// prefix), with the fn's visibility and the description as its doc, a `NAME` constant, an
/// `IntoTool` impl that builds the tool once, and a link-time registration (R1).
///
/// # Arguments
///
/// | key | meaning |
/// |---|---|
/// | `name = "…"` | the tool's name; else the fn's name with `_` → `-`. Checked against N1 at compile time, with a proposed fix |
/// | `description = "…"` | what the model reads; else the fn's doc comment. One of them is required |
/// | `available = path` | the availability policy: `async fn(&Context) -> Result<bool, E>` or `fn(&Context) -> Result<bool, E>` (A1) |
/// | `approval = always` | every call waits for approval: the run pauses with it pending (H1, H2); over MCP the client's user is asked (H6) |
/// | `approval = path` | the approval predicate: `async fn(&Context, &Input) -> Result<Approval, E>` or the same plain `fn`, over the validated input (H1); the input must be one type that implements `Schema` (a predicate cannot name the hidden input of plain parameters) |
/// | `crate = path` | the path of `tool-runtime` (default `::tool_runtime`) |
///
/// # The handler
///
/// An `async fn` or a plain `fn`, not generic, without `self`. It takes an optional first
/// `Context` or `&Context`, then either one input whose type implements `Schema`, or plain
/// parameters, each with `#[schema(describe = "…", …)]` (any field attribute), which become
/// the properties of a hidden input object (no parameters: an empty object). It returns
/// `Result<T, E>` (any `Result` alias) or a plain `T`, where `T: serde::Serialize` and
/// `E: Into<BoxError>`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}
