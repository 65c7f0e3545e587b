//! K1: hooks see the calls that reach the handler's pipeline; `AgentBuilder::on_outcome`, like
//! `McpServerBuilder::on_outcome`, sees every call's outcome, those refused before any hook
//! included (a tool the run does not hold, invalid arguments), with the unredacted error.

mod support {
    pub mod agent;
}

use std::sync::{Arc, Mutex};

use support::agent::{Args, tool};
use tool_runtime::hook::{Before, before_fn};
use tool_runtime::{Agent, Context, OutcomeKind, ScriptedModel, ScriptedTurn};

/// What the observer saw of a call: its id, its outcome kind, its unredacted error.
type Seen = (String, OutcomeKind, Option<String>);

#[tokio::test]
async fn k1_the_agents_on_outcome_sees_every_call_hooks_only_those_past_validation() {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let hooked: Arc<Mutex<Vec<String>>> = Arc::default();
    let (log, hooks) = (Arc::clone(&seen), Arc::clone(&hooked));
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "lookup", "{}")
            .call("c2", "no-such-tool", "{}")
            .call("c3", "lookup", "not json")
            .call("c4", "guarded", "{}")
            .call("c5", "failing", "{}"),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(tool("lookup", |_ctx, _args: Args| async move {
            Ok::<_, std::io::Error>("found")
        }))
        .tool(tool("guarded", |_ctx, _args: Args| async move {
            Ok::<_, std::io::Error>("ran")
        }))
        .tool(tool("failing", |_ctx, _args: Args| async move {
            Err::<(), _>(std::io::Error::other("SECRET cause"))
        }))
        .hook(before_fn(move |call| {
            hooks.lock().unwrap().push(call.name().to_owned());
            if call.name() == "guarded" {
                Before::deny("not now")
            } else {
                Before::allow()
            }
        }))
        .on_outcome(move |record| {
            let error = record.outcome.error().map(|e| format!("{e:#}"));
            log.lock()
                .unwrap()
                .push((record.id.to_string(), record.kind(), error));
        })
        .build()
        .unwrap();
    agent.run(&Context::new(), "go").await.unwrap();

    let seen = seen.lock().unwrap().clone();
    let kinds: Vec<(&str, OutcomeKind)> = seen.iter().map(|(id, k, _)| (id.as_str(), *k)).collect();
    assert_eq!(
        kinds,
        [
            ("c1", OutcomeKind::Success),
            ("c2", OutcomeKind::Unavailable),
            ("c3", OutcomeKind::InvalidArguments),
            ("c4", OutcomeKind::Denied),
            ("c5", OutcomeKind::Failed),
        ]
    );
    // The observer has what the model was not told (E3).
    assert!(
        seen[4]
            .2
            .as_deref()
            .is_some_and(|e| e.contains("SECRET cause"))
    );
    // The hooks saw only the calls past availability and validation.
    let mut hooked = hooked.lock().unwrap().clone();
    hooked.sort();
    assert_eq!(hooked, ["failing", "guarded", "lookup"]);
}
