//! M7 (as R1 is for tools): every `#[resource]` and `#[prompt]` of a binary is registered at
//! link time. `registered_resources` lists them by URI and `registered_prompts` by name, each
//! built as its handle builds it; a server given them serves them, and one given the same
//! item again refuses to build, naming the URI or the name twice given.
#![cfg(feature = "mcp")]

use tool_runtime::agent::BuildProblem;
use tool_runtime::mcp::{
    CatalogProblem, Contents, IntoResource, McpServer, Message, prompt, registered_prompts,
    registered_resources, resource,
};
use tool_runtime::{Context, Schema, ToolError};

/// The maintenance policy.
#[resource(uri = "docs://policy", mime_type = "text/markdown")]
async fn policy(_ctx: Context) -> Result<Contents, ToolError> {
    Ok(Contents::text("# Policy"))
}

/// The parameters of a history.
#[derive(Schema)]
struct History {
    /// The service identifier.
    service: String,
}

/// A service's history.
#[resource(uri = "maint://{service}/history", handle = HistoryResource)]
fn history(_ctx: &Context, p: History) -> Result<String, ToolError> {
    Ok(format!("history of {}", p.service))
}

/// What to plan.
#[derive(Schema)]
struct Plan {
    /// The service identifier.
    service: String,
}

/// Plan a service's maintenance.
#[prompt(name = "plan-maintenance")]
async fn plan(args: Plan) -> Result<Vec<Message>, ToolError> {
    Ok(vec![Message::user(format!("Plan {}.", args.service))])
}

#[prompt(name = "greet", description = "Greets.")]
fn greet() -> Result<Vec<Message>, ToolError> {
    Ok(vec![Message::assistant("Hello.")])
}

#[test]
fn m7_every_resource_and_prompt_of_the_binary_is_registered_in_order() {
    let resources = registered_resources();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri()).collect();
    assert_eq!(uris, ["docs://policy", "maint://{service}/history"]);
    assert_eq!(resources[0].name(), Policy::NAME);
    assert!(resources[1].is_template());
    let prompts = registered_prompts();
    let names: Vec<&str> = prompts.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["greet", "plan-maintenance"]);
    assert_eq!(prompts[1].description(), "Plan a service's maintenance.");
}

#[test]
fn m7_a_server_serves_the_registry_and_refuses_an_item_given_twice() {
    let server = McpServer::builder()
        .resources(registered_resources())
        .prompts(registered_prompts())
        .build()
        .expect("the registry builds a server");
    assert_eq!(server.resources().len(), 2);
    assert_eq!(server.prompts().len(), 2);

    let problems = McpServer::builder()
        .resources(registered_resources())
        .resources([Policy.into_resource()])
        .prompts(registered_prompts())
        .prompt(PlanMaintenance)
        .build()
        .expect_err("an item given twice")
        .problems()
        .to_vec();
    assert!(
        problems.iter().any(|p| matches!(p,
            BuildProblem::McpCatalog(CatalogProblem::DuplicateUri { uri }) if uri == "docs://policy")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| matches!(p,
            BuildProblem::McpCatalog(CatalogProblem::DuplicatePrompt { name }) if name == "plan-maintenance")),
        "{problems:?}"
    );
}
