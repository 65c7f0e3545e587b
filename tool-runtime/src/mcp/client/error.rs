//! The errors of the MCP client: connecting to a server and turning its tools into
//! [`Tool`](tool_core::Tool)s ([`ToolsetError`], [`ToolsetProblem`]), and calling a remote tool
//! ([`RemoteCallError`]).

use std::fmt;

use tool_core::{BoxError, DeclarationError, NameError};

use super::remote_schema::SchemaRejected;

/// Why an [`McpToolset`](super::McpToolset) could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolsetError {
    /// The prefix given with [`McpToolsetBuilder::prefix`](super::McpToolsetBuilder::prefix)
    /// breaks N1 (or leaves no room for a name after it).
    #[error("invalid tool name prefix {prefix:?}: {source}")]
    InvalidPrefix {
        /// The prefix as given.
        prefix: String,
        /// The rule it breaks.
        source: NameError,
    },
    /// The server could not be reached, or the session could not start (a process that
    /// cannot be spawned, a URL that cannot be reached, an HTTP `401`, …).
    #[error("cannot connect to the MCP server {server}: {source}")]
    Connect {
        /// The server: a command or a URL.
        server: String,
        /// What failed.
        source: BoxError,
    },
    /// The server's tool list could not be read.
    #[error("cannot list the tools of the MCP server {server}: {source}")]
    List {
        /// The server: a command or a URL.
        server: String,
        /// What failed.
        source: BoxError,
    },
    /// Some remote tools cannot be used; every problem is listed. Rename
    /// ([`McpToolsetBuilder::rename`](super::McpToolsetBuilder::rename)) or exclude
    /// ([`McpToolsetBuilder::exclude`](super::McpToolsetBuilder::exclude)) them.
    #[error("{}", ProblemList(.0))]
    Tools(Vec<ToolsetProblem>),
}

impl ToolsetError {
    /// Every problem with the remote tools, when the error is [`ToolsetError::Tools`].
    pub fn problems(&self) -> &[ToolsetProblem] {
        match self {
            ToolsetError::Tools(problems) => problems,
            _ => &[],
        }
    }
}

struct ProblemList<'a>(&'a [ToolsetProblem]);

impl fmt::Display for ProblemList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            [one] => write!(f, "a remote MCP tool cannot be used: {one}"),
            all => {
                write!(f, "{} remote MCP tools cannot be used:", all.len())?;
                for problem in all {
                    write!(f, "\n  - {problem}")?;
                }
                Ok(())
            }
        }
    }
}

/// One remote tool that cannot be offered, found when the toolset is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolsetProblem {
    /// Two remote tools map to one local name (N3): rename one of them.
    #[error(
        "the remote tools {first_remote:?} and {second_remote:?} both map to the local name `{local}`"
    )]
    NameCollision {
        /// The local name both map to.
        local: String,
        /// The remote tool listed first.
        first_remote: String,
        /// The remote tool listed second.
        second_remote: String,
    },
    /// Nothing of the remote name can be kept in a valid name (N1): rename it.
    #[error("the remote tool {remote:?} has no valid local name: rename it")]
    UnmappableName {
        /// The remote name.
        remote: String,
    },
    /// A rename gives a name that breaks N1.
    #[error("the local name given to the remote tool {remote:?} is invalid: {source}")]
    InvalidRename {
        /// The remote name.
        remote: String,
        /// The rule the local name breaks.
        source: NameError,
    },
    /// The remote tool's input schema is rejected (too large, too deep, a remote `$ref`, …).
    #[error("the input schema of the remote tool {remote:?} is rejected: {source}")]
    Schema {
        /// The remote name.
        remote: String,
        /// Why it is rejected.
        source: SchemaRejected,
    },
    /// The remote tool cannot be declared (D2).
    #[error("the remote tool {remote:?} cannot be declared: {source}")]
    Declaration {
        /// The remote name.
        remote: String,
        /// The declaration problem.
        source: DeclarationError,
    },
    /// A policy, rename or exclusion names a remote tool the server does not list.
    #[error("{what} names the remote tool {remote:?}, which the server does not list")]
    UnknownTool {
        /// The remote name given.
        remote: String,
        /// What named it: `a policy`, `a rename` or `an exclusion`.
        what: &'static str,
    },
}

/// Why a call of a remote tool failed, for the application (E3): the model is told only
/// `the tool failed`.
///
/// A remote result with `isError: true` is not one of these, unless our own server marked it
/// failed ([`RemoteCallError::Failed`], T2): its text reaches the model as a
/// [`ToolError`](tool_core::ToolError).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteCallError {
    /// The connection failed: the server exited, the HTTP request failed, the session is
    /// closed.
    #[error("the call of the remote tool {tool:?} failed in transport: {source}")]
    Transport {
        /// The remote name.
        tool: String,
        /// What failed.
        source: BoxError,
    },
    /// The server answered the call with a JSON-RPC error.
    #[error("the MCP server answered the call of {tool:?} with error {code}: {message}")]
    Protocol {
        /// The remote name.
        tool: String,
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: String,
    },
    /// The server asked for something this client does not do (client input, a task).
    #[error("the MCP server answered the call of {tool:?} with {what}, which is not supported")]
    Unsupported {
        /// The remote name.
        tool: String,
        /// What it answered.
        what: &'static str,
    },
    /// The server is this project's own and said the tool failed (`isError`, with the
    /// outcome kind `failed` or `fatal` in `_meta`, T2). A remote `fatal` does not end the
    /// local run: a remote server cannot end the agent's run.
    #[error("the remote tool {tool:?} failed (remote outcome {kind}): {text}")]
    Failed {
        /// The remote name.
        tool: String,
        /// The outcome kind the server gave: `failed` or `fatal`.
        kind: &'static str,
        /// The server's text (redacted by the server: `the tool failed`).
        text: String,
    },
    /// The call's context was cancelled; the server was sent `notifications/cancelled`.
    #[error("the call of the remote tool {tool:?} was cancelled")]
    Cancelled {
        /// The remote name.
        tool: String,
    },
    /// The tool declares an output schema and its result's `structuredContent` is missing or
    /// breaks it (O1): the result is not used.
    #[error("the result of the remote tool {tool:?} does not fit its output schema: {reason}")]
    InvalidOutput {
        /// The remote name.
        tool: String,
        /// What is wrong (the violations, or a missing `structuredContent`).
        reason: String,
    },
}
