//! Approval over MCP (H6), driven by the official MCP Python SDK's client
//! (`tests/support/mcp/approval_client.py`) over stdio: a client that declared the elicitation
//! capability is asked, and its user's accept runs the call while decline and cancel answer
//! `the call was not approved`; a client without the capability gets a clear error result.
//! Both ways the protocol allows are driven: `elicitation/create` during the call (the
//! initialize handshake, `legacy`) and an `input_required` result answered by a second call
//! (protocol 2026-07-28, `auto`). The script checks the answers; this test checks that no
//! unapproved call ran.
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tool_runtime::approval::Approval;
use tool_runtime::mcp::{McpRequest, McpServer};
use tool_runtime::{BuildProblem, Context, OutcomeKind, Schema, Tool};

/// Which service to restart.
#[derive(Schema)]
struct Restart {
    /// The service.
    #[schema(pattern = "^[a-z0-9-]+$")]
    service_id: String,
}

/// What the server saw: the services restarted, and every call's outcome kind.
#[derive(Default)]
struct Seen {
    restarted: Mutex<Vec<String>>,
    outcomes: Mutex<Vec<(String, OutcomeKind)>>,
}

fn server(seen: &Arc<Seen>) -> McpServer {
    let runs = Arc::clone(seen);
    let log = Arc::clone(seen);
    let restart = Tool::builder("restart", "Restarts a service now.")
        .handler(move |_ctx: Context, r: Restart| {
            runs.restarted
                .lock()
                .expect("not poisoned")
                .push(r.service_id.clone());
            async move { Ok::<_, std::io::Error>(format!("{} restarted", r.service_id)) }
        })
        .approval_fn(|_ctx: &Context, r: &Restart| {
            Ok::<_, std::io::Error>(if r.service_id.starts_with("prod-") {
                Approval::required(format!("{} serves production traffic", r.service_id))
            } else {
                Approval::NotRequired
            })
        })
        .build();
    McpServer::builder()
        .name("mcp-approval-test")
        .tool(restart)
        .context(|_req: McpRequest| async move { Ok::<_, std::io::Error>(Context::new()) })
        .on_outcome(move |call| {
            log.outcomes
                .lock()
                .expect("not poisoned")
                .push((call.tool.to_owned(), call.outcome.kind()));
        })
        .build()
        .expect("the tools are declared right")
}

/// Serves one run of the Python client with `args`, and returns what the server saw.
async fn drive(args: [&str; 2]) -> Arc<Seen> {
    let seen = Arc::new(Seen::default());
    let server = server(&seen);
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let run = support::mcp::run_python_client(server, "approval_client.py", &args).await;
    let report = &run.report;
    assert!(
        run.success,
        "the Python client's checks failed ({args:?}):\n{report}"
    );
    assert!(report.contains("all checks passed"), "{report}");
    let _ = tokio::time::timeout(Duration::from_secs(10), run.serving).await;
    eprintln!("{args:?}:\n{report}");
    seen
}

fn restarted(seen: &Seen) -> Vec<String> {
    seen.restarted.lock().expect("not poisoned").clone()
}

fn kinds(seen: &Seen) -> Vec<OutcomeKind> {
    seen.outcomes
        .lock()
        .expect("not poisoned")
        .iter()
        .map(|(_, kind)| *kind)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h6_elicitation_create_asks_the_user_accept_runs_decline_and_cancel_do_not() {
    let seen = drive(["with-elicitation", "legacy"]).await;
    assert_eq!(
        restarted(&seen),
        ["dev-1", "prod-accept"],
        "only approved calls ran"
    );
    assert_eq!(
        kinds(&seen),
        [
            OutcomeKind::Success,
            OutcomeKind::Success,
            OutcomeKind::Denied,
            OutcomeKind::Denied,
            OutcomeKind::InvalidArguments,
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h6_input_required_asks_the_user_on_the_newest_protocol() {
    let seen = drive(["with-elicitation", "auto"]).await;
    assert_eq!(
        restarted(&seen),
        ["dev-1", "prod-accept"],
        "only approved calls ran"
    );
    assert!(
        kinds(&seen)
            .iter()
            .filter(|k| **k == OutcomeKind::Denied)
            .count()
            == 2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h6_a_client_without_elicitation_gets_a_clear_error_and_nothing_runs() {
    for mode in ["legacy", "auto"] {
        let seen = drive(["without-elicitation", mode]).await;
        assert_eq!(
            restarted(&seen),
            ["dev-1"],
            "{mode}: the call needing approval never ran"
        );
        assert_eq!(
            kinds(&seen),
            [OutcomeKind::Success, OutcomeKind::Denied],
            "{mode}"
        );
    }
}

#[test]
fn h5_a_deferred_tool_cannot_be_served() {
    let deferred = Tool::builder("ship", "Ships an order.")
        .deferred::<Restart>()
        .build();
    let error = McpServer::builder()
        .tool(deferred)
        .build()
        .expect_err("a deferred tool has no handler to serve");
    assert!(matches!(
        error.problems(),
        [BuildProblem::DeferredOverMcp { name, .. }] if name == "ship"
    ));
}
