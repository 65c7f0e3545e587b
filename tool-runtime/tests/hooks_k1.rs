//! K1 on the agent loop: hooks around every call. A hook sees the call (tool, id, validated
//! arguments, context, transport) and allows it, denies it (the model reads its message, the
//! handler never runs) or ends the run (siblings cancelled and joined, P1–P3); after the
//! handler it sees the outcome and may replace the model's text without ever revealing the
//! redacted error (E2, E3). Hooks run in registration order, are async, and a panicking hook
//! is a `Panic` (E4). Invalid arguments, hidden tools and calls waiting for approval never
//! reach a hook (S2, A4, H1). Without hooks a call takes the plain path.

mod support {
    pub mod agent;
}

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use support::agent::{Args, echo, mentions, texts, tool, well_formed};
use tokio::sync::{Barrier, Notify};
use tool_runtime::error::find_in_chain;
use tool_runtime::hook::{After, Before, Hook, HookCall, Transport, after_fn, before_fn};
use tool_runtime::{
    Agent, Context, Decisions, ErrorKind, Outcome, OutcomeKind, Schema, ScriptedModel,
    ScriptedTurn, Tool,
};

/// Who asks, as the application put it in the context.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Principal(&'static str);

/// Input of `lookup`.
#[derive(Schema, Debug)]
struct Query {
    /// The service.
    #[schema(min_len = 1, max_len = 64)]
    service_id: String,
    /// How many days ahead.
    #[schema(default = 7, range = 1..=30)]
    days: u32,
}

/// `lookup`: answers with its input; counts its runs.
fn lookup() -> (Tool, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let tool = Tool::builder("lookup", "Finds a window.")
        .handler(move |_ctx: Context, q: Query| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::io::Error>(format!("{} in {} days", q.service_id, q.days)) }
        })
        .build();
    (tool, runs)
}

/// What a hook saw of one call.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    tool: String,
    id: String,
    arguments: Value,
    principal: Option<Principal>,
    transport: Transport,
}

/// A hook that keeps what it saw and allows every call.
#[derive(Default)]
struct Watcher {
    seen: Mutex<Vec<Seen>>,
}

impl Hook for Watcher {
    async fn before(&self, call: &HookCall<'_>) -> Before {
        self.seen.lock().expect("not poisoned").push(Seen {
            tool: call.name().to_owned(),
            id: call.id().to_owned(),
            arguments: call.arguments().clone(),
            principal: call.context().get::<Principal>().cloned(),
            transport: call.transport(),
        });
        Before::Allow
    }
}

fn ctx() -> Context {
    Context::new().with(Principal("ada"))
}

#[tokio::test]
async fn k1_a_hook_sees_the_validated_call_and_lets_it_run() {
    let (lookup, runs) = lookup();
    let watcher = Arc::new(Watcher::default());
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "lookup", r#"{"service_id": "svc-42"}"#),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(lookup)
        .hook(Arc::clone(&watcher))
        .build()
        .unwrap();

    let out = agent.run(&ctx(), "go").await.unwrap();

    assert_eq!(out.text, "done");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(out.calls[0].text(), "svc-42 in 7 days");
    // The arguments as validated: the default filled in (S2).
    assert_eq!(
        *watcher.seen.lock().expect("not poisoned"),
        [Seen {
            tool: "lookup".into(),
            id: "c1".into(),
            arguments: json!({"service_id": "svc-42", "days": 7}),
            principal: Some(Principal("ada")),
            transport: Transport::Agent,
        }]
    );
}

