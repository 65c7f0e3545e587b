//! Rules M6 and M1: the newest official MCP conformance suite (`@modelcontextprotocol/
//! conformance`, pinned at [`SUITE_VERSION`]) runs every scenario it lists at every protocol
//! version the scenario lists (an extension's scenario once, as the suite runs it), against a
//! server and a client built only with the public API of `tool_runtime`: the
//! `conformance_server` and `conformance_client` examples.
//!
//! - `the_server_passes_the_suites_server_scenarios`: the example server's tools
//!   (`conformance_server::builder`), served over streamable HTTP on loopback as the example
//!   serves them, run against each server scenario at each of its versions;
//! - `the_client_passes_the_suites_client_scenarios`: each client scenario at each of its
//!   versions, the suite running the example client's program against its own test server
//!   (this test binary, started again as `child_runs_the_conformance_client`, runs
//!   `conformance_client::run`, all that the example's `main` does);
//! - `every_run_not_yet_passing_is_one_of_the_suite`: each line of the lists below names a
//!   scenario and a version the suite runs.
//!
//! Every run must pass (every check `SUCCESS`, `SKIPPED` or `INFO`, none `FAILURE` or
//! `WARNING`) unless [`SERVER_NOT_YET`] or [`CLIENT_NOT_YET`] names it with the precise reason
//! it cannot yet: the API it waits for (sampling, roots, …). Such a run must not pass, and
//! the test fails when it does, so that its line is deleted: the lists cannot go stale. A
//! server scenario that calls a tool passes only when the server lists that tool under the
//! name the suite calls (a call of a name the server does not hold gets `tool unavailable`,
//! which some scenarios would take for an answer).
//!
//! The runs go [`AT_ONCE`] at a time (each is a Node process of the suite and, for the client,
//! a child of this binary); the report gives the time of the whole.
//!
//! Node 22 and the suite are provisioned under `target/peers/` on first use
//! (`conformance_peer`); the failure says what to install when Python 3 or its venv module is
//! missing. A run's `checks.json` stays under the test's temporary directory
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

use conformance_peer::{
    AT_ONCE, EXTENSION, Run, SUITE_VERSION, Side, Suite, concurrently, runs_of, suite,
};

// ─── The runs that cannot pass yet ──────────────────────────────────────────────────────────

/// In a list below: every version the scenario lists. A name ending in `*` names every
/// scenario it starts (`auth/*`).
const ALL: &str = "*";

/// Server runs (scenario, version or [`ALL`]) that cannot pass yet, each with what it waits
/// for. Delete a line when its run passes.
const SERVER_NOT_YET: &[(&str, &str, &str)] = &[
    (
        "input-required-result-ignore-extra-params",
        "2026-07-28",
        "kept by H10 and M3: the scenario's one call brings inputResponses (the right answer \
         plus unknown keys) with no requestState, to a call that never asked, and wants it \
         complete; taking that answer would let a client answer a question it was never asked. \
         The server does what the specification says beside that: it ignores unknown keys \
         next to a sealed round, and without a state asks again (input_required), as a server \
         SHOULD when what it needs is missing (tests/mcp_input_responses_m3.rs)",
    ),
    // The Tasks extension.
    (
        "tasks-status-notifications",
        EXTENSION,
        "nothing to pass: the suite's scenario records no check in this version (its harness \
         waits for a rewrite on subscriptions/listen, as the suite says)",
    ),
];

/// Client runs that cannot pass yet, each with what it waits for. Delete a line when its run
/// passes.
const CLIENT_NOT_YET: &[(&str, &str, &str)] = &[
    ("sep-2640-client-no-prefetch", EXTENSION, SKILLS),
    ("sep-2640-client-verify-digest", EXTENSION, SKILLS),
    ("sep-2640-client-verify-size", EXTENSION, SKILLS),
    ("sep-2640-client-verify-frontmatter", EXTENSION, SKILLS),
];

