//! [`McpSeam`]: how an MCP client takes part in a call entered with [`crate::call::enter`]:
//! its user asked for approval by elicitation (H6), and on 2026-07-28 a handler's question
//! that ends the call with an `input_required` answer (M3).

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, InputRequiredResult};
use rmcp::service::RequestContext;
use tool_core::elicit::Elicitor;
use tool_core::{Outcome, Tool};

use crate::call::{Approval, Entered, Seam};

use super::approval::{
    Asked, NO_APPROVAL_ANONYMOUS_TASK, NO_ELICITATION, NO_ELICITATION_STATELESS, Question, ask,
    ask_in_task,
};
use super::request_state::RequestStates;
use super::rounds::RoundElicitor;

/// One call's MCP side, as the pipeline asks it.
pub(crate) struct McpSeam<'a> {
    pub(crate) tool: &'a Tool,
    pub(crate) request: &'a CallToolRequestParams,
    pub(crate) args: &'a [u8],
    /// The request as rmcp's service read it; `None` for one the HTTP layer answers directly.
    pub(crate) cx: Option<&'a RequestContext<RoleServer>>,
    /// Whether a request sent during the call can be answered (H6).
    pub(crate) sessions: bool,
    pub(crate) states: &'a RequestStates,
    /// Whether the user may edit the call's arguments when approving it (B3).
    pub(crate) edits: bool,
    /// The rounds of questions, on 2026-07-28 (M3).
    pub(crate) round: Option<&'a RoundElicitor>,
    /// Told when the client's user is asked for approval (`true`) and when the answer came.
    pub(crate) asking: &'a (dyn Fn(bool) + Sync),
    /// A task's questions (M9, the Tasks extension), where its approval is asked too.
    pub(crate) task_questions: Option<&'a dyn Elicitor>,
    /// Whether the task is shared by every caller without credentials: any of them could
    /// answer its questions, so no approval is asked in it.
    pub(crate) task_shared: bool,
}

impl Seam for McpSeam<'_> {
    type Held = InputRequiredResult;

    async fn approve(&self, awaiting: &Outcome) -> Approval<InputRequiredResult> {
        if let Some(asks) = self.task_questions {
            if self.task_shared {
                return Approval::Refused(Outcome::denied(NO_APPROVAL_ANONYMOUS_TASK));
            }
            // M9: in a task of the Tasks extension the question waits in the task.
            let expiry = self.states.expiry();
            let asked = ask_in_task(asks, (self.tool, awaiting), self.edits, expiry).await;
            return approval_of(asked);
        }
        (self.asking)(true);
        let question = Question {
            tool: self.tool,
            request: self.request,
            args: self.args,
            cx: self.cx,
            sessions: self.sessions,
            states: self.states,
            edits: self.edits,
        };
        let asked = ask(question, awaiting).await;
        (self.asking)(false);
        approval_of(asked)
    }

    fn interrupts(&self) -> bool {
        self.round.is_some()
    }

    async fn asked(&self) {
        match self.round {
            Some(round) => round.question().await,
            None => std::future::pending().await,
        }
    }

    fn held(&self, approved: bool, args: &[u8]) -> Entered<InputRequiredResult> {
        let Some(round) = self.round else {
            return Entered::Outcome(unsealed());
        };
        // B3: arguments an approval edited stay the call's in every later round, sealed with
        // the rounds; the retry's own arguments bind the state as the client sends them.
        let edited = (approved && args != self.args).then_some(args);
        let (states, tool) = (self.states, self.tool.name());
        match round.input_required(states, tool, self.args, approved, edited) {
            Ok(input) => Entered::Held(input),
            Err(refusal) => {
                tracing::error!(reason = %refusal, "a handler's question could not be sealed");
                Entered::Outcome(unsealed())
            }
        }
    }
}

/// What the pipeline makes of the client's answer to an approval question.
fn approval_of(asked: Asked) -> Approval<InputRequiredResult> {
    match asked {
        Asked::Approved => Approval::Approved,
        Asked::ApprovedWith(arguments) => Approval::ApprovedWith(arguments),
        Asked::NotApproved => Approval::Refused(Outcome::not_approved()),
        Asked::Unsupported => Approval::Refused(Outcome::denied(NO_ELICITATION)),
        Asked::Stateless => Approval::Refused(Outcome::denied(NO_ELICITATION_STATELESS)),
        Asked::Cancelled => Approval::Refused(Outcome::cancelled(tool_core::Error::new(
            tool_core::ErrorKind::Cancelled,
            "the client cancelled the call while its user was asked for approval",
        ))),
        Asked::InputRequired(input) => Approval::Held(input),
    }
}

/// The outcome of a call whose handler's question could not be carried.
fn unsealed() -> Outcome {
    Outcome::failure(tool_core::Error::new(
        tool_core::ErrorKind::Handler,
        "a handler's question could not be sealed",
    ))
}
