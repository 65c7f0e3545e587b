//! M7 with K1 (hooks around reads and gets): `McpServerBuilder::catalog_hook` runs application
//! code around every `resources/read` and `prompts/get` that reaches its handler, in the order
//! added: `before` after the availability re-check and validation (a hidden item, invalid
//! arguments never reach a hook), `after` once the handler ended, seeing how (served, failed
//! with the unredacted error, asked). A denial answers with the hook's message and nothing
//! runs; a hook that gives the request up or panics answers `the resource failed`, its cause
//! never sent. Raw JSON-RPC over a pipe, as a client sees it.
#![cfg(feature = "mcp")]

#[path = "support/raw_pipe.rs"]
mod raw_pipe;

mod support {
    pub mod capture;
    pub mod trace;
}

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use raw_pipe::{Raw, meta_2026};
use serde_json::{Value, json};
use support::capture::Captured;
use tool_runtime::elicit::{ElicitError, Elicited};
use tool_runtime::hook::Before;
use tool_runtime::mcp::{
    CatalogEnd, CatalogHook, CatalogItem, CatalogRequest, Contents, McpPrompt, McpResource,
    McpServer, McpServerBuilder, Message,
};
use tool_runtime::schema::Invalid;
use tool_runtime::{Context, Schema, ToolError};

/// JSON-RPC's `Invalid params`.
const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC's `Internal error`.
const INTERNAL_ERROR: i64 = -32603;

/// Who asks, as the application puts it in the context.
#[derive(Clone, Copy)]
struct Operator(bool);

/// The parameters of `maint://{service}/history/{limit}`.
#[derive(Schema)]
struct History {
    /// The service identifier.
    #[schema(pattern = "^[a-z0-9-]+$")]
    service: String,
    /// How many entries.
    #[schema(range = 1..=50)]
    limit: u32,
}

/// The arguments of the prompt `plan`.
#[derive(Schema)]
struct Plan {
    /// The service to plan for.
    service: String,
}

/// The arguments of the prompt `checked`, whose validator panics on `panic`.
#[derive(Schema)]
struct Checked {
    /// A code to check.
    #[schema(validate = check_code)]
    code: String,
}

fn check_code(code: &str) -> Result<(), Invalid> {
    assert_ne!(code, "panic", "the validator panicked over hunter2");
    Ok(())
}

/// What `asks` asks its user.
#[derive(Schema)]
struct Window {
    /// When the window opens.
    start: String,
}

/// What the confirming hook asks its user.
#[derive(Schema)]
struct Confirm {
    /// Whether the user is sure.
    sure: bool,
}

/// What the hooks and handlers did, in order.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, line: String) {
        self.0.lock().expect("not poisoned").push(line);
    }

    fn lines(&self) -> Vec<String> {
        self.0.lock().expect("not poisoned").clone()
    }
}

/// A hook that logs what it sees under `name` and decides with `decide`.
struct Recorder {
    name: &'static str,
    log: Log,
    decide: fn(&CatalogRequest<'_>) -> Before,
    panics_after: bool,
}

impl CatalogHook for Recorder {
    async fn before(&self, request: &CatalogRequest<'_>) -> Before {
        let operator = request.context().get::<Operator>().is_some_and(|o| o.0);
        let kind = match request.item() {
            CatalogItem::Resource { resource, .. } => format!("resource {}", resource.uri()),
            CatalogItem::Prompt(prompt) => format!("prompt {}", prompt.name()),
            _ => "something else".to_owned(),
        };
        self.log.push(format!(
            "{} before {} {} {} uri={:?} args={} operator={operator}",
            self.name,
            request.method(),
            request.name(),
            kind,
            request.uri(),
            Value::Object(request.arguments().clone()),
        ));
        (self.decide)(request)
    }

