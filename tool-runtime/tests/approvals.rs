//! Human approval and deferred calls in the agent loop: the run pauses with the calls that
//! wait (H2), the paused run is plain sealed data that another agent, in another process,
//! resumes (H3), with one decision per pending call and the checks run again (H4); deferred
//! tools pause and resume with their results (H5). The predicate sees validated input only
//! (H1).

mod support {
    pub mod agent;
}

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use support::agent::{Args, texts, well_formed};
use tool_runtime::approval::Approval;
use tool_runtime::{
    Agent, Context, Decisions, ErrorKind, Message, Model, OutcomeKind, PausedRun, PendingKind,
    ResumeError, RunError, RunEvent, Schema, ScriptedModel, ScriptedTurn, Tool, ToolError, Usage,
};

/// Which service to restart.
#[derive(Schema, Debug)]
struct Restart {
    /// The service.
    #[schema(pattern = "^[a-z0-9-]+$")]
    service_id: String,
    /// Whether to drain connections first.
    #[schema(default = true)]
    drain: bool,
}

/// What to ship.
#[derive(Schema, Debug)]
struct Ship {
    /// The order.
    order_id: String,
}

/// Whether the caller is an admin: the policy of `restart`.
#[derive(Debug, Clone, Copy)]
struct Admin(bool);

