//! Agents that compose (B1, B2): an [`Agent`] as a tool of another ([`AgentTool`], made by
//! [`Agent::as_tool`] and [`Agent::as_typed_tool`], held by
//! [`AgentBuilder::agent_tool`](super::AgentBuilder::agent_tool)).
//!
//! - `nest`: what a run shares with the sub-agent runs its calls start: the limits they may
//!   spend, what they used, the runs that paused and the paused runs to resume.
//! - `steps`: in a durable run, the sub-agent's steps taken in its parent's journal (B2, W1).
//! - `error`: [`SubAgentError`], how a sub-agent run that gave no answer fails its call.

mod error;
pub(crate) mod nest;
pub(crate) mod steps;

use std::fmt;

use serde::Serialize;
use tool_core::{Context, ErrorKind, IntoTool, Schema, Tool};

use super::handle::Agent;
use super::request::{Answer, RunRequest};
use super::typed::Typed;
use super::{RunOptions, RunOutput, pause::ResumeOptions};
pub use error::SubAgentError;
use nest::{Nesting, beyond};
use steps::ParentSteps;

/// The request a sub-agent tool made by [`Agent::as_tool`] takes: what the model asks of the
/// sub-agent, in words. It reaches the sub-agent as its user message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, crate::Schema)]
#[schema(crate = crate)]
pub struct AgentRequest {
    /// What the sub-agent is asked to do, with everything it needs to know.
    pub request: String,
}

/// An agent made a tool of another (B1): a call runs the agent to its answer, which is the
/// call's result. Give it to the parent with
/// [`AgentBuilder::agent_tool`](super::AgentBuilder::agent_tool); serve it over MCP like any
/// tool with [`AgentTool::into_tool`].
///
/// Under a parent run, a sub-agent run
/// - has its own model, tools, instructions and limits, and is also bounded by what its
///   parent may still spend (L2): its requests, tokens and tool calls count as the parent's;
/// - is cancelled with its call (P rules), and its spans nest under the call's
///   `execute_tool` span (`invoke_agent` within it, K2);
/// - fails its call as any handler does: the parent's model reads `the tool failed` (E2),
///   and the application keeps the reason ([`SubAgentError`], E3);
/// - pauses the parent's run when it pauses (B2, held by the parent through
///   [`AgentBuilder::agent_tool`](super::AgentBuilder::agent_tool)): the parent's paused run
///   holds it, and decisions reach its calls ([`crate::Decisions::nested`]).
#[derive(Clone)]
pub struct AgentTool {
    agent: Agent,
    tool: Tool,
}

impl AgentTool {
    /// The sub-agent.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The tool the parent's model calls.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// The tool, to serve over MCP or to hold elsewhere. A parent that holds it as a plain
    /// tool ([`AgentBuilder::tool`](super::AgentBuilder::tool)) does not count the
    /// sub-agent's usage as its own, and a pause inside it fails the call.
    pub fn into_tool(self) -> Tool {
        self.tool
    }
}

impl IntoTool for AgentTool {
    fn into_tool(self) -> Tool {
        self.tool
    }
}

impl fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentTool")
            .field("name", &self.tool.name())
            .field("agent", &self.agent)
            .finish()
    }
}

impl Agent {
    /// This agent as a tool named `name` (B1): its input an [`AgentRequest`] (what the
    /// model asks, in words), its result the agent's final answer as text.
    pub fn as_tool(&self, name: impl Into<String>, description: impl Into<String>) -> AgentTool {
        let agent = self.clone();
        let tool = Tool::builder(name, description)
            .handler(move |ctx: Context, input: AgentRequest| {
                let agent = agent.clone();
                async move {
                    let output: RunOutput = run_child(&agent, &ctx, input.request).await?;
                    Ok::<_, SubAgentError>(output.text)
                }
            })
            .build();
        AgentTool {
            agent: self.clone(),
            tool,
        }
    }

