//! Approval over MCP (H6): a call that awaits approval asks the client's user by elicitation,
//! as the protocol the client speaks allows: an `elicitation/create` request during the call
//! (protocols up to 2025-11-25), or an `input_required` result that the client answers by
//! calling again with the user's response (2026-07-28 on). A client that declared no
//! elicitation capability is not asked: the call is answered with [`NO_ELICITATION`].
//!
//! A server without sessions ([`HttpOptions::stateless`](super::HttpOptions::stateless)) cannot
//! wait for an `elicitation/create` answer: the client posts it as a request of its own, which
//! no session ties to the waiting call (rmcp refuses a JSON-RPC response without a session, and
//! behind a load balancer it may reach another replica). There a client on a protocol before
//! 2026-07-28 is not asked, and the call is answered with [`NO_ELICITATION_STATELESS`] at once
//! instead of waiting for an answer that cannot arrive. The `input_required` round trip needs
//! no session: the retry carries the question's state and the user's answer, so any replica
//! can take it.

use std::collections::BTreeMap;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::RequestContext;
use sha2::{Digest, Sha256};
use tool_core::preview::preview;
use tool_core::{Outcome, Tool};

/// What a client that cannot ask its user is answered for a call that needs approval (H6).
pub const NO_ELICITATION: &str = "the call needs approval, and this client cannot ask its user \
                                  for it (it did not declare the elicitation capability), so \
                                  it did not run";

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

/// Asks the client's user whether the call `request` of `tool`, which `pending` says awaits
/// approval, may run. `sessions`: whether an answer to a request sent during the call can
/// reach it (false for a stateless HTTP server).
pub(super) async fn ask(
    tool: &Tool,
    pending: &Outcome,
    request: &CallToolRequestParams,
    args: &[u8],
    cx: &RequestContext<RoleServer>,
    sessions: bool,
) -> Asked {
    let state = request_state(tool.name(), args);
    // A retry that carries the user's answer to the question asked for this very call.
    if request.request_state.as_deref() == Some(state.as_str())
        && let Some(answer) = request
            .input_responses
            .as_ref()
            .and_then(|responses| responses.get(APPROVAL_INPUT))
    {
        return match serde_json::from_value::<ElicitResult>(answer.clone()) {
            Ok(result) => verdict(&result),
            Err(e) => {
                tracing::warn!(error = %e, "an MCP client's answer to an approval is unreadable");
                Asked::NotApproved
            }
        };
    }
    let modern = cx
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
    if !modern && !sessions {
        // The answer to an `elicitation/create` would come as a request of its own, which
        // nothing here can route to this call: say so now rather than wait forever.
        return Asked::Stateless;
    }
    let can_ask = cx
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
    if !can_ask {
        return Asked::Unsupported;
    }
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question(tool, pending),
        requested_schema: ElicitationSchema::new(BTreeMap::new()),
    };
    if modern {
        let requests = BTreeMap::from([(
            APPROVAL_INPUT.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(params)),
        )]);
        return Asked::InputRequired(InputRequiredResult::new(Some(requests), Some(state)));
    }
    tokio::select! {
        answer = cx.peer.create_elicitation(params) => match answer {
            Ok(result) => verdict(&result),
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

fn verdict(result: &ElicitResult) -> Asked {
    match result.action {
        ElicitationAction::Accept => Asked::Approved,
        _ => Asked::NotApproved,
    }
}

/// The most of a call's arguments the user is shown, in characters.
const QUESTION_ARGUMENT_CHARS: usize = 800;

/// What the user is asked: the tool, its validated arguments (shortened), and why.
fn question(tool: &Tool, pending: &Outcome) -> String {
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

/// The request state of an approval question: names the tool and the arguments, so that an
/// answer counts only for the call it was asked about.
fn request_state(tool: &str, args: &[u8]) -> String {
    let digest = Sha256::new()
        .chain_update(tool.as_bytes())
        .chain_update([0])
        .chain_update(args)
        .finalize();
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("approval:{hex}")
}
