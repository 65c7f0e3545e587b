//! M7: the maintenance MCP server (`cargo run --example mcp_server`) serves a resource and a
//! prompt beside its tools, offered to the principals its policy allows: an operator reads
//! the maintenance policy and gets the planning prompt, whose arguments are the lookup
//! tool's input type and are validated as the tool validates them; a guest is offered
//! neither. Through `McpToolset`, over a pipe.
#![cfg(feature = "mcp")]

use tool_examples::maintenance::{Role, principal};
use tool_examples::serve::builder;
use tool_runtime::Context;
use tool_runtime::mcp::{McpToolset, RemoteCatalogError};

async fn connect(role: Role) -> McpToolset {
    let server = builder()
        .context(move |_req| async move {
            Ok::<_, std::io::Error>(Context::new().with(principal("ada", role)))
        })
        .build()
        .expect("the maintenance server builds");
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    McpToolset::builder()
        .connect_io(client_read, client_write)
        .await
        .expect("connected")
}

#[tokio::test]
async fn m7_the_maintenance_server_serves_a_resource_and_a_prompt() {
    let operator = connect(Role::Operator).await;
    let resources = operator.list_resources().await.expect("listed");
    assert_eq!(resources[0].uri, "docs://maintenance/policy");
    let policy = operator
        .read_resource("docs://maintenance/policy")
        .await
        .expect("read");
    assert!(policy.texts().any(|t| t.contains("02:00 and 04:00 UTC")));

    let prompts = operator.list_prompts().await.expect("listed");
    assert_eq!(prompts[0].name, "plan-maintenance");
    let messages = operator
        .get_prompt(
            "plan-maintenance",
            [("service_id", "svc-42"), ("days", "3")],
        )
        .await
        .expect("got");
    assert!(
        messages[0]
            .text()
            .is_some_and(|t| t.contains("svc-42 in the next 3 days")),
        "{messages:?}"
    );
    // The tool's own schema holds: `days` is at most 30.
    match operator
        .get_prompt(
            "plan-maintenance",
            [("service_id", "svc-42"), ("days", "90")],
        )
        .await
    {
        Err(RemoteCatalogError::Protocol { code, message }) => {
            assert_eq!(code, -32602);
            assert!(message.contains("/days"), "{message}");
        }
        other => panic!("expected the violations, got {other:?}"),
    }
    operator.close().await;

    let guest = connect(Role::Guest).await;
    assert!(guest.list_resources().await.expect("listed").is_empty());
    assert!(guest.list_prompts().await.expect("listed").is_empty());
    guest.close().await;
}