    async fn after(&self, request: &CatalogRequest<'_>, ended: &CatalogEnd<'_>) {
        let ended = match ended {
            CatalogEnd::Served => "served".to_owned(),
            CatalogEnd::Failed(error) => format!("failed: {error}"),
            CatalogEnd::Asked => "asked".to_owned(),
            _ => "something else".to_owned(),
        };
        self.log
            .push(format!("{} after {} {ended}", self.name, request.name()));
        assert!(!self.panics_after, "the audit log is full of hunter2");
    }
}

fn allow(_: &CatalogRequest<'_>) -> Before {
    Before::Allow
}

/// Denies reads of `maint://log`; gives up gets of `doomed`; panics on gets of `fragile`.
fn guard(request: &CatalogRequest<'_>) -> Before {
    match (request.uri(), request.name()) {
        (Some("maint://log"), _) => Before::deny("the log is for operators on call"),
        (None, _) if request.arguments().get("service") == Some(&json!("prod")) => {
            Before::deny("production is planned by people")
        }
        (_, "doomed") => Before::end(ToolError::new("the quota hunter2 is spent")),
        (_, "fragile") => panic!("the guard panicked over hunter2"),
        _ => Before::Allow,
    }
}

/// The server, its hooks `hooks`, and how many times a handler ran.
fn served(hooks: Vec<Recorder>, log: &Log) -> (McpServer, Arc<AtomicUsize>) {
    served_with(log, |builder| {
        hooks
            .into_iter()
            .fold(builder, |builder, hook| builder.catalog_hook(hook))
    })
}

/// The server, its hooks added by `add`, and how many times a handler ran.
fn served_with(
    log: &Log,
    add: impl FnOnce(McpServerBuilder) -> McpServerBuilder,
) -> (McpServer, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let (history_runs, log_runs, prompt_runs) = (runs.clone(), runs.clone(), runs.clone());
    let (history_log, prompt_log) = (log.clone(), log.clone());
    let mut builder =
        McpServer::builder()
            .context(|_req| async { Ok::<_, ToolError>(Context::new().with(Operator(true))) })
            .resource(
                McpResource::builder("maint://{service}/history/{limit}", "history")
                    .read_typed(move |_ctx: Context, p: History| {
                        history_runs.fetch_add(1, Ordering::SeqCst);
                        history_log.push(format!("reader {} {}", p.service, p.limit));
                        async move {
                            Ok::<_, ToolError>(format!("{} entries of {}", p.limit, p.service))
                        }
                    })
                    .build(),
            )
            .resource(
                McpResource::builder("maint://log", "maintenance-log")
                    .read(move |_ctx: Context| {
                        log_runs.fetch_add(1, Ordering::SeqCst);
                        async { Ok::<_, ToolError>(Contents::text("restarted db-1")) }
                    })
                    .build(),
            )
            .resource(
                McpResource::builder("maint://hidden", "hidden")
                    .available_fn(|_ctx: &Context| Ok::<_, ToolError>(false))
                    .read(|_ctx: Context| async { Ok::<_, ToolError>("never") })
                    .build(),
            )
            .resource(
                McpResource::builder("maint://broken", "broken")
                    .read(|_ctx: Context| async {
                        Err::<String, _>(std::io::Error::other("the disk said hunter2"))
                    })
                    .build(),
            );
    for name in ["doomed", "fragile"] {
        let (runs, uri) = (Arc::clone(&runs), format!("maint://{name}"));
        builder = builder.resource(
            McpResource::builder(uri, name)
                .read(move |_ctx: Context| {
                    runs.fetch_add(1, Ordering::SeqCst);
                    async { Ok::<_, ToolError>("never") }
                })
                .build(),
        );
    }
    builder = builder.prompt(
        McpPrompt::builder("hidden-plan", "Hidden from everyone.")
            .available_fn(|_ctx: &Context| Ok::<_, ToolError>(false))
            .get(|_ctx: Context| async { Ok::<_, ToolError>(vec![Message::user("never")]) })
            .build(),
    );
    for name in ["plan", "doomed", "fragile"] {
        let (runs, log) = (prompt_runs.clone(), prompt_log.clone());
        builder = builder.prompt(
            McpPrompt::builder(name, "Plans a window.")
                .get_typed(move |_ctx: Context, p: Plan| {
                    runs.fetch_add(1, Ordering::SeqCst);
                    log.push(format!("prompt {}", p.service));
                    async move { Ok::<_, ToolError>(vec![Message::user(p.service)]) }
                })
                .build(),
        );
    }
    let checked_runs = prompt_runs.clone();
    let builder = builder.prompt(
        McpPrompt::builder("checked", "Checks a code.")
            .get_typed(move |_ctx: Context, p: Checked| {
                checked_runs.fetch_add(1, Ordering::SeqCst);
                async move { Ok::<_, ToolError>(vec![Message::user(p.code)]) }
            })
            .complete("code", |_ctx: Context, typed: String| {
                assert_ne!(typed, "panic", "the completer panicked over hunter2");
                async move { Ok::<_, ToolError>(vec![format!("{typed}-1")]) }
            })
            .build(),
    );
    let builder = builder.prompt(
        McpPrompt::builder("asks", "Asks when the window opens.")
            .get(|ctx: Context| async move {
                let asked = ctx.elicit_named::<Window>("window", "When?").await;
                let start = match asked {
                    Ok(Elicited::Accepted(window)) => window.start,
                    _ => "whenever".to_owned(),
                };
                Ok::<_, ToolError>(vec![Message::user(start)])
            })
            .build(),
    );
    (add(builder).build().expect("the server builds"), runs)
}

fn recorder(name: &'static str, log: &Log, decide: fn(&CatalogRequest<'_>) -> Before) -> Recorder {
    Recorder {
        name,
        log: log.clone(),
        decide,
        panics_after: false,
    }
}

