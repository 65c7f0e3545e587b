//! A paused run is plain, sealed data (H3): it round-trips through JSON, holds no context and
//! no unredacted error, resumes in another agent and in another process, and is refused when
//! its tools changed, its content was altered, its key is not the agent's, or it is not a
//! paused run at all.
mod support {
    pub mod agent;
    pub mod approvals;
}

use serde_json::{Value, json};
use support::agent::{texts, well_formed};
use support::approvals::{
    CONTEXT_SECRET, Fixture, Secret, Ship, admin, forge, mixed_pause, mixed_turn, paused,
    resume_error,
};
use tool_runtime::{
    Agent, Context, Decisions, ErrorKind, OutcomeKind, PausedRun, ResumeError, ScriptedModel,
    ScriptedTurn, Tool,
};

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
    let decided: Vec<_> = out.calls.iter().map(|c| (&*c.id, c.kind())).collect();
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
        (r#""calls_made": "#, r#""calls_made": 1"#),
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
        Err(ResumeError::WrongKey)
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
        ("usage", Box::new(|run| run["state"]["usage"] = json!([]))),
        ("lost", Box::new(|run| run["results"] = json!([]))),
        (
            "transcript",
            Box::new(|run| run["state"]["transcript"] = json!([])),
        ),
        (
            "calls made",
            Box::new(|run| run["state"]["calls_made"] = json!(0)),
        ),
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
