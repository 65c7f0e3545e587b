//! M2: a server publishes its tools under MCP names other than their declared ones (snake_case,
//! or a map), one to one, checked when the server is built; declared names keep N1, and the
//! handler still sees its declared name.
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use std::sync::{Arc, Mutex};

use support::mcp::Args;
use tool_runtime::mcp::{McpNaming, McpServer};
use tool_runtime::{BuildProblem, Context, OutcomeKind, Tool};

fn tool(name: &'static str, seen: &Arc<Mutex<Vec<String>>>) -> Tool {
    let seen = Arc::clone(seen);
    Tool::builder(name, "Says which tool it is.")
        .handler(move |ctx: Context, _args: Args| {
            let called = ctx.call().map(|c| c.tool.to_string()).unwrap_or_default();
            seen.lock().expect("not poisoned").push(called.clone());
            async move { Ok::<_, std::io::Error>(called) }
        })
        .build()
}

#[tokio::test]
async fn m2_a_snake_case_server_lists_and_takes_snake_case_names() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = McpServer::builder()
        .tool(tool("lookup-window", &seen))
        .tool(tool("test-simple-text", &seen))
        .naming(McpNaming::SnakeCase)
        .build()
        .expect("built");
    let remote = support::mcp::connect_in_process(server).await;
    let published: Vec<&str> = remote
        .tools()
        .iter()
        .filter_map(|t| remote.remote_name(t.name()))
        .collect();
    assert_eq!(published, ["lookup_window", "test_simple_text"]);
    let ctx = Context::new();
    for local in ["lookup-window", "test-simple-text"] {
        let tool = remote
            .tools()
            .iter()
            .find(|t| t.name() == local)
            .expect("the client names it back");
        let outcome = tool.invoke(&ctx, b"{}").await;
        assert_eq!(outcome.kind(), OutcomeKind::Success, "{}", outcome.text());
        // The handler's context speaks of the declared name.
        assert_eq!(outcome.text(), local);
    }
    assert_eq!(
        *seen.lock().expect("not poisoned"),
        ["lookup-window", "test-simple-text"]
    );
}

#[tokio::test]
async fn m2_a_map_publishes_the_names_given_and_only_those() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = McpServer::builder()
        .tool(tool("lookup-window", &seen))
        .tool(tool("restart", &seen))
        .naming(McpNaming::map([("lookup-window", "windows.lookup")]))
        .build()
        .expect("built");
    let remote = support::mcp::connect_in_process(server).await;
    let mut published: Vec<&str> = remote
        .tools()
        .iter()
        .filter_map(|t| remote.remote_name(t.name()))
        .collect();
    published.sort_unstable();
    assert_eq!(published, ["restart", "windows.lookup"]);
}

#[test]
fn m2_names_are_one_to_one_valid_and_for_tools_held() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    // Two tools under one published name.
    let taken = McpServer::builder()
        .tool(tool("a-b", &seen))
        .tool(tool("c", &seen))
        .naming(McpNaming::map([("a-b", "x"), ("c", "x")]))
        .build()
        .expect_err("one name for two tools");
    assert!(
        taken.problems().iter().any(|p| matches!(
            p,
            BuildProblem::McpNameTaken { published, first, second }
                if published == "x" && first == "a-b" && second == "c"
        )),
        "{taken}"
    );
    // A name MCP does not allow, and a name for a tool the server does not hold.
    let wrong = McpServer::builder()
        .tool(tool("a-b", &seen))
        .naming(McpNaming::map([("a-b", "a b"), ("ghost", "g")]))
        .build()
        .expect_err("refused");
    let problems = wrong.problems();
    assert!(
        problems
            .iter()
            .any(|p| matches!(p, BuildProblem::McpName { published, .. } if published == "a b")),
        "{wrong}"
    );
    assert!(
        problems.iter().any(
            |p| matches!(p, BuildProblem::McpNameForUnknownTool { declared } if declared == "ghost")
        ),
        "{wrong}"
    );
    // The message says what to do.
    assert!(wrong.to_string().contains("McpNaming::map"), "{wrong}");
}
