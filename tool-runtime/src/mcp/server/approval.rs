//! Approval over MCP (H6): a call that awaits approval asks the client's user by elicitation,
//! as the protocol the client speaks allows: an `elicitation/create` request during the call
//! (protocols up to 2025-11-25), or an `input_required` result that the client answers by
//! calling again with the user's response (2026-07-28 on); in a task of the Tasks extension,
//! a question that waits in the task, answered by `tasks/update` within the approval expiry
//! (never in a task every caller without credentials shares:
//! [`NO_APPROVAL_ANONYMOUS_TASK`]). A client that declared no elicitation capability is not
//! asked: the call is answered with [`NO_ELICITATION`].
//!
//! A server without sessions ([`HttpOptions::stateless`](super::HttpOptions::stateless)) cannot
//! wait for an `elicitation/create` answer: the client posts it as a request of its own, which
//! no session ties to the waiting call (rmcp refuses a JSON-RPC response without a session, and
//! behind a load balancer it may reach another replica). There a client on a protocol before
//! 2026-07-28 is not asked, and the call is answered with [`NO_ELICITATION_STATELESS`] at once
//! instead of waiting for an answer that cannot arrive. The `input_required` round trip needs
//! no session: the retry carries the question's state and the user's answer, so any replica
//! can take it.
//!
//! That state is sealed with the server's key (H10, `request_state`): bound to the tool, the
//! arguments and the question, and given an expiry. A retry is approved only when its state
//! verifies for the call it comes with, has not expired and was not answered before in this
//! process, the client declared elicitation and the user's answer is "accept"; anything else
//! is `the call was not approved`, and nothing runs. A client cannot make up an answer to a
//! question it was never asked.

use std::collections::BTreeMap;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::RequestContext;
use tool_core::elicit::{ElicitAnswer, ElicitError, Elicitor};
use tool_core::preview::preview;
use tool_core::{Outcome, Tool};

use super::approval_edits;
use super::request_state::{Binding, RequestStates};

/// What a client that cannot ask its user is answered for a call that needs approval (H6).
pub const NO_ELICITATION: &str = "the call needs approval, and this client cannot ask its user \
                                  for it (it did not declare the elicitation capability), so \
                                  it did not run";

/// What a call that needs approval is answered when it runs as a task of the Tasks extension
/// that every caller without credentials shares (H6, M9): any of them could answer its
/// question in the task, so it is not asked.
pub const NO_APPROVAL_ANONYMOUS_TASK: &str = "the call needs approval, and it runs as a task \
                                             that every caller without credentials shares, \
                                             whom any of them could answer, so it did not run \
                                             (call with an Authorization header)";

/// What a client on a protocol before 2026-07-28 is answered, by a server without sessions,
/// for a call that needs approval (H6): its user's answer could not reach the waiting call.
pub const NO_ELICITATION_STATELESS: &str = "the call needs approval, and this server cannot ask \
                                            the client's user for it: it serves without \
                                            sessions, and before protocol 2026-07-28 an answer \
                                            cannot reach the waiting call, so it did not run \
                                            (use protocol 2026-07-28 or later, or a server with \
                                            sessions)";

/// The key of our elicitation in an `input_required` result, and of its answer in the retry.
const APPROVAL_INPUT: &str = "tool-runtime/approval";

/// What the client's user said.
pub(super) enum Asked {
    /// Yes: the call runs.
    Approved,
    /// Yes, with the arguments the user edited (B3): the call runs with these, validated again.
    ApprovedWith(Vec<u8>),
    /// No (declined or cancelled, or no usable answer): `the call was not approved`.
    NotApproved,
    /// The client cannot be asked.
    Unsupported,
    /// The client could be asked only by a request whose answer this server, which keeps no
    /// sessions, could not take.
    Stateless,
    /// The client must ask its user and call again (protocol 2026-07-28 on).
    InputRequired(InputRequiredResult),
    /// The client cancelled the call while its user was asked.
    Cancelled,
}

