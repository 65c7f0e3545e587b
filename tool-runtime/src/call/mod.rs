//! One way into a call (U1): [`enter`] is the function every call of a tool goes through,
//! whatever brought it (an MCP request over stdio or streamable HTTP, stateful or not, a task,
//! a 2026-07-28 input round), and an agent's run, whose durable step wraps it.
//!
//! A transport adapts its wire to one [`CallRequest`] (the tool, its call's context with the
//! principal in it, the argument bytes, the limits and hooks, whether the call is approved
//! already, and the protocol facts in [`Facts`]) and one [`Seam`] (how it asks for approval,
//! and whether a question of the handler ends the call), and adapts the one [`Entered`] back.
//! What every call must keep is written here once, or below in `Tool::invoke_with` and
//! `Hooks::invoke`: scopes (Z3, in `scopes`), availability (A4, A5), validation (S2, R5),
//! hooks (K1), redaction (E2, E3), approval (H1, H6), cancellation (P2).

// Without the `mcp` feature only the agent enters a call: the transports' variants and
// seams go unused.
#![cfg_attr(not(feature = "mcp"), allow(dead_code))]

use std::fmt;
use std::future::Future;

use tool_core::{CancellationToken, Context, Hooks, Limits, Outcome, OutcomeKind, Tool};

pub(crate) mod scopes;

/// One call of a tool, as a transport hands it to [`enter`].
pub(crate) struct CallRequest<'a> {
    /// The tool called (a name nothing holds is answered `unavailable` before this, A5).
    pub(crate) tool: &'a Tool,
    /// The call's own context (`Context::for_call`): the principal and what the transport
    /// authenticated (C1), its cancellation, its elicitor and progress.
    pub(crate) ctx: &'a Context,
    /// The arguments, as the bytes the pipeline parses.
    pub(crate) args: &'a [u8],
    /// The hooks around the handler (K1).
    pub(crate) hooks: &'a Hooks,
    /// The limits the arguments are checked against (R5).
    pub(crate) limits: &'a Limits,
    /// Whether the call was approved before it came (H6: its predicate is not asked again).
    pub(crate) approved: bool,
    /// Cancels the call's context when it fires (the request's cancellation, or its
    /// task's): the handler is still awaited (P2).
    pub(crate) cancelled: Option<&'a CancellationToken>,
    /// What the transport knows of the call.
    pub(crate) facts: Facts<'a>,
}

/// What a transport knows of a call besides its tool and arguments.
#[derive(Clone, Copy)]
pub(crate) struct Facts<'a> {
    /// Where the call came from.
    pub(crate) via: Via,
    /// The protocol version the client speaks, when one is known (MCP).
    pub(crate) protocol: Option<&'a (dyn fmt::Display + Sync)>,
    /// Whether the call runs as a task (M5).
    pub(crate) task: bool,
    /// Whether the call continues 2026-07-28 input rounds (M3).
    pub(crate) round: bool,
}

/// Where a call came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    /// A run of an agent.
    Agent,
    /// MCP over stdio or another byte stream.
    Stdio,
    /// MCP over streamable HTTP (`stateless`: without sessions).
    Http {
        /// Whether the server keeps no sessions.
        stateless: bool,
    },
}

/// How a transport takes part in a call: the approval question, and a question of the
/// handler that ends the call with an answer the transport carries (2026-07-28 rounds).
pub(crate) trait Seam: Sync {
    /// What a call ends with when it ends before its outcome (an `input_required` answer).
    type Held: Send;

    /// Asks for approval of a call whose outcome is `awaiting` (kind `awaiting_approval`).
    fn approve(&self, awaiting: &Outcome) -> impl Future<Output = Approval<Self::Held>> + Send;

    /// Whether a question of the handler can end the call ([`Seam::asked`] resolves then).
    fn interrupts(&self) -> bool {
        false
    }

    /// Resolves when the handler asked a question that must end the call.
    fn asked(&self) -> impl Future<Output = ()> + Send {
        std::future::pending()
    }

    /// What the call ends with after a question ended it (`approved`: whether it ran
    /// approved; `args`: the arguments it ran with, an approval's edits when it had some,
    /// B3): the question, or an outcome when it cannot be carried.
    fn held(&self, approved: bool, args: &[u8]) -> Entered<Self::Held>;
}

/// The answer to an approval question.
pub(crate) enum Approval<H> {
    /// Approved: the call runs, its predicate not asked again.
    Approved,
    /// Approved with these arguments in place of the call's (B3): the call runs with them,
    /// validated again (S2), its predicate not asked again.
    ApprovedWith(Vec<u8>),
    /// Not approved, or not asked: the call never runs, and ends with this outcome.
    Refused(Outcome),
    /// The question goes back in the answer (a 2026-07-28 `input_required`).
    Held(H),
    /// Nobody is asked here: the call ends awaiting approval (an agent's run pauses on it).
    Pause,
}

/// How a call entered with [`enter`] ended.
pub(crate) enum Entered<H> {
    /// Its outcome.
    Outcome(Outcome),
    /// What a question ended it with.
    Held(H),
}

/// A [`Seam`] that asks nobody: a call that awaits approval ends awaiting it, and no
/// question ends a call early (an agent's run, which pauses for decisions).
pub(crate) struct Pausing;

