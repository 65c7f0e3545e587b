//! npm, run the way the tests that provision a peer with it need: a failed install is tried
//! again (a registry that drops a connection once must not fail a run that installs a peer
//! for the first time), and the error it finally gives says what npm said, from npm's own
//! debug log when npm printed nothing but the log's path.
//!
//! Shared by the peers installed from npm: `oidc-provider` (here), `restate-server`
//! (tool-durable's tests) and the MCP conformance suite (the examples' tests), each through a
//! `#[path]` module.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// How many times an install is tried in all.
const ATTEMPTS: u32 = 3;

/// The pause before the second attempt; it doubles for each attempt after.
const FIRST_PAUSE: Duration = Duration::from_secs(3);

/// How many of the debug log's last error lines an error quotes.
const LOG_LINES: usize = 20;

/// Runs the npm command that `command` builds (once per attempt, so that each attempt starts
/// from the state `prepare` leaves) until it succeeds, at most [`ATTEMPTS`] times. `prepare`
/// runs before each attempt (to empty the directory a failed attempt left half filled).
/// `what` names the install in messages. The error quotes npm's output and, when npm only
/// pointed at its debug log, that log's error lines.
pub fn install_with_retries(
    what: &str,
    mut prepare: impl FnMut() -> Result<(), String>,
    mut command: impl FnMut() -> Command,
) -> Result<Output, String> {
    let mut pause = FIRST_PAUSE;
    let mut attempt = 1;
    loop {
        prepare()?;
        let output = command().stdin(Stdio::null()).output().map_err(|e| {
            format!("`npm` cannot be run ({e}): install Node.js 20 or later with npm")
        })?;
        if output.status.success() {
            return Ok(output);
        }
        let said = what_npm_said(&output);
        if attempt == ATTEMPTS {
            return Err(format!(
                "{what} failed {ATTEMPTS} times (the npm registry must be reachable the first \
                 time; the installation is reused after); the last attempt ended with {} and \
                 said:\n{said}",
                output.status
            ));
        }
        eprintln!(
            "{what} failed (attempt {attempt} of {ATTEMPTS}, {}); trying again in {pause:?}:\n{said}",
            output.status
        );
        std::thread::sleep(pause);
        pause *= 2;
        attempt += 1;
    }
}

/// npm's standard output and error, with the error lines of the debug log they name.
fn what_npm_said(output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut said = format!("{}\n{}", stdout.trim(), stderr.trim())
        .trim()
        .to_owned();
    if let Some(log) = debug_log(&stderr) {
        said.push_str(&format!("\nfrom {}:\n{}", log.display(), log_errors(log)));
    }
    said
}

/// The debug log's path from npm's "A complete log of this run can be found in: PATH".
fn debug_log(stderr: &str) -> Option<&Path> {
    let (_, rest) = stderr.split_once("can be found in:")?;
    let path = rest.lines().next()?.trim();
    (!path.is_empty()).then(|| Path::new(path))
}

/// The last [`LOG_LINES`] lines of the log that tell of an error or a failed request.
fn log_errors(log: &Path) -> String {
    let Ok(text) = std::fs::read_to_string(log) else {
        return "(the log cannot be read)".to_owned();
    };
    let wanted = |line: &&str| {
        ["error", "verbose stack", "http fetch"]
            .iter()
            .any(|word| line.contains(word))
    };
    let lines: Vec<&str> = text.lines().filter(wanted).collect();
    lines[lines.len().saturating_sub(LOG_LINES)..].join("\n")
}
