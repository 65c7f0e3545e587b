//! Rule M1: the official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned at
//! [`SUITE_VERSION`]) against a server and a client built only with the public API of
//! `tool_runtime`: the `conformance_server` and `conformance_client` examples.
//!
//! - `the_server_passes_the_suites_server_scenarios`: the example server's tools
//!   (`conformance_server::builder`), served over streamable HTTP on loopback as the example
//!   serves them, run against each server scenario in scope;
//! - `the_client_passes_the_suites_client_scenarios`: each client scenario in scope, the
//!   suite running the example client's program against its own test server (this test
//!   binary, started again as `child_runs_the_conformance_client`, runs
//!   `conformance_client::run`, all that the example's `main` does);
//! - `every_scenario_of_the_suite_is_classified`: each scenario the suite lists is in scope or
//!   out of scope here, and nothing here names a scenario the suite does not have.
//!
//! Every scenario in scope must pass (every check `SUCCESS` or `INFO`, none `FAILURE` or
//! `WARNING`) unless [`SERVER_NOT_YET`] or [`CLIENT_NOT_YET`] names it with the rule it waits
//! for: such a scenario must not pass yet, and the test says so when it does, so that its
//! line is deleted (a scenario moves from "not yet" to "passes" by deleting one line). A
//! server scenario that calls a tool passes only when the server lists that tool under the
//! name the suite calls (a call of a name the server does not hold gets `tool unavailable`,
//! which some scenarios would take for an answer). [`SERVER_OUT_OF_SCOPE`] and
//! [`CLIENT_OUT_OF_SCOPE`] are never run: they test what rule M1 leaves to other crates
//! (resources, prompts, completion, logging, sampling, OAuth).
//!
//! Node 22 and the suite are provisioned under `target/peers/` on first use
//! (`conformance_peer`); the failure says what to install when Python 3 or its venv module is
//! missing. A scenario's `checks.json` stays under the test's temporary directory
//! (`target/tmp/mcp-conformance/`) when it fails.
#![cfg(feature = "mcp")]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Instant;

use tool_runtime::mcp::{Handshake, McpToolset};

#[path = "../conformance_server.rs"]
#[allow(dead_code, unreachable_pub)]
mod conformance_server;

#[path = "../conformance_client.rs"]
#[allow(dead_code, unreachable_pub)]
mod conformance_client;

#[allow(dead_code, unreachable_pub)]
mod conformance_peer;

use conformance_peer::{Run, SUITE_VERSION, Side, Suite, suite};

// ─── The scenarios ──────────────────────────────────────────────────────────────────────────