impl Seam for Pausing {
    type Held = std::convert::Infallible;

    fn approve(&self, _awaiting: &Outcome) -> impl Future<Output = Approval<Self::Held>> + Send {
        std::future::ready(Approval::Pause)
    }

    fn held(&self, _approved: bool, _args: &[u8]) -> Entered<Self::Held> {
        Entered::Outcome(Outcome::failure(tool_core::Error::new(
            tool_core::ErrorKind::Handler,
            "no question ends a call here",
        )))
    }
}

/// The one way into a call: runs `request` through the pipeline (availability, validation,
/// hooks, redaction), asks `seam` for approval when the call awaits it and runs it approved,
/// and ends it early when a question of its handler must go back in the answer.
pub(crate) async fn enter<S: Seam>(request: &CallRequest<'_>, seam: &S) -> Entered<S::Held> {
    if let Some(refused) = admit(request) {
        return Entered::Outcome(refused);
    }
    // A call nothing watches from outside (an agent's) runs as it is; one whose request can be
    // cancelled, or whose handler's question can end it, runs watched. The watched call is
    // boxed, as is the approval below: an agent's call future then holds the call only, and
    // a turn moves less (run-loop cost a call 6,968 -> 6,443 instructions with the plain path
    // unboxed beside it, `benches/RESULTS.md` F4), at one allocation of an MCP request's.
    let awaiting = {
        // In a block of its own: the outcome, borrowed to ask its kind, is not kept in the
        // call's future across the approval's await below.
        let outcome = if request.cancelled.is_none() && !seam.interrupts() {
            invoke(request, request.approved).await
        } else {
            match Box::pin(watched(request, seam, request.approved)).await {
                Entered::Outcome(outcome) => outcome,
                held @ Entered::Held(_) => return held,
            }
        };
        if outcome.kind() != OutcomeKind::AwaitingApproval {
            return Entered::Outcome(outcome);
        }
        outcome
    };
    // The rare path is boxed: a call's future then holds one run of the call, not two.
    Box::pin(approve_then_run(request, seam, awaiting)).await
}

/// What happens before a call runs, none of it held across the call's awaits (a call's future
/// then holds the call only): the trace of its entry, and Z3's scope check, whose refusal is
/// the call's outcome.
fn admit(request: &CallRequest<'_>) -> Option<Outcome> {
    let Facts {
        via,
        protocol,
        task,
        round,
    } = request.facts;
    let protocol = protocol.map(tracing::field::display);
    tracing::trace!(
        tool = request.tool.name(),
        ?via,
        protocol,
        task,
        round,
        "a call enters"
    );
    // Z3: a token that lacks a scope the tool needs runs nothing. Over HTTP the server has
    // answered `403` before this; any other way in ends here, as for a hidden tool (A5).
    let missing = scopes::missing(request.tool, request.ctx);
    if missing.is_empty() {
        return None;
    }
    tracing::debug!(
        tool = request.tool.name(),
        ?missing,
        "a call was refused: its token lacks a scope the tool needs"
    );
    Some(Outcome::unavailable())
}

/// Asks `seam` about a call whose outcome is `awaiting` approval, and runs it approved.
async fn approve_then_run<S: Seam>(
    request: &CallRequest<'_>,
    seam: &S,
    awaiting: Outcome,
) -> Entered<S::Held> {
    // H6: whoever the transport asks decides; an unapproved call never runs.
    match seam.approve(&awaiting).await {
        Approval::Approved => watched(request, seam, true).await,
        Approval::ApprovedWith(arguments) => {
            let edited = CallRequest {
                args: &arguments,
                ..*request
            };
            watched(&edited, seam, true).await
        }
        Approval::Refused(outcome) => Entered::Outcome(outcome),
        Approval::Held(held) => Entered::Held(held),
        Approval::Pause => Entered::Outcome(awaiting),
    }
}

/// The call through the hooks and the tool's pipeline (K1; without hooks, a branch);
/// `approved`: without asking for approval again.
fn invoke<'r>(request: &'r CallRequest<'_>, approved: bool) -> impl Future<Output = Outcome> + 'r {
    let CallRequest {
        tool,
        ctx,
        args,
        hooks,
        limits,
        ..
    } = *request;
    hooks.call(tool, ctx, args, limits, approved)
}

/// Runs the call watched: when `request.cancelled` fires, or a question of its handler must
/// end it, its context is cancelled and its end awaited (cancellation kills nothing, P2); a
/// question is then what it ends with.
async fn watched<S: Seam>(request: &CallRequest<'_>, seam: &S, approved: bool) -> Entered<S::Held> {
    let call = invoke(request, approved);
    tokio::pin!(call);
    let cancelled = async {
        match request.cancelled {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let asked = async {
        if seam.interrupts() {
            seam.asked().await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        biased;
        outcome = &mut call => Entered::Outcome(outcome),
        () = asked => {
            request.ctx.cancellation().cancel();
            let _ = call.await;
            seam.held(approved, request.args)
        }
        () = cancelled => {
            let (tool, via) = (request.tool.name(), request.facts.via);
            tracing::debug!(tool, ?via, "a call was cancelled");
            request.ctx.cancellation().cancel();
            // Nobody expects an answer; the outcome still goes to the application (E3).
            Entered::Outcome(call.await)
        }
    }
}

#[cfg(test)]
mod tests;