#[tokio::test]
async fn k1_a_denied_call_never_runs_and_the_model_reads_the_hooks_message() {
    let (restart, restarts) = echo("restart");
    let (status, statuses) = echo("status");
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "restart", r#"{"service_id": "prod-db"}"#)
            .call("c2", "status", "{}"),
        ScriptedTurn::reply("I could not restart it."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(restart)
        .tool(status)
        .hook(before_fn(|call| {
            if call.name() == "restart" && call.arguments()["service_id"] == "prod-db" {
                Before::deny("Restarting the production database needs a change ticket.")
            } else {
                Before::Allow
            }
        }))
        .build()
        .unwrap();

    let out = agent.run(&ctx(), "restart prod-db").await.unwrap();

    assert_eq!(out.text, "I could not restart it.");
    assert_eq!(restarts.load(Ordering::SeqCst), 0, "the handler never ran");
    assert_eq!(statuses.load(Ordering::SeqCst), 1);
    assert_eq!(out.calls[0].kind(), OutcomeKind::Denied);
    assert!(out.calls[0].error().is_none());
    let requests = model.requests();
    let results = requests[1].tool_results();
    assert_eq!(
        texts(&results),
        [
            (
                "c1".to_owned(),
                "Restarting the production database needs a change ticket.".to_owned()
            ),
            ("c2".to_owned(), "{}".to_owned()),
        ]
    );
    assert!(results[0].is_error && !results[1].is_error);
}

#[tokio::test(start_paused = true)]
async fn k1_a_hook_that_ends_the_run_cancels_and_joins_the_siblings() {
    let started = Arc::new(Notify::new());
    let sibling_saw_cancel = Arc::new(AtomicBool::new(false));
    let (s, saw) = (Arc::clone(&started), Arc::clone(&sibling_saw_cancel));
    let slow = tool("slow", move |ctx: Context, _args: Args| {
        let (s, saw) = (Arc::clone(&s), Arc::clone(&saw));
        async move {
            s.notify_one();
            ctx.cancelled().await;
            // Joined before `run` returns, even though it takes its time (P2).
            tokio::time::sleep(Duration::from_secs(5)).await;
            saw.store(true, Ordering::SeqCst);
            Ok::<_, std::io::Error>("cancelled")
        }
    });
    let (transfer, transfers) = echo("transfer");

    /// Ends the run at a transfer, once the sibling is running.
    struct Quota(Arc<Notify>);
    impl Hook for Quota {
        async fn before(&self, call: &HookCall<'_>) -> Before {
            if call.name() != "transfer" {
                return Before::Allow;
            }
            self.0.notified().await;
            Before::end(std::io::Error::other("the daily transfer quota is used up"))
        }
    }

    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "slow", "{}")
            .call("c2", "transfer", r#"{"amount": 10}"#),
        ScriptedTurn::reply("never sent"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(slow)
        .tool(transfer)
        .hook(Quota(Arc::clone(&started)))
        .build()
        .unwrap();

    let err = agent.run(&ctx(), "pay").await.unwrap_err();

    assert_eq!(err.kind(), ErrorKind::Hook);
    assert!(err.is(ErrorKind::Permanent), "ending the run is permanent");
    assert_eq!((err.tool(), err.call_id()), (Some("transfer"), Some("c2")));
    assert_eq!(err.call_error().unwrap().kind(), ErrorKind::Hook);
    let cause = find_in_chain::<std::io::Error>(&err).expect("the hook's cause is kept");
    assert_eq!(cause.to_string(), "the daily transfer quota is used up");
    // P2: the sibling saw the cancellation and was joined before `run` returned.
    assert!(sibling_saw_cancel.load(Ordering::SeqCst));
    assert_eq!(transfers.load(Ordering::SeqCst), 0, "the handler never ran");
    assert_eq!(model.request_count(), 1, "no request after the run ended");
    assert!(well_formed(err.transcript()));
    assert!(!mentions(err.transcript(), "quota"));
    let kinds: Vec<_> = err.calls().iter().map(|c| c.kind()).collect();
    assert_eq!(kinds, [OutcomeKind::Success, OutcomeKind::Fatal]);
}

#[tokio::test]
async fn k1_an_after_hook_replaces_the_text_the_model_reads() {
    let (lookup, _) = lookup();
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "lookup", r#"{"service_id": "svc-42"}"#),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(lookup)
        .hook(after_fn(|_call, outcome| {
            After::replace(format!("[checked] {}", outcome.text()))
        }))
        .build()
        .unwrap();

    let out = agent.run(&ctx(), "go").await.unwrap();

    assert_eq!(out.calls[0].kind(), OutcomeKind::Success);
    assert_eq!(out.calls[0].text(), "[checked] svc-42 in 7 days");
    let requests = model.requests();
    let results = requests[1].tool_results();
    assert_eq!(results[0].text, "[checked] svc-42 in 7 days");
    assert!(!results[0].is_error);
}

/// Replaces the text of `inventory`'s failures, and keeps what it saw of them.
#[derive(Default)]
struct Soften {
    errors_seen: Mutex<Vec<String>>,
}

impl Hook for Soften {
    async fn after(&self, call: &HookCall<'_>, outcome: &Outcome) -> After {
        // The hook sees the unredacted error (E3) ...
        if let Some(error) = outcome.error() {
            self.errors_seen
                .lock()
                .expect("not poisoned")
                .push(format!("{error:#}"));
        }
        // ... and writes the model's text itself.
        match (call.name(), outcome.kind()) {
            ("inventory", OutcomeKind::Failed) => {
                After::replace("The inventory service is down; try again in a minute.")
            }
            _ => After::Keep,
        }
    }
}

#[tokio::test]
async fn k1_e2_an_after_hook_never_reveals_the_redacted_error() {
    let secret = "db://admin:hunter2@db.internal";
    let failing = move |_ctx: Context, _args: Args| async move {
        Err::<String, _>(std::io::Error::other(format!("cannot reach {secret}")))
    };
    let soften = Arc::new(Soften::default());
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "inventory", "{}")
            .call("c2", "billing", "{}"),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(tool("inventory", failing))
        .tool(tool("billing", failing))
        .hook(Arc::clone(&soften))
        .build()
        .unwrap();

    let out = agent.run(&ctx(), "go").await.unwrap();

    // The hook saw both errors, unredacted.
    let seen = soften.errors_seen.lock().expect("not poisoned");
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|e| e.contains(secret)));
    // The model read only what the hook wrote, or the redacted text (E2) ...
    let requests = model.requests();
    assert_eq!(
        texts(&requests[1].tool_results()),
        [
            (
                "c1".to_owned(),
                "The inventory service is down; try again in a minute.".to_owned()
            ),
            ("c2".to_owned(), "the tool failed".to_owned()),
        ]
    );
    assert!(requests.iter().all(|r| !mentions(&r.messages, "hunter2")));
    // ... and the replaced text is text the application approved for the model: `rejected`,
    // with the error still there for the application (E3).
    assert_eq!(out.calls[0].kind(), OutcomeKind::Rejected);
    assert_eq!(out.calls[1].kind(), OutcomeKind::Failed);
    for call in &out.calls {
        assert!(format!("{:#}", call.error().unwrap()).contains(secret));
    }
}