/// The prefix of the authorization scenarios, which `mcp_conformance_auth.rs` plays with an
/// `McpToolset` that has an OAuth client (Z4, Z5): this test's client connects without one.
const AUTH: &str = "auth/";

/// Why the skills extension's client scenarios cannot pass.
const SKILLS: &str = "the skills extension (SEP-2640): not adopted; McpToolset reads no \
                      skills (the scenario records no check for a client that does not)";

/// The tools server scenarios call, by the MCP name the suite calls each (a scenario may call
/// several).
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
    (
        "input-required-result-basic-elicitation",
        "test_input_required_result_elicitation",
    ),
    (
        "input-required-result-request-state",
        "test_input_required_result_request_state",
    ),
    (
        "input-required-result-tampered-state",
        "test_input_required_result_tampered_state",
    ),
    (
        "input-required-result-multi-round",
        "test_input_required_result_multi_round",
    ),
    ("http-custom-header-server-validation", "test_custom_header"),
    ("tools-call-with-logging", "test_tool_with_logging"),
    ("tasks-lifecycle", "greet"),
    ("tasks-lifecycle", "slow_compute"),
    ("tasks-lifecycle", "failing_job"),
    ("tasks-lifecycle", "protocol_error_job"),
    ("tasks-mrtr-input", "confirm_delete"),
    ("tasks-mrtr-input", "multi_input"),
    ("tasks-mrtr-composition", "test_tool_with_task"),
    ("tools-call-sampling", "test_sampling"),
    (
        "input-required-result-basic-sampling",
        "test_input_required_result_sampling",
    ),
    (
        "input-required-result-basic-list-roots",
        "test_input_required_result_list_roots",
    ),
    (
        "input-required-result-capability-check",
        "test_input_required_result_capabilities",
    ),
    (
        "input-required-result-multiple-input-requests",
        "test_input_required_result_multiple_inputs",
    ),
    ("server-stateless", "test_missing_capability"),
    ("server-stateless", "test_trigger_prompt_change"),
];

/// Why `scenario` at `version` cannot pass yet, if `list` says it cannot.
fn not_yet(
    list: &[(&'static str, &'static str, &'static str)],
    scenario: &str,
    version: &str,
) -> Option<&'static str> {
    list.iter()
        .find(|(name, at, _)| names(name, scenario) && (*at == ALL || *at == version))
        .map(|(_, _, why)| *why)
}

/// Whether a list's `name` names `scenario`: the same, or a group (`auth/*`) it is in.
fn names(name: &str, scenario: &str) -> bool {
    match name.strip_suffix('*') {
        Some(group) => scenario.starts_with(group),
        None => name == scenario,
    }
}

fn the_suite() -> &'static Suite {
    suite().unwrap_or_else(|message| panic!("{message}"))
}

/// What a side's runs came to: the report, and what the test must fail for.
#[derive(Default)]
struct Verdict {
    report: String,
    wrong: Vec<String>,
    passed: usize,
    runs: usize,
}

impl Verdict {
    /// Records `run` of a scenario expected to pass (`waits_for` is `None`) or not yet;
    /// `evidence` is why a run whose checks all passed does not count (a missing tool).
    fn record(&mut self, run: &Run, waits_for: Option<&str>, evidence: Option<String>) {
        let passed = run.passed() && evidence.is_none();
        self.runs += 1;
        self.passed += usize::from(passed);
        let _ = write!(self.report, "{run}");
        if let Some(why) = waits_for {
            let _ = writeln!(self.report, "    (not yet: {why})");
        }
        if let Some(why) = &evidence
            && run.passed()
        {
            let _ = writeln!(self.report, "    (does not count: {why})");
        }
        match (passed, waits_for) {
            (true, None) | (false, Some(_)) => {}
            (false, None) => self.wrong.push(format!(
                "{} @ {} failed:\n{}{}",
                run.scenario,
                run.version,
                run.failure_report(),
                evidence.map_or_else(String::new, |why| format!("    {why}\n"))
            )),
            (true, Some(why)) => self.wrong.push(format!(
                "{} @ {} passes now: delete its line from the NOT_YET list (it waited for {why})",
                run.scenario, run.version
            )),
        }
    }

