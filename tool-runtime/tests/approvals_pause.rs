//! A run pauses for approval (H1, H2): the calls of a turn that need no decision run, the
//! run pauses with the others (id, tool, validated arguments, the predicate's reason), and
//! `run_stream` ends with the same pause. The predicate sees validated input only, and a call
//! that fails the availability re-check or validation is answered as any other.
mod support {
    pub mod agent;
    pub mod approvals;
}

use std::sync::atomic::Ordering;

use serde_json::json;
use support::approvals::{Admin, Fixture, admin, mixed_pause, mixed_turn, paused};
use tool_runtime::{
    Context, Message, OutcomeKind, PendingKind, RunEvent, ScriptedModel, ScriptedTurn, Usage,
};

// ─── H1, H2 ──────────────────────────────────────────────────────────────────────────────────

#[tokio::test]
async fn h2_a_mixed_turn_runs_the_other_calls_then_pauses_with_the_pending_ones() {
    let fixture = Fixture::new();
    let error = paused(&fixture, vec![mixed_turn()], None).await;
    assert!(!error.is_permanent());
    // The calls needing no decision ran; the pending ones did not (H2).
    assert_eq!(fixture.echo_runs.load(Ordering::SeqCst), 1);
    assert_eq!(fixture.restarted(), ["dev-db"]);
    // H1: the predicate saw validated input, with the default filled in.
    assert_eq!(
        *fixture.asked.lock().expect("not poisoned"),
        [("prod-db".to_owned(), true), ("dev-db".to_owned(), false)]
    );
    // E3: the application keeps a record of every call, the pending ones included.
    let kinds: Vec<_> = error.calls().iter().map(|c| (&*c.id, c.kind())).collect();
    assert_eq!(
        kinds,
        [
            ("c1", OutcomeKind::Success),
            ("c2", OutcomeKind::AwaitingApproval),
            ("c3", OutcomeKind::Success),
            ("c4", OutcomeKind::Deferred),
        ]
    );
    let paused = error.paused().expect("the paused run");
    let pending: Vec<_> = paused
        .pending()
        .iter()
        .map(|p| {
            (
                p.id(),
                p.tool(),
                p.arguments().clone(),
                p.kind(),
                p.reason(),
            )
        })
        .collect();
    assert_eq!(
        pending,
        [
            (
                "c2",
                "restart",
                json!({"service_id": "prod-db", "drain": true}),
                PendingKind::Approval,
                Some("prod-db serves production traffic"),
            ),
            (
                "c4",
                "ship",
                json!({"order_id": "o-1"}),
                PendingKind::Deferred,
                None
            ),
        ]
    );
    assert_eq!(paused.pending()[1].index(), 3);
    // The transcript ends with the calls that paused; no result follows them yet.
    assert!(matches!(
        paused.transcript().last(),
        Some(Message::Assistant { tool_calls, .. }) if tool_calls.len() == 4
    ));
    assert_eq!(error.transcript(), paused.transcript());
    assert_eq!(
        (paused.turns(), paused.usage()),
        (1, &[Usage::new(10, 5)][..])
    );
    assert_eq!(
        paused.advertised().collect::<Vec<_>>(),
        ["echo", "restart", "ship", "leaky"]
    );
}

#[tokio::test]
async fn h2_run_stream_ends_with_the_same_pause_as_an_event() {
    let fixture = Fixture::new();
    let from_run = mixed_pause(&fixture).await;
    let fixture = Fixture::new();
    let agent = fixture.agent(ScriptedModel::new([mixed_turn()]), None);
    let mut stream = agent.run_stream(&admin(), "Restart the databases and ship o-1");
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event.expect("a pause is not an error in the stream"));
    }
    let Some(RunEvent::Paused(from_stream)) = events.pop() else {
        panic!("the stream ends with the pause: {events:?}");
    };
    // The same pause as `run` returns, but for the ids of the run and the pause (H9).
    assert_eq!(from_stream.transcript(), from_run.transcript());
    assert_eq!(from_stream.pending(), from_run.pending());
    assert_eq!(from_stream.usage(), from_run.usage());
    assert_ne!(from_stream.run_id(), from_run.run_id());
    assert_ne!(from_stream.pause_id(), from_run.pause_id());
    let finished: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::CallFinished(record) => Some((record.index, record.kind())),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished.len(),
        4,
        "E3: every call is reported: {finished:?}"
    );
    assert!(finished.contains(&(1, OutcomeKind::AwaitingApproval)));
    assert!(matches!(
        events.last(),
        Some(RunEvent::TurnEnd { turn: 1, .. })
    ));
    assert_eq!(fixture.restarted(), ["dev-db"]);
}

#[tokio::test]
async fn h1_calls_failing_the_availability_recheck_or_validation_are_answered_as_today() {
    let fixture = Fixture::new();
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "restart", r#"{"service_id":"PROD DB!"}"#)
            .call("c2", "restart", r#"{"service_id":"prod-db","extra":1}"#),
        ScriptedTurn::reply("I could not restart it."),
    ]);
    let agent = fixture.agent(model.clone(), None);
    let out = agent.run(&admin(), "restart").await.expect("no pause");
    assert_eq!(out.calls[0].kind(), OutcomeKind::InvalidArguments);
    assert_eq!(out.calls[1].kind(), OutcomeKind::InvalidArguments);
    // A principal who may not restart: the tool is not advertised, the guess unavailable.
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "restart", r#"{"service_id":"prod-db"}"#),
        ScriptedTurn::reply("I cannot."),
    ]);
    let agent = fixture.agent(model.clone(), None);
    let out = agent
        .run(&Context::new().with(Admin(false)), "restart")
        .await
        .expect("no pause");
    assert_eq!(
        (out.calls[0].kind(), out.calls[0].text()),
        (OutcomeKind::Unavailable, "tool unavailable")
    );
    assert!(
        fixture.asked.lock().expect("not poisoned").is_empty(),
        "never asked"
    );
    assert!(fixture.restarted().is_empty());
}
