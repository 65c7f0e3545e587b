//! The call pipeline of one tool (`Tool::invoke`): declaration (D1, D2), availability (A1,
//! A4–A7), results and failures (E1–E4), permanent failures (P1) and argument limits (S2).

mod common;

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{CountedQuery, Exploding, QUERY_RENDERS, Query, block_on};
use serde_json::{Value, json};
use tool_core::{
    BoxError, Context, DeclarationError, ErrorKind, FAILED, Limits, NameError, OutcomeKind,
    Permanent, Rule, Tool, ToolError, UNAVAILABLE,
};

type Infallible = std::convert::Infallible;

fn counting_tool(calls: Arc<AtomicUsize>) -> Tool {
    Tool::builder("lookup", "Looks a thing up.")
        .handler(move |_ctx: Context, q: Query| {
            let calls = Arc::clone(&calls);
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok::<_, Infallible>(format!("found {}", q.id))
            }
        })
        .build()
}

/// A wrapper error with a source, as applications write them.
#[derive(Debug)]
struct Wrapped {
    secret: String,
    source: BoxError,
}

impl fmt::Display for Wrapped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "wrapper saw {}", self.secret)
    }
}

impl StdError for Wrapped {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.source)
    }
}

fn failing_tool(make: fn() -> BoxError) -> Tool {
    Tool::builder("fails", "Always fails.")
        .handler(move |_ctx: Context, _q: Query| async move { Err::<String, _>(make()) })
        .build()
}

