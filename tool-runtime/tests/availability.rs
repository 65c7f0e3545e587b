//! Availability through the run loop: discovery (A2, A3), the re-check of every call (A4),
//! hidden and unknown names (A5), policy errors during a call (A6), the preview (A7) and
//! capabilities that change mid-run (A8).

mod support {
    pub mod agent;
}

use std::error::Error as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::agent::{Args, echo, mentions, texts, tool};
use tool_runtime::{
    Agent, Context, ErrorKind, OutcomeKind, Panicked, ScriptedModel, ScriptedTurn, Tool, ToolError,
};

type Log = Arc<Mutex<Vec<String>>>;

/// A tool whose policy logs `name@requests-so-far` and answers `allow`.
fn logged(name: &str, log: &Log, model: &ScriptedModel, allow: bool) -> Tool {
    let (log, model, label) = (Arc::clone(log), model.clone(), name.to_owned());
    Tool::builder(name, "A logged tool.")
        .handler(|_ctx: Context, args: Args| async move { Ok::<_, std::io::Error>(args) })
        .available_fn(move |_ctx: &Context| {
            log.lock()
                .expect("not poisoned")
                .push(format!("{label}@{}", model.request_count()));
            Ok::<_, std::io::Error>(allow)
        })
        .build()
}

#[tokio::test]
async fn a2_discovery_evaluates_each_policy_once_in_declaration_order_before_any_request() {
    let log = Log::default();
    let model = ScriptedModel::new([ScriptedTurn::reply("done")]);
    let agent = Agent::builder(model.clone())
        .tool(logged("charlie", &log, &model, true))
        .tool(logged("alpha", &log, &model, false))
        .tool(logged("bravo", &log, &model, true))
        .build()
        .unwrap();

    let out = agent.run(&Context::new(), "hi").await.unwrap();

    // Once each, in declaration order (not by name), all before request 1.
    assert_eq!(*log.lock().unwrap(), ["charlie@0", "alpha@0", "bravo@0"]);
    assert_eq!(model.requests()[0].tool_names(), ["charlie", "bravo"]);
    assert_eq!(*out.advertised, ["charlie", "bravo"]);
}

#[tokio::test]
async fn a3_a_policy_error_at_discovery_ends_the_run_before_any_model_request() {
    let log = Log::default();
    let model = ScriptedModel::new([ScriptedTurn::reply("never sent")]);
    let failing = Tool::builder("directory", "Looks people up.")
        .handler(|_ctx: Context, args: Args| async move { Ok::<_, std::io::Error>(args) })
        .available_fn(|_ctx: &Context| -> Result<bool, std::io::Error> {
            Err(std::io::Error::other("the directory is down"))
        })
        .build();
    let agent = Agent::builder(model.clone())
        .tool(logged("first", &log, &model, true))
        .tool(failing)
        .tool(logged("last", &log, &model, true))
        .build()
        .unwrap();

    let err = agent.run(&Context::new(), "hi").await.unwrap_err();

    assert_eq!(err.kind(), ErrorKind::Availability);
    assert!(err.is(ErrorKind::Availability));
    assert_eq!(err.tool(), Some("directory"));
    let cause = err
        .source()
        .unwrap()
        .downcast_ref::<std::io::Error>()
        .unwrap();
    assert_eq!(cause.to_string(), "the directory is down");
    assert_eq!(
        model.request_count(),
        0,
        "no model I/O after a discovery failure"
    );
    assert_eq!(
        *log.lock().unwrap(),
        ["first@0"],
        "discovery stops at the failure"
    );
    assert_eq!(err.transcript().len(), 1, "the transcript is the input");
}

#[tokio::test]
async fn a2_e4_a_panicking_policy_at_discovery_ends_the_run_with_kind_panic() {
    let model = ScriptedModel::new([ScriptedTurn::reply("never sent")]);
    let panicking = Tool::builder("fragile", "Panics when asked.")
        .handler(|_ctx: Context, args: Args| async move { Ok::<_, std::io::Error>(args) })
        .available_fn(|_ctx: &Context| -> Result<bool, std::io::Error> { panic!("policy bug") })
        .build();
    let agent = Agent::builder(model.clone())
        .tool(panicking)
        .build()
        .unwrap();

    let err = agent.run(&Context::new(), "hi").await.unwrap_err();

    assert_eq!(err.kind(), ErrorKind::Panic);
    assert!(err.is(ErrorKind::Permanent));
    let panic = err.source().unwrap().downcast_ref::<Panicked>().unwrap();
    assert!(panic.message().contains("policy bug"));
    assert_eq!(model.request_count(), 0);
}