/// Logs each phase under its label; its `after` appends the label to the text.
struct Labelled {
    label: &'static str,
    log: Arc<Mutex<Vec<String>>>,
    deny: bool,
}

impl Hook for Labelled {
    async fn before(&self, call: &HookCall<'_>) -> Before {
        self.log.lock().expect("not poisoned").push(format!(
            "before {} {}",
            self.label,
            call.name()
        ));
        if self.deny && call.name() == "guarded" {
            Before::deny(format!("denied by {}", self.label))
        } else {
            Before::Allow
        }
    }

    async fn after(&self, _call: &HookCall<'_>, outcome: &Outcome) -> After {
        self.log.lock().expect("not poisoned").push(format!(
            "after {} saw {:?}",
            self.label,
            outcome.text()
        ));
        After::replace(format!("{} {}", outcome.text(), self.label))
    }
}

#[tokio::test]
async fn k1_hooks_run_in_registration_order_and_the_first_denial_stops_the_rest() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let labelled = |label, deny| Labelled {
        label,
        log: Arc::clone(&log),
        deny,
    };
    let (guarded, guarded_runs) = echo("guarded");
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "open", "{}"),
        ScriptedTurn::new().call("c2", "guarded", "{}"),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(tool("open", |_ctx, _args: Args| async move {
            Ok::<_, std::io::Error>("result")
        }))
        .tool(guarded)
        .hook(labelled("A", false))
        .hook(labelled("B", true))
        .hook(labelled("C", false))
        .build()
        .unwrap();

    let out = agent.run(&ctx(), "go").await.unwrap();

    assert_eq!(
        *log.lock().expect("not poisoned"),
        [
            "before A open",
            "before B open",
            "before C open",
            "after A saw \"result\"",
            "after B saw \"result A\"",
            "after C saw \"result A B\"",
            // B denies: C's `before`, the handler and every `after` do not run.
            "before A guarded",
            "before B guarded",
        ]
    );
    assert_eq!(out.calls[0].text(), "result A B C");
    assert_eq!(out.calls[1].text(), "denied by B");
    assert_eq!(out.calls[1].kind(), OutcomeKind::Denied);
    assert_eq!(guarded_runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn k1_hooks_are_async_and_the_calls_of_a_turn_await_them_concurrently() {
    /// Lets a call go on only when both calls of the turn are in it at once.
    struct Rendezvous(Barrier);
    impl Hook for Rendezvous {
        async fn before(&self, _call: &HookCall<'_>) -> Before {
            self.0.wait().await;
            Before::Allow
        }

        async fn after(&self, _call: &HookCall<'_>, outcome: &Outcome) -> After {
            tokio::time::sleep(Duration::from_millis(5)).await;
            After::replace(format!("{} (after a pause)", outcome.text()))
        }
    }

    let (a, _) = echo("first");
    let (b, _) = echo("second");
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "first", "{}")
            .call("c2", "second", "{}"),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(a)
        .tool(b)
        .hook(Rendezvous(Barrier::new(2)))
        .build()
        .unwrap();

    let out = tokio::time::timeout(Duration::from_secs(10), agent.run(&ctx(), "go"))
        .await
        .expect("hooks that await do not block each other")
        .unwrap();
    let texts: Vec<_> = out.calls.iter().map(|c| c.text()).collect();
    assert_eq!(texts, ["{} (after a pause)", "{} (after a pause)"]);
}

