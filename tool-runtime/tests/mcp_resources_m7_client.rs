//! M7 (the client side): an `McpToolset` reads a remote server's resources and prompts over
//! real streamable HTTP on loopback: lists them, reads a text and a binary resource and a
//! template, gets a prompt with its arguments (text, image and embedded-resource messages
//! come back as they were sent), subscribes and unsubscribes; a URI or prompt the server does
//! not serve is the server's `-32602`, kept for the application. An agent can be given a
//! remote resource as context: its text goes into the run's instructions.
#![cfg(feature = "mcp")]

use tool_runtime::mcp::{
    Contents, HttpOptions, McpPrompt, McpResource, McpServer, McpToolset, Message,
    RemoteCatalogError,
};
use tool_runtime::outcome::{Image, Resource};
use tool_runtime::{Agent, Context, Schema, ScriptedModel, ScriptedTurn, ToolError};

/// The parameters of `orders://{id}`.
#[derive(Schema)]
struct Order {
    /// The order number.
    id: u64,
}

/// The arguments of `summarize`.
#[derive(Schema)]
struct Summarize {
    /// What to summarize.
    topic: String,
}

fn server() -> McpServer {
    McpServer::builder()
        .resource(
            McpResource::builder("docs://runbook", "runbook")
                .description("The on-call runbook.")
                .mime_type("text/markdown")
                .read(|_ctx: Context| async {
                    Ok::<_, ToolError>("Restart db-1 only in its window.")
                })
                .build(),
        )
        .resource(
            McpResource::builder("docs://logo", "logo")
                .read(|_ctx: Context| async {
                    Ok::<_, ToolError>(
                        Contents::blob([0u8, 159, 146, 150]).with_mime_type("image/png"),
                    )
                })
                .build(),
        )
        .resource(
            McpResource::builder("orders://{id}", "order")
                .read_typed(|_ctx: Context, o: Order| async move {
                    Ok::<_, ToolError>(format!("order {} is open", o.id))
                })
                .build(),
        )
        .prompt(
            McpPrompt::builder("summarize", "Summarize a topic.")
                .get_typed(|_ctx: Context, s: Summarize| async move {
                    Ok::<_, ToolError>(vec![
                        Message::user(format!("Summarize {}.", s.topic)),
                        Message::user_image(Image::png(vec![1, 2, 3])),
                        Message::user_resource(Resource::text(
                            "docs://runbook",
                            "text/markdown",
                            "the runbook",
                        )),
                        Message::assistant("Here is the summary."),
                    ])
                })
                .build(),
        )
        .build()
        .expect("the server builds")
}

async fn connected() -> (McpToolset, tool_runtime::mcp::HttpServer) {
    let http = server()
        .bind_http("127.0.0.1:0", HttpOptions::new())
        .await
        .expect("bound on loopback");
    let toolset = McpToolset::builder()
        .connect_http(http.url().as_str())
        .await
        .expect("connected");
    (toolset, http)
}

/// M7: the toolset lists, reads and gets what the server serves.
#[tokio::test]
async fn m7_a_toolset_reads_a_remote_servers_resources_and_prompts() {
    let (toolset, http) = connected().await;
    let resources = toolset.list_resources().await.expect("listed");
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["docs://runbook", "docs://logo"]);
    assert_eq!(resources[0].mime_type.as_deref(), Some("text/markdown"));
    let templates = toolset.list_resource_templates().await.expect("listed");
    assert_eq!(templates[0].uri, "orders://{id}");

    let runbook = toolset.read_resource("docs://runbook").await.expect("read");
    assert_eq!(
        runbook.texts().collect::<Vec<_>>(),
        ["Restart db-1 only in its window."]
    );
    let logo = toolset.read_resource("docs://logo").await.expect("read");
    assert_eq!(
        logo,
        Contents::blob([0u8, 159, 146, 150]).with_mime_type("image/png")
    );
    let order = toolset.read_resource("orders://42").await.expect("read");
    assert_eq!(order.texts().collect::<Vec<_>>(), ["order 42 is open"]);

    let prompts = toolset.list_prompts().await.expect("listed");
    assert_eq!(prompts[0].name, "summarize");
    assert_eq!(prompts[0].arguments, [("topic".to_owned(), true)]);
    let messages = toolset
        .get_prompt("summarize", [("topic", "the outage")])
        .await
        .expect("got");
    assert_eq!(
        messages,
        [
            Message::user("Summarize the outage."),
            Message::user_image(Image::png(vec![1, 2, 3])),
            Message::user_resource(Resource::text(
                "docs://runbook",
                "text/markdown",
                "the runbook"
            )),
            Message::assistant("Here is the summary."),
        ]
    );

    toolset
        .subscribe("docs://runbook")
        .await
        .expect("subscribed");
    toolset
        .unsubscribe("docs://runbook")
        .await
        .expect("unsubscribed");
    toolset.close().await;
    http.shutdown().await.expect("shut down");
}

/// M7: what the server does not serve is its protocol error, with its code, for the
/// application; a bad argument too.
#[tokio::test]
async fn m7_a_toolset_keeps_the_servers_refusals() {
    let (toolset, http) = connected().await;
    for refused in [
        toolset.read_resource("docs://missing").await.map(drop),
        toolset
            .read_resource("orders://not-a-number")
            .await
            .map(drop),
        toolset.get_prompt("missing", [("a", "b")]).await.map(drop),
        toolset
            .get_prompt("summarize", [("wrong", "b")])
            .await
            .map(drop),
        toolset.subscribe("docs://missing").await,
    ] {
        match refused {
            Err(RemoteCatalogError::Protocol { code, .. }) => assert_eq!(code, -32602),
            other => panic!("expected the server's -32602, got {other:?}"),
        }
    }
    toolset.close().await;
    http.shutdown().await.expect("shut down");
}

/// M7: a remote resource as an agent's context: its text goes into the run's instructions.
#[tokio::test]
async fn m7_an_agent_is_given_a_remote_resource_as_context() {
    let (toolset, http) = connected().await;
    let runbook = toolset.read_resource("docs://runbook").await.expect("read");
    let model = ScriptedModel::new([ScriptedTurn::reply("Noted.")]);
    let agent = Agent::builder(model.clone())
        .instructions(format!(
            "You help on call. The runbook:\n{}",
            runbook.texts().collect::<Vec<_>>().join("\n")
        ))
        .build()
        .expect("built");
    agent
        .run(&Context::new(), "May I restart db-1?")
        .await
        .expect("ran");
    let sent = model.requests();
    let instructions = sent[0].instructions.as_deref().unwrap_or_default();
    assert!(
        instructions.contains("Restart db-1 only in its window."),
        "{instructions}"
    );
    toolset.close().await;
    http.shutdown().await.expect("shut down");
}