#[tokio::test(start_paused = true)]
async fn a4_every_call_rechecks_availability_after_its_slot_and_before_decoding() {
    let slow_done = Arc::new(AtomicBool::new(false));
    let checks: Log = Log::default();
    let done = Arc::clone(&slow_done);
    let slow = tool("slow", move |_ctx, _args: Args| {
        let done = Arc::clone(&done);
        async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            done.store(true, Ordering::SeqCst);
            Ok::<_, std::io::Error>("slow result")
        }
    });
    let gated_runs = Arc::new(AtomicUsize::new(0));
    let (log, seen, runs) = (
        Arc::clone(&checks),
        Arc::clone(&slow_done),
        Arc::clone(&gated_runs),
    );
    let gated = Tool::builder("gated", "Allowed at discovery only.")
        .handler(move |_ctx: Context, args: Args| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::io::Error>(args) }
        })
        .available_fn(move |ctx: &Context| {
            let mut log = log.lock().unwrap();
            let at = match ctx.call() {
                None => "discovery".to_owned(),
                Some(call) => format!(
                    "call {} after slow: {}",
                    call.id,
                    seen.load(Ordering::SeqCst)
                ),
            };
            log.push(at);
            Ok::<_, std::io::Error>(log.len() == 1)
        })
        .build();
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "slow", "{}")
            .call("c2", "gated", "this is not JSON"),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(slow)
        .tool(gated)
        .max_concurrency(1)
        .build()
        .unwrap();

    agent.run(&Context::new(), "go").await.unwrap();

    // The re-check ran in the call's context, once the only slot was free again.
    assert_eq!(
        *checks.lock().unwrap(),
        ["discovery", "call c2 after slow: true"]
    );
    // Denied before decoding: the model hears `tool unavailable`, not a syntax error.
    let requests = model.requests();
    assert_eq!(
        texts(&requests[1].tool_results()),
        [
            ("c1".to_owned(), "slow result".to_owned()),
            ("c2".to_owned(), "tool unavailable".to_owned())
        ]
    );
    assert_eq!(gated_runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a5_hidden_unknown_and_empty_names_all_get_tool_unavailable() {
    let checks = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&checks);
    let secret_runs = Arc::new(AtomicUsize::new(0));
    let runs = Arc::clone(&secret_runs);
    let secret = Tool::builder("secret", "Hidden from everyone.")
        .handler(move |_ctx: Context, args: Args| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::io::Error>(args) }
        })
        .available_fn(move |_ctx: &Context| {
            count.fetch_add(1, Ordering::SeqCst);
            Ok::<_, std::io::Error>(false)
        })
        .build();
    let (visible, _) = echo("visible");
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "secret", "{}")
            .call("c2", "no-such-tool", "{}")
            .call("c3", "", "{}")
            .call("c4", "SECRET", "{}"),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(visible)
        .tool(secret)
        .build()
        .unwrap();

    let out = agent.run(&Context::new(), "guess").await.unwrap();

    assert_eq!(model.requests()[0].tool_names(), ["visible"]);
    let answers: Vec<_> = texts(&model.requests()[1].tool_results())
        .into_iter()
        .map(|(_, text)| text)
        .collect();
    assert_eq!(answers, ["tool unavailable"; 4]);
    assert!(
        out.calls
            .iter()
            .all(|c| c.kind() == OutcomeKind::Unavailable)
    );
    assert_eq!(secret_runs.load(Ordering::SeqCst), 0);
    // A5, A8: only discovery asked the policy; a guessed hidden name, like an unknown one,
    // reaches no policy.
    assert_eq!(checks.load(Ordering::SeqCst), 1);
}

/// An application error that wraps text approved for the model.
#[derive(Debug)]
struct Wrapped(ToolError);

impl std::fmt::Display for Wrapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the permission service failed")
    }
}

