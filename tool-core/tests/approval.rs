//! Approval and deferred tools in the call pipeline of one tool (`Tool::invoke_with`,
//! `Tool::invoke_approved`): H1 (the predicate sees validated input only, after the
//! availability re-check), H5 (a deferred tool pauses every valid call), and their
//! declaration errors (D2).

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{Query, block_on};
use serde_json::{Value, json};
use tool_core::approval::Approval;
use tool_core::{
    AWAITING_APPROVAL, Context, DeclarationError, ErrorKind, FAILED, Limits, OutcomeKind, Tool,
    UNAVAILABLE,
};

type Infallible = std::convert::Infallible;

/// What a test observes of the `restart` tool: handler runs, and the inputs the predicate saw.
#[derive(Default)]
struct Seen {
    runs: AtomicUsize,
    asked: Mutex<Vec<String>>,
    allowed: AtomicBool,
}

/// `restart`: needs approval for ids starting with `prod-`; available while `allowed`.
fn restart(seen: &Arc<Seen>) -> Tool {
    let (runs, asked, allowed) = (Arc::clone(seen), Arc::clone(seen), Arc::clone(seen));
    Tool::builder("restart", "Restarts a service.")
        .handler(move |_ctx: Context, q: Query| {
            runs.runs.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, Infallible>(format!("restarted {}", q.id)) }
        })
        .available_fn(move |_ctx: &Context| {
            Ok::<_, Infallible>(allowed.allowed.load(Ordering::SeqCst))
        })
        .approval_async(move |_ctx: &Context, q: &Query| {
            asked.asked.lock().expect("not poisoned").push(q.id.clone());
            let production = q.id.starts_with("prod-");
            let id = q.id.clone();
            async move {
                Ok::<_, Infallible>(if production {
                    Approval::required(format!("{id} serves production traffic"))
                } else {
                    Approval::NotRequired
                })
            }
        })
        .build()
}

fn seen() -> Arc<Seen> {
    let seen = Arc::new(Seen::default());
    seen.allowed.store(true, Ordering::SeqCst);
    seen
}

fn asked(seen: &Seen) -> Vec<String> {
    seen.asked.lock().expect("not poisoned").clone()
}

