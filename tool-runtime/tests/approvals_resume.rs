//! Resuming a paused run (H4, H5): one decision per pending call (approve, deny with the
//! model's message), errors for undecided, unknown or mismatched decisions; availability and
//! validation checked again at resume; deferred calls resumed with their results, which reach
//! the model like any result (E1, E2).
mod support {
    pub mod agent;
    pub mod approvals;
}

use serde_json::json;
use support::agent::texts;
use support::approvals::{Admin, Fixture, admin, forge, mixed_pause, paused, resume_error};
use tool_runtime::RunRequest;
use tool_runtime::{
    Context, Decisions, OutcomeKind, PendingKind, ResumeError, RunEvent, ScriptedModel,
    ScriptedTurn, ToolError,
};

// ─── H4 ──────────────────────────────────────────────────────────────────────────────────────

#[tokio::test]
async fn h4_each_pending_call_is_approved_or_denied_and_the_model_reads_the_denial() {
    let fixture = Fixture::new();
    let turn = ScriptedTurn::new()
        .call("c1", "restart", r#"{"service_id":"prod-db"}"#)
        .call("c2", "restart", r#"{"service_id":"prod-web"}"#)
        .call("c3", "restart", r#"{"service_id":"prod-cache"}"#);
    let paused = paused(&fixture, vec![turn], None)
        .await
        .into_paused()
        .unwrap();
    assert_eq!(paused.pending().len(), 3);
    // The resumed run pauses again at its next turn: decisions are per call, every time.
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c4", "restart", r#"{"service_id":"prod-mq"}"#),
        ScriptedTurn::reply("Done."),
    ]);
    let agent = fixture.agent(model.clone(), None);
    let decisions = Decisions::new()
        .approve("c1")
        .deny_with("c2", "Not during business hours.")
        .deny("c3");
    let again = agent
        .resume(&admin(), paused, decisions)
        .await
        .expect_err("the next turn pauses again");
    let kinds: Vec<_> = again.calls().iter().map(|c| (&*c.id, c.kind())).collect();
    assert_eq!(
        kinds,
        [
            ("c1", OutcomeKind::Success),
            ("c2", OutcomeKind::Denied),
            ("c3", OutcomeKind::Denied),
            ("c4", OutcomeKind::AwaitingApproval),
        ]
    );
    assert_eq!(
        texts(&model.requests()[0].tool_results()),
        [
            ("c1".to_owned(), "prod-db restarted".to_owned()),
            ("c2".to_owned(), "Not during business hours.".to_owned()),
            ("c3".to_owned(), "the call was not approved".to_owned()),
        ]
    );
    assert!(model.requests()[0].tool_results()[1].is_error);
    assert_eq!(fixture.restarted(), ["prod-db"], "denied calls never ran");
    let again = again.into_paused().unwrap();
    assert_eq!((again.turns(), again.pending()[0].id()), (2, "c4"));
    let out = agent
        .resume(&admin(), again, Decisions::new().deny("c4"))
        .await
        .unwrap();
    assert_eq!(out.text, "Done.");
    assert_eq!(fixture.restarted(), ["prod-db"]);
}

#[tokio::test]
async fn h4_undecided_unknown_and_mismatched_decisions_are_errors_and_nothing_runs() {
    let fixture = Fixture::new();
    let paused = mixed_pause(&fixture).await;
    let agent = fixture.agent(ScriptedModel::new([ScriptedTurn::reply("never")]), None);
    let cases = [
        (
            Decisions::new().approve("c2"),
            ResumeError::Undecided {
                call_id: "c4".to_owned(),
            },
        ),
        (
            Decisions::new().approve("c2").deny("c4").approve("c9"),
            ResumeError::UnknownCall {
                call_id: "c9".to_owned(),
            },
        ),
        (
            // c1 ran before the pause: it is not pending.
            Decisions::new().approve("c2").deny("c4").approve("c1"),
            ResumeError::UnknownCall {
                call_id: "c1".to_owned(),
            },
        ),
        (
            Decisions::new().approve("c2").approve("c4"),
            ResumeError::WrongDecision {
                call_id: "c4".to_owned(),
                kind: PendingKind::Deferred,
            },
        ),
        (
            Decisions::new().result("c2", "restarted").deny("c4"),
            ResumeError::WrongDecision {
                call_id: "c2".to_owned(),
                kind: PendingKind::Approval,
            },
        ),
    ];
    for (decisions, expected) in cases {
        let result = agent.resume(&admin(), paused.clone(), decisions).await;
        assert_eq!(resume_error(result), expected);
    }
    assert_eq!(
        fixture.restarted(),
        ["dev-db"],
        "nothing ran after the pause"
    );
}

#[tokio::test]
async fn h4_resume_rechecks_availability_so_a_principal_who_lost_the_right_is_refused() {
    let fixture = Fixture::new();
    let paused = mixed_pause(&fixture).await;
    let model = ScriptedModel::new([ScriptedTurn::reply("I could not restart it.")]);
    let agent = fixture.agent(model.clone(), None);
    let no_longer_admin = Context::new().with(Admin(false));
    let decisions = Decisions::new().approve("c2").deny("c4");
    let out = agent
        .resume(&no_longer_admin, paused, decisions)
        .await
        .unwrap();
    assert_eq!(
        (out.calls[0].kind(), out.calls[0].text()),
        (OutcomeKind::Unavailable, "tool unavailable")
    );
    assert_eq!(
        fixture.restarted(),
        ["dev-db"],
        "the approved call did not run"
    );
}

#[tokio::test]
async fn h4_resume_validates_the_arguments_again() {
    let fixture = Fixture::new();
    let paused = mixed_pause(&fixture).await;
    // Someone rewrote the model's arguments and re-sealed the file (no key): the approved
    // call's arguments are validated again before any handler.
    let forged = forge(&paused, |run| {
        let calls = &mut run["state"]["transcript"][1]["tool_calls"];
        calls[1]["arguments"] = json!(r#"{"service_id":"PROD DB; rm -rf /"}"#);
    });
    let agent = fixture.agent(ScriptedModel::new([ScriptedTurn::reply("ok")]), None);
    let out = agent
        .resume(&admin(), forged, Decisions::new().approve("c2").deny("c4"))
        .await
        .unwrap();
    assert_eq!(out.calls[0].kind(), OutcomeKind::InvalidArguments);
    assert_eq!(fixture.restarted(), ["dev-db"]);
}

#[tokio::test]
async fn h4_resume_stream_reports_the_decided_calls_then_the_answer() {
    let fixture = Fixture::new();
    let paused = mixed_pause(&fixture).await;
    let agent = fixture.agent(ScriptedModel::new([ScriptedTurn::reply("Done.")]), None);
    let mut stream = agent.execute_stream(
        &admin(),
        RunRequest::resume(
            paused,
            Decisions::new().approve("c2").result("c4", "shipped"),
        ),
    );
    let mut seen = Vec::new();
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            RunEvent::Started { advertised } => seen.push(format!("started {}", advertised.len())),
            RunEvent::CallFinished(record) => seen.push(format!("{} {}", record.id, record.kind())),
            RunEvent::Finished(out) => seen.push(format!("finished {}", out.text)),
            _ => {}
        }
    }
    assert_eq!(
        seen,
        ["started 4", "c4 success", "c2 success", "finished Done."]
    );
}