impl std::error::Error for Wrapped {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

#[tokio::test]
async fn a6_a_policy_error_during_a_call_is_availability_permanent_and_never_shown() {
    let evaluations = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&evaluations);
    let flaky = Tool::builder("flaky", "Its policy fails after discovery.")
        .handler(|_ctx: Context, args: Args| async move { Ok::<_, std::io::Error>(args) })
        .available_fn(move |_ctx: &Context| -> Result<bool, Wrapped> {
            if count.fetch_add(1, Ordering::SeqCst) == 0 {
                Ok(true)
            } else {
                Err(Wrapped(ToolError::new(
                    "SECRET: the ACL database is unreachable",
                )))
            }
        })
        .build();
    let sibling_cancelled = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&sibling_cancelled);
    let waiter = tool("waiter", move |ctx: Context, _args: Args| {
        let flag = Arc::clone(&flag);
        async move {
            ctx.cancelled().await;
            flag.store(true, Ordering::SeqCst);
            Err::<(), _>(std::io::Error::other("stopped"))
        }
    });
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("w1", "waiter", "{}")
            .call("f1", "flaky", "{}"),
        ScriptedTurn::reply("never sent"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(flaky)
        .tool(waiter)
        .build()
        .unwrap();

    let err = agent.run(&Context::new(), "go").await.unwrap_err();

    assert_eq!(err.kind(), ErrorKind::Availability);
    assert!(err.is(ErrorKind::Availability) && err.is(ErrorKind::Permanent));
    assert_eq!((err.tool(), err.call_id()), (Some("flaky"), Some("f1")));
    // The cause is kept, ToolError and all ...
    let mut source = err.source();
    let mut found = false;
    while let Some(e) = source {
        found |= e.downcast_ref::<ToolError>().is_some();
        source = e.source();
    }
    assert!(found, "the cause chain keeps the policy's error: {err:#}");
    // ... but the model never reads it, and no further request is made.
    assert_eq!(model.request_count(), 1);
    assert!(!mentions(err.transcript(), "SECRET"));
    let flaky_record = err.calls().iter().find(|c| &*c.id == "f1").unwrap();
    assert_eq!(flaky_record.text(), "the tool failed");
    assert!(
        sibling_cancelled.load(Ordering::SeqCst),
        "siblings are cancelled (P2)"
    );
}

#[derive(Debug, Clone, PartialEq)]
struct Role(&'static str);

fn operators_only(ctx: &Context) -> Result<bool, std::io::Error> {
    Ok(ctx.get::<Role>() == Some(&Role("operator")))
}

#[tokio::test]
async fn a7_the_agent_previews_availability_without_model_io_or_handlers() {
    let (public, public_runs) = echo("public");
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let ops = Tool::builder("ops", "For operators.")
        .handler(move |_ctx: Context, args: Args| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::io::Error>(args) }
        })
        .available_fn(operators_only)
        .build();
    let model = ScriptedModel::new([ScriptedTurn::reply("hello")]);
    let agent = Agent::builder(model.clone())
        .tool(public)
        .tool(ops)
        .build()
        .unwrap();
    let operator = Context::new().with(Role("operator"));
    let guest = Context::new().with(Role("guest"));

    let names = |specs: Vec<tool_runtime::ToolSpec>| {
        specs
            .iter()
            .map(|s| s.name().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(agent.advertised(&operator).await.unwrap()),
        ["public", "ops"]
    );
    assert_eq!(names(agent.advertised(&guest).await.unwrap()), ["public"]);
    assert_eq!(model.request_count(), 0);
    assert_eq!(
        runs.load(Ordering::SeqCst) + public_runs.load(Ordering::SeqCst),
        0
    );

    // The preview is what a run advertises.
    agent.run(&guest, "hi").await.unwrap();
    assert_eq!(model.requests()[0].tool_names(), ["public"]);
}

/// A capability the application grants or revokes while a run goes on.
#[derive(Clone, Default)]
struct Capability(Arc<AtomicBool>);

fn capable(ctx: &Context) -> Result<bool, std::io::Error> {
    Ok(ctx
        .get::<Capability>()
        .is_some_and(|c| c.0.load(Ordering::SeqCst)))
}

/// `deploy` (behind the capability) and `set` (which sets it to its `on` argument).
fn capability_tools() -> (Tool, Tool, Arc<AtomicUsize>) {
    let deploys = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&deploys);
    let deploy = Tool::builder("deploy", "Deploys.")
        .handler(move |_ctx: Context, _args: Args| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::io::Error>("deployed") }
        })
        .available_fn(capable)
        .build();
    let set = tool("set-capability", |ctx: Context, args: Args| async move {
        let on = args
            .get("on")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        ctx.require::<Capability>()?.0.store(on, Ordering::SeqCst);
        Ok::<_, tool_runtime::MissingExtension>("done")
    });
    (deploy, set, deploys)
}