#[test]
fn h1_the_predicate_decides_on_validated_input_and_the_handler_waits() {
    let seen = seen();
    let tool = restart(&seen);
    assert!(
        tool.declaration_error().is_none(),
        "{:?}",
        tool.declaration_error()
    );
    assert!(tool.requires_approval() && tool.can_pause() && !tool.is_deferred());
    let ctx = Context::new();

    let out = block_on(tool.invoke(&ctx, br#"{"id": "prod-1"}"#));
    assert_eq!(out.kind(), OutcomeKind::AwaitingApproval);
    assert_eq!(out.text(), AWAITING_APPROVAL);
    assert_eq!(
        out.approval_reason(),
        Some("prod-1 serves production traffic")
    );
    assert_eq!(out.validated_arguments(), Some(&json!({"id": "prod-1"})));
    assert!(out.is_pending() && !out.is_fatal());
    assert_eq!(seen.runs.load(Ordering::SeqCst), 0, "nothing of it ran");

    let out = block_on(tool.invoke(&ctx, br#"{"id": "dev-1"}"#));
    assert_eq!(
        (out.kind(), out.text()),
        (OutcomeKind::Success, "restarted dev-1")
    );
    assert_eq!(seen.runs.load(Ordering::SeqCst), 1);
    assert_eq!(asked(&seen), ["prod-1", "dev-1"]);
}

#[test]
fn h1_calls_that_fail_availability_or_validation_never_reach_the_predicate() {
    let seen = seen();
    let tool = restart(&seen);
    let ctx = Context::new();
    for bad in [
        &br#"{"id": 7}"#[..],
        br#"{}"#,
        br#"{"id": "prod-1", "x": 1}"#,
        b"not json",
    ] {
        let out = block_on(tool.invoke(&ctx, bad));
        assert_eq!(out.kind(), OutcomeKind::InvalidArguments, "{}", out.text());
    }
    seen.allowed.store(false, Ordering::SeqCst);
    let out = block_on(tool.invoke(&ctx, br#"{"id": "prod-1"}"#));
    assert_eq!(
        (out.kind(), out.text()),
        (OutcomeKind::Unavailable, UNAVAILABLE)
    );
    assert!(
        asked(&seen).is_empty(),
        "the predicate saw {:?}",
        asked(&seen)
    );
    assert_eq!(seen.runs.load(Ordering::SeqCst), 0);
}

#[test]
fn h4_an_approved_call_runs_without_asking_again_but_after_the_same_checks() {
    let seen = seen();
    let tool = restart(&seen);
    let ctx = Context::new();
    let limits = Limits::default();
    let out = block_on(tool.invoke_approved(&ctx, br#"{"id": "prod-1"}"#, &limits));
    assert_eq!(
        (out.kind(), out.text()),
        (OutcomeKind::Success, "restarted prod-1")
    );
    assert!(
        asked(&seen).is_empty(),
        "approved: the predicate is not asked"
    );
    // Validation still runs for an approved call...
    let out = block_on(tool.invoke_approved(&ctx, br#"{"id": false}"#, &limits));
    assert_eq!(out.kind(), OutcomeKind::InvalidArguments);
    // ... and so does the availability re-check.
    seen.allowed.store(false, Ordering::SeqCst);
    let out = block_on(tool.invoke_approved(&ctx, br#"{"id": "prod-1"}"#, &limits));
    assert_eq!(out.text(), UNAVAILABLE);
    assert_eq!(seen.runs.load(Ordering::SeqCst), 1);
}

#[test]
fn h1_always_asks_for_every_valid_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let tool = Tool::builder("wipe", "Wipes a disk.")
        .handler(move |_ctx: Context, q: Query| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, Infallible>(q.id) }
        })
        .require_approval()
        .build();
    let out = block_on(tool.invoke(&Context::new(), br#"{"id": "disk-0"}"#));
    assert_eq!(out.kind(), OutcomeKind::AwaitingApproval);
    assert_eq!(
        out.approval_reason(),
        Some("every call of `wipe` needs approval")
    );
    let out = block_on(tool.invoke(&Context::new(), br#"{"id": 0}"#));
    assert_eq!(out.kind(), OutcomeKind::InvalidArguments);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[test]
fn h1_a_failing_or_panicking_predicate_ends_the_run_and_never_runs_the_handler() {
    let runs = Arc::new(AtomicUsize::new(0));
    let build = |panics: bool| {
        let counter = Arc::clone(&runs);
        Tool::builder("restart", "Restarts a service.")
            .handler(move |_ctx: Context, q: Query| {
                counter.fetch_add(1, Ordering::SeqCst);
                async move { Ok::<_, Infallible>(q.id) }
            })
            .approval_fn(move |_ctx: &Context, _q: &Query| {
                assert!(!panics, "the predicate exploded");
                Err::<Approval, _>(std::io::Error::other("approvals db at 10.0.0.7 is down"))
            })
            .build()
    };
    let out = block_on(build(false).invoke(&Context::new(), br#"{"id": "a"}"#));
    assert_eq!((out.kind(), out.text()), (OutcomeKind::Fatal, FAILED));
    let error = out.error().expect("the cause is kept (E3)");
    assert!(error.is(ErrorKind::Approval) && error.is_permanent());
    assert!(format!("{error:#}").contains("10.0.0.7"));
    let out = block_on(build(true).invoke(&Context::new(), br#"{"id": "a"}"#));
    assert_eq!((out.kind(), out.text()), (OutcomeKind::Fatal, FAILED));
    assert_eq!(
        out.error().map(tool_core::Error::kind),
        Some(ErrorKind::Panic)
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[test]
fn h5_a_deferred_tool_pauses_every_valid_call_even_when_approved() {
    let tool = Tool::builder("ship", "Ships an order.")
        .deferred::<Query>()
        .build();
    assert!(tool.declaration_error().is_none() && tool.is_deferred() && tool.can_pause());
    assert_eq!(tool.schema()["required"], json!(["id"]));
    let out = block_on(tool.invoke(&Context::new(), br#"{"id": "order-9"}"#));
    assert_eq!(out.kind(), OutcomeKind::Deferred);
    assert_eq!(out.validated_arguments(), Some(&json!({"id": "order-9"})));
    assert_eq!(out.approval_reason(), None);
    let out = block_on(tool.invoke(&Context::new(), br#"{"id": 9}"#));
    assert_eq!(out.kind(), OutcomeKind::InvalidArguments);
    let limits = Limits::default();
    let out = block_on(tool.invoke_approved(&Context::new(), br#"{"id": "o"}"#, &limits));
    assert_eq!(
        out.kind(),
        OutcomeKind::Deferred,
        "no handler here, even approved"
    );

    let dynamic = Tool::builder("ship-dynamic", "Ships an order.")
        .deferred_dynamic(
            json!({"type": "object"}),
            |v: &Value, cx: &mut tool_core::violation::ParseCx| {
                if v.get("id").is_none() {
                    cx.violate_at("id", tool_core::Rule::Required, "is required");
                }
            },
        )
        .build();
    let out = block_on(dynamic.invoke(&Context::new(), br#"{"id": 1, "n": 2}"#));
    assert_eq!(out.kind(), OutcomeKind::Deferred);
    assert_eq!(out.validated_arguments(), Some(&json!({"id": 1, "n": 2})));
    let out = block_on(dynamic.invoke(&Context::new(), br#"{}"#));
    assert_eq!(out.kind(), OutcomeKind::InvalidArguments);
}

#[test]
fn d2_approval_declared_wrong_is_a_declaration_error() {
    let mismatch = Tool::builder("restart", "Restarts a service.")
        .handler(|_ctx: Context, q: Query| async move { Ok::<_, Infallible>(q.id) })
        .approval_fn(|_ctx: &Context, _v: &Value| Ok::<_, Infallible>(Approval::NotRequired))
        .build();
    match mismatch.declaration_error() {
        Some(DeclarationError::ApprovalInputMismatch {
            expected, found, ..
        }) => {
            assert!(
                expected.ends_with("Query") && found.ends_with("Value"),
                "{expected} {found}"
            );
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
    let deferred = Tool::builder("ship", "Ships an order.")
        .deferred::<Query>()
        .require_approval()
        .build();
    assert!(matches!(
        deferred.declaration_error(),
        Some(DeclarationError::ApprovalOnDeferred { .. })
    ));
    let nothing = Tool::builder("nothing", "Has no handler.").build();
    let text = nothing
        .declaration_error()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(text.contains("deferred"), "{text}");
}
