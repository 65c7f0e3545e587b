//! U4: an agent and an MCP server build on one validated tool set: the same tools given to
//! either are refused for the same reasons, found in one place, with only each transport's own
//! checks added.

#![cfg(feature = "mcp")]

use tool_runtime::mcp::McpServer;
use tool_runtime::{
    Agent, BoxError, BuildError, BuildProblem, Context, DeclarationError, Schema, ScriptedModel,
    Tool,
};

/// A word.
#[derive(Schema)]
struct Word {
    /// The word.
    word: String,
}

fn echo(name: &str) -> Tool {
    Tool::builder(name, "Repeats a word.")
        .handler(|_ctx: Context, args: Word| async move { Ok::<_, BoxError>(args.word) })
        .build()
}

/// The problems, as text that names each one's kind and tool (sites differ per build).
fn described(error: &BuildError) -> Vec<String> {
    error
        .problems()
        .iter()
        .map(|problem| match problem {
            BuildProblem::Tool(DeclarationError::DuplicateName { name, .. }) => {
                format!("duplicate {name}")
            }
            BuildProblem::EmptyStateKey => "empty state key".to_owned(),
            other => format!("other: {other}"),
        })
        .collect()
}

// U4, N3, H3/H10: a name given twice and an empty state key are found by the one check both
// builders use, in the same order.
#[test]
fn u4_an_agent_and_a_server_refuse_the_same_set_for_the_same_reasons() {
    let tools = || [echo("echo"), echo("other"), echo("echo")];
    let agent = Agent::builder(ScriptedModel::new([]))
        .tools(tools())
        .state_key(Vec::<u8>::new())
        .build()
        .expect_err("refused");
    let server = McpServer::builder()
        .tools(tools())
        .state_key(Vec::<u8>::new())
        .build()
        .expect_err("refused");
    let expected = ["duplicate echo", "empty state key"];
    assert_eq!(described(&agent), expected);
    assert_eq!(described(&server), expected);
}

// U4: a sound set builds on both sides, each holding every tool in declaration order.
#[test]
fn u4_a_sound_set_builds_on_both_sides_in_declaration_order() {
    let tools = || [echo("b-tool"), echo("a-tool")];
    let agent = Agent::builder(ScriptedModel::new([]))
        .tools(tools())
        .state_key(vec![7; 32])
        .build()
        .expect("builds");
    let server = McpServer::builder()
        .tools(tools())
        .state_key(vec![7; 32])
        .build()
        .expect("builds");
    let names = |tools: &[Tool]| {
        tools
            .iter()
            .map(|t| t.name().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(agent.tools()), ["b-tool", "a-tool"]);
    assert_eq!(names(server.tools()), ["b-tool", "a-tool"]);
}