/// The server scenarios in scope for a tools framework: lifecycle, ping, tools and their
/// content kinds, progress, elicitation, JSON Schema, the streamable HTTP transport.
const SERVER_IN_SCOPE: &[&str] = &[
    "server-initialize",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-elicitation",
    "json-schema-2020-12",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

/// Server scenarios in scope that cannot pass yet, with the rule each waits for. Delete a
/// line when its scenario passes.
const SERVER_NOT_YET: &[(&str, &str)] = &[];

/// Server scenarios rule M1 leaves out, and why.
const SERVER_OUT_OF_SCOPE: &[(&str, &str)] = &[
    ("logging-set-level", "logging"),
    ("tools-call-with-logging", "logging"),
    (
        "completion-complete",
        "completion (of prompt and resource arguments)",
    ),
    ("tools-call-sampling", "sampling"),
    ("resources-list", "resources"),
    ("resources-read-text", "resources"),
    ("resources-read-binary", "resources"),
    ("resources-templates-read", "resources"),
    ("resources-subscribe", "resources"),
    ("resources-unsubscribe", "resources"),
    ("prompts-list", "prompts"),
    ("prompts-get-simple", "prompts"),
    ("prompts-get-with-args", "prompts"),
    ("prompts-get-embedded-resource", "prompts"),
    ("prompts-get-with-image", "prompts"),
];

/// The tool each server scenario calls, by the MCP name the suite calls it.
const SCENARIO_TOOLS: &[(&str, &str)] = &[
    ("tools-call-simple-text", "test_simple_text"),
    ("tools-call-image", "test_image_content"),
    ("tools-call-audio", "test_audio_content"),
    ("tools-call-embedded-resource", "test_embedded_resource"),
    ("tools-call-mixed-content", "test_multiple_content_types"),
    ("tools-call-error", "test_error_handling"),
    ("tools-call-with-progress", "test_tool_with_progress"),
    ("tools-call-elicitation", "test_elicitation"),
    ("json-schema-2020-12", "json_schema_2020_12_tool"),
    (
        "elicitation-sep1034-defaults",
        "test_elicitation_sep1034_defaults",
    ),
    (
        "elicitation-sep1330-enums",
        "test_elicitation_sep1330_enums",
    ),
    ("server-sse-polling", "test_reconnection"),
];

/// The client scenarios in scope: the handshake, a tool call, the transport's reconnection,
/// elicitation.
const CLIENT_IN_SCOPE: &[&str] = &[
    "initialize",
    "tools_call",
    "sse-retry",
    "elicitation-sep1034-client-defaults",
];

/// Client scenarios in scope that cannot pass yet, with the rule each waits for. Delete a
/// line when its scenario passes.
const CLIENT_NOT_YET: &[(&str, &str)] = &[];

/// Client scenarios rule M1 leaves out, and why: every `auth/…` scenario tests OAuth.
const CLIENT_OUT_OF_SCOPE: &[(&str, &str)] = &[
    ("auth/metadata-default", "OAuth"),
    ("auth/metadata-var1", "OAuth"),
    ("auth/metadata-var2", "OAuth"),
    ("auth/metadata-var3", "OAuth"),
    ("auth/basic-cimd", "OAuth"),
    ("auth/scope-from-www-authenticate", "OAuth"),
    ("auth/scope-from-scopes-supported", "OAuth"),
    ("auth/scope-omitted-when-undefined", "OAuth"),
    ("auth/scope-step-up", "OAuth"),
    ("auth/scope-retry-limit", "OAuth"),
    ("auth/token-endpoint-auth-basic", "OAuth"),
    ("auth/token-endpoint-auth-post", "OAuth"),
    ("auth/token-endpoint-auth-none", "OAuth"),
    ("auth/pre-registration", "OAuth"),
    ("auth/2025-03-26-oauth-metadata-backcompat", "OAuth"),
    ("auth/2025-03-26-oauth-endpoint-fallback", "OAuth"),
    ("auth/resource-mismatch", "OAuth"),
    ("auth/offline-access-scope", "OAuth"),
    ("auth/offline-access-not-supported", "OAuth"),
    ("auth/client-credentials-jwt", "OAuth"),
    ("auth/client-credentials-basic", "OAuth"),
    ("auth/cross-app-access-complete-flow", "OAuth"),
];

fn not_yet(list: &[(&'static str, &'static str)], scenario: &str) -> Option<&'static str> {
    list.iter()
        .find(|(name, _)| *name == scenario)
        .map(|(_, rule)| *rule)
}

fn the_suite() -> &'static Suite {
    suite().unwrap_or_else(|message| panic!("{message}"))
}

/// What a side's runs came to: the report, and what the test must fail for.
#[derive(Default)]
struct Verdict {
    report: String,
    wrong: Vec<String>,
}