    /// This agent as a tool named `name` with a typed request and a typed answer (B1, O1,
    /// O2): the request `I` reaches the agent as its JSON text, and the agent's answer is
    /// asked as an `O` (an object root, [`RunRequest::typed`]); the result is that answer,
    /// and `O`'s schema is the tool's output schema.
    pub fn as_typed_tool<I, O>(
        &self,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> AgentTool
    where
        I: Schema + Serialize + Send + 'static,
        O: Schema + Serialize + Send + 'static,
    {
        let agent = self.clone();
        let tool = Tool::builder(name, description)
            .structured_handler(move |ctx: Context, input: I| {
                let agent = agent.clone();
                async move {
                    let text = serde_json::to_string(&input)
                        .map_err(|e| SubAgentError::new(ErrorKind::Declaration, e.to_string()))?;
                    let answer: Typed<O> = run_child(&agent, &ctx, text).await?;
                    Ok::<_, SubAgentError>(answer.value)
                }
            })
            .build();
        AgentTool {
            agent: self.clone(),
            tool,
        }
    }
}

/// What a sub-agent run answers: text, or a typed answer.
trait SubAnswer: Answer {
    /// `request`, asking for this answer.
    fn ask(request: RunRequest<'static, RunOutput>) -> RunRequest<'static, Self>;
}

impl SubAnswer for RunOutput {
    fn ask(request: RunRequest<'static, RunOutput>) -> RunRequest<'static, Self> {
        request
    }
}

impl<T: Schema + Send + 'static> SubAnswer for Typed<T> {
    fn ask(request: RunRequest<'static, RunOutput>) -> RunRequest<'static, Self> {
        request.typed::<T>()
    }
}

/// Runs `agent` for the call whose context is `ctx`: a new run of `message`, or the paused
/// run its parent gave this call to resume (B2), within what the parent may still spend (B1).
async fn run_child<O: SubAnswer>(
    agent: &Agent,
    ctx: &Context,
    message: String,
) -> Result<O, SubAgentError> {
    let parent = ctx.get::<Nesting>().and_then(|nesting| nesting.own.clone());
    let call_id = ctx.call().map(|call| call.id.to_string());
    let resume = match (&parent, &call_id) {
        (Some(parent), Some(id)) => parent.take_resume(id),
        _ => None,
    };
    let remaining = parent.as_ref().map(|parent| parent.remaining());
    let request = match resume {
        Some((paused, decisions)) => {
            let mut options = ResumeOptions::new();
            if let Some(remaining) = &remaining {
                options = options.limits(beyond(remaining, &paused.used()));
            }
            O::ask(RunRequest::resume(paused, decisions)).resume_options(options)
        }
        None => {
            let mut options: RunOptions = agent.options().clone();
            if let Some(remaining) = &remaining {
                let limits = options.usage_limits().tightened(remaining);
                options = options.limits(limits);
            }
            O::ask(RunRequest::new(message)).options(options)
        }
    };
    // The sub-agent's calls see no run of their parent's: only its usage goes up.
    let child_ctx = ctx
        .clone()
        .with(Nesting {
            own: None,
            parent: parent.clone(),
        })
        .with(ParentSteps(None));
    // In a durable parent, the sub-agent's steps are the parent's (B2, W1).
    let in_parent = ctx.get::<ParentSteps>().and_then(|steps| steps.0.clone());
    let request = match &in_parent {
        Some(journal) => request.journal(journal),
        None => request,
    };
    match agent.execute(&child_ctx, request).await {
        Ok(answer) => Ok(answer),
        Err(error) if error.kind() == ErrorKind::Paused => {
            let paused = error.into_paused().map_err(|e| SubAgentError::of(&e))?;
            match (&parent, &call_id) {
                (Some(parent), Some(id)) => {
                    parent.paused(id, paused);
                    Err(SubAgentError::paused())
                }
                _ => Err(SubAgentError::new(
                    ErrorKind::Paused,
                    "the sub-agent's run paused, and its caller cannot pause with it",
                )),
            }
        }
        Err(error) => Err(SubAgentError::of(&error)),
    }
}
