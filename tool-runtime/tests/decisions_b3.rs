//! Decisions that grow (B3): approve with edited arguments (validated again before anything
//! runs; the handler gets them and the transcript shows them), allow a tool for the rest of
//! the run (sealed in the state, consumed with its pause, H9), and decide some calls only
//! (the others stay pending; the run pauses again after the decided ones).
mod support {
    pub mod compose;
}

use serde_json::json;
use support::compose::{Ledger, lookup, transfer};
use tool_runtime::{
    Agent, Context, Decision, Decisions, ErrorKind, MemoryLedger, Message, OutcomeKind, PausedRun,
    ResumeError, RunError, ScriptedModel, ScriptedTurn,
};

fn agent(model: ScriptedModel, ledger: &Ledger) -> Agent {
    Agent::builder(model)
        .tool(transfer(ledger))
        .tool(lookup(ledger))
        .build()
        .expect("the agent builds")
}

fn paused(error: RunError) -> PausedRun {
    assert_eq!(error.kind(), ErrorKind::Paused, "{error:#}");
    error.into_paused().expect("the run paused")
}

fn refusal(result: Result<tool_runtime::RunOutput, RunError>) -> ResumeError {
    let error = result.expect_err("the resume is refused");
    assert_eq!(error.kind(), ErrorKind::Resume, "{error:#}");
    error.resume_error().cloned().expect("a resume error")
}

/// The arguments the transcript shows for call `id`.
fn shown(transcript: &[Message], id: &str) -> Option<String> {
    transcript
        .iter()
        .flat_map(Message::tool_calls)
        .find(|call| &*call.id == id)
        .map(|call| call.arguments.clone())
}

#[tokio::test]
async fn b3_approve_with_runs_the_edited_arguments_and_the_transcript_shows_them() {
    let ledger = Ledger::new();
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "transfer", r#"{"to":"acme","cents":90000}"#),
        ScriptedTurn::reply("Paid."),
    ]);
    let agent = agent(model.clone(), &ledger);
    let paused = paused(agent.run(&Context::new(), "Pay acme").await.unwrap_err());
    // Through JSON, as a paused run is kept while someone decides.
    let paused = PausedRun::from_json(&paused.to_json().unwrap()).unwrap();
    let edited = json!({"to": "acme", "cents": 900});
    let out = agent
        .resume(
            &Context::new(),
            paused,
            Decisions::new().approve_with("c1", edited.clone()),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Paid.");
    assert_eq!(
        ledger.entries(),
        ["transfer:acme:900"],
        "the handler got the edit"
    );
    let kept: serde_json::Value =
        serde_json::from_str(&shown(&out.transcript, "c1").unwrap()).unwrap();
    assert_eq!(kept, edited, "the transcript shows the approved arguments");
    let sent = &model.requests()[1];
    assert_eq!(sent.tool_results()[0].text, "paid 900 cents to acme");
    let asked: serde_json::Value =
        serde_json::from_str(&shown(&sent.messages, "c1").unwrap()).unwrap();
    assert_eq!(
        asked, edited,
        "the model reads the approved arguments as its call's"
    );
    assert_eq!(out.calls[0].arguments, edited.to_string());
}

