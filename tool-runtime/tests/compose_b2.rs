//! An approval inside a sub-agent pauses the whole run (B2): the top-level paused run holds
//! the nested runs' states (one plain-data value, sealed, H3, H8), its pending list names the
//! path to each pending call, decisions reach the right call at any depth (B3's included),
//! and H1–H10 hold at every level: nothing runs before every level is checked, a pause
//! resumes once, a state altered at any depth is refused.
mod support {
    pub mod compose;
}

use serde_json::json;
use support::compose::{ASKED, Ledger, agents, scripts};
use tool_runtime::{
    Agent, Context, ConversationModel, ConversationTurn, Decision, Decisions, ErrorKind, PausedRun,
    PendingKind, ResumeError, RunError, RunOutput, Tool,
};

fn paused(result: Result<RunOutput, RunError>) -> PausedRun {
    let error = result.expect_err("the run pauses");
    assert_eq!(error.kind(), ErrorKind::Paused, "{error:#}");
    error.into_paused().expect("paused")
}

fn refusal(result: Result<RunOutput, RunError>) -> ResumeError {
    let error = result.expect_err("refused");
    assert_eq!(error.kind(), ErrorKind::Resume, "{error:#}");
    error.resume_error().cloned().expect("a resume error")
}

#[tokio::test]
async fn b2_three_levels_pause_at_the_innermost_approval_and_resume_in_a_fresh_agent_with_edits() {
    let ledger = Ledger::new();
    let top = agents(scripts(ASKED), &ledger, false);
    let first = paused(top.run(&Context::new(), "Settle acme").await);
    assert!(ledger.entries().is_empty(), "nothing ran");
    // The top-level run waits on its call of the manager, which holds the nested runs.
    assert_eq!(first.pending().len(), 1);
    assert_eq!(first.pending()[0].kind(), PendingKind::Nested);
    let paths: Vec<(Vec<&str>, &str)> = first
        .pending_paths()
        .iter()
        .map(|at| (at.path().to_vec(), at.call().tool()))
        .collect();
    assert_eq!(paths, [(vec!["t1", "m1", "i1"], "transfer")]);
    let at = &first.pending_paths()[0];
    assert_eq!(
        at.call().arguments(),
        &json!({"to": "acme", "cents": 90000})
    );
    assert_eq!(at.call().kind(), PendingKind::Approval);

    // Kept as JSON, then resumed by freshly built agents (a new process's).
    let text = first.to_json().expect("serializes");
    let fresh_ledger = Ledger::new();
    let fresh = agents(scripts(ASKED), &fresh_ledger, false);
    let path = ["t1", "m1", "i1"];
    // Invalid edits are refused at the top, before anything runs at any level.
    for bad in [json!({"to": "acme", "cents": 0}), json!({"to": "acme"})] {
        let back = PausedRun::from_json(&text).expect("reads");
        let decisions = Decisions::new().decide_at(path, Decision::approve_with(bad.clone()));
        let error = refusal(fresh.resume(&Context::new(), back, decisions).await);
        let ResumeError::Nested { path, error } = &error else {
            panic!("{bad}: {error}");
        };
        assert_eq!(path, &["t1", "m1"], "the path to the run that refused");
        assert!(
            matches!(&**error, ResumeError::InvalidArguments { call_id, .. } if call_id == "i1"),
            "{error}"
        );
    }
    assert!(fresh_ledger.entries().is_empty(), "nothing ran");
    let back = PausedRun::from_json(&text).expect("reads");
    let edited = json!({"to": "acme", "cents": 900});
    let decisions = Decisions::new().decide_at(path, Decision::approve_with(edited));
    let out = fresh
        .resume(&Context::new(), back, decisions)
        .await
        .expect("the run ends");

    // It ends as a straight run of the same conversation ends.
    let straight_ledger = Ledger::new();
    let straight = agents(
        scripts(r#"{"to":"acme","cents":900}"#),
        &straight_ledger,
        true,
    )
    .run(&Context::new(), "Settle acme")
    .await
    .expect("the straight run ends");
    assert_eq!(out.text, "all settled");
    assert_eq!(out.text, straight.text);
    assert_eq!(out.transcript, straight.transcript);
    assert_eq!(fresh_ledger.entries(), ["transfer:acme:900"]);
    assert_eq!(fresh_ledger.entries(), straight_ledger.entries());
}

#[tokio::test]
async fn b2_h8_the_nested_states_are_sealed_by_the_top_level_seal() {
    let ledger = Ledger::new();
    let top = agents(scripts(ASKED), &ledger, false);
    let first = paused(top.run(&Context::new(), "Settle acme").await);
    let mut forged: serde_json::Value =
        serde_json::from_str(&first.to_json().expect("serializes")).expect("json");
    // Raise the amount deep inside: the innermost pending call's arguments.
    let inner = &mut forged["run"]["pending"][0]["nested"]["run"]["pending"][0]["nested"];
    inner["run"]["pending"][0]["arguments"]["cents"] = json!(99999);
    let forged = PausedRun::from_json(&forged.to_string()).expect("reads");
    let decisions = Decisions::new().decide_at(["t1", "m1", "i1"], Decision::Approve);
    assert_eq!(
        refusal(top.resume(&Context::new(), forged, decisions).await),
        ResumeError::Altered
    );
    assert!(ledger.entries().is_empty());
}

#[tokio::test]
async fn b2_h3_a_sub_agent_whose_tools_changed_refuses_the_resume_before_anything_runs() {
    let ledger = Ledger::new();
    let top = agents(scripts(ASKED), &ledger, false);
    let first = paused(top.run(&Context::new(), "Settle acme").await);
    // The same names, the payer's `transfer` now of another schema.
    let [t, m, i] = scripts(ASKED);
    let changed = Tool::builder("transfer", "Pays an account.")
        .require_approval()
        .handler(
            |_ctx: Context, _input: support::compose::Lookup| async move {
                Ok::<_, std::convert::Infallible>("paid")
            },
        )
        .build();
    let payer = Agent::builder(i).tool(changed).build().expect("builds");
    let manager = Agent::builder(m)
        .agent_tool(payer.as_tool("payer", "Pays accounts."))
        .build()
        .expect("builds");
    let fresh = Agent::builder(t.clone())
        .agent_tool(manager.as_tool("manager", "Manages payments."))
        .build()
        .expect("builds");
    let decisions = Decisions::new().decide_at(["t1", "m1", "i1"], Decision::Approve);
    let error = refusal(fresh.resume(&Context::new(), first, decisions).await);
    let ResumeError::Nested { path, error } = &error else {
        panic!("{error}");
    };
    assert_eq!(path, &["t1", "m1"]);
    assert!(matches!(&**error, ResumeError::ToolChanged { tool } if tool == "transfer"));
    assert!(t.served().is_empty(), "no request was sent");
}

#[tokio::test]
async fn b2_h4_every_nested_call_is_decided_and_unknown_ones_are_named() {
    let ledger = Ledger::new();
    let top = agents(scripts(ASKED), &ledger, false);
    let first = paused(top.run(&Context::new(), "Settle acme").await);
    let undecided = Decisions::new().nested("t1", Decisions::new().nested("m1", Decisions::new()));
    let error = refusal(top.resume(&Context::new(), first.clone(), undecided).await);
    assert!(
        matches!(&error, ResumeError::Nested { error, .. } if matches!(&**error, ResumeError::Undecided { call_id } if call_id == "i1")),
        "{error}"
    );
    let unknown = Decisions::new().decide_at(["t1", "m1", "i9"], Decision::Approve);
    let error = refusal(top.resume(&Context::new(), first.clone(), unknown).await);
    assert!(
        matches!(&error, ResumeError::Nested { error, .. } if matches!(&**error, ResumeError::UnknownCall { call_id } if call_id == "i9")),
        "{error}"
    );
    // Approving the top-level call itself does not fit: its decisions are its sub-agent's.
    let error = refusal(
        top.resume(&Context::new(), first, Decisions::new().approve("t1"))
            .await,
    );
    assert!(
        matches!(&error, ResumeError::WrongDecision { call_id, kind: PendingKind::Nested } if call_id == "t1"),
        "{error}"
    );
    assert!(ledger.entries().is_empty());
}

#[tokio::test]
async fn b2_h9_a_nested_pause_resumes_once() {
    let ledger = Ledger::new();
    let top = agents(scripts(ASKED), &ledger, false);
    let first = paused(top.run(&Context::new(), "Settle acme").await);
    let decide = || Decisions::new().decide_at(["t1", "m1", "i1"], Decision::Approve);
    top.resume(&Context::new(), first.clone(), decide())
        .await
        .expect("the run ends");
    let replay = refusal(top.resume(&Context::new(), first, decide()).await);
    assert!(matches!(replay, ResumeError::Replayed { .. }), "{replay}");
    assert_eq!(ledger.entries(), ["transfer:acme:90000"], "paid once");
}

#[tokio::test]
async fn b2_denying_the_sub_agents_call_answers_the_parents_model_and_nothing_runs() {
    let ledger = Ledger::new();
    let top = agents(scripts(ASKED), &ledger, false);
    let first = paused(top.run(&Context::new(), "Settle acme").await);
    let out = top
        .resume(
            &Context::new(),
            first,
            Decisions::new().deny_with("t1", "Not today."),
        )
        .await
        .expect("the run ends");
    assert_eq!(out.text, "all settled");
    assert!(ledger.entries().is_empty());
    let result = out
        .transcript
        .iter()
        .find_map(|message| message.tool_result())
        .expect("a result");
    assert_eq!(result.text, "Not today.");
}

#[tokio::test]
async fn b2_b3_decisions_reach_the_right_sub_agent_call_and_the_rest_stay_pending() {
    // The payer pays two accounts in one turn; both wait.
    let ledger = Ledger::new();
    let [t, m, _] = scripts(ASKED);
    let inner = ConversationModel::new([
        ConversationTurn::new()
            .call("i1", "transfer", r#"{"to":"acme","cents":5}"#)
            .call("i2", "transfer", r#"{"to":"bolt","cents":6}"#),
        ConversationTurn::reply("payer: done"),
    ]);
    let top = agents([t, m, inner], &ledger, false);
    let first = paused(top.run(&Context::new(), "Settle").await);
    let paths: Vec<Vec<&str>> = first
        .pending_paths()
        .iter()
        .map(|at| at.path().to_vec())
        .collect();
    assert_eq!(paths, [vec!["t1", "m1", "i1"], vec!["t1", "m1", "i2"]]);
    // Decide i2 only: it runs, and the whole run pauses again with i1.
    let decisions = Decisions::new()
        .decide_at(["t1", "m1", "i2"], Decision::deny_with("No."))
        .leave_pending();
    let second = paused(top.resume(&Context::new(), first, decisions).await);
    let paths: Vec<Vec<&str>> = second
        .pending_paths()
        .iter()
        .map(|at| at.path().to_vec())
        .collect();
    assert_eq!(paths, [vec!["t1", "m1", "i1"]]);
    assert!(ledger.entries().is_empty(), "the denied call never ran");
    let second = PausedRun::from_json(&second.to_json().expect("json")).expect("reads");
    let out = top
        .resume(
            &Context::new(),
            second,
            Decisions::new().decide_at(["t1", "m1", "i1"], Decision::Approve),
        )
        .await
        .expect("the run ends");
    assert_eq!(out.text, "all settled");
    assert_eq!(ledger.entries(), ["transfer:acme:5"]);
}

#[tokio::test]
async fn b2_b3_allowing_a_tool_inside_a_sub_agent_holds_for_the_rest_of_its_run() {
    let ledger = Ledger::new();
    let [t, m, _] = scripts(ASKED);
    let inner = ConversationModel::new([
        ConversationTurn::new().call("i1", "transfer", r#"{"to":"acme","cents":5}"#),
        ConversationTurn::new().call("i2", "transfer", r#"{"to":"bolt","cents":6}"#),
        ConversationTurn::reply("payer: done"),
    ]);
    let top = agents([t, m, inner], &ledger, false);
    let first = paused(top.run(&Context::new(), "Settle").await);
    let decisions = Decisions::new().decide_at(["t1", "m1", "i1"], Decision::allow_for_run());
    let out = top
        .resume(&Context::new(), first, decisions)
        .await
        .expect("the second transfer runs without a pause");
    assert_eq!(out.text, "all settled");
    assert_eq!(ledger.entries(), ["transfer:acme:5", "transfer:bolt:6"]);
}