    fn assert_right(self, side: &str) {
        eprintln!(
            "{side} runs ({} of {} pass):\n{}",
            self.passed, self.runs, self.report
        );
        assert!(
            self.wrong.is_empty(),
            "{side} runs not as expected:\n{}\n\nall {side} runs:\n{}",
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
    let runs = runs_of(suite, Side::Server);
    let started = Instant::now();
    let ran = concurrently(&runs, |scenario, version| {
        suite
            .run_server_scenario(&url, scenario, version)
            .unwrap_or_else(|message| panic!("{message}"))
    });
    let took = started.elapsed();
    let mut verdict = Verdict::default();
    for run in &ran {
        let evidence = SCENARIO_TOOLS
            .iter()
            .find(|(name, tool)| *name == run.scenario && !published.contains(*tool))
            .map(|(_, tool)| {
                format!("the server lists no tool named {tool}; it lists {published:?}")
            });
        let waits_for = not_yet(SERVER_NOT_YET, &run.scenario, &run.version);
        verdict.record(run, waits_for, evidence);
    }
    let _ = writeln!(
        verdict.report,
        "({} runs, {AT_ONCE} at once, in {took:.1?})",
        runs.len()
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
    // Every scenario that calls a tool has its tool declared.
    for (scenario, tool) in SCENARIO_TOOLS {
        assert!(
            suite_names.contains(tool),
            "{scenario} calls {tool}, which the server does not declare"
        );
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
    let runs: Vec<(String, String)> = (runs_of(suite, Side::Client).into_iter())
        .filter(|(scenario, _)| !scenario.starts_with(AUTH))
        .collect();
    let started = Instant::now();
    let ran = concurrently(&runs, |scenario, version| {
        suite
            .run_client_scenario(&command, (scenario, version), &[(CLIENT_CHILD, "1")])
            .unwrap_or_else(|message| panic!("{message}"))
    });
    let took = started.elapsed();
    let mut verdict = Verdict::default();
    for run in &ran {
        let waits_for = not_yet(CLIENT_NOT_YET, &run.scenario, &run.version);
        if waits_for.is_none() && !run.passed() {
            eprintln!(
                "the client's standard error in {} @ {}:\n{}",
                run.scenario,
                run.version,
                run.client_stderr.as_deref().unwrap_or("(none)")
            );
        }
        verdict.record(run, waits_for, None);
    }
    let _ = writeln!(
        verdict.report,
        "({} runs, {AT_ONCE} at once, in {took:.1?})",
        runs.len()
    );
    verdict.assert_right("client");
}

// ─── The lists ──────────────────────────────────────────────────────────────────────────────

/// Each line of the NOT_YET lists names a scenario the suite lists, at a version it lists
/// for it (or all of them), once.
#[test]
fn every_run_not_yet_passing_is_one_of_the_suite() {
    let suite = the_suite();
    for (side, not_yet) in [
        (Side::Server, SERVER_NOT_YET),
        (Side::Client, CLIENT_NOT_YET),
    ] {
        let runs: BTreeSet<(String, String)> = runs_of(suite, side).into_iter().collect();
        let mut seen = BTreeSet::new();
        for (scenario, version, why) in not_yet {
            assert!(
                !why.trim().is_empty(),
                "{scenario} @ {version} says nothing"
            );
            assert!(
                seen.insert((scenario, version)),
                "{side:?} {scenario} @ {version} is listed twice"
            );
            let known = runs
                .iter()
                .any(|(name, at)| names(scenario, name) && (*version == ALL || at == version));
            assert!(
                known,
                "{side:?} {scenario} @ {version} is no run of the suite {SUITE_VERSION}"
            );
        }
    }
}