/// One approval question: the call, and how the server can ask.
pub(super) struct Question<'a> {
    /// The tool called.
    pub(super) tool: &'a Tool,
    /// The call's request, which a retry brings its answer in.
    pub(super) request: &'a CallToolRequestParams,
    /// The call's arguments, as the pipeline parsed them.
    pub(super) args: &'a [u8],
    /// The request as rmcp's service read it; without it (a call the HTTP layer answered
    /// directly) the client declared nothing and is sent nothing.
    pub(super) cx: Option<&'a RequestContext<RoleServer>>,
    /// Whether an answer to a request sent during the call can reach it (false for a
    /// stateless HTTP server).
    pub(super) sessions: bool,
    /// Seals the question's `requestState` and checks the one a retry brings back (H10).
    pub(super) states: &'a RequestStates,
    /// Whether the user may edit the call's arguments in the answer (B3).
    pub(super) edits: bool,
}

/// Asks the client's user whether the call of `question`, which `pending` says awaits
/// approval, may run, or takes the user's answer when the request is the client's retry with
/// it.
pub(super) async fn ask(question: Question<'_>, pending: &Outcome) -> Asked {
    let Question {
        tool,
        request,
        args,
        cx,
        sessions,
        states,
        edits,
    } = question;
    let form = if edits {
        approval_edits::form(tool, pending)
    } else {
        ElicitationSchema::new(BTreeMap::new())
    };
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question_text(tool, pending),
        requested_schema: form,
    };
    let can_ask = cx
        .and_then(RequestContext::client_capabilities)
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
    // The question as sent: what its state is bound to, with the tool and the arguments.
    let Ok(asked) = serde_json::to_vec(&params) else {
        tracing::error!(
            tool = tool.name(),
            "an approval question cannot be serialized"
        );
        return Asked::NotApproved;
    };
    let binding = Binding {
        tool: tool.name(),
        args,
        question: &asked,
    };
    if is_retry(request) {
        return match retry(tool, request, &binding, can_ask, states) {
            Ok(answer) => verdict(&answer, pending, edits),
            Err(refused) => refused,
        };
    }
    let modern = cx
        .and_then(RequestContext::protocol_version)
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
    if !modern && !sessions {
        // The answer to an `elicitation/create` would come as a request of its own, which
        // nothing here can route to this call: say so now rather than wait forever.
        return Asked::Stateless;
    }
    // Without rmcp's request context the client declared nothing: `can_ask` is false.
    let (true, Some(cx)) = (can_ask, cx) else {
        return Asked::Unsupported;
    };
    if modern {
        return in_answer(params, &binding, states);
    }
    tokio::select! {
        answer = cx.peer.create_elicitation(params) => match answer {
            Ok(result) => verdict(&result, pending, edits),
            Err(e) => {
                tracing::warn!(
                    tool = tool.name(),
                    error = %e,
                    "asking an MCP client's user for approval failed; the call does not run"
                );
                Asked::NotApproved
            }
        },
        () = cx.ct.cancelled() => Asked::Cancelled,
    }
}

/// The question `params` as an `input_required` answer (2026-07-28), its state sealed for
/// `binding` (H10); a question that cannot be sealed is not asked, and the call does not run.
fn in_answer(params: ElicitRequestParams, binding: &Binding<'_>, states: &RequestStates) -> Asked {
    let state = match states.seal(binding) {
        Ok(state) => state,
        Err(refusal) => {
            tracing::error!(
                tool = binding.tool,
                reason = %refusal,
                "an approval question could not be sealed; the call does not run"
            );
            return Asked::NotApproved;
        }
    };
    let requests = BTreeMap::from([(
        APPROVAL_INPUT.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    )]);
    Asked::InputRequired(InputRequiredResult::new(Some(requests), Some(state)))
}

/// Whether `request` says it answers a question: it brings a `requestState` back, or an
/// answer to our question. Such a call is never asked again: it is approved by a valid
/// answer, or not approved.
fn is_retry(request: &CallToolRequestParams) -> bool {
    request.request_state.is_some()
        || request
            .input_responses
            .as_ref()
            .is_some_and(|responses| responses.contains_key(APPROVAL_INPUT))
}