#[test]
fn d1_tool_is_send_sync_clone_and_schema_is_rendered_once() {
    fn assert_traits<T: Send + Sync + Clone + 'static>() {}
    assert_traits::<Tool>();

    // Only this test uses `CountedQuery`.
    let before = QUERY_RENDERS.load(Ordering::SeqCst);
    let tool = Tool::builder("lookup", "Looks a thing up.")
        .handler(|_: Context, q: CountedQuery| async move { Ok::<_, Infallible>(q.0.id) })
        .build();
    assert_eq!(QUERY_RENDERS.load(Ordering::SeqCst), before + 1);
    let rendered = tool.schema_json().to_owned();
    let copy = tool.clone();
    for _ in 0..3 {
        let out = block_on(copy.invoke(&Context::new(), br#"{"id":"a"}"#));
        assert_eq!(out.kind(), OutcomeKind::Success);
    }
    // Calls and clones render nothing again: the published bytes are the ones copied at
    // construction.
    assert_eq!(QUERY_RENDERS.load(Ordering::SeqCst), before + 1);
    assert_eq!(copy.schema_json(), rendered);
    assert_eq!(
        serde_json::from_str::<Value>(&rendered).ok().as_ref(),
        Some(tool.schema())
    );
}

#[test]
fn d2_invalid_declarations_are_kept_in_the_tool() {
    let bad_name = Tool::builder("Lookup_Window", "x")
        .handler(|_: Context, _: Query| async { Ok::<_, Infallible>("") })
        .build();
    assert!(matches!(
        bad_name.declaration_error(),
        Some(DeclarationError::InvalidName {
            source: NameError::Uppercase { .. },
            ..
        })
    ));

    let no_handler = Tool::builder("lookup", "x").build();
    assert!(matches!(
        no_handler.declaration_error(),
        Some(DeclarationError::MissingHandler { .. })
    ));

    let no_description = Tool::builder("lookup", "  ")
        .handler(|_: Context, _: Query| async { Ok::<_, Infallible>("") })
        .build();
    assert!(matches!(
        no_description.declaration_error(),
        Some(DeclarationError::MissingDescription { .. })
    ));

    // A root that is not an object cannot be a tool input (S1).
    let not_object = Tool::builder("lookup", "x")
        .handler(|_: Context, _: Vec<String>| async { Ok::<_, Infallible>("") })
        .build();
    assert!(matches!(
        not_object.declaration_error(),
        Some(DeclarationError::Schema { .. })
    ));

    // The error names where the tool was declared.
    let site = no_handler.site();
    assert!(site.file.ends_with("pipeline.rs"), "{site}");
    assert!(
        no_handler
            .declaration_error()
            .is_some_and(|e| e.to_string().contains("pipeline.rs"))
    );
}

#[test]
fn d2_an_invalid_tool_never_runs_its_handler() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&calls);
    let tool = Tool::builder("Bad Name", "x")
        .handler(move |_: Context, _: Query| {
            c.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, Infallible>("") }
        })
        .build();
    let out = block_on(tool.invoke(&Context::new(), br#"{"id":"a"}"#));
    assert_eq!(out.kind(), OutcomeKind::Fatal);
    assert_eq!(out.error().map(|e| e.kind()), Some(ErrorKind::Declaration));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn a1_a_tool_without_policy_is_available() {
    let tool = counting_tool(Arc::new(AtomicUsize::new(0)));
    assert!(!tool.has_policy());
    assert!(matches!(
        block_on(tool.available(&Context::new())),
        Ok(true)
    ));
}

#[test]
fn a4_denial_comes_before_decoding_parsing_and_the_handler() {
    let calls = Arc::new(AtomicUsize::new(0));
    let checks = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&checks);
    let tool = Tool::builder("lookup", "Looks a thing up.")
        .handler({
            let calls = Arc::clone(&calls);
            move |_: Context, _: Query| {
                calls.fetch_add(1, Ordering::SeqCst);
                async { Ok::<_, Infallible>("ran") }
            }
        })
        .available_fn(move |_| {
            c.fetch_add(1, Ordering::SeqCst);
            Ok::<_, Infallible>(false)
        })
        .build();
    // Garbage arguments: a denial must win over the syntax error, so the model learns
    // nothing about the schema of a tool it may not use.
    for args in [&br#"{"id":"a"}"#[..], b"not json", br#"{"id":1}"#] {
        let out = block_on(tool.invoke(&Context::new(), args));
        assert_eq!(out.kind(), OutcomeKind::Unavailable);
        assert_eq!(out.text(), UNAVAILABLE);
        assert!(out.violations().is_empty());
    }
    assert_eq!(checks.load(Ordering::SeqCst), 3);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[derive(Debug)]
struct Principal {
    can_view: bool,
}

async fn can_view(ctx: &Context) -> Result<bool, std::io::Error> {
    Ok(ctx.get::<Principal>().is_some_and(|p| p.can_view))
}

#[test]
fn a4_async_policy_reads_the_context_of_each_call() {
    let tool = Tool::builder("lookup", "Looks a thing up.")
        .handler(|_: Context, q: Query| async move { Ok::<_, Infallible>(q.id) })
        .available_async(can_view)
        .build();
    let allowed = Context::new().with(Principal { can_view: true });
    let denied = Context::new().with(Principal { can_view: false });
    let out = block_on(tool.invoke(&allowed, br#"{"id":"svc-1"}"#));
    assert_eq!((out.kind(), out.text()), (OutcomeKind::Success, "svc-1"));
    let out = block_on(tool.invoke(&denied, br#"{"id":"svc-1"}"#));
    assert_eq!(
        (out.kind(), out.text()),
        (OutcomeKind::Unavailable, UNAVAILABLE)
    );
}

#[test]
fn a6_policy_error_is_permanent_availability_and_never_reaches_the_model() {
    let tool = Tool::builder("lookup", "Looks a thing up.")
        .handler(|_: Context, q: Query| async move { Ok::<_, Infallible>(q.id) })
        .available_fn(|_| {
            // Even a ToolError inside a policy failure stays hidden.
            Err::<bool, _>(Wrapped {
                secret: "db password hunter2".into(),
                source: Box::new(ToolError::new("approved text")),
            })
        })
        .build();
    let out = block_on(tool.invoke(&Context::new(), br#"{"id":"a"}"#));
    assert_eq!(out.kind(), OutcomeKind::Fatal);
    assert_eq!(out.text(), FAILED);
    let error = out.error().expect("the error is kept for the application");
    assert_eq!(error.kind(), ErrorKind::Availability);
    assert!(error.is(ErrorKind::Availability) && error.is(ErrorKind::Permanent));
    // The cause is kept (E3).
    assert!(format!("{error:#}").contains("hunter2"));
}

#[test]
fn a7_available_previews_without_parsing_or_running() {
    let calls = Arc::new(AtomicUsize::new(0));
    let tool = Tool::builder("lookup", "x")
        .handler({
            let calls = Arc::clone(&calls);
            move |_: Context, _: Query| {
                calls.fetch_add(1, Ordering::SeqCst);
                async { Ok::<_, Infallible>("") }
            }
        })
        .available_async(can_view)
        .build();
    let yes = Context::new().with(Principal { can_view: true });
    assert!(matches!(block_on(tool.available(&yes)), Ok(true)));
    assert!(matches!(
        block_on(tool.available(&Context::new())),
        Ok(false)
    ));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[derive(Clone, serde::Serialize)]
struct Summary {
    starts_at: &'static str,
    ends_at: &'static str,
}

#[test]
fn e1_strings_go_unchanged_other_results_as_json() {
    fn with_result<T: serde::Serialize + Send + Sync + Clone + 'static>(value: T) -> String {
        let tool = Tool::builder("t", "x")
            .handler(move |_: Context, _: Query| {
                let v = value.clone();
                async move { Ok::<_, Infallible>(v) }
            })
            .build();
        let out = block_on(tool.invoke(&Context::new(), br#"{"id":"a"}"#));
        assert_eq!(out.kind(), OutcomeKind::Success);
        out.text().to_owned()
    }
    let text = "line one\n\"quoted\" — ünïcode \\ done";
    assert_eq!(with_result(text.to_owned()), text);
    assert_eq!(with_result(Value::String(text.to_owned())), text);
    assert_eq!(with_result(42_u32), "42");
    assert_eq!(with_result(Option::<u8>::None), "null");
    let summary = with_result(BTreeMap::from([("k", 1)]));
    assert_eq!(summary, r#"{"k":1}"#);
    let s = Summary {
        starts_at: "2024-05-01T02:00:00Z",
        ends_at: "2024-05-01T04:00:00Z",
    };
    let json: Value = serde_json::from_str(&with_result(s)).unwrap_or(Value::Null);
    assert_eq!(
        json,
        json!({"starts_at": "2024-05-01T02:00:00Z", "ends_at": "2024-05-01T04:00:00Z"})
    );
}

#[test]
fn e2_ordinary_errors_are_redacted_and_e3_kept() {
    let tool = failing_tool(|| Box::new(std::io::Error::other("connection to 10.0.0.7 refused")));
    let out = block_on(tool.invoke(&Context::new(), br#"{"id":"a"}"#));
    assert_eq!((out.kind(), out.text()), (OutcomeKind::Failed, FAILED));
    let error = out.error().expect("kept");
    assert_eq!(error.kind(), ErrorKind::Handler);
    assert!(!error.is_permanent());
    assert!(format!("{error:#}").contains("10.0.0.7"));
}

#[test]
fn e2_a_wrapped_tool_error_sends_only_its_own_text() {
    let tool = failing_tool(|| {
        Box::new(Wrapped {
            secret: "internal id 991".into(),
            source: Box::new(ToolError::new("No maintenance window is scheduled.")),
        })
    });
    let out = block_on(tool.invoke(&Context::new(), br#"{"id":"a"}"#));
    assert_eq!(out.kind(), OutcomeKind::Rejected);
    assert_eq!(out.text(), "No maintenance window is scheduled.");
    assert!(format!("{:#}", out.error().expect("kept")).contains("internal id 991"));
}

#[test]
fn e2_anyhow_context_around_a_tool_error() {
    let tool = Tool::builder("t", "x")
        .handler(|_: Context, _: Query| async {
            let inner: anyhow::Result<String> = Err(ToolError::new("try again tomorrow").into());
            inner.map_err(|e| e.context("secret context 77"))
        })
        .build();
    let out = block_on(tool.invoke(&Context::new(), br#"{"id":"a"}"#));
    assert_eq!(
        (out.kind(), out.text()),
        (OutcomeKind::Rejected, "try again tomorrow")
    );

    let plain = Tool::builder("t", "x")
        .handler(|_: Context, _: Query| async {
            Err::<String, _>(anyhow::anyhow!("secret context 78"))
        })
        .build();
    let out = block_on(plain.invoke(&Context::new(), br#"{"id":"a"}"#));
    assert_eq!((out.kind(), out.text()), (OutcomeKind::Failed, FAILED));
}

#[test]
fn e4_panics_are_contained_and_never_reach_the_model() {
    let handler = Tool::builder("t", "x")
        .handler(|_: Context, _: Query| async {
            if true {
                panic!("secret panic 1");
            }
            Ok::<_, Infallible>("")
        })
        .build();
    let policy = Tool::builder("t", "x")
        .handler(|_: Context, _: Query| async { Ok::<_, Infallible>("") })
        .available_fn(|_| -> Result<bool, Infallible> { panic!("secret panic 2") })
        .build();
    let parser = Tool::builder("t", "x")
        .handler(|_: Context, _: Exploding| async { Ok::<_, Infallible>("") })
        .build();
    for (tool, secret) in [
        (handler, "secret panic 1"),
        (policy, "secret panic 2"),
        (parser, "parser exploded"),
    ] {
        let out = block_on(tool.invoke(&Context::new(), br#"{"id":"a"}"#));
        assert_eq!((out.kind(), out.text()), (OutcomeKind::Fatal, FAILED));
        let error = out.error().expect("kept");
        assert_eq!(error.kind(), ErrorKind::Panic);
        assert!(error.is_permanent());
        assert!(error.to_string().contains(secret), "{error}");
    }
}

#[test]
fn p1_permanent_anywhere_in_the_chain_is_fatal() {
    let direct = failing_tool(|| Box::new(Permanent::new(std::io::Error::other("disk gone"))));
    let wrapped = failing_tool(|| {
        Box::new(Wrapped {
            secret: "s".into(),
            source: Box::new(Permanent::new(ToolError::new("approved but fatal"))),
        })
    });
    for tool in [direct, wrapped] {
        let out = block_on(tool.invoke(&Context::new(), br#"{"id":"a"}"#));
        assert_eq!((out.kind(), out.text()), (OutcomeKind::Fatal, FAILED));
        let error = out.error().expect("kept");
        assert_eq!(error.kind(), ErrorKind::Permanent);
        assert!(out.is_fatal());
    }
}

#[test]
fn s2_violations_stop_the_handler_and_reach_the_model() {
    let calls = Arc::new(AtomicUsize::new(0));
    let tool = counting_tool(Arc::clone(&calls));
    let cases: [(&[u8], Rule, &str); 5] = [
        (b"{\"id\": 5}", Rule::Type, "/id"),
        (b"{}", Rule::Required, "/id"),
        (b"{\"id\":\"a\",\"x\":1}", Rule::AdditionalProperties, "/x"),
        (b"[1,2]", Rule::Type, ""),
        (b"{\"id\":\"a\",\"id\":\"b\"}", Rule::Syntax, ""),
    ];
    for (args, rule, path) in cases {
        let out = block_on(tool.invoke(&Context::new(), args));
        assert_eq!(out.kind(), OutcomeKind::InvalidArguments, "{args:?}");
        assert_eq!(out.violations()[0].rule, rule);
        assert_eq!(out.violations()[0].path, path);
        assert!(
            out.text().starts_with("invalid arguments:"),
            "{}",
            out.text()
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn s2_huge_and_deep_arguments_are_violations() {
    let calls = Arc::new(AtomicUsize::new(0));
    let tool = counting_tool(Arc::clone(&calls));
    let huge = format!("{{\"id\":\"{}\"}}", "x".repeat(10 * 1024 * 1024));
    let out = block_on(tool.invoke(&Context::new(), huge.as_bytes()));
    assert_eq!(out.violations()[0].rule, Rule::Size);
    assert!(
        out.text().len() < 200,
        "the model gets no echo of the input"
    );

    // The limit is configurable.
    let small = Limits {
        max_argument_bytes: 8,
    };
    let out = block_on(tool.invoke_with(&Context::new(), br#"{"id":"abcdef"}"#, &small));
    assert_eq!(out.violations()[0].rule, Rule::Size);

    let deep = format!("{{\"id\":{}1{}}}", "[".repeat(10_000), "]".repeat(10_000));
    let out = block_on(tool.invoke(&Context::new(), deep.as_bytes()));
    assert_eq!(out.kind(), OutcomeKind::InvalidArguments);
    assert_eq!(out.violations()[0].rule, Rule::Syntax);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn the_handler_sees_its_call_in_the_context() {
    let tool = Tool::builder("t", "x")
        .handler(|ctx: Context, _: Query| async move {
            let call = ctx.call().map(|c| format!("{}/{}", c.tool, c.id));
            Ok::<_, Infallible>(call.unwrap_or_default())
        })
        .build();
    let ctx = Context::new().for_call("call_7", "t");
    let out = block_on(tool.invoke(&ctx, br#"{"id":"a"}"#));
    assert_eq!(out.text(), "t/call_7");
}

#[test]
fn s2_run_time_schemas_are_enforced_before_the_handler() {
    use tool_core::violation::ParseCx;
    let calls = Arc::new(AtomicUsize::new(0));
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let validator = |v: &Value, cx: &mut ParseCx| {
        if !v.get("n").is_some_and(Value::is_i64) {
            cx.violate_at("n", Rule::Type, "expected an integer");
        }
    };
    let tool = Tool::builder("proxy", "Forwards a call.")
        .dynamic_handler(schema.clone(), validator, {
            let calls = Arc::clone(&calls);
            move |_: Context, args: Value| {
                calls.fetch_add(1, Ordering::SeqCst);
                async move { Ok::<_, Infallible>(args["n"].clone()) }
            }
        })
        .build();
    assert!(tool.declaration_error().is_none());
    assert_eq!(tool.schema(), &schema);
    let bad = block_on(tool.invoke(&Context::new(), br#"{"n":"x"}"#));
    assert_eq!(bad.kind(), OutcomeKind::InvalidArguments);
    assert_eq!(bad.violations()[0].path, "/n");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let good = block_on(tool.invoke(&Context::new(), br#"{"n":4}"#));
    assert_eq!((good.kind(), good.text()), (OutcomeKind::Success, "4"));

    // D2: a run-time schema whose root is not an object makes the tool unusable.
    let bad_root = Tool::builder("proxy", "x")
        .dynamic_handler(
            json!({"type": "array"}),
            validator,
            |_: Context, v: Value| async move { Ok::<_, Infallible>(v) },
        )
        .build();
    assert!(matches!(
        bad_root.declaration_error(),
        Some(DeclarationError::Schema { .. })
    ));
}

/// T2: a handler that relays a call elsewhere gives the local call the relayed outcome kind,
/// with that kind's fixed text, the relay's error kept for the application (E3); a
/// `Permanent` in the same chain still wins, and nothing relayed can approve text.
#[test]
fn t2_a_relayed_outcome_keeps_its_kind_with_its_fixed_text() {
    use tool_core::{CANCELLED, Relayed, RelayedKind, TIMED_OUT};
    let relaying = |kind: RelayedKind, permanent: bool| {
        Tool::builder("relay", "Relays a call.")
            .handler(move |_ctx: Context, _q: Query| async move {
                let relayed = Relayed::new(kind).with_source(ToolError::new("secret remote text"));
                let error: BoxError = if permanent {
                    Box::new(Permanent::new(relayed))
                } else {
                    Box::new(relayed)
                };
                Err::<String, _>(error)
            })
            .build()
    };
    for (kind, outcome, text) in [
        (
            RelayedKind::Unavailable,
            OutcomeKind::Unavailable,
            UNAVAILABLE,
        ),
        (RelayedKind::TimedOut, OutcomeKind::TimedOut, TIMED_OUT),
        (RelayedKind::Cancelled, OutcomeKind::Cancelled, CANCELLED),
    ] {
        let out = block_on(relaying(kind, false).invoke(&Context::new(), br#"{"id": "a"}"#));
        assert_eq!((out.kind(), out.text()), (outcome, text), "{kind:?}");
        assert!(out.error().is_some_and(|e| e.relayed().is_some()));
        let fatal = block_on(relaying(kind, true).invoke(&Context::new(), br#"{"id": "a"}"#));
        assert_eq!((fatal.kind(), fatal.text()), (OutcomeKind::Fatal, FAILED));
    }
}
