//! The guide's chapter `tool_runtime::guide::mcp_server` gives a session by hand with `curl`
//! against the example's HTTP server: this test serves the example's program
//! (`tool_examples::serve::main`, all that `examples/mcp_server.rs` does) on a free port and
//! runs the chapter's block as written, with `bash` and `curl`, the port put in for 8181. The
//! session initializes, lists the operator's tools and calls `lookup-window`.
#![cfg(feature = "mcp")]

use std::process::Command;
use std::time::{Duration, Instant};

/// The chapter, as the guide shows it.
const CHAPTER: &str = include_str!("../../tool-runtime/src/guide/mcp_server.md");

/// The chapter's block that talks to the running server: the `sh` block that sets `URL`.
fn session_block() -> &'static str {
    CHAPTER
        .split("```sh\n")
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .find(|block| block.starts_with("URL="))
        .expect("the chapter has a session block that starts with URL=")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chapters_curl_session_runs_against_the_example() {
    let curl = Command::new("curl").arg("--version").output();
    assert!(
        curl.is_ok_and(|out| out.status.success()),
        "the guide's session needs curl: install it (Debian: apt-get install curl)"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port();
    let addr = format!("127.0.0.1:{port}");
    let args = vec!["--http".to_owned(), addr.clone()];
    let server = tokio::spawn(async move {
        tool_examples::serve::main(&args)
            .await
            .map_err(|e| e.to_string())
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(&addr).await.is_err() {
        assert!(
            Instant::now() < deadline && !server.is_finished(),
            "the example did not serve on {addr}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let block = session_block().replace("127.0.0.1:8181", &addr);
    let out = tokio::task::spawn_blocking(move || {
        Command::new("bash")
            .args(["-euo", "pipefail", "-c", &block])
            .output()
    })
    .await
    .expect("the session's task")
    .expect("bash runs");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // tools/list: the operator's tools; tools/call: the maintenance window of svc-42.
    assert!(printed.contains(r#""name":"lookup-window""#), "{printed}");
    let call = printed
        .lines()
        .rfind(|line| line.contains(r#""id":3"#))
        .unwrap_or_else(|| panic!("no answer to the call: {printed}"));
    assert!(
        call.contains(r#""isError":false"#) && call.contains("starts_at"),
        "{call}"
    );
    server.abort();
}