#[tokio::test]
async fn k1_e4_a_panicking_hook_is_a_panic_that_ends_the_run() {
    for phase in ["before", "after"] {
        let (lookup, runs) = lookup();
        let model = ScriptedModel::new([
            ScriptedTurn::new().call("c1", "lookup", r#"{"service_id": "svc-42"}"#),
            ScriptedTurn::reply("never sent"),
        ]);
        let builder = Agent::builder(model.clone()).tool(lookup);
        let builder = if phase == "before" {
            builder.hook(before_fn(|_call| panic!("the guard exploded")))
        } else {
            builder.hook(after_fn(|_call, _outcome| panic!("the guard exploded")))
        };
        let agent = builder.build().unwrap();

        let err = agent.run(&ctx(), "go").await.unwrap_err();

        assert_eq!(err.kind(), ErrorKind::Panic, "{phase}");
        assert!(err.is(ErrorKind::Permanent), "{phase}");
        assert!(format!("{err:#}").contains("the guard exploded"), "{phase}");
        assert!(format!("{err:#}").contains(phase), "{phase}");
        assert_eq!(model.request_count(), 1, "{phase}");
        assert_eq!(err.transcript().last().unwrap().text(), "the tool failed");
        assert!(!mentions(err.transcript(), "exploded"), "{phase}");
        let ran = usize::from(phase == "after");
        assert_eq!(runs.load(Ordering::SeqCst), ran, "{phase}");
    }
}

#[tokio::test]
async fn k1_s2_a4_invalid_arguments_and_hidden_tools_never_reach_a_hook() {
    let (lookup, runs) = lookup();
    let hidden = Tool::builder("hidden", "Hidden from everyone.")
        .handler(|_ctx: Context, _args: Args| async move { Ok::<_, std::io::Error>("ran") })
        .available_fn(|_ctx: &Context| Ok::<_, std::io::Error>(false))
        .build();
    let watcher = Arc::new(Watcher::default());
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "lookup", r#"{"service_id": "", "days": 99}"#)
            .call("c2", "lookup", r#"{"service_id": "svc-42", "extra": 1}"#)
            .call("c3", "lookup", "not json")
            .call("c4", "hidden", "{}")
            .call("c5", "nowhere", "{}")
            .call("c6", "lookup", r#"{"service_id": "svc-7", "days": 2}"#),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(lookup)
        .tool(hidden)
        .hook(Arc::clone(&watcher))
        .build()
        .unwrap();

    let out = agent.run(&ctx(), "go").await.unwrap();

    let kinds: Vec<_> = out.calls.iter().map(|c| c.kind()).collect();
    assert_eq!(
        kinds,
        [
            OutcomeKind::InvalidArguments,
            OutcomeKind::InvalidArguments,
            OutcomeKind::InvalidArguments,
            OutcomeKind::Unavailable,
            OutcomeKind::Unavailable,
            OutcomeKind::Success,
        ]
    );
    // Only the valid call reached the hook, with its validated arguments.
    let seen = watcher.seen.lock().expect("not poisoned");
    let seen: Vec<_> = seen.iter().map(|s| (&*s.id, &s.arguments)).collect();
    assert_eq!(seen, [("c6", &json!({"service_id": "svc-7", "days": 2}))]);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn k1_h1_a_call_that_needs_approval_meets_the_hooks_only_once_approved() {
    let restarts = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&restarts);
    let restart = Tool::builder("restart", "Restarts a service.")
        .handler(move |_ctx: Context, _args: Args| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::io::Error>("restarted") }
        })
        .require_approval()
        .build();
    let watcher = Arc::new(Watcher::default());
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "restart", r#"{"service_id": "svc-1"}"#),
        ScriptedTurn::reply("restarted"),
    ]);
    let agent = Agent::builder(model)
        .tool(restart)
        .hook(Arc::clone(&watcher))
        .build()
        .unwrap();

    let paused = agent
        .run(&ctx(), "restart svc-1")
        .await
        .unwrap_err()
        .into_paused()
        .unwrap();
    assert!(
        watcher.seen.lock().expect("not poisoned").is_empty(),
        "a pending call meets no hook"
    );
    assert_eq!(restarts.load(Ordering::SeqCst), 0);

    let out = agent
        .resume(&ctx(), paused, Decisions::new().approve("c1"))
        .await
        .unwrap();

    assert_eq!(out.text, "restarted");
    assert_eq!(restarts.load(Ordering::SeqCst), 1);
    let seen = watcher.seen.lock().expect("not poisoned");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].arguments, json!({"service_id": "svc-1"}));
}

