//! A prompt's or a resource's handler asking its client (M7, M3) on protocol 2026-07-28, where
//! a server asks in its answer: the handler's context asks through the same sealed rounds a
//! tool's handler asks through (`rounds`), so a prompt or a resource asks with
//! `ctx.elicit::<T>()` (or `elicit_named`, `sample`, `roots`) exactly as a tool does. A
//! question no round answered ends the get or the read with `input_required` (its
//! `requestState` sealed with the server's key and bound to the prompt's name and arguments,
//! or to the resource's URI, H10); the client asks again with its answers, and the handler
//! runs again from its start, each earlier question answered at once.
//!
//! Before 2026-07-28 the handler asks during the request, as a tool's handler asks during its
//! call (`elicitation/create` and the others on a session, where the client declared it can
//! answer); without a session, or for a client that declared nothing it can answer, the
//! handler's context names nobody to ask (`ElicitError::Unsupported`, the handler decides).

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{InputRequiredResult, InputResponses, ProtocolVersion};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use tool_core::{CancellationToken, Context};

use crate::mcp::server::request_state::RequestStates;
use crate::mcp::server::rounds::{self, RoundElicitor, Rounds};
use crate::mcp::server::{ask, questions};

/// What a request's rounds are bound to: `method` and what it names (a prompt's name, a
/// resource's URI) in place of a tool's name, so that no tool's state can pass for a
/// prompt's or a resource's, nor one prompt's for another's.
pub(crate) struct Bound<'r> {
    /// `prompts/get` or `resources/read`.
    pub(crate) method: &'static str,
    /// The prompt's name, or the resource's URI.
    pub(crate) name: &'r str,
    /// The request's arguments, as bytes (none for a read).
    pub(crate) args: Vec<u8>,
    /// The state the request brings back, if any.
    pub(crate) state: Option<&'r str>,
    /// The answers the request brings.
    pub(crate) responses: Option<&'r InputResponses>,
}

/// The rounds of one `prompts/get` or `resources/read` whose handler may ask.
pub(crate) struct Asking<'a> {
    round: Arc<RoundElicitor>,
    states: &'a RequestStates,
    bound: String,
    args: Vec<u8>,
    /// Cancelled when the handler asked: the get ends with its question.
    asked: CancellationToken,
}

/// How a get that may ask ended.
pub(crate) enum Got<T> {
    /// The handler answered.
    Done(T),
    /// The handler asked: the client answers and gets the prompt again.
    Asked(InputRequiredResult),
}

/// The rounds a request continues on 2026-07-28 (none before, or those its `requestState`
/// carries, with the answers its `inputResponses` bring); `None` before 2026-07-28 or for a
/// client that can answer nothing.
///
/// # Errors
///
/// A `requestState` that is not one this server gave for this prompt and these arguments
/// (this resource), or that expired or was used: `-32602`, and the handler does not run.
pub(crate) fn asking<'a>(
    states: &'a RequestStates,
    request: Bound<'_>,
    cx: &RequestContext<RoleServer>,
) -> Result<Option<Asking<'a>>, ErrorData> {
    let modern = cx
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
    let declared = questions::declared(cx);
    if !modern || !declared.any() {
        return Ok(None);
    }
    let (args, bound) = (request.args, format!("{}:{}", request.method, request.name));
    let rounds = match request.state {
        None => Rounds::default(),
        Some(state) => {
            let responses = request.responses;
            rounds::open(states, state, &bound, &args, responses).map_err(|refusal| {
                tracing::warn!(
                    method = request.method,
                    reason = %refusal,
                    "an MCP client's answer to a handler's question is refused"
                );
                ErrorData::invalid_params(
                    "the requestState is not one this server gave for this request, or it \
                     expired or was used",
                    None,
                )
            })?
        }
    };
    let asked = CancellationToken::new();
    Ok(Some(Asking {
        round: RoundElicitor::new(rounds, asked.clone(), declared),
        states,
        bound,
        args,
        asked,
    }))
}

impl Asking<'_> {
    /// `ctx` asking its questions in these rounds, cancelled when a question ends the request
    /// (P2: the handler is told, as a tool's is).
    pub(crate) fn context(&self, ctx: Context) -> Context {
        ask::questions_in(ctx.with_cancellation(self.asked.clone()), &self.round)
    }

    /// Whether a question no round answered ended the request already: nothing more of it
    /// should run.
    pub(crate) fn was_asked(&self) -> bool {
        self.asked.is_cancelled()
    }

    /// `getting` (the handler's answer), unless the handler asks a question no round
    /// answered first: then its context is cancelled, its end awaited (P2: cancellation kills
    /// nothing), and the answer is the sealed `input_required`.
    ///
    /// # Errors
    ///
    /// The question could not be sealed (the server's states are full): an internal error.
    pub(crate) async fn answer<T>(
        &self,
        getting: impl Future<Output = T>,
    ) -> Result<Got<T>, ErrorData> {
        tokio::pin!(getting);
        tokio::select! {
            biased;
            done = &mut getting => Ok(Got::Done(done)),
            () = self.round.question() => {
                self.asked.cancel();
                let _ = getting.await;
                let sealed = self.round.input_required(self.states, &self.bound, &self.args, false, None);
                sealed.map(Got::Asked).map_err(|refusal| {
                    tracing::error!(reason = %refusal, "a handler's question could not be sealed");
                    ErrorData::internal_error("the handler's question could not be asked", None)
                })
            }
        }
    }
}