#[tokio::test]
async fn a8_a_capability_revoked_mid_run_blocks_later_calls_and_the_list_stays_fixed() {
    let (deploy, set, deploys) = capability_tools();
    let capability = Capability::default();
    capability.0.store(true, Ordering::SeqCst);
    let ctx = Context::new().with(capability.clone());
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "deploy", "{}"),
        ScriptedTurn::new().call("c2", "set-capability", r#"{"on": false}"#),
        ScriptedTurn::new().call("c3", "deploy", "{}"),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(deploy)
        .tool(set)
        .build()
        .unwrap();

    let out = agent.run(&ctx, "deploy twice").await.unwrap();

    let kinds: Vec<_> = out.calls.iter().map(|c| (&*c.id, c.kind())).collect();
    assert_eq!(
        kinds,
        [
            ("c1", OutcomeKind::Success),
            ("c2", OutcomeKind::Success),
            ("c3", OutcomeKind::Unavailable)
        ]
    );
    assert_eq!(
        deploys.load(Ordering::SeqCst),
        1,
        "the revoked call did not run"
    );
    // The advertised list cannot be retracted mid-run: every request shows the same tools.
    for request in model.requests() {
        assert_eq!(request.tool_names(), ["deploy", "set-capability"]);
    }
}

#[tokio::test]
async fn a8_a_capability_granted_mid_run_is_advertised_and_callable_only_in_a_new_run() {
    let (deploy, set, deploys) = capability_tools();
    let ctx = Context::new().with(Capability::default());
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "set-capability", r#"{"on": true}"#),
        // The model guesses the hidden tool's name after the grant. A5, A8: a tool this run
        // did not advertise is not callable in it, even though its policy would allow it now.
        ScriptedTurn::new().call("c2", "deploy", "{}"),
        ScriptedTurn::reply("done"),
        // A new run advertises it, and the call runs.
        ScriptedTurn::new().call("c3", "deploy", "{}"),
        ScriptedTurn::reply("new run"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(deploy)
        .tool(set)
        .build()
        .unwrap();

    let out = agent.run(&ctx, "grant").await.unwrap();
    assert_eq!(out.calls[1].kind(), OutcomeKind::Unavailable);
    assert_eq!(out.calls[1].outcome.text(), "tool unavailable");
    assert_eq!(
        deploys.load(Ordering::SeqCst),
        0,
        "the guessed call did not run"
    );
    for request in &model.requests()[..3] {
        assert_eq!(
            request.tool_names(),
            ["set-capability"],
            "fixed for the run"
        );
    }

    let again = agent.run(&ctx, "again").await.unwrap();
    assert_eq!(
        model.requests()[3].tool_names(),
        ["deploy", "set-capability"]
    );
    assert_eq!(again.calls[0].kind(), OutcomeKind::Success);
    assert_eq!(deploys.load(Ordering::SeqCst), 1);
}

/// A5: the policy of a tool the run did not advertise is not consulted when the model guesses
/// its name; the answer is the same as for a name the agent does not hold.
#[tokio::test]
async fn a5_a_guessed_hidden_name_does_not_consult_the_policy() {
    let checks = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&checks);
    let hidden = Tool::builder("hidden", "Never shown.")
        .available_fn(move |_ctx: &Context| {
            // Hidden at discovery, allowed on any later check.
            let n = counted.fetch_add(1, Ordering::SeqCst);
            Ok::<_, std::io::Error>(n > 0)
        })
        .handler(|_ctx: Context, args: Args| async move { Ok::<_, std::io::Error>(args) })
        .build();
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "hidden", "{}")
            .call("c2", "no-such-tool", "{}"),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone()).tool(hidden).build().unwrap();
    let out = agent.run(&Context::new(), "guess").await.unwrap();
    assert_eq!(
        checks.load(Ordering::SeqCst),
        1,
        "only discovery asked the policy"
    );
    let texts: Vec<_> = out
        .calls
        .iter()
        .map(|c| (c.kind(), c.outcome.text()))
        .collect();
    assert_eq!(
        texts,
        [
            (OutcomeKind::Unavailable, "tool unavailable"),
            (OutcomeKind::Unavailable, "tool unavailable")
        ]
    );
}