/// An input whose rendering as JSON is counted: the hooked path renders the validated
/// arguments for the hooks, the plain path never does.
struct Counted(Args);

static RENDERED: AtomicUsize = AtomicUsize::new(0);

impl Schema for Counted {
    fn schema(generator: &mut tool_runtime::schema::SchemaGen) -> Value {
        Args::schema(generator)
    }

    fn parse(
        value: tool_runtime::json::Json,
        cx: &mut tool_runtime::violation::ParseCx,
    ) -> Option<Self> {
        Args::parse(value, cx).map(Counted)
    }

    fn to_json(&self) -> Value {
        RENDERED.fetch_add(1, Ordering::SeqCst);
        self.0.to_json()
    }
}

#[tokio::test]
async fn k1_without_hooks_a_call_takes_the_plain_path() {
    let counted = || {
        Tool::builder("counted", "Counts the renderings of its input.")
            .handler(|_ctx: Context, input: Counted| async move {
                Ok::<_, std::io::Error>(input.0.len())
            })
            .build()
    };
    let run = |agent: Agent| async move {
        agent.run(&ctx(), "go").await.unwrap();
    };
    let turns = || {
        [
            ScriptedTurn::new().call("c1", "counted", r#"{"a": 1}"#),
            ScriptedTurn::reply("done"),
        ]
    };
    // No hook: the pipeline parses and runs in one step, as `Tool::invoke_with` does; nothing
    // is rendered for a hook, nothing boxed.
    let agent = Agent::builder(ScriptedModel::new(turns()))
        .tool(counted())
        .build()
        .unwrap();
    run(agent).await;
    let direct = tool_runtime::hook::Hooks::new(Transport::Agent);
    assert!(direct.is_empty());
    let outcome = direct
        .invoke(&counted(), &ctx(), br#"{"a": 1}"#, &Default::default())
        .await;
    assert_eq!(outcome.text(), "1");
    assert_eq!(
        RENDERED.load(Ordering::SeqCst),
        0,
        "the plain path renders nothing"
    );

    // A hook: the validated arguments are rendered once for it.
    let agent = Agent::builder(ScriptedModel::new(turns()))
        .tool(counted())
        .hook(before_fn(|_call| Before::Allow))
        .build()
        .unwrap();
    run(agent).await;
    assert_eq!(RENDERED.load(Ordering::SeqCst), 1);
}
