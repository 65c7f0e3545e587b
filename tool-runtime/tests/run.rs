//! The run: the registry (R1), concurrency and call order (R2), how a run stops (R3), the
//! stream (R4), validation of every call (R5), build-time checks (D2, N3, V1), conversations
//! that continue, and the model's own failures.

mod support {
    pub mod agent;
}

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::agent::{Args, drain, echo, texts, tool, well_formed};
use tool_runtime::{
    Agent, BuildProblem, Context, DeclarationError, ErrorKind, FinishReason, Input, Message, Model,
    ModelError, ModelRequest, ModelStream, OutcomeKind, RunEvent, Schema, SchemaUnsupported,
    ScriptedModel, ScriptedTurn, Tool, ToolResult, ToolSpec, Usage, registered, registry, tool,
};

/// Answers with a fixed word.
#[tool(name = "r1-ping")]
async fn ping() -> String {
    "pong".to_owned()
}

/// Tells the time, in a fixed way.
#[tool(name = "r1-clock")]
async fn clock() -> String {
    "noon".to_owned()
}

#[tokio::test]
async fn r1_an_agent_takes_every_registered_tool_or_a_named_selection() {
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "r1-ping", "{}"),
        ScriptedTurn::reply("pong it is"),
        ScriptedTurn::reply("selected"),
    ]);
    let all = Agent::builder(model.clone())
        .tools(registry().unwrap())
        .build()
        .unwrap();
    let out = all.run(&Context::new(), "ping").await.unwrap();
    // Stable order: by name.
    assert_eq!(model.requests()[0].tool_names(), ["r1-clock", "r1-ping"]);
    assert_eq!(out.calls[0].text(), "pong");

    let some = Agent::builder(model.clone())
        .tools(registered(["r1-ping"]).unwrap())
        .build()
        .unwrap();
    some.run(&Context::new(), "ping").await.unwrap();
    assert_eq!(model.requests()[2].tool_names(), ["r1-ping"]);
    // The handles work one by one too.
    let one = Agent::builder(ScriptedModel::new([]))
        .tool(R1Clock)
        .build()
        .unwrap();
    assert_eq!(one.tools()[0].name(), "r1-clock");
}

#[tokio::test(start_paused = true)]
async fn r2_at_most_max_concurrency_handlers_run_at_once() {
    let running = Arc::new(AtomicUsize::new(0));
    let high_water = Arc::new(AtomicUsize::new(0));
    let (now, high) = (Arc::clone(&running), Arc::clone(&high_water));
    let busy = tool("busy", move |_ctx, _args: Args| {
        let (now, high) = (Arc::clone(&now), Arc::clone(&high));
        async move {
            let current = now.fetch_add(1, Ordering::SeqCst) + 1;
            high.fetch_max(current, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(10)).await;
            now.fetch_sub(1, Ordering::SeqCst);
            Ok::<_, std::io::Error>("done")
        }
    });
    let mut turn = ScriptedTurn::new();
    for i in 0..100 {
        turn = turn.call(format!("c{i}"), "busy", "{}");
    }
    let model = ScriptedModel::new([turn, ScriptedTurn::reply("all done")]);
    let agent = Agent::builder(model.clone())
        .tool(busy)
        .max_concurrency(4)
        .build()
        .unwrap();

    let out = agent.run(&Context::new(), "go").await.unwrap();

    assert_eq!(
        high_water.load(Ordering::SeqCst),
        4,
        "concurrent, and never past the limit"
    );
    assert_eq!(out.calls.len(), 100);
    assert!(out.calls.iter().all(|c| c.kind() == OutcomeKind::Success));
}

#[tokio::test(start_paused = true)]
async fn r2_results_go_back_in_call_order_even_when_later_calls_finish_first() {
    let sleeper = tool("sleeper", |_ctx, args: Args| async move {
        let ms = args["ms"].as_u64().unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok::<_, std::io::Error>(format!("slept {ms}"))
    });
    let script = || {
        let mut turn = ScriptedTurn::new();
        for i in 0..5_u64 {
            turn = turn.call(
                format!("c{i}"),
                "sleeper",
                format!(r#"{{"ms": {}}}"#, 50 - 10 * i),
            );
        }
        ScriptedModel::new([turn, ScriptedTurn::reply("done")])
    };
    let model = script();
    let agent = Agent::builder(model.clone())
        .tool(sleeper.clone())
        .build()
        .unwrap();
    agent.run(&Context::new(), "go").await.unwrap();
    let expected: Vec<_> = (0..5_u64)
        .map(|i| (format!("c{i}"), format!("slept {}", 50 - 10 * i)))
        .collect();
    assert_eq!(texts(&model.requests()[1].tool_results()), expected);

    // The calls really did finish last-first: the stream reports them as they end.
    let agent = Agent::builder(script()).tool(sleeper).build().unwrap();
    let (events, _) = drain(agent.run_stream(&Context::new(), "go")).await;
    let finished: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::CallFinished(r) => Some(&*r.id),
            _ => None,
        })
        .collect();
    assert_eq!(finished, ["c4", "c3", "c2", "c1", "c0"]);
}