async fn read(raw: &mut Raw, uri: &str) -> Value {
    raw.request("resources/read", json!({ "uri": uri })).await.0
}

async fn get(raw: &mut Raw, name: &str, arguments: Value) -> Value {
    let params = json!({ "name": name, "arguments": arguments });
    raw.request("prompts/get", params).await.0
}

fn error(answer: &Value) -> (i64, String) {
    let code = answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error: {answer}"));
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    (code, message.to_owned())
}

/// M7, K1: the hooks run in the order added, around the handler, each `before` seeing the
/// item, the URI, the validated arguments and the request's context, each `after` how the
/// request ended; on reads and gets alike.
#[tokio::test]
async fn m7_k1_hooks_run_in_order_around_a_read_and_a_get() {
    let log = Log::default();
    let hooks = vec![recorder("a", &log, allow), recorder("b", &log, allow)];
    let (server, runs) = served(hooks, &log);
    let mut raw = Raw::open(server, "2025-11-25").await;

    let answer = read(&mut raw, "maint://db-1/history/3").await;
    assert_eq!(
        answer["result"]["contents"][0]["text"], "3 entries of db-1",
        "{answer}"
    );
    let read_line = "before resources/read history resource maint://{service}/history/{limit} \
                     uri=Some(\"maint://db-1/history/3\") args={\"limit\":\"3\",\"service\":\"db-1\"} \
                     operator=true";
    assert_eq!(
        log.lines(),
        [
            format!("a {read_line}"),
            format!("b {read_line}"),
            "reader db-1 3".to_owned(),
            "a after history served".to_owned(),
            "b after history served".to_owned(),
        ]
    );

    let log_before = log.lines().len();
    let answer = get(&mut raw, "plan", json!({"service": "db-1"})).await;
    assert_eq!(answer["result"]["messages"][0]["content"]["text"], "db-1");
    let get_line = "before prompts/get plan prompt plan uri=None args={\"service\":\"db-1\"} \
                    operator=true";
    assert_eq!(
        log.lines()[log_before..],
        [
            format!("a {get_line}"),
            format!("b {get_line}"),
            "prompt db-1".to_owned(),
            "a after plan served".to_owned(),
            "b after plan served".to_owned(),
        ]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

/// M7, K1, A4, S2: a request refused before its handler (a hidden resource, arguments that
/// break the type, an unknown prompt) reaches no hook.
#[tokio::test]
async fn m7_k1_a_request_refused_before_reaches_no_hook() {
    let log = Log::default();
    let (server, runs) = served(vec![recorder("a", &log, allow)], &log);
    let mut raw = Raw::open(server, "2025-11-25").await;

    let hidden = read(&mut raw, "maint://hidden").await;
    assert_eq!(
        error(&hidden),
        (INVALID_PARAMS, "resource not found".to_owned())
    );
    let invalid = read(&mut raw, "maint://db-1/history/99").await;
    assert_eq!(error(&invalid).0, INVALID_PARAMS, "{invalid}");
    let bad_name = read(&mut raw, "maint://DB_1/history/3").await;
    assert_eq!(error(&bad_name).0, INVALID_PARAMS, "{bad_name}");
    let hidden_prompt = get(&mut raw, "hidden-plan", json!({})).await;
    assert_eq!(error(&hidden_prompt).0, INVALID_PARAMS, "{hidden_prompt}");
    let unknown = get(&mut raw, "nope", json!({})).await;
    assert_eq!(error(&unknown).0, INVALID_PARAMS, "{unknown}");
    let missing = get(&mut raw, "plan", json!({})).await;
    assert_eq!(error(&missing).0, INVALID_PARAMS, "{missing}");

    assert_eq!(log.lines(), Vec::<String>::new(), "no hook ran");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no handler ran");
}

/// M7, K1: a denial answers the request with the hook's message; the later hooks, the handler
/// and every `after` do not run.
#[tokio::test]
async fn m7_k1_a_denial_answers_with_its_message_and_nothing_runs() {
    let log = Log::default();
    let hooks = vec![recorder("guard", &log, guard), recorder("b", &log, allow)];
    let (server, runs) = served(hooks, &log);
    let mut raw = Raw::open(server, "2025-11-25").await;

    let denied = read(&mut raw, "maint://log").await;
    assert_eq!(
        error(&denied),
        (
            INTERNAL_ERROR,
            "the log is for operators on call".to_owned()
        ),
        "{denied}"
    );
    let refused = get(&mut raw, "plan", json!({"service": "prod"})).await;
    assert_eq!(
        error(&refused),
        (INTERNAL_ERROR, "production is planned by people".to_owned()),
        "{refused}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no handler ran");
    let lines = log.lines();
    assert_eq!(lines.len(), 2, "only the guard's before: {lines:?}");
    assert!(lines[0].starts_with("guard before resources/read maintenance-log"));
    assert!(lines[1].starts_with("guard before prompts/get plan"));
}

/// M7, K1, E2, E4: a hook that gives a request up or panics answers `the … failed`, whatever
/// its cause holds (a `ToolError` included): the cause is for the application only.
#[tokio::test]
async fn m7_k1_a_hook_that_ends_or_panics_fails_the_request_and_its_cause_is_not_sent() {
    let (captured, _guard) = Captured::install();
    let log = Log::default();
    let (server, runs) = served(vec![recorder("guard", &log, guard)], &log);
    let mut raw = Raw::open(server, "2025-11-25").await;
    for uri in ["maint://doomed", "maint://fragile"] {
        let answer = read(&mut raw, uri).await;
        assert_eq!(
            error(&answer),
            (INTERNAL_ERROR, "the resource failed".to_owned()),
            "{uri}"
        );
    }

    let ended = get(&mut raw, "doomed", json!({"service": "db-1"})).await;
    assert_eq!(
        error(&ended),
        (INTERNAL_ERROR, "the prompt failed".to_owned())
    );
    let panicked = get(&mut raw, "fragile", json!({"service": "db-1"})).await;
    assert_eq!(
        error(&panicked),
        (INTERNAL_ERROR, "the prompt failed".to_owned())
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no handler ran");

    // The server goes on.
    let fine = get(&mut raw, "plan", json!({"service": "db-2"})).await;
    assert_eq!(fine["result"]["messages"][0]["content"]["text"], "db-2");
    // E3: the causes are the application's, in its log.
    let logged = captured.text();
    assert!(logged.contains("the quota hunter2 is spent"), "{logged}");
    assert!(
        logged.contains("the guard panicked over hunter2"),
        "{logged}"
    );
}

/// M7, K1, E3, E4: `after` sees a handler's failure unredacted while the client reads
/// `the resource failed`; a hook that panics after a handler that answered fails the request.
#[tokio::test]
async fn m7_k1_after_sees_the_failure_and_a_panic_after_fails_the_request() {
    let log = Log::default();
    let (server, _) = served(vec![recorder("audit", &log, allow)], &log);
    let mut raw = Raw::open(server, "2025-11-25").await;
    let broken = read(&mut raw, "maint://broken").await;
    assert_eq!(
        error(&broken),
        (INTERNAL_ERROR, "the resource failed".to_owned())
    );
    assert_eq!(
        log.lines().last().map(String::as_str),
        Some("audit after broken failed: the disk said hunter2")
    );

    let log = Log::default();
    let mut panicking = recorder("audit", &log, allow);
    panicking.panics_after = true;
    let (server, runs) = served(vec![panicking], &log);
    let mut raw = Raw::open(server, "2025-11-25").await;
    let answer = read(&mut raw, "maint://db-1/history/3").await;
    assert_eq!(
        error(&answer),
        (INTERNAL_ERROR, "the resource failed".to_owned())
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the reader ran once");
}

/// M7, K1, M3: on 2026-07-28 a handler whose question ends the get has run: `after` sees it
/// asked; the hooks run again when the client brings its answer, and see it served.
#[tokio::test]
async fn m7_k1_m3_a_get_that_asks_ends_asked_and_its_answer_runs_the_hooks_again() {
    let log = Log::default();
    let (server, _) = served(vec![recorder("a", &log, allow)], &log);
    let mut raw = Raw::unopened(server);
    let meta = meta_2026("m7", json!({"elicitation": {}}));
    let first = raw
        .answer("prompts/get", json!({"name": "asks", "_meta": meta}))
        .await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].as_str().expect("a state");
    let second = raw
        .answer(
            "prompts/get",
            json!({
                "name": "asks",
                "_meta": meta,
                "requestState": state,
                "inputResponses": {"window": {"action": "accept", "content": {"start": "09:00"}}},
            }),
        )
        .await;
    assert_eq!(
        second["result"]["messages"][0]["content"]["text"], "09:00",
        "{second}"
    );
    let ends: Vec<String> = (log.lines().into_iter())
        .filter(|line| line.starts_with("a after"))
        .collect();
    assert_eq!(ends, ["a after asks asked", "a after asks served"]);
}

/// M7, E4, S5: a custom validator that panics fails the get as a panicking handler does: no
/// hook and no handler runs, the client reads `the prompt failed`, and the server goes on; a
/// completer that panics fails its completion the same way.
#[tokio::test]
async fn m7_e4_a_validator_or_completer_that_panics_fails_its_request_and_the_server_goes_on() {
    let log = Log::default();
    let (server, runs) = served(vec![recorder("a", &log, allow)], &log);
    let mut raw = Raw::open(server, "2025-11-25").await;
    let panicked = get(&mut raw, "checked", json!({"code": "panic"})).await;
    assert_eq!(
        error(&panicked),
        (INTERNAL_ERROR, "the prompt failed".to_owned())
    );
    assert_eq!(log.lines(), Vec::<String>::new(), "no hook ran");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no handler ran");
    let fine = get(&mut raw, "checked", json!({"code": "ok"})).await;
    assert_eq!(fine["result"]["messages"][0]["content"]["text"], "ok");

    // A completer that panics before its future is made is contained as well.
    let complete = |value: &str| {
        json!({
            "ref": {"type": "ref/prompt", "name": "checked"},
            "argument": {"name": "code", "value": value},
        })
    };
    let (panicked, _) = raw.request("completion/complete", complete("panic")).await;
    assert_eq!(
        error(&panicked),
        (INTERNAL_ERROR, "the completion failed".to_owned())
    );
    let (fine, _) = raw.request("completion/complete", complete("ab")).await;
    assert_eq!(
        fine["result"]["completion"]["values"],
        json!(["ab-1"]),
        "{fine}"
    );
}

/// Asks its user to confirm every get before it runs, and says what `after` may ask.
struct Confirming(Log);

impl CatalogHook for Confirming {
    async fn before(&self, request: &CatalogRequest<'_>) -> Before {
        let asked = request
            .context()
            .elicit_named::<Confirm>("confirm", "Really?");
        match asked.await {
            // A careless hook lets a cancelled question through: the request its question
            // ended must still not run the handler.
            Ok(Elicited::Accepted(Confirm { sure: true }) | Elicited::Cancelled) => Before::Allow,
            _ => Before::deny("not confirmed"),
        }
    }

    async fn after(&self, request: &CatalogRequest<'_>, _ended: &CatalogEnd<'_>) {
        let asked = request.context().elicit_named::<Confirm>("again", "Again?");
        let line = match asked.await {
            Err(ElicitError::Unsupported) => "after asks nobody",
            _ => "after asked",
        };
        self.0.push(line.to_owned());
    }
}

/// M7, K1, M3: on 2026-07-28 a hook's `before` asks in the request's rounds as a handler
/// does: its question ends the get before the handler ran, and with the answer the hook and
/// the handler run; `after`, once the answer is decided, asks nobody (and does not hang).
#[tokio::test]
async fn m7_k1_m3_a_hook_asks_in_the_rounds_before_the_handler_runs() {
    let log = Log::default();
    let (server, runs) = served_with(&log, |builder| {
        builder.catalog_hook(Confirming(log.clone()))
    });
    let mut raw = Raw::unopened(server);
    let meta = meta_2026("m7", json!({"elicitation": {}}));
    let params = json!({"name": "plan", "arguments": {"service": "db-1"}, "_meta": meta});
    let first = raw.answer("prompts/get", params.clone()).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert_eq!(
        first["result"]["inputRequests"]["confirm"]["method"], "elicitation/create",
        "{first}"
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "the handler waits for the hook"
    );
    let mut again = params;
    again["requestState"] = first["result"]["requestState"].clone();
    again["inputResponses"] = json!({"confirm": {"action": "accept", "content": {"sure": true}}});
    let second = raw.answer("prompts/get", again).await;
    assert_eq!(
        second["result"]["messages"][0]["content"]["text"], "db-1",
        "{second}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(log.lines(), ["prompt db-1", "after asks nobody"]);
}
