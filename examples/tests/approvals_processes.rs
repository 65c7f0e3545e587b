//! The `approvals` example's two commands run as two processes (H3): this test binary starts
//! itself again, once per command, and each child runs the example's program
//! (`tool_examples::approvals::cli`, all that `examples/approvals.rs` does) and exits with its
//! code. The first pauses and writes the paused run to a file; the second, a fresh process,
//! resumes it with the decision (H4); an edited file is refused with the reason.

use std::path::{Path, PathBuf};
use std::process::Command;

use tool_examples::approvals::{FileLedger, KEY_VARIABLE, cli};

/// The arguments of the example's program, for a child, separated by this character.
const ARGS_VARIABLE: &str = "APPROVALS_EXAMPLE_ARGS";
const SEPARATOR: char = '\u{1f}';

/// In a child (when `APPROVALS_EXAMPLE_ARGS` is set): runs the example's program with those
/// arguments and exits with its code. Otherwise it does nothing.
#[test]
fn child_runs_the_example_program() {
    let Ok(args) = std::env::var(ARGS_VARIABLE) else {
        return;
    };
    let args: Vec<String> = args.split(SEPARATOR).map(str::to_owned).collect();
    let code = cli(&args, &mut std::io::stdout(), &mut std::io::stderr());
    std::process::exit(i32::from(code));
}

/// What a child printed, and how it exited.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the example's program in a new process, with `key` (if any) as the sealing key.
fn example(args: &[&str], key: Option<&str>) -> Run {
    let mut command = Command::new(std::env::current_exe().expect("the test binary"));
    command
        .args(["child_runs_the_example_program", "--exact", "--nocapture"])
        .env(ARGS_VARIABLE, args.join(&SEPARATOR.to_string()))
        .env_remove(KEY_VARIABLE);
    if let Some(key) = key {
        command.env(KEY_VARIABLE, key);
    }
    let output = command.output().expect("the child starts");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn state_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("approvals-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir.join(name)
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

#[test]
fn h3_h4_pause_in_one_process_and_resume_in_another() {
    let state = state_file("approve.json");
    let paused = example(&["pause", path(&state)], None);
    assert_eq!(paused.code, Some(0), "{}{}", paused.stdout, paused.stderr);
    for line in [
        "ran offline-1-1 lookup-window: [success]",
        "pending offline-1-2 restart-service {\"service_id\":\"svc-42\"}",
        "why: svc-42 serves production traffic",
        "Restarts so far: none.",
    ] {
        assert!(paused.stdout.contains(line), "{line}\n{}", paused.stdout);
    }
    let json = std::fs::read_to_string(&state).expect("the paused run was written");
    assert!(json.contains("tool-runtime/paused-run"), "{json}");

    let approved = example(&["resume", path(&state), "approve"], None);
    assert_eq!(
        approved.code,
        Some(0),
        "{}{}",
        approved.stdout,
        approved.stderr
    );
    for line in [
        "offline-1-2 gets back [success]: {\"service_id\":\"svc-42\",\"state\":\"restarting\"}",
        "The model answers: Offline model: I made 2 tool calls.",
        "- restart-service: {\"service_id\":\"svc-42\",\"state\":\"restarting\"}",
        "Restarts in this process: svc-42.",
    ] {
        assert!(
            approved.stdout.contains(line),
            "{line}\n{}",
            approved.stdout
        );
    }

    // The same file, another process: refused as resumed before, saying so, and the restart
    // does not run twice (H9), whatever the decision.
    for choice in ["approve", "deny"] {
        let again = example(&["resume", path(&state), choice], None);
        assert_eq!(again.code, Some(1), "{}{}", again.stdout, again.stderr);
        assert!(
            again.stderr.contains("was resumed before") && again.stderr.contains("nothing ran"),
            "{}",
            again.stderr
        );
        assert!(!again.stdout.contains("gets back"), "{}", again.stdout);
    }

    // A new pause in the same file is a new pause: denied, the model is told so.
    let paused = example(&["pause", path(&state)], None);
    assert_eq!(paused.code, Some(0), "{}{}", paused.stdout, paused.stderr);
    let json = std::fs::read_to_string(&state).expect("the paused run was written");
    let denied = example(&["resume", path(&state), "deny"], None);
    assert_eq!(denied.code, Some(0), "{}{}", denied.stdout, denied.stderr);
    for line in [
        "offline-1-2 gets back [denied]: the call was not approved",
        "- restart-service (failed): the call was not approved",
        "Restarts in this process: none.",
    ] {
        assert!(denied.stdout.contains(line), "{line}\n{}", denied.stdout);
    }

    // An edited file is refused, with the reason, and nothing runs.
    std::fs::write(&state, json.replacen("svc-42", "svc-43", 1)).expect("the file is written");
    let edited = example(&["resume", path(&state), "approve"], None);
    assert_eq!(edited.code, Some(1), "{}{}", edited.stdout, edited.stderr);
    assert!(
        edited
            .stderr
            .contains("cannot be resumed: the paused run was altered"),
        "{}",
        edited.stderr
    );
    assert!(!edited.stdout.contains("gets back"), "{}", edited.stdout);
    remove(&state);
}

/// Removes a test's state file and the record of its resumes beside it.
fn remove(state: &Path) {
    let _ = std::fs::remove_file(state);
    let _ = std::fs::remove_dir_all(FileLedger::beside(state).dir());
}

#[test]
fn h3_a_keyed_paused_run_resumes_only_where_the_key_is() {
    let state = state_file("keyed.json");
    let key = Some("a secret both processes hold");
    let paused = example(&["pause", path(&state)], key);
    assert_eq!(paused.code, Some(0), "{}{}", paused.stdout, paused.stderr);
    let without = example(&["resume", path(&state), "approve"], None);
    assert_eq!(without.code, Some(1));
    assert!(
        without
            .stderr
            .contains("sealed with a key, and APPROVALS_STATE_KEY is not set"),
        "{}",
        without.stderr
    );
    // H3: another key is told apart from an alteration, and names the variable.
    let other = example(&["resume", path(&state), "approve"], Some("another secret"));
    assert_eq!(other.code, Some(1));
    assert!(
        other
            .stderr
            .contains("the state was sealed with another key than the one in APPROVALS_STATE_KEY"),
        "{}",
        other.stderr
    );
    assert!(!other.stderr.contains("altered after"), "{}", other.stderr);
    let with = example(&["resume", path(&state), "approve"], key);
    assert_eq!(with.code, Some(0), "{}{}", with.stdout, with.stderr);
    assert!(
        with.stdout.contains("Restarts in this process: svc-42."),
        "{}",
        with.stdout
    );
    remove(&state);
}

#[test]
fn usage_errors_exit_2() {
    let mut err = Vec::new();
    assert_eq!(cli(&["resume".to_owned()], &mut Vec::new(), &mut err), 2);
    assert!(String::from_utf8_lossy(&err).starts_with("usage:"));
    let args = ["resume", "x.json", "maybe"].map(str::to_owned);
    assert_eq!(cli(&args, &mut Vec::new(), &mut Vec::new()), 2);
}