#[tokio::test]
async fn r3_a_run_stops_at_the_final_answer() {
    let (echo, runs) = echo("echo");
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "echo", r#"{"a":1}"#),
        ScriptedTurn::reply("final"),
        ScriptedTurn::reply("left over"),
    ]);
    let agent = Agent::builder(model.clone()).tool(echo).build().unwrap();
    let out = agent.run(&Context::new(), "go").await.unwrap();
    assert_eq!(out.text, "final");
    assert_eq!(out.turns(), 2);
    assert_eq!(model.remaining(), 1);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn r3_max_turns_ends_the_run_with_kind_max_turns_and_keeps_the_transcript() {
    let (echo, _) = echo("echo");
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "echo", "{}").usage(10, 1),
        ScriptedTurn::new().call("c2", "echo", "{}").usage(20, 2),
        ScriptedTurn::new().call("c3", "echo", "{}"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(echo)
        .max_turns(2)
        .build()
        .unwrap();

    let err = agent.run(&Context::new(), "loop").await.unwrap_err();

    assert_eq!(err.kind(), ErrorKind::MaxTurns);
    assert_eq!(model.request_count(), 2);
    let roles: Vec<_> = err
        .transcript()
        .iter()
        .map(|m| match m {
            Message::User { .. } => "user",
            Message::Assistant { .. } => "assistant",
            Message::Tool(_) => "tool",
            Message::System { .. } => "system",
        })
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "tool"]);
    assert!(well_formed(err.transcript()));
    assert_eq!(err.calls().len(), 2);
    assert_eq!(err.usage(), [Usage::new(10, 1), Usage::new(20, 2)]);
}

/// R3: a final reply cut off at the output token limit is not an answer. The run
/// ends with kind `Truncated`, keeping the partial text, the transcript and the usage; on the
/// stream too.
#[tokio::test]
async fn r3_a_final_reply_cut_at_the_token_limit_ends_the_run_as_truncated() {
    let (echo, _) = echo("echo");
    let script = || {
        ScriptedModel::new([
            ScriptedTurn::new().call("c1", "echo", "{}").usage(10, 1),
            ScriptedTurn::reply("The window starts at 02:")
                .usage(20, 4096)
                .finish(FinishReason::Length),
        ])
    };
    let agent = Agent::builder(script()).tool(echo.clone()).build().unwrap();
    let err = agent.run(&Context::new(), "when?").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Truncated);
    assert_eq!(err.partial_text(), Some("The window starts at 02:"));
    assert_eq!(err.usage(), [Usage::new(10, 1), Usage::new(20, 4096)]);
    assert_eq!(err.calls().len(), 1);
    assert!(well_formed(err.transcript()));
    assert!(matches!(
        err.transcript().last(),
        Some(Message::Assistant { text, .. }) if text == "The window starts at 02:"
    ));

    let agent = Agent::builder(script()).tool(echo).build().unwrap();
    let (events, result) = drain(agent.run_stream(&Context::new(), "when?")).await;
    assert!(!events.is_empty());
    let err = result.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Truncated);
    assert_eq!(err.partial_text(), Some("The window starts at 02:"));

    // A reply that stopped on its own is still an answer, whatever its length.
    let model = ScriptedModel::new([ScriptedTurn::reply("done").finish(FinishReason::Stop)]);
    let agent = Agent::builder(model).build().unwrap();
    assert_eq!(agent.run(&Context::new(), "go").await.unwrap().text, "done");
}