impl Verdict {
    /// Records `run` of a scenario expected to pass (`waits_for` is `None`) or not yet;
    /// `evidence` is why a run whose checks all passed does not count (a missing tool).
    fn record(&mut self, run: &Run, waits_for: Option<&str>, evidence: Option<String>) {
        let passed = run.passed() && evidence.is_none();
        let _ = write!(self.report, "{run}");
        if let Some(why) = &evidence
            && run.passed()
        {
            let _ = writeln!(self.report, "    (does not count: {why})");
        }
        match (passed, waits_for) {
            (true, None) | (false, Some(_)) => {}
            (false, None) => self.wrong.push(format!(
                "{} failed:\n{}{}",
                run.scenario,
                run.failure_report(),
                evidence.map_or_else(String::new, |why| format!("    {why}\n"))
            )),
            (true, Some(rule)) => self.wrong.push(format!(
                "{} passes now: delete its line from the NOT_YET list (it waited for {rule})",
                run.scenario
            )),
        }
    }

    fn assert_right(self, side: &str) {
        eprintln!("{side} scenarios:\n{}", self.report);
        assert!(
            self.wrong.is_empty(),
            "{side} scenarios not as expected:\n{}\n\nall {side} scenarios:\n{}",
            self.wrong.join("\n"),
            self.report
        );
    }
}

// ─── The server ─────────────────────────────────────────────────────────────────────────────

#[test]
fn the_server_passes_the_suites_server_scenarios() {
    let suite = the_suite();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let http = runtime
        .block_on(conformance_server::serve("127.0.0.1:0"))
        .expect("the conformance server serves on loopback");
    let url = http.url();
    // What the server lists, by MCP name: a scenario whose tool is not among them cannot
    // count as passed, whatever the suite made of the `tool unavailable` it got.
    let published: BTreeSet<String> = runtime.block_on(async {
        let toolset = McpToolset::builder()
            .handshake(Handshake::Initialize)
            .connect_http(url.as_str())
            .await
            .expect("our client connects to the conformance server");
        let names = toolset
            .names()
            .map(|(_, remote)| remote.to_owned())
            .collect();
        toolset.close().await;
        names
    });
    let started = Instant::now();
    let mut verdict = Verdict::default();
    for &scenario in SERVER_IN_SCOPE {
        let run = suite
            .run_server_scenario(&url, scenario)
            .unwrap_or_else(|message| panic!("{message}"));
        let evidence = SCENARIO_TOOLS
            .iter()
            .find(|(name, _)| *name == scenario)
            .filter(|(_, tool)| !published.contains(*tool))
            .map(|(_, tool)| {
                format!("the server lists no tool named {tool}; it lists {published:?}")
            });
        verdict.record(&run, not_yet(SERVER_NOT_YET, scenario), evidence);
    }
    let _ = writeln!(
        verdict.report,
        "({} scenarios in {:.1?})",
        SERVER_IN_SCOPE.len(),
        started.elapsed()
    );
    runtime
        .block_on(http.shutdown())
        .expect("the server shuts down");
    verdict.assert_right("server");
}

#[test]
fn the_servers_tools_are_named_for_the_suite() {
    let server = conformance_server::builder()
        .and_then(|builder| Ok(builder.build()?))
        .expect("the conformance server builds");
    let declared: BTreeSet<&str> = server.tools().iter().map(|t| t.name()).collect();
    let names = conformance_server::mcp_names();
    let mapped: BTreeSet<&str> = names.iter().map(|(declared, _)| *declared).collect();
    assert_eq!(
        declared, mapped,
        "mcp_names() maps exactly the tools the server declares"
    );
    let suite_names: BTreeSet<&str> = names.iter().map(|(_, name)| *name).collect();
    assert_eq!(suite_names.len(), names.len(), "{names:?}");
    for (declared, name) in &names {
        // The declared name is the suite's with `-` for `_` (N1), until the server publishes
        // the suite's.
        assert_eq!(declared.replace('-', "_"), *name);
        assert!(
            SCENARIO_TOOLS.iter().any(|(_, tool)| tool == name),
            "{name} is called by no scenario"
        );
    }
    // Every scenario that calls a tool and is not waiting for content kinds or elicitation
    // has its tool declared.
    for (scenario, tool) in SCENARIO_TOOLS {
        let waits = not_yet(SERVER_NOT_YET, scenario).unwrap_or_default();
        if !waits.starts_with("M3") && !waits.starts_with("M4") {
            assert!(
                suite_names.contains(tool),
                "{scenario} calls {tool}, which the server does not declare"
            );
        }
    }
}