/// The user's answer a retry brings (H10), taken only when the client can ask its user and the
/// state it brings back was sealed by this server for this tool, these arguments and this
/// question, has not expired and was not answered before. Anything else is `the call was not
/// approved`, and the reason is logged; the answer's verdict is [`verdict`]'s.
fn retry(
    tool: &Tool,
    request: &CallToolRequestParams,
    binding: &Binding<'_>,
    can_ask: bool,
    states: &RequestStates,
) -> Result<ElicitResult, Asked> {
    let refuse = |reason: &dyn std::fmt::Display| {
        tracing::warn!(
            tool = tool.name(),
            reason = %reason,
            "an MCP client's answer to an approval question is refused; the call does not run"
        );
        Err(Asked::NotApproved)
    };
    let answer = request
        .input_responses
        .as_ref()
        .and_then(|responses| responses.get(APPROVAL_INPUT));
    let (Some(state), Some(answer)) = (request.request_state.as_deref(), answer) else {
        return refuse(&"the retry lacks the question's state or the user's answer");
    };
    if !can_ask {
        return refuse(&"the client declared no elicitation, so it was asked nothing");
    }
    if let Err(refusal) = states.redeem(state, binding) {
        return refuse(&refusal);
    }
    match serde_json::from_value::<ElicitResult>(answer.clone()) {
        Ok(result) => Ok(result),
        Err(e) => refuse(&format_args!("the user's answer is unreadable: {e}")),
    }
}

/// Asks the client's user whether a call that runs as a task of the Tasks extension may run
/// (H6, M9): the question waits in the task, unnamed (`question-N`), and `tasks/update`
/// answers it; an accepted answer is taken as any approval's is (B3: its edits checked). A
/// task cancelled while it waits, or not answered within `expiry` (the server's approval
/// expiry, as a sealed approval's), is not approved.
pub(super) async fn ask_in_task(
    asks: &dyn Elicitor,
    (tool, pending): (&Tool, &Outcome),
    edits: bool,
    expiry: std::time::Duration,
) -> Asked {
    let form = if edits {
        approval_edits::form(tool, pending)
    } else {
        ElicitationSchema::new(BTreeMap::new())
    };
    let Ok(schema) = serde_json::to_value(&form) else {
        return Asked::NotApproved;
    };
    let text = question_text(tool, pending);
    let question = asks.elicit(&text, &schema);
    let Ok(answered) = tokio::time::timeout(expiry, question).await else {
        tracing::info!(
            tool = tool.name(),
            "an approval asked in a task was not answered in time; the call does not run"
        );
        return Asked::NotApproved;
    };
    let answer = match answered {
        Ok(ElicitAnswer::Accept(content)) => {
            ElicitResult::new(ElicitationAction::Accept).with_content(content)
        }
        Ok(_) => return Asked::NotApproved,
        Err(ElicitError::Unsupported) => return Asked::Unsupported,
        Err(error) => {
            tracing::warn!(tool = tool.name(), error = %error, "an approval could not be asked in its task");
            return Asked::NotApproved;
        }
    };
    verdict(&answer, pending, edits)
}

/// What the user's answer `result` says of the call `pending`: approved on "accept", with the
/// arguments it edits when the question offered edits (B3); an edit the question did not
/// offer refuses the approval.
fn verdict(result: &ElicitResult, pending: &Outcome, edits: bool) -> Asked {
    if result.action != ElicitationAction::Accept {
        return Asked::NotApproved;
    }
    if !edits {
        return Asked::Approved;
    }
    match approval_edits::edited(pending, result.content.as_ref()) {
        Ok(None) => Asked::Approved,
        Ok(Some(arguments)) => Asked::ApprovedWith(arguments),
        Err(refused) => {
            tracing::warn!(
                reason = %refused,
                "an MCP client's edits to a call's arguments are refused; the call does not run"
            );
            Asked::NotApproved
        }
    }
}

/// The most of a call's arguments the user is shown, in characters.
const QUESTION_ARGUMENT_CHARS: usize = 800;

/// What the user is asked: the tool, its validated arguments (shortened), and why.
fn question_text(tool: &Tool, pending: &Outcome) -> String {
    let arguments = pending
        .validated_arguments()
        .map(ToString::to_string)
        .unwrap_or_default();
    let mut text = format!(
        "Allow `{}` to run with {}?",
        tool.name(),
        preview(&arguments, QUESTION_ARGUMENT_CHARS)
    );
    if let Some(reason) = pending.approval_reason() {
        text.push_str(&format!("\n{reason}"));
    }
    text
}