// ─── H5 ──────────────────────────────────────────────────────────────────────────────────────

#[tokio::test]
async fn h5_deferred_calls_resume_with_results_that_reach_the_model_like_any_result() {
    let fixture = Fixture::new();
    let turn = ScriptedTurn::new()
        .call("s1", "ship", r#"{"order_id":"o-1"}"#)
        .call("s2", "ship", r#"{"order_id":"o-2"}"#)
        .call("s3", "ship", r#"{"order_id":"o-3"}"#)
        .call("s4", "ship", r#"{"order_id":"o-4"}"#)
        .call("s5", "ship", r#"{"order_id":5}"#);
    let error = paused(&fixture, vec![turn], None).await;
    // Validation applies to deferred calls too: s5 was answered at once.
    assert_eq!(error.calls()[4].kind(), OutcomeKind::InvalidArguments);
    let paused = error.into_paused().unwrap();
    assert!(
        paused
            .pending()
            .iter()
            .all(|p| p.kind() == PendingKind::Deferred)
    );
    assert_eq!(paused.pending().len(), 4);

    let model = ScriptedModel::new([ScriptedTurn::reply("Shipping sorted.")]);
    let agent = fixture.agent(model.clone(), None);
    let decisions = Decisions::new()
        .result("s1", "shipped")
        .result("s2", &json!({"tracking": "t-2"}))
        .failed("s3", ToolError::new("The warehouse is closed."))
        .failed(
            "s4",
            std::io::Error::other("wms://svc:pw-123@wms.internal down"),
        );
    let out = agent.resume(&admin(), paused, decisions).await.unwrap();
    let results = texts(&model.requests()[0].tool_results());
    assert_eq!(
        results[..4],
        [
            // E1: a string as its text, anything else as JSON.
            ("s1".to_owned(), "shipped".to_owned()),
            ("s2".to_owned(), r#"{"tracking":"t-2"}"#.to_owned()),
            // E2: a ToolError's text, else `the tool failed`.
            ("s3".to_owned(), "The warehouse is closed.".to_owned()),
            ("s4".to_owned(), "the tool failed".to_owned()),
        ]
    );
    let kinds: Vec<_> = out.calls.iter().map(|c| c.kind()).collect();
    assert_eq!(
        kinds,
        [
            OutcomeKind::Success,
            OutcomeKind::Success,
            OutcomeKind::Rejected,
            OutcomeKind::Failed
        ]
    );
    // E3: the application keeps what the model was not told.
    assert!(format!("{:#}", out.calls[3].error().unwrap()).contains("pw-123"));
}