fn r4_script() -> ScriptedModel {
    ScriptedModel::new([
        ScriptedTurn::new()
            .text("Looking it up for you now.")
            .call("c1", "echo", r#"{"service_id":"svc-42"}"#)
            .call("c2", "failing", "{}")
            .usage(100, 20),
        ScriptedTurn::reply("svc-42 is down on Tuesday, from 02:00 to 04:00.").usage(150, 12),
    ])
}

fn r4_agent(model: ScriptedModel) -> Agent {
    let failing = tool("failing", |_ctx, _args: Args| async move {
        Err::<(), _>(std::io::Error::other("internal detail"))
    });
    Agent::builder(model)
        .instructions("Be brief.")
        .tool(echo("echo").0)
        .tool(failing)
        .build()
        .expect("a valid agent")
}

#[tokio::test]
async fn r4_run_and_run_stream_give_the_same_run() {
    let by_run = r4_agent(r4_script())
        .run(&Context::new(), "When is svc-42 down?")
        .await
        .unwrap();
    let (events, end) =
        drain(r4_agent(r4_script()).run_stream(&Context::new(), "When is svc-42 down?")).await;
    let by_stream = end.unwrap();

    assert_eq!(by_stream.transcript, by_run.transcript);
    assert_eq!(by_stream.text, by_run.text);
    assert_eq!(by_stream.usage, by_run.usage);
    let summary = |out: &tool_runtime::RunOutput| {
        out.calls
            .iter()
            .map(|c| (c.id.clone(), c.text().to_owned(), c.kind()))
            .collect::<Vec<_>>()
    };
    assert_eq!(summary(&by_stream), summary(&by_run));

    // The events tell the same story, in order.
    assert!(
        matches!(&events[0], RunEvent::Started { advertised } if **advertised == ["echo", "failing"])
    );
    let text_of_turn = |turn: usize| {
        events
            .iter()
            .filter_map(|e| match e {
                RunEvent::TextDelta { turn: t, text } if *t == turn => Some(text.as_str()),
                _ => None,
            })
            .collect::<String>()
    };
    let deltas = events
        .iter()
        .filter(|e| matches!(e, RunEvent::TextDelta { .. }))
        .count();
    assert!(deltas > 2, "text streams in pieces");
    assert_eq!(text_of_turn(1), "Looking it up for you now.");
    assert_eq!(text_of_turn(2), by_run.text);
    let requested: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolCall { call, .. } => Some((&*call.id, &*call.name)),
            _ => None,
        })
        .collect();
    assert_eq!(requested, [("c1", "echo"), ("c2", "failing")]);
    let failed = events
        .iter()
        .find_map(|e| match e {
            RunEvent::CallFinished(r) if &*r.id == "c2" => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!(failed.text(), "the tool failed");
    assert!(format!("{:#}", failed.error().unwrap()).contains("internal detail"));
    let ends: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TurnEnd {
                turn,
                usage,
                finish,
            } => Some((*turn, *usage, finish.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        ends,
        [
            (1, Usage::new(100, 20), Some(FinishReason::ToolCalls)),
            (2, Usage::new(150, 12), Some(FinishReason::Stop))
        ]
    );
    // Calls are requested before they finish, and a turn ends after its calls.
    let position = |pred: &dyn Fn(&RunEvent) -> bool| events.iter().position(pred).unwrap();
    let call_requested = position(&|e| matches!(e, RunEvent::ToolCall { .. }));
    let call_finished = position(&|e| matches!(e, RunEvent::CallFinished(_)));
    let turn_ended = position(&|e| matches!(e, RunEvent::TurnEnd { .. }));
    assert!(call_requested < call_finished && call_finished < turn_ended);
}

/// Input with constraints, as `#[derive(Schema)]` renders and enforces them.
#[derive(Schema, Debug)]
#[allow(dead_code)]
struct WindowQuery {
    /// The service identifier.
    #[schema(min_len = 1, max_len = 64, pattern = "^[a-z0-9-]+$")]
    service_id: String,
    /// How many days ahead to look.
    #[schema(default = 7, range = 1..=30)]
    days: u32,
}

/// A model that reports strict schema enforcement, the way a provider with structured
/// outputs does; R5 says validation runs anyway.
struct Strict(ScriptedModel);

impl Model for Strict {
    fn tool_spec(&self, tool: &Tool) -> Result<ToolSpec, SchemaUnsupported> {
        if tool.schema_json().contains("\"format\"") {
            return Err(
                SchemaUnsupported::new("`format` is not supported in strict mode")
                    .at("/properties/when"),
            );
        }
        let mut strict = tool.schema().clone();
        strict["x-strict"] = serde_json::Value::Bool(true);
        Ok(ToolSpec::new(tool.name(), tool.description(), strict))
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        self.0.stream(request)
    }
}

#[tokio::test]
async fn r5_arguments_are_validated_even_when_the_provider_enforces_the_schema() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let lookup = Tool::builder("lookup-window", "Finds a maintenance window.")
        .handler(move |_ctx: Context, q: WindowQuery| {
            log.lock().unwrap().push((q.service_id.clone(), q.days));
            async move { Ok::<_, std::io::Error>("Tuesday 02:00") }
        })
        .build();
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call(
                "c1",
                "lookup-window",
                r#"{"service_id": "SVC 42!", "days": 0}"#,
            )
            .call("c2", "lookup-window", r#"{"days": 7, "extra": true}"#),
        ScriptedTurn::new().call("c3", "lookup-window", r#"{"service_id": "svc-42"}"#),
        ScriptedTurn::reply("Tuesday"),
    ]);
    let agent = Agent::builder(Strict(model.clone()))
        .tool(lookup)
        .build()
        .unwrap();

    let out = agent.run(&Context::new(), "When?").await.unwrap();

    // The driver's spec was advertised ...
    assert_eq!(model.requests()[0].tools[0].parameters()["x-strict"], true);
    // ... and still every call was validated: the invalid ones never reached the handler.
    assert_eq!(*seen.lock().unwrap(), [("svc-42".to_owned(), 7)]);
    assert_eq!(out.calls[0].kind(), OutcomeKind::InvalidArguments);
    assert_eq!(out.calls[1].kind(), OutcomeKind::InvalidArguments);
    let rules: Vec<_> = out.calls[0]
        .violations()
        .iter()
        .map(|v| (v.path.as_str(), v.rule.keyword()))
        .collect();
    assert!(rules.contains(&("/service_id", "pattern")), "{rules:?}");
    assert!(rules.contains(&("/days", "minimum")), "{rules:?}");
    let requests = model.requests();
    let feedback = requests[1].tool_results();
    assert!(feedback[0].is_error && feedback[0].text.contains("/service_id"));
    assert!(feedback[1].text.contains("/extra") && feedback[1].text.contains("/service_id"));
    assert_eq!(
        out.calls[2].kind(),
        OutcomeKind::Success,
        "the corrected call runs"
    );
}

#[derive(Schema)]
#[allow(dead_code)]
struct Dated {
    /// When.
    #[schema(format = "date-time")]
    when: String,
}

#[test]
fn build_reports_every_declaration_problem_before_any_model_io() {
    let model = ScriptedModel::new([ScriptedTurn::reply("never")]);
    let (ok, _) = echo("fine");
    let (dup_a, _) = echo("dup");
    let (dup_b, _) = echo("dup");
    let dated = Tool::builder("dated", "Takes a date.")
        .handler(|_ctx: Context, _d: Dated| async move { Ok::<_, std::io::Error>("ok") })
        .build();
    let result = Agent::builder(Strict(model.clone()))
        .tool(ok)
        .tool(Tool::builder("Bad_Name", "Badly named.").build())
        .tool(dup_a)
        .tool(dup_b)
        .tool(dated)
        .tool_timeout("ghost", Duration::from_secs(1))
        .max_concurrency(0)
        .build();
    let err = result.unwrap_err();

    let problems = err.problems();
    assert_eq!(problems.len(), 5, "{err}");
    assert!(
        matches!(&problems[0], BuildProblem::Tool(DeclarationError::InvalidName { name, .. }) if name == "Bad_Name")
    );
    match &problems[1] {
        BuildProblem::Tool(DeclarationError::DuplicateName {
            name,
            first,
            second,
        }) => {
            assert_eq!(name, "dup");
            assert_eq!(first.file, file!());
            assert!(first.line < second.line, "both declaration sites are named");
        }
        other => panic!("expected a duplicate, got {other:?}"),
    }
    assert!(
        matches!(&problems[2], BuildProblem::SchemaUnsupported { name, source, .. }
        if name == "dated" && source.path() == Some("/properties/when"))
    );
    assert!(
        matches!(&problems[3], BuildProblem::TimeoutForUnknownTool { name } if name == "ghost")
    );
    assert!(matches!(&problems[4], BuildProblem::ZeroConcurrency));
    assert_eq!(err.kind(), ErrorKind::Declaration);
    assert!(err.to_string().contains("5 problems"));
    let core: tool_runtime::Error = err.into();
    assert_eq!(core.kind(), ErrorKind::Declaration);
    assert_eq!(model.request_count(), 0);
}

#[tokio::test]
async fn a_transcript_continues_a_conversation() {
    let (echo, _) = echo("echo");
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "echo", r#"{"n":1}"#),
        ScriptedTurn::reply("first answer"),
        ScriptedTurn::reply("second answer"),
    ]);
    let agent = Agent::builder(model.clone())
        .instructions("Be brief.")
        .tool(echo)
        .build()
        .unwrap();
    let first = agent.run(&Context::new(), "one").await.unwrap();
    let second = agent
        .run(
            &Context::new(),
            Input::from(first.transcript.clone()).user("two"),
        )
        .await
        .unwrap();

    let sent = &model.requests()[2];
    assert_eq!(sent.instructions.as_deref(), Some("Be brief."));
    assert_eq!(
        &sent.messages[..first.transcript.len()],
        first.transcript.as_slice()
    );
    assert_eq!(sent.messages.last(), Some(&Message::user("two")));
    assert_eq!(second.text, "second answer");
    assert_eq!(second.transcript.len(), first.transcript.len() + 2);
}

