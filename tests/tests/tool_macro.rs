//! `#[tool]`: names (N1, N2), descriptions, the generated handle and its `NAME`, the registry
//! (R1), handlers of every supported shape, results (E1, E2) and availability (A1, A4, A6).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tool_runtime::{BoxError, Context, IntoTool, OutcomeKind, Schema, ToolError, tool};

/// Input of the maintenance lookup.
#[derive(Schema)]
pub struct WindowQuery {
    /// The service identifier supplied by the user.
    #[schema(min_len = 1, max_len = 64, pattern = "^[a-z0-9-]+$")]
    pub service_id: String,
    /// How many days ahead to look.
    #[schema(default = 7, range = 1..=30)]
    pub days: u32,
}

/// What the lookup returns.
#[derive(serde::Serialize)]
pub struct WindowSummary {
    /// When the window starts.
    pub starts_at: String,
    /// When it ends.
    pub ends_at: String,
}

/// The application's maintenance calendar, put into the context by the application.
struct Calendar {
    blocked: &'static str,
}

/// Find the authorized maintenance window for a service.
///
/// Only windows the caller may see are returned.
#[tool(name = "lookup-window", available = can_view_maintenance)]
pub async fn find_window(ctx: Context, input: WindowQuery) -> Result<WindowSummary, BoxError> {
    let calendar = ctx.require::<Calendar>()?;
    if input.service_id == calendar.blocked {
        return Err(ToolError::new("No maintenance window is scheduled.").into());
    }
    if input.service_id == "broken" {
        return Err("the calendar backend timed out".into());
    }
    Ok(WindowSummary {
        starts_at: format!("{} +{}d", input.service_id, input.days),
        ends_at: "later".to_owned(),
    })
}

/// Whether the caller may see maintenance windows.
struct CanView(bool);

async fn can_view_maintenance(ctx: &Context) -> Result<bool, BoxError> {
    match ctx.get::<CanView>() {
        Some(CanView(allowed)) => Ok(*allowed),
        None => Err("no principal in the context".into()),
    }
}

fn ctx() -> Context {
    Context::new()
        .with(Calendar { blocked: "svc-0" })
        .with(CanView(true))
}