/// Something only the application's context holds: it must never reach a paused run.
#[derive(Debug)]
struct Secret(&'static str);

const CONTEXT_SECRET: &str = "context-secret-7f3a";

/// The tools of these tests, and what the tests observe of them.
struct Fixture {
    tools: Vec<Tool>,
    /// How many times `restart`'s handler ran, and for which services.
    restarted: Arc<Mutex<Vec<String>>>,
    /// What `restart`'s predicate saw: the service and `drain` (defaulted when absent).
    asked: Arc<Mutex<Vec<(String, bool)>>>,
    echo_runs: Arc<AtomicUsize>,
}

impl Fixture {
    fn new() -> Self {
        Self::with_restart_input(true)
    }

    /// With `typed` false, `restart` takes any object: another schema (H3).
    fn with_restart_input(typed: bool) -> Self {
        let restarted = Arc::new(Mutex::new(Vec::new()));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let echo_runs = Arc::new(AtomicUsize::new(0));
        let (runs, seen, echoes) = (
            Arc::clone(&restarted),
            Arc::clone(&asked),
            Arc::clone(&echo_runs),
        );
        let echo = Tool::builder("echo", "Repeats its arguments.")
            .handler(move |_ctx: Context, args: Args| {
                echoes.fetch_add(1, Ordering::SeqCst);
                async move { Ok::<_, std::io::Error>(args) }
            })
            .build();
        let is_admin =
            |ctx: &Context| Ok::<_, std::io::Error>(ctx.get::<Admin>().is_some_and(|a| a.0));
        let restart =
            if typed {
                Tool::builder("restart", "Restarts a service now.")
                .handler(move |_ctx: Context, r: Restart| {
                    runs.lock().expect("not poisoned").push(r.service_id.clone());
                    async move { Ok::<_, std::io::Error>(format!("{} restarted", r.service_id)) }
                })
                .available_fn(is_admin)
                .approval_fn(move |_ctx: &Context, r: &Restart| {
                    seen.lock().expect("not poisoned").push((r.service_id.clone(), r.drain));
                    Ok::<_, std::io::Error>(if r.service_id.starts_with("prod-") {
                        Approval::required(format!("{} serves production traffic", r.service_id))
                    } else {
                        Approval::NotRequired
                    })
                })
                .build()
            } else {
                Tool::builder("restart", "Restarts a service now.")
                    .handler(|_ctx: Context, _args: Args| async move {
                        Ok::<_, std::io::Error>("restarted")
                    })
                    .available_fn(is_admin)
                    .require_approval()
                    .build()
            };
        let ship = Tool::builder("ship", "Ships an order from the warehouse.")
            .deferred::<Ship>()
            .build();
        let leaky = Tool::builder("leaky", "Fails with a secret in its error.")
            .handler(|_ctx: Context, _args: Args| async move {
                Err::<String, _>(std::io::Error::other("db://admin:hunter2@db.internal"))
            })
            .build();
        Self {
            tools: vec![echo, restart, ship, leaky],
            restarted,
            asked,
            echo_runs,
        }
    }

    fn agent(&self, model: impl Model, key: Option<&[u8]>) -> Agent {
        let mut builder = Agent::builder(model)
            .instructions("Use the tools.")
            .tools(self.tools.clone());
        if let Some(key) = key {
            builder = builder.state_key(key);
        }
        builder.build().expect("the tools are declared right")
    }

    fn restarted(&self) -> Vec<String> {
        self.restarted.lock().expect("not poisoned").clone()
    }
}

fn admin() -> Context {
    Context::new()
        .with(Admin(true))
        .with(Secret(CONTEXT_SECRET))
}

/// A turn of four calls: one needing no approval, one needing it, one whose predicate says
/// no (with `drain` given), one deferred.
fn mixed_turn() -> ScriptedTurn {
    ScriptedTurn::new()
        .text("On it.")
        .call("c1", "echo", r#"{"word":"hi"}"#)
        .call("c2", "restart", r#"{"service_id":"prod-db"}"#)
        .call("c3", "restart", r#"{"service_id":"dev-db","drain":false}"#)
        .call("c4", "ship", r#"{"order_id":"o-1"}"#)
        .usage(10, 5)
}

/// Runs `turns` with the fixture's agent as an admin, expecting a pause.
async fn paused(fixture: &Fixture, turns: Vec<ScriptedTurn>, key: Option<&[u8]>) -> RunError {
    let agent = fixture.agent(ScriptedModel::new(turns), key);
    let error = agent
        .run(&admin(), "Restart the databases and ship o-1")
        .await
        .expect_err("the run pauses");
    assert_eq!(error.kind(), ErrorKind::Paused, "{error:#}");
    error
}

/// The paused run of [`mixed_turn`].
async fn mixed_pause(fixture: &Fixture) -> PausedRun {
    paused(fixture, vec![mixed_turn()], None)
        .await
        .into_paused()
        .expect("a paused run")
}

fn resume_error(result: Result<tool_runtime::RunOutput, RunError>) -> ResumeError {
    let error = result.expect_err("the paused run is refused");
    assert_eq!(error.kind(), ErrorKind::Resume, "{error:#}");
    error.resume_error().cloned().expect("a ResumeError")
}

/// Re-seals a paused run's JSON after `edit` changed it, as someone without a key could
/// (SHA-256 over the canonical content): what an unkeyed seal cannot stop.
fn forge(paused: &PausedRun, edit: impl FnOnce(&mut Value)) -> PausedRun {
    let mut value = serde_json::to_value(paused).expect("a paused run serializes");
    edit(&mut value["run"]);
    let canonical = serde_json::to_vec(&json!([value["format"], value["version"], value["run"]]));
    let digest: String = Sha256::digest(canonical.expect("JSON serializes"))
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    value["seal"]["digest"] = Value::String(digest);
    serde_json::from_value(value).expect("still a paused run")
}

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
    let kinds: Vec<_> = error
        .calls()
        .iter()
        .map(|c| (c.id.as_str(), c.kind()))
        .collect();
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
    assert_eq!(*from_stream, from_run, "the same pause as `run` returns");
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

// ─── H3 ──────────────────────────────────────────────────────────────────────────────────────

#[tokio::test]
async fn h3_a_paused_run_round_trips_through_json_and_another_agent_resumes_it() {
    let fixture = Fixture::new();
    let paused = mixed_pause(&fixture).await;
    let text = paused.to_json().unwrap();
    let back = PausedRun::from_json(&text).unwrap();
    assert_eq!(back, paused);

    // Another agent, with the same tools (made anew) and its own model.
    let other = Fixture::new();
    let model = ScriptedModel::new([ScriptedTurn::reply("Restarted prod-db; o-1 is shipping.")]);
    let agent = other.agent(model.clone(), None);
    agent.verify(&back).expect("the same tools");
    let decisions = Decisions::new()
        .approve("c2")
        .result("c4", &json!({"tracking": "t-1"}));
    let out = agent.resume(&admin(), back, decisions).await.unwrap();
    assert_eq!(out.text, "Restarted prod-db; o-1 is shipping.");
    assert_eq!(
        other.restarted(),
        ["prod-db"],
        "only the approved call ran here"
    );
    // R2: every result of the paused turn, in the model's order.
    let request = &model.requests()[0];
    assert_eq!(
        texts(&request.tool_results()),
        [
            ("c1".to_owned(), r#"{"word":"hi"}"#.to_owned()),
            ("c2".to_owned(), "prod-db restarted".to_owned()),
            ("c3".to_owned(), "dev-db restarted".to_owned()),
            ("c4".to_owned(), r#"{"tracking":"t-1"}"#.to_owned()),
        ]
    );
    assert!(well_formed(&out.transcript));
    assert_eq!(out.turns(), 2, "usage goes on from the paused run");
    let decided: Vec<_> = out
        .calls
        .iter()
        .map(|c| (c.id.as_str(), c.kind()))
        .collect();
    assert_eq!(
        decided,
        [("c2", OutcomeKind::Success), ("c4", OutcomeKind::Success)]
    );
    // A8: the resumed run advertises what the run advertised when it started.
    assert_eq!(request.tool_names(), ["echo", "restart", "ship", "leaky"]);
}

#[tokio::test]
async fn h3_a_paused_run_holds_no_context_and_no_unredacted_error() {
    let fixture = Fixture::new();
    let turn = ScriptedTurn::new().call("c1", "leaky", "{}").call(
        "c2",
        "restart",
        r#"{"service_id":"prod-db"}"#,
    );
    let error = paused(&fixture, vec![turn], None).await;
    // E3: the application keeps the unredacted error...
    let leaky = &error.calls()[0];
    assert!(format!("{:#}", leaky.error().unwrap()).contains("hunter2"));
    // ... and the paused run only what the model was told.
    let text = error.paused().unwrap().to_json().unwrap();
    assert_eq!(admin().get::<Secret>().map(|s| s.0), Some(CONTEXT_SECRET));
    assert!(text.contains("the tool failed"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(!text.contains(CONTEXT_SECRET), "{text}");
}

#[tokio::test]
async fn h3_a_paused_run_whose_tools_or_schemas_changed_is_refused() {
    let fixture = Fixture::new();
    let paused = mixed_pause(&fixture).await;
    let model = || ScriptedModel::new([ScriptedTurn::reply("never")]);
    let decisions = || Decisions::new().approve("c2").result("c4", "shipped");

    // A tool missing.
    let mut missing = Fixture::new();
    missing.tools.retain(|t| t.name() != "ship");
    let agent = missing.agent(model(), None);
    let expected = ResumeError::ToolMissing {
        tool: "ship".to_owned(),
    };
    assert_eq!(agent.verify(&paused), Err(expected.clone()));
    let result = agent.resume(&admin(), paused.clone(), decisions()).await;
    assert_eq!(resume_error(result), expected);

    // A tool whose schema changed.
    let changed = Fixture::with_restart_input(false);
    let agent = changed.agent(model(), None);
    let result = agent.resume(&admin(), paused.clone(), decisions()).await;
    assert_eq!(
        resume_error(result),
        ResumeError::ToolChanged {
            tool: "restart".to_owned()
        }
    );

    // A deferred tool that has a handler now.
    let mut handled = Fixture::new();
    handled.tools[2] = Tool::builder("ship", "Ships an order from the warehouse.")
        .handler(|_ctx: Context, s: Ship| async move { Ok::<_, std::io::Error>(s.order_id) })
        .build();
    let agent = handled.agent(model(), None);
    let result = agent.resume(&admin(), paused.clone(), decisions()).await;
    assert_eq!(
        resume_error(result),
        ResumeError::ToolChanged {
            tool: "ship".to_owned()
        }
    );
    for f in [&missing, &changed, &handled] {
        assert!(f.restarted().is_empty(), "nothing ran");
    }
}

#[tokio::test]
async fn h3_an_altered_paused_run_is_refused_and_reformatting_is_not_an_alteration() {
    let fixture = Fixture::new();
    let paused = mixed_pause(&fixture).await;
    let text = paused.to_json().unwrap();
    let agent = fixture.agent(ScriptedModel::new([ScriptedTurn::reply("ok")]), None);
    for (from, to) in [
        ("prod-db", "prod-dc"),
        ("serves production traffic", "is a test box"),
        (r#""turn": 1"#, r#""turn": 2"#),
    ] {
        assert!(text.contains(from), "{from}");
        let altered = PausedRun::from_json(&text.replacen(from, to, 1)).unwrap();
        assert_eq!(
            agent.verify(&altered),
            Err(ResumeError::Altered),
            "{from} → {to}"
        );
        let result = agent
            .resume(&admin(), altered, Decisions::new().approve("c2"))
            .await;
        assert_eq!(resume_error(result), ResumeError::Altered);
    }
    // Whitespace and key order are not content.
    let compact = serde_json::to_string(&serde_json::from_str::<Value>(&text).unwrap()).unwrap();
    let reread = PausedRun::from_json(&compact).unwrap();
    assert_eq!(agent.verify(&reread), Ok(()));
    assert_eq!(
        fixture.restarted(),
        ["dev-db"],
        "nothing ran after the pause"
    );
}

#[tokio::test]
async fn h3_a_keyed_paused_run_resumes_only_with_its_key() {
    let fixture = Fixture::new();
    let key = b"an application secret of 32 byte";
    let keyed = paused(&fixture, vec![mixed_turn()], Some(key))
        .await
        .into_paused()
        .unwrap();
    let model = || ScriptedModel::new([ScriptedTurn::reply("ok")]);
    assert_eq!(fixture.agent(model(), Some(key)).verify(&keyed), Ok(()));
    assert_eq!(
        fixture.agent(model(), Some(b"another key")).verify(&keyed),
        Err(ResumeError::Altered)
    );
    assert_eq!(
        fixture.agent(model(), None).verify(&keyed),
        Err(ResumeError::KeyRequired)
    );
    // Re-sealed without the key, as anyone could: refused by an agent that has one.
    let forged = forge(&keyed, |_| {});
    let mut value = serde_json::to_value(&forged).unwrap();
    value["seal"]["algorithm"] = json!("sha256");
    let forged = forge(&serde_json::from_value(value).unwrap(), |_| {});
    assert_eq!(
        fixture.agent(model(), Some(key)).verify(&forged),
        Err(ResumeError::NotKeyed)
    );
    let empty = Agent::builder(model()).state_key(Vec::new()).build();
    assert!(empty.is_err(), "an empty key is a build error");
}

#[tokio::test]
async fn h3_malformed_truncated_or_inconsistent_files_are_errors_not_panics() {
    let fixture = Fixture::new();
    let paused = mixed_pause(&fixture).await;
    let text = paused.to_json().unwrap();
    for cut in (0..text.len()).step_by(5) {
        assert!(matches!(
            PausedRun::from_json(&text[..cut]),
            Err(ResumeError::Malformed { .. })
        ));
    }
    for garbage in ["", "null", "[]", r#"{"format": 1}"#, "\u{0}"] {
        assert!(matches!(
            PausedRun::from_json(garbage),
            Err(ResumeError::Malformed { .. })
        ));
    }
    let agent = fixture.agent(ScriptedModel::new([ScriptedTurn::reply("ok")]), None);
    let version = forge(&paused, |_| {});
    let mut value = serde_json::to_value(&version).unwrap();
    value["version"] = json!(99);
    let version: PausedRun = serde_json::from_value(value).unwrap();
    assert!(matches!(
        agent.verify(&version),
        Err(ResumeError::Version { version: 99, .. })
    ));
    // Sealed, but its parts do not fit: each is refused, nothing panics or runs.
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let edits: Vec<(&str, Edit)> = vec![
        (
            "index",
            Box::new(|run| run["pending"][0]["index"] = json!(99)),
        ),
        ("id", Box::new(|run| run["pending"][0]["id"] = json!("c9"))),
        (
            "tool",
            Box::new(|run| run["pending"][1]["tool"] = json!("echo")),
        ),
        (
            "kind",
            Box::new(|run| run["pending"][0]["kind"] = json!("deferred")),
        ),
        (
            "twice",
            Box::new(|run| run["pending"][1]["index"] = json!(1)),
        ),
        ("none", Box::new(|run| run["pending"] = json!([]))),
        ("usage", Box::new(|run| run["usage"] = json!([]))),
        ("lost", Box::new(|run| run["results"] = json!([]))),
        ("transcript", Box::new(|run| run["transcript"] = json!([]))),
        (
            "unknown tool",
            Box::new(|run| run["tools"][0]["name"] = json!("nope")),
        ),
    ];
    for (what, edit) in edits {
        let forged = forge(&paused, edit);
        let refused = agent.verify(&forged);
        assert!(
            matches!(
                refused,
                Err(ResumeError::Inconsistent { .. } | ResumeError::ToolMissing { .. })
            ),
            "{what}: {refused:?}"
        );
        let result = agent
            .resume(&admin(), forged, Decisions::new().approve("c2"))
            .await;
        assert_eq!(result.unwrap_err().kind(), ErrorKind::Resume, "{what}");
    }
    assert_eq!(
        fixture.restarted(),
        ["dev-db"],
        "nothing ran after the pause"
    );
}

/// The second half of [`h3_a_second_process_resumes_the_paused_run`], run in a child process
/// (this test binary, started again): reads the paused run from the file the parent wrote,
/// resumes it with a fresh agent, and writes what the model got back. Run alone, without the
/// file, it does nothing.
#[tokio::test]
async fn h3_child_resumes_from_a_file() {
    let Some(path) = std::env::var_os("APPROVALS_TEST_STATE") else {
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let paused = PausedRun::from_json(&text).unwrap();
    let fixture = Fixture::new();
    let model = ScriptedModel::new([ScriptedTurn::reply("Done in the child.")]);
    let agent = fixture.agent(model.clone(), Some(b"shared by both processes"));
    let decisions = Decisions::new().approve("c2").result("c4", "shipped");
    let out = agent.resume(&admin(), paused, decisions).await.unwrap();
    let results: Vec<String> = model.requests()[0]
        .tool_results()
        .iter()
        .map(|r| format!("{}={}", r.call_id, r.text))
        .collect();
    let report = format!(
        "pid={}\nanswer={}\nrestarted={}\n{}",
        std::process::id(),
        out.text,
        fixture.restarted().join(","),
        results.join("\n")
    );
    std::fs::write(std::path::Path::new(&path).with_extension("out"), report).unwrap();
}

#[tokio::test]
async fn h3_a_second_process_resumes_the_paused_run() {
    let fixture = Fixture::new();
    let paused = paused(
        &fixture,
        vec![mixed_turn()],
        Some(b"shared by both processes"),
    )
    .await
    .into_paused()
    .unwrap();
    let dir = std::env::temp_dir().join(format!("approvals-h3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");
    std::fs::write(&state, paused.to_json().unwrap()).unwrap();
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["h3_child_resumes_from_a_file", "--exact", "--nocapture"])
        .env("APPROVALS_TEST_STATE", &state)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the child failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let report = std::fs::read_to_string(state.with_extension("out")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        !report.contains(&format!("pid={}\n", std::process::id())),
        "{report}"
    );
    assert!(report.contains("answer=Done in the child."), "{report}");
    assert!(report.contains("restarted=prod-db\n"), "{report}");
    assert!(
        report.contains("c2=prod-db restarted\nc3=dev-db restarted\nc4=shipped"),
        "{report}"
    );
    // Here, only the call that ran before the pause.
    assert_eq!(fixture.restarted(), ["dev-db"]);
}

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
    let kinds: Vec<_> = again
        .calls()
        .iter()
        .map(|c| (c.id.as_str(), c.kind()))
        .collect();
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
        let calls = &mut run["transcript"][1]["tool_calls"];
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
    let mut stream = agent.resume_stream(
        &admin(),
        paused,
        Decisions::new().approve("c2").result("c4", "shipped"),
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