/// Continuing a run's whole output (`Input::from(output)`): the conversation goes on as with
/// the transcript, and only what was added after the run is checked; a transcript whose
/// length changed after the run is checked whole (a result nobody asked for is a protocol
/// error before any request).
#[tokio::test]
async fn a_run_output_continues_a_conversation_and_edits_are_still_checked() {
    let (echo, _) = echo("echo");
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "echo", r#"{"n":1}"#),
        ScriptedTurn::reply("first answer"),
        ScriptedTurn::reply("second answer"),
    ]);
    let agent = Agent::builder(model.clone()).tool(echo).build().unwrap();
    let first = agent.run(&Context::new(), "one").await.unwrap();
    let written = first.transcript.clone();
    let second = agent
        .run(&Context::new(), Input::from(first.clone()).user("two"))
        .await
        .unwrap();
    assert_eq!(second.text, "second answer");
    assert_eq!(&second.transcript[..written.len()], written.as_slice());
    assert_eq!(model.requests()[2].messages.len(), written.len() + 1);

    // An orphan result added to the output: the length changed, so the whole is checked.
    let mut edited = first.clone();
    edited.transcript.push(Message::Tool(ToolResult::new(
        "ghost", "echo", "forged", false,
    )));
    let err = agent
        .run(&Context::new(), Input::from(edited).user("three"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    // And one added after it, to the input: checked as any new message.
    let err = agent
        .run(
            &Context::new(),
            Input::from(first).message(Message::Tool(ToolResult::new(
                "ghost", "echo", "forged", false,
            ))),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    assert_eq!(
        model.request_count(),
        3,
        "no request after a protocol error"
    );
}

#[tokio::test]
async fn running_out_of_script_is_a_model_error() {
    let model = ScriptedModel::new([ScriptedTurn::new().call("c1", "missing", "{}")]);
    let agent = Agent::builder(model).build().unwrap();
    let err = agent.run(&Context::new(), "go").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Model);
    assert!(matches!(
        err.model_error(),
        Some(ModelError::ScriptExhausted {
            request: 2,
            scripted: 1
        })
    ));
    assert!(well_formed(err.transcript()));
}

#[tokio::test]
async fn a_provider_failure_mid_stream_is_a_model_error_the_caller_can_match() {
    let model = ScriptedModel::new([ScriptedTurn::new().text("partial answer").fail(
        ModelError::Provider {
            status: 400,
            message: "context too long".to_owned(),
        },
    )]);
    let agent = Agent::builder(model).build().unwrap();
    let err = agent.run(&Context::new(), "go").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Model);
    assert!(matches!(
        err.model_error(),
        Some(ModelError::Provider { status: 400, .. })
    ));
    assert_eq!(
        err.transcript(),
        [Message::user("go")],
        "the partial reply is not kept"
    );
}

#[tokio::test(start_paused = true)]
async fn a_scripted_delay_runs_on_tokios_clock_and_requests_are_recorded() {
    let model = ScriptedModel::new([ScriptedTurn::reply("late")
        .delay(Duration::from_secs(10))
        .usage(5, 1)]);
    let agent = Agent::builder(model.clone())
        .instructions("Be brief.")
        .tool(echo("echo").0)
        .build()
        .unwrap();
    let started = tokio::time::Instant::now();
    let out = agent.run(&Context::new(), "hello").await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(10));
    assert_eq!(out.usage, [Usage::new(5, 1)]);
    let request = &model.requests()[0];
    assert_eq!(request.instructions.as_deref(), Some("Be brief."));
    assert_eq!(request.messages, [Message::user("hello")]);
    assert_eq!(request.tool_names(), ["echo"]);
    assert_eq!(
        request.tools[0].parameters_json(),
        agent.tools()[0].schema_json()
    );
}