// DESIGN §1: the generated handle is named after the tool, carries `NAME`, and builds the
// declared tool; the fn stays callable as written.
#[tokio::test]
async fn lookup_window_as_in_the_design() {
    assert_eq!(LookupWindow::NAME, "lookup-window");
    let tool = LookupWindow.into_tool();
    assert!(
        tool.declaration_error().is_none(),
        "{:?}",
        tool.declaration_error()
    );
    assert_eq!(tool.name(), "lookup-window");
    assert_eq!(
        tool.description(),
        "Find the authorized maintenance window for a service.\n\nOnly windows the caller may see are returned."
    );
    assert!(tool.has_policy());
    assert_eq!(tool.schema()["required"], json!(["service_id"]));
    assert!(
        tool.site().file.ends_with("tool_macro.rs"),
        "{}",
        tool.site()
    );

    let out = tool.invoke(&ctx(), br#"{"service_id": "svc-42"}"#).await;
    assert_eq!(out.kind(), OutcomeKind::Success);
    assert_eq!(
        out.text(),
        r#"{"starts_at":"svc-42 +7d","ends_at":"later"}"#
    );

    // The fn itself is unchanged.
    let direct = find_window(
        ctx(),
        WindowQuery {
            service_id: "svc-1".to_owned(),
            days: 2,
        },
    )
    .await
    .expect("a window");
    assert_eq!(direct.starts_at, "svc-1 +2d");
}

// S2 through the tool: invalid arguments never reach the handler.
#[tokio::test]
async fn invalid_arguments_do_not_run_the_handler() {
    let out = LookupWindow
        .into_tool()
        .invoke(&ctx(), br#"{"service_id": "SVC", "days": 0}"#)
        .await;
    assert_eq!(out.kind(), OutcomeKind::InvalidArguments);
    assert_eq!(out.violations().len(), 2);
}

// E2: a `ToolError` goes to the model as its text; any other error as `the tool failed`,
// kept for the application (E3).
#[tokio::test]
async fn e2_handler_errors_are_redacted_unless_approved() {
    let tool = LookupWindow.into_tool();
    let rejected = tool.invoke(&ctx(), br#"{"service_id": "svc-0"}"#).await;
    assert_eq!(rejected.kind(), OutcomeKind::Rejected);
    assert_eq!(rejected.text(), "No maintenance window is scheduled.");
    let failed = tool.invoke(&ctx(), br#"{"service_id": "broken"}"#).await;
    assert_eq!(failed.kind(), OutcomeKind::Failed);
    assert_eq!(failed.text(), "the tool failed");
    let error = failed.error().expect("kept for the application");
    assert!(format!("{error:#}").contains("timed out"), "{error:#}");
}

// A1, A4, A6: the policy given with `available = path` guards every call; a denial is
// `tool unavailable`, a policy error is fatal and never reaches the model.
#[tokio::test]
async fn a4_available_guards_every_call() {
    let tool = LookupWindow.into_tool();
    let denied = Context::new().with(CanView(false));
    assert!(!tool.available(&denied).await.expect("no policy error"));
    let out = tool.invoke(&denied, br#"{"service_id": "svc-42"}"#).await;
    assert_eq!(
        (out.kind(), out.text()),
        (OutcomeKind::Unavailable, "tool unavailable")
    );

    let broken = Context::new();
    let out = tool.invoke(&broken, br#"{"service_id": "svc-42"}"#).await;
    assert_eq!(out.kind(), OutcomeKind::Fatal);
    assert_eq!(out.text(), "the tool failed");
    let error = out.error().expect("kept");
    assert_eq!(error.kind(), tool_runtime::ErrorKind::Availability);
}

/// Counts the calls of the sync policy.
static POLICY_CALLS: AtomicUsize = AtomicUsize::new(0);

fn sync_policy(ctx: &Context) -> Result<bool, std::io::Error> {
    POLICY_CALLS.fetch_add(1, Ordering::SeqCst);
    Ok(ctx.get::<CanView>().is_some_and(|c| c.0))
}

/// Echoes its word.
#[tool(available = sync_policy)]
fn echo(#[schema(describe = "The word to echo.")] word: String) -> String {
    word
}

// A1: a plain `fn(&Context) -> Result<bool, E>` is a policy too; E1: a string result goes to
// the model as its text.
#[tokio::test]
async fn a1_sync_policy_and_e1_string_result() {
    let tool = Echo.into_tool();
    let before = POLICY_CALLS.load(Ordering::SeqCst);
    let out = tool.invoke(&ctx(), br#"{"word": "hi \"there\""}"#).await;
    assert_eq!(
        (out.kind(), out.text()),
        (OutcomeKind::Success, r#"hi "there""#)
    );
    assert_eq!(POLICY_CALLS.load(Ordering::SeqCst), before + 1);
    let out = tool.invoke(&Context::new(), br#"{"word": "x"}"#).await;
    assert_eq!(out.kind(), OutcomeKind::Unavailable);
}

/// Adds numbers.
#[tool]
fn add_numbers(
    #[schema(describe = "The first number.", range = -1000..=1000)] a: i64,
    #[schema(describe = "The second number.", default = 1)] b: i64,
    #[schema(describe = "Round to tens.", rename = "round")] round_to_tens: Option<bool>,
) -> i64 {
    let sum = a + b;
    if round_to_tens == Some(true) {
        sum / 10 * 10
    } else {
        sum
    }
}

// N2: without `name`, the name is the fn's with `_` → `-`; the handle is named after it.
// Several described parameters become the properties of a hidden input object (a defaulted or
// `Option` one admits `null`, T3).
#[tokio::test]
async fn several_params_and_derived_name() {
    assert_eq!(AddNumbers::NAME, "add-numbers");
    let tool = AddNumbers.into_tool();
    assert_eq!(
        tool.schema(),
        &json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "The first number.", "minimum": -1000, "maximum": 1000},
                "b": {
                    "type": ["integer", "null"],
                    "description": "The second number.",
                    "default": 1
                },
                "round": {"type": ["boolean", "null"], "description": "Round to tens."}
            },
            "required": ["a"],
            "additionalProperties": false
        })
    );
    let out = tool.invoke(&Context::new(), br#"{"a": 41}"#).await;
    assert_eq!((out.kind(), out.text()), (OutcomeKind::Success, "42"));
    let out = tool
        .invoke(&Context::new(), br#"{"a": 41, "b": 4, "round": true}"#)
        .await;
    assert_eq!(out.text(), "40");
    let out = tool
        .invoke(&Context::new(), br#"{"a": 5000, "c": 1}"#)
        .await;
    assert_eq!(out.kind(), OutcomeKind::InvalidArguments);
    assert_eq!(
        tool_tests::paths_and_rules(out.violations()),
        // In the order the members were sent (S2).
        vec![
            ("/a".to_owned(), "maximum".to_owned()),
            ("/c".to_owned(), "additionalProperties".to_owned())
        ]
    );
    assert_eq!(add_numbers(1, 2, None), 3);
}

/// Who is asking.
struct Principal(&'static str);

/// Says who is asking.
#[tool(name = "whoami")]
async fn who_am_i(ctx: &Context) -> Result<String, ToolError> {
    ctx.get::<Principal>()
        .map(|p| p.0.to_owned())
        .ok_or_else(|| ToolError::new("nobody is signed in"))
}

// A handler may take `&Context` and no input at all: its input is an empty object.
#[tokio::test]
async fn context_by_reference_and_no_input() {
    let tool = Whoami.into_tool();
    assert_eq!(
        tool.schema(),
        &json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
    let signed_in = Context::new().with(Principal("ada"));
    let out = tool.invoke(&signed_in, b"").await;
    assert_eq!((out.kind(), out.text()), (OutcomeKind::Success, "ada"));
    let out = tool.invoke(&Context::new(), b"{}").await;
    assert_eq!(
        (out.kind(), out.text()),
        (OutcomeKind::Rejected, "nobody is signed in")
    );
    let out = tool.invoke(&signed_in, br#"{"x": 1}"#).await;
    assert_eq!(out.kind(), OutcomeKind::InvalidArguments);
}

/// Counts how often the handler ran.
static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Counts, with a description given in the attribute.
#[tool(description = "Counts calls.")]
fn count_calls() -> usize {
    RUNS.fetch_add(1, Ordering::SeqCst) + 1
}

// The description may be given in the attribute (it wins over the doc comment); a sync
// handler returning a plain value works; the tool is built once and cloned.
#[tokio::test]
async fn description_attribute_and_plain_result() {
    let tool = CountCalls.into_tool();
    assert_eq!(tool.description(), "Counts calls.");
    let first = tool.invoke(&Context::new(), b"{}").await;
    assert_eq!(first.kind(), OutcomeKind::Success);
    let again = CountCalls.into_tool();
    assert_eq!(again.schema_json(), tool.schema_json());
}

/// The shared state of a counter.
#[derive(Default)]
struct Counter(Arc<AtomicUsize>);

/// Increments a counter by an amount.
#[tool]
async fn increment(
    ctx: Context,
    #[schema(describe = "How much to add.", min = 1, max = 10)] by: usize,
) -> Result<usize, std::io::Error> {
    let counter = ctx
        .get::<Counter>()
        .ok_or_else(|| std::io::Error::other("no counter"))?;
    Ok(counter.0.fetch_add(by, Ordering::SeqCst) + by)
}

// An async handler with a `Context` and one described parameter; any std error converts.
#[tokio::test]
async fn async_handler_with_context_and_one_described_param() {
    let ctx = Context::new().with(Counter::default());
    let tool = Increment.into_tool();
    assert_eq!(tool.invoke(&ctx, br#"{"by": 2}"#).await.text(), "2");
    assert_eq!(tool.invoke(&ctx, br#"{"by": 3}"#).await.text(), "5");
    let out = tool.invoke(&ctx, br#"{"by": 11}"#).await;
    assert_eq!(out.kind(), OutcomeKind::InvalidArguments);
    let out = tool.invoke(&Context::new(), br#"{"by": 1}"#).await;
    assert_eq!(
        (out.kind(), out.text()),
        (OutcomeKind::Failed, "the tool failed")
    );
}

// R1: every `#[tool]` of this binary is in the link-time registry, in name order, and a named
// selection returns them in the order asked.
#[test]
fn r1_registry_holds_every_tool() {
    let names: Vec<String> = tool_runtime::registry()
        .expect("no duplicate names")
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "add-numbers",
            "count-calls",
            "echo",
            "increment",
            "lookup-window",
            "whoami"
        ]
    );
    let picked: Vec<String> = tool_runtime::registered(["whoami", "echo"])
        .expect("both exist")
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(picked, ["whoami", "echo"]);
    for tool in tool_runtime::registry().expect("no duplicates") {
        assert!(
            tool.declaration_error().is_none(),
            "{}: {:?}",
            tool.name(),
            tool.declaration_error()
        );
        assert!(tool.site().file.ends_with("tool_macro.rs"));
    }
}
