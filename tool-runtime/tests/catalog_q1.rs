//! Catalogs of many tools (Q1): a deferred tool is advertised only once a search in the run
//! returned it; before that a call to it is unavailable (A5) and nothing runs; a search
//! never returns a tool the run's policies do not offer; what a run loaded survives a pause
//! (H7); a provider's own tool search loads tools the same way.

mod support {
    pub mod agent;
    pub mod catalog;
}

use std::sync::atomic::Ordering;
use support::catalog::deferred;

use serde_json::Value;
use support::agent::{Args, echo, mentions};
use tool_runtime::journal::{Journal, JournalError, MemoryJournal, Step, StepKind};
use tool_runtime::model::ModelEvent;
use tool_runtime::{
    Agent, Approval, BoxFuture, Context, Decisions, OutcomeKind, PausedRun, RunRequest,
    ScriptedModel, ScriptedTurn, Tool,
};

fn search(id: &str, query: &str) -> ScriptedTurn {
    ScriptedTurn::new().call(id, "search-tools", format!(r#"{{"query": "{query}"}}"#))
}

#[tokio::test]
async fn q1_a_deferred_tool_guessed_before_a_search_is_unavailable_and_never_runs() {
    let (always, _) = echo("clock");
    let (weather, runs) = deferred("get-weather", "Finds the weather forecast.", true);
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "get-weather", r#"{"city": "Paris"}"#),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(always)
        .tool(weather)
        .build()
        .unwrap();
    let out = agent.run(&Context::new(), "weather?").await.unwrap();

    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing ran");
    assert_eq!(out.calls[0].kind(), OutcomeKind::Unavailable);
    assert_eq!(out.calls[0].text(), "tool unavailable");
    let first = &model.requests()[0];
    assert_eq!(first.tool_names(), ["clock", "search-tools"]);
    assert_eq!(*out.advertised, ["clock", "search-tools"]);
}

#[tokio::test]
async fn q1_a_search_loads_the_tool_for_the_next_request_where_it_runs() {
    let (weather, runs) = deferred("get-weather", "Finds the weather forecast.", true);
    let (rooms, _) = deferred("book-room", "Books a meeting room.", true);
    let model = ScriptedModel::new([
        search("s1", "weather forecast"),
        ScriptedTurn::new().call("c1", "get-weather", r#"{"city": "Paris"}"#),
        ScriptedTurn::reply("sunny"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(weather)
        .tool(rooms)
        .build()
        .unwrap();
    let out = agent.run(&Context::new(), "weather?").await.unwrap();

    assert_eq!(out.calls[0].kind(), OutcomeKind::Success);
    assert!(out.calls[0].text().contains("get-weather"));
    assert!(!out.calls[0].text().contains("book-room"), "only matches");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["search-tools"]);
    assert_eq!(requests[1].tool_names(), ["get-weather", "search-tools"]);
}

#[tokio::test]
async fn q1_a_search_never_returns_a_tool_the_runs_policies_hide() {
    let (public, _) = deferred("get-weather", "Finds the weather forecast.", true);
    let (secret, secret_runs) = deferred(
        "weather-admin",
        "Changes the weather forecast stations.",
        false,
    );
    let model = ScriptedModel::new([
        search("s1", "weather forecast stations admin"),
        ScriptedTurn::new().call("c1", "weather-admin", "{}").call(
            "s2",
            "search-tools",
            r#"{"query": "weather-admin", "limit": 20}"#,
        ),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(public)
        .tool(secret)
        .build()
        .unwrap();
    let out = agent.run(&Context::new(), "weather?").await.unwrap();

    assert!(out.calls[0].text().contains("get-weather"));
    for record in [&out.calls[0], &out.calls[2]] {
        assert!(
            !record.text().contains("weather-admin"),
            "{}",
            record.text()
        );
        assert!(!record.text().contains("stations"), "{}", record.text());
    }
    assert_eq!(out.calls[1].kind(), OutcomeKind::Unavailable);
    assert_eq!(secret_runs.load(Ordering::SeqCst), 0);
    for request in model.requests() {
        assert!(!request.tool_names().contains(&"weather-admin"));
    }
    // The model-facing text of the whole run names the hidden tool only where the model
    // itself wrote it (its own call), never in a result.
    let results: Vec<String> = model.requests()[2]
        .tool_results()
        .iter()
        .map(|r| r.text.clone())
        .collect();
    assert!(results.iter().all(|text| !text.contains("weather-admin")));
    assert!(mentions(&out.transcript, "get-weather"));
}

#[tokio::test]
async fn q1_h7_a_paused_run_that_had_loaded_tools_resumes_with_them_loaded() {
    let (weather, runs) = deferred("get-weather", "Finds the weather forecast.", true);
    let deploy = Tool::builder("deploy", "Deploys the service.")
        .handler(|_ctx: Context, _args: Args| async { Ok::<_, std::convert::Infallible>("ok") })
        .approval_fn(|_ctx: &Context, _args: &Args| {
            Ok::<_, std::convert::Infallible>(Approval::required("production"))
        })
        .build();
    let build = |model: &ScriptedModel| {
        let (weather, deploy) = (weather.clone(), deploy.clone());
        Agent::builder(model.clone())
            .tool(weather)
            .tool(deploy)
            .build()
            .unwrap()
    };
    let first = ScriptedModel::new([
        search("s1", "weather"),
        ScriptedTurn::new().call("d1", "deploy", "{}"),
    ]);
    let paused = build(&first)
        .run(&Context::new(), "deploy then weather")
        .await
        .unwrap_err()
        .into_paused()
        .unwrap();
    // The paused run travels as text, and comes back in another process.
    let paused = PausedRun::from_json(&paused.to_json().unwrap()).unwrap();

    let second = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "get-weather", r#"{"city": "Oslo"}"#),
        ScriptedTurn::reply("done"),
    ]);
    let out = build(&second)
        .resume(&Context::new(), paused, Decisions::new().approve("d1"))
        .await
        .unwrap();
    assert_eq!(
        second.requests()[0].tool_names(),
        ["get-weather", "deploy", "search-tools"]
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the loaded tool ran after the resume"
    );
    assert_eq!(out.text, "done");
}

#[tokio::test]
async fn q1_a_providers_own_search_loads_only_offered_tools_marked_deferred() {
    let (weather, runs) = deferred("get-weather", "Finds the weather forecast.", true);
    let (hidden, hidden_runs) = deferred("weather-admin", "Changes stations.", false);
    let (clock, _) = echo("clock");
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c0", "get-weather", "{}"),
        ScriptedTurn::new()
            .event(ModelEvent::ToolsLoaded {
                names: vec!["get-weather".into(), "weather-admin".into()],
            })
            .call("c1", "get-weather", "{}")
            .call("c2", "weather-admin", "{}"),
        ScriptedTurn::reply("done"),
    ])
    .with_native_tool_search();
    let agent = Agent::builder(model.clone())
        .tool(clock)
        .tool(weather)
        .tool(hidden)
        .build()
        .unwrap();
    let out = agent.run(&Context::new(), "weather?").await.unwrap();

    let requests = model.requests();
    // No local search: the provider's own, over the offered deferred tool, marked so.
    assert_eq!(requests[0].tool_names(), ["clock", "get-weather"]);
    assert!(!requests[0].tools[0].defers_loading());
    assert!(requests[0].tools[1].defers_loading());
    assert_eq!(
        out.calls[0].kind(),
        OutcomeKind::Unavailable,
        "guessed before loaded"
    );
    assert_eq!(out.calls[1].kind(), OutcomeKind::Success);
    assert_eq!(
        out.calls[2].kind(),
        OutcomeKind::Unavailable,
        "hidden stays hidden"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(hidden_runs.load(Ordering::SeqCst), 0);
    assert_eq!(requests[2].tool_names(), ["clock", "get-weather"]);
    assert!(
        !requests[2].tools[1].defers_loading(),
        "loaded: advertised plainly"
    );
}

#[tokio::test]
async fn q1_a_tool_named_like_the_search_tool_is_a_build_error_beside_deferred_tools() {
    let (weather, _) = deferred("get-weather", "Finds the weather forecast.", true);
    let (clash, _) = echo("search-tools");
    let model = ScriptedModel::new([]);
    let error = Agent::builder(model)
        .tool(weather)
        .tool(clash)
        .build()
        .unwrap_err();
    assert!(format!("{error:?}").contains("DuplicateName"), "{error:?}");
}

/// A journal whose process dies at its first model request after `requests` of them.
struct DiesAtRequest {
    inner: MemoryJournal,
    requests: usize,
}

impl Journal for DiesAtRequest {
    fn run_id(&self) -> &str {
        self.inner.run_id()
    }

    fn step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<Value, JournalError>> {
        let made = (self.inner.steps().iter())
            .filter(|(kind, _)| matches!(kind, StepKind::Request { .. }))
            .count();
        if made >= self.requests && matches!(step.kind(), StepKind::Request { .. }) {
            let name = step.kind().to_string();
            return Box::pin(async move { Err(JournalError::new(name, "the process died")) });
        }
        self.inner.step(step)
    }
}

#[tokio::test]
async fn q1_w1_a_durable_run_taken_again_from_its_journal_has_what_its_search_loaded() {
    let (weather, runs) = deferred("get-weather", "Finds the weather forecast.", true);
    // The first process searches, then dies before its next request.
    let first = ScriptedModel::new([search("s1", "weather"), ScriptedTurn::reply("never")]);
    let agent = Agent::builder(first).tool(weather.clone()).build().unwrap();
    let dies = DiesAtRequest {
        inner: MemoryJournal::new("run-q1"),
        requests: 1,
    };
    let cut = agent
        .execute(&Context::new(), RunRequest::new("weather?").journal(&dies))
        .await;
    assert!(cut.is_err(), "the first process died");
    let journal = dies.inner.replay();

    // The next process replays the search from the journal, and the tool it loaded is
    // advertised in the request it sends.
    let second = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "get-weather", "{}"),
        ScriptedTurn::reply("sunny"),
    ]);
    let agent = Agent::builder(second.clone())
        .tool(weather)
        .build()
        .unwrap();
    let out = agent
        .execute(
            &Context::new(),
            RunRequest::new("weather?").journal(&journal),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "sunny");
    assert_eq!(
        second.requests()[0].tool_names(),
        ["get-weather", "search-tools"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}