// ─── The client ─────────────────────────────────────────────────────────────────────────────

/// Set for the client the suite starts: the test binary then runs the example client.
const CLIENT_CHILD: &str = "MCP_CONFORMANCE_CLIENT_CHILD";

/// In a child (when `MCP_CONFORMANCE_CLIENT_CHILD` is set): runs the `conformance_client`
/// example's program against the server URL the suite appended to the command line, for the
/// scenario in `MCP_CONFORMANCE_SCENARIO`, and exits with its verdict. Otherwise it does
/// nothing.
#[test]
fn child_runs_the_conformance_client() {
    if std::env::var_os(CLIENT_CHILD).is_none() {
        return;
    }
    let url = std::env::args()
        .next_back()
        .filter(|url| url.starts_with("http"))
        .expect("the suite appends the server's URL to the command line");
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let code = match runtime.block_on(conformance_client::run(&url, &scenario)) {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("conformance_client: {error}");
            1
        }
    };
    std::process::exit(code);
}

#[test]
fn the_client_passes_the_suites_client_scenarios() {
    let suite = the_suite();
    let exe = std::env::current_exe().expect("the test binary");
    let exe = exe.to_str().expect("the test binary's path is UTF-8");
    // The suite splits the command at spaces.
    assert!(
        !exe.contains(char::is_whitespace),
        "the suite cannot run a client whose path has spaces: `{exe}`"
    );
    let command = format!("{exe} child_runs_the_conformance_client --exact --nocapture");
    let started = Instant::now();
    let mut verdict = Verdict::default();
    for &scenario in CLIENT_IN_SCOPE {
        let run = suite
            .run_client_scenario(&command, scenario, &[(CLIENT_CHILD, "1")])
            .unwrap_or_else(|message| panic!("{message}"));
        let waits_for = not_yet(CLIENT_NOT_YET, scenario);
        if waits_for.is_none() && !run.passed() {
            eprintln!(
                "the client's standard error in {scenario}:\n{}",
                run.client_stderr.as_deref().unwrap_or("(none)")
            );
        }
        verdict.record(&run, waits_for, None);
    }
    let _ = writeln!(
        verdict.report,
        "({} scenarios in {:.1?})",
        CLIENT_IN_SCOPE.len(),
        started.elapsed()
    );
    verdict.assert_right("client");
}

// ─── The lists ──────────────────────────────────────────────────────────────────────────────

#[test]
fn every_scenario_of_the_suite_is_classified() {
    let suite = the_suite();
    for (side, in_scope, not_yet, out_of_scope) in [
        (
            Side::Server,
            SERVER_IN_SCOPE,
            SERVER_NOT_YET,
            SERVER_OUT_OF_SCOPE,
        ),
        (
            Side::Client,
            CLIENT_IN_SCOPE,
            CLIENT_NOT_YET,
            CLIENT_OUT_OF_SCOPE,
        ),
    ] {
        let listed: BTreeSet<String> = suite
            .list(side)
            .unwrap_or_else(|message| panic!("{message}"))
            .into_iter()
            .collect();
        let mut ours: BTreeSet<String> = BTreeSet::new();
        for name in in_scope
            .iter()
            .copied()
            .chain(out_of_scope.iter().map(|(name, _)| *name))
        {
            assert!(
                ours.insert(name.to_owned()),
                "{side:?} scenario {name} is listed twice"
            );
        }
        for (name, _) in not_yet {
            assert!(
                in_scope.contains(name),
                "{side:?} scenario {name} waits for a rule but is not in scope"
            );
        }
        assert_eq!(
            listed, ours,
            "the {side:?} scenarios of the suite {SUITE_VERSION} (left) are not those \
             classified here (right)"
        );
    }
}
