//! The `mcp_server` example's errors read as words: started on stdio with no client (its
//! standard input closed), it says the MCP session could not start, with `Display`, not the
//! `Debug` form (`Error: Start(ConnectionClosed(..))`) a `main` returning `Result` prints; a
//! bad command line says what was expected. This test binary starts itself again as the
//! example's program (`tool_examples::exit_with(tool_examples::serve::main(..))`, all that
//! `examples/mcp_server.rs` does).
#![cfg(feature = "mcp")]

use std::process::{Command, Stdio};

/// The arguments of the example's program, for a child, separated by this character.
const ARGS_VARIABLE: &str = "MCP_SERVER_EXAMPLE_ARGS";
const SEPARATOR: char = '\u{1f}';

/// In a child (when `MCP_SERVER_EXAMPLE_ARGS` is set): runs the example's program with those
/// arguments and exits with its code. Otherwise it does nothing.
#[test]
fn child_runs_the_example_program() {
    let Ok(args) = std::env::var(ARGS_VARIABLE) else {
        return;
    };
    let args: Vec<String> = args
        .split(SEPARATOR)
        .filter(|arg| !arg.is_empty())
        .map(str::to_owned)
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let code = runtime
        .block_on(async { tool_examples::exit_with(tool_examples::serve::main(&args).await) });
    // `ExitCode` has no number to read: the program's two outcomes.
    std::process::exit(if code == std::process::ExitCode::SUCCESS {
        0
    } else {
        1
    });
}

/// Runs the example's program in a new process with `args` and no standard input.
fn example(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["child_runs_the_example_program", "--exact", "--nocapture"])
        .env(ARGS_VARIABLE, args.join(&SEPARATOR.to_string()))
        .env_remove("MAINTENANCE_STATE_KEY")
        .stdin(Stdio::null())
        .output()
        .expect("the child starts");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn with_no_client_on_stdio_the_error_is_in_words() {
    let (code, stderr) = example(&[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("error: the MCP session could not start"),
        "{stderr}"
    );
    for debug in ["Error: ", "Start(", "ConnectionClosed("] {
        assert!(!stderr.contains(debug), "{debug} in {stderr}");
    }
}

#[test]
fn a_bad_address_says_what_is_expected() {
    let (code, stderr) = example(&["--http", "localhost"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("error: --http \"localhost\" is not an address such as 127.0.0.1:8181"),
        "{stderr}"
    );
}