#[tokio::test]
async fn b3_an_edit_that_does_not_fit_the_schema_is_refused_and_nothing_runs() {
    let ledger = Ledger::new();
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "transfer", r#"{"to":"acme","cents":90000}"#),
        ScriptedTurn::reply("Paid."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(transfer(&ledger))
        .ledger(MemoryLedger::new())
        .build()
        .unwrap();
    let paused = paused(agent.run(&Context::new(), "Pay acme").await.unwrap_err());
    for bad in [
        json!({"to": "acme", "cents": 0}),
        json!({"to": "Not An Account!", "cents": 5}),
        json!({"to": "acme"}),
        json!("acme"),
    ] {
        let error = refusal(
            agent
                .resume(
                    &Context::new(),
                    paused.clone(),
                    Decisions::new().approve_with("c1", bad.clone()),
                )
                .await,
        );
        let ResumeError::InvalidArguments {
            call_id,
            violations,
        } = &error
        else {
            panic!("{bad}: {error}");
        };
        assert_eq!(call_id, "c1");
        assert!(!violations.is_empty(), "{bad}");
        assert!(error.to_string().contains("do not fit"), "{error}");
    }
    assert!(ledger.entries().is_empty(), "nothing ran");
    assert_eq!(model.request_count(), 1, "no request was sent");
    // The pause was not consumed by the refused resumes (H9): a valid edit still resumes it.
    let out = agent
        .resume(
            &Context::new(),
            paused,
            Decisions::new().approve_with("c1", json!({"to": "acme", "cents": 5})),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Paid.");
    assert_eq!(ledger.entries(), ["transfer:acme:5"]);
}

#[tokio::test]
async fn b3_approve_with_fits_only_a_call_awaiting_approval() {
    let ledger = Ledger::new();
    let model = ScriptedModel::new([ScriptedTurn::new().call(
        "c1",
        "transfer",
        r#"{"to":"acme","cents":5}"#,
    )]);
    let agent = agent(model, &ledger);
    let paused = paused(agent.run(&Context::new(), "Pay").await.unwrap_err());
    let nested = Decisions::new().nested("c1", Decisions::new().approve("x"));
    let error = refusal(agent.resume(&Context::new(), paused, nested).await);
    assert!(
        matches!(&error, ResumeError::WrongDecision { call_id, .. } if call_id == "c1"),
        "{error}"
    );
}

#[tokio::test]
async fn b3_allow_for_run_approves_later_calls_of_the_tool_and_is_sealed_in_the_state() {
    let ledger = Ledger::new();
    let script = || {
        ScriptedModel::new([
            ScriptedTurn::new().call("c1", "transfer", r#"{"to":"acme","cents":5}"#),
            // Allowed now: runs without asking.
            ScriptedTurn::new().call("c2", "transfer", r#"{"to":"bolt","cents":6}"#),
            ScriptedTurn::reply("Both paid."),
        ])
    };
    let model = script();
    let agent = agent(model.clone(), &ledger);
    let first = paused(agent.run(&Context::new(), "Pay both").await.unwrap_err());
    let out = agent
        .resume(
            &Context::new(),
            first.clone(),
            Decisions::new().allow_for_run("c1"),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Both paid.");
    assert_eq!(ledger.entries(), ["transfer:acme:5", "transfer:bolt:6"]);
    let kinds: Vec<_> = out.calls.iter().map(|c| c.kind()).collect();
    assert_eq!(kinds, [OutcomeKind::Success, OutcomeKind::Success]);

    // A plain approval allows nothing more: the second call waits again.
    let ledger = Ledger::new();
    let agent = self::agent(script(), &ledger);
    let first = paused(agent.run(&Context::new(), "Pay both").await.unwrap_err());
    let again = agent
        .resume(&Context::new(), first, Decisions::new().approve("c1"))
        .await
        .unwrap_err();
    assert_eq!(paused(again).pending()[0].id(), "c2");
}

#[tokio::test]
async fn b3_an_allowed_tool_survives_a_later_pause_through_json_and_its_seal_guards_it() {
    let ledger = Ledger::new();
    let script = || {
        ScriptedModel::new([
            ScriptedTurn::new().call("c1", "transfer", r#"{"to":"acme","cents":5}"#),
            // The run pauses here on a call needing approval, `transfer` being allowed.
            ScriptedTurn::new()
                .call("c2", "transfer", r#"{"to":"bolt","cents":6}"#)
                .call("c3", "gate", r#"{}"#),
            ScriptedTurn::new().call("c4", "transfer", r#"{"to":"cask","cents":7}"#),
            ScriptedTurn::reply("Done."),
        ])
    };
    let gate = tool_runtime::Tool::builder("gate", "Opens the gate.")
        .require_approval()
        .handler(
            |_ctx: Context, _args: std::collections::BTreeMap<String, serde_json::Value>| async {
                Ok::<_, std::convert::Infallible>("open")
            },
        )
        .build();
    let build = |model: ScriptedModel| {
        Agent::builder(model)
            .tool(transfer(&ledger))
            .tool(gate.clone())
            .build()
            .unwrap()
    };
    let model = script();
    let agent = build(model.clone());
    let first = paused(agent.run(&Context::new(), "Pay").await.unwrap_err());
    let second = paused(
        agent
            .resume(&Context::new(), first, Decisions::new().allow_for_run("c1"))
            .await
            .unwrap_err(),
    );
    let pending: Vec<_> = second.pending().iter().map(|p| p.id()).collect();
    assert_eq!(pending, ["c3"], "the allowed tool's call ran in the turn");
    let text = second.to_json().unwrap();
    assert!(
        text.contains("\"allowed\""),
        "the state holds the allowed tool"
    );
    // Removing the allowance is a change of meaning: the seal refuses it.
    let mut forged: serde_json::Value = serde_json::from_str(&text).unwrap();
    forged["run"]["state"]
        .as_object_mut()
        .unwrap()
        .remove("allowed");
    let forged = PausedRun::from_json(&forged.to_string()).unwrap();
    assert_eq!(
        refusal(
            agent
                .resume(&Context::new(), forged, Decisions::new().approve("c3"))
                .await
        ),
        ResumeError::Altered
    );
    // Resumed from its JSON, the run still allows `transfer`: c4 runs without asking.
    let back = PausedRun::from_json(&text).unwrap();
    let out = agent
        .resume(&Context::new(), back, Decisions::new().approve("c3"))
        .await
        .unwrap();
    assert_eq!(out.text, "Done.");
    assert_eq!(
        ledger.entries(),
        ["transfer:acme:5", "transfer:bolt:6", "transfer:cask:7"]
    );
}

#[tokio::test]
async fn b3_an_allow_for_run_decision_is_consumed_with_its_pause_h9() {
    let ledger = Ledger::new();
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "transfer", r#"{"to":"acme","cents":5}"#),
        ScriptedTurn::reply("Paid."),
    ]);
    let agent = Agent::builder(model)
        .tool(transfer(&ledger))
        .ledger(MemoryLedger::new())
        .build()
        .unwrap();
    let paused = paused(agent.run(&Context::new(), "Pay").await.unwrap_err());
    agent
        .resume(
            &Context::new(),
            paused.clone(),
            Decisions::new().allow_for_run("c1"),
        )
        .await
        .unwrap();
    let replay = refusal(
        agent
            .resume(
                &Context::new(),
                paused,
                Decisions::new().allow_for_run("c1"),
            )
            .await,
    );
    assert!(matches!(replay, ResumeError::Replayed { .. }), "{replay}");
    assert_eq!(ledger.entries(), ["transfer:acme:5"], "it ran once");
}

#[tokio::test]
async fn b3_partial_decisions_run_the_decided_calls_and_pause_again_with_the_others() {
    let ledger = Ledger::new();
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "transfer", r#"{"to":"acme","cents":5}"#)
            .call("c2", "lookup", r#"{"account":"acme"}"#)
            .call("c3", "transfer", r#"{"to":"bolt","cents":6}"#)
            .call("c4", "transfer", r#"{"to":"cask","cents":7}"#),
        ScriptedTurn::reply("Settled."),
    ]);
    let agent = agent(model.clone(), &ledger);
    let first = paused(agent.run(&Context::new(), "Pay").await.unwrap_err());
    assert_eq!(ledger.entries(), ["lookup:acme"]);
    // H4 holds without `leave_pending`: an undecided call refuses the resume.
    let undecided = refusal(
        agent
            .resume(
                &Context::new(),
                first.clone(),
                Decisions::new().approve("c3"),
            )
            .await,
    );
    assert!(
        matches!(undecided, ResumeError::Undecided { .. }),
        "{undecided}"
    );

    let decisions = Decisions::new()
        .approve("c3")
        .deny_with("c4", "Not this one.")
        .leave_pending();
    let error = agent
        .resume(&Context::new(), first, decisions)
        .await
        .unwrap_err();
    let kinds: Vec<_> = error.calls().iter().map(|c| (&*c.id, c.kind())).collect();
    // The records of the calls this resume decided; c1 is in the paused run's pending list.
    assert_eq!(
        kinds,
        [("c3", OutcomeKind::Success), ("c4", OutcomeKind::Denied)]
    );
    let second = paused(error);
    let pending: Vec<_> = second.pending().iter().map(|p| p.id()).collect();
    assert_eq!(pending, ["c1"], "the undecided call stays pending");
    assert_eq!(
        model.request_count(),
        1,
        "no request until the turn is whole"
    );
    assert_eq!(ledger.entries(), ["lookup:acme", "transfer:bolt:6"]);
    // The decided calls are not decided again: a decision for one is unknown now.
    let stale = refusal(
        agent
            .resume(
                &Context::new(),
                second.clone(),
                Decisions::new().approve("c1").approve("c3"),
            )
            .await,
    );
    assert!(matches!(stale, ResumeError::UnknownCall { ref call_id } if call_id == "c3"));
    let second = PausedRun::from_json(&second.to_json().unwrap()).unwrap();
    let out = agent
        .resume(
            &Context::new(),
            second,
            Decisions::new().decide("c1", Decision::Approve),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Settled.");
    assert_eq!(
        ledger.entries(),
        ["lookup:acme", "transfer:bolt:6", "transfer:acme:5"]
    );
    // The model reads the whole turn, in its own order, once.
    let results: Vec<_> = model.requests()[1]
        .tool_results()
        .iter()
        .map(|r| (r.call_id.to_string(), r.text.clone()))
        .collect();
    assert_eq!(
        results,
        [
            ("c1".to_owned(), "paid 5 cents to acme".to_owned()),
            ("c2".to_owned(), "acme holds 1200 cents".to_owned()),
            ("c3".to_owned(), "paid 6 cents to bolt".to_owned()),
            ("c4".to_owned(), "Not this one.".to_owned()),
        ]
    );
}

#[tokio::test]
async fn b3_a_partial_resume_keeps_the_run_id_and_counts_the_calls_once() {
    let ledger = Ledger::new();
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "transfer", r#"{"to":"acme","cents":5}"#)
            .call("c2", "transfer", r#"{"to":"bolt","cents":6}"#),
        ScriptedTurn::reply("Done."),
    ]);
    let agent = agent(model, &ledger);
    let first = paused(agent.run(&Context::new(), "Pay").await.unwrap_err());
    let second = paused(
        agent
            .resume(
                &Context::new(),
                first.clone(),
                Decisions::new().approve("c2").leave_pending(),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(second.run_id(), first.run_id(), "one run (H9)");
    assert_ne!(second.pause_id(), first.pause_id(), "a new pause (H9)");
    assert_eq!(second.calls_made(), first.calls_made(), "counted once (L2)");
    assert_eq!(second.turns(), 1);
}
