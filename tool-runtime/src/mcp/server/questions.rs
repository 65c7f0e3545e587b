//! What a call's handler can ask its MCP client (M3, M8): questions of its user
//! (elicitation), requests to its model (sampling) and its roots, each only where the client
//! declared it can answer. Before 2026-07-28 they are asked during the call (`elicit`,
//! `sampling`, `roots`); on 2026-07-28 in the call's answer, round by round (`rounds`).

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tool_core::Context;

use super::ask::Declared;
use super::{elicit, roots, sampling};

/// What `cx`'s client declared it answers.
pub(super) fn declared(cx: &RequestContext<RoleServer>) -> Declared {
    Declared {
        elicitation: elicit::can_ask(cx),
        sampling: sampling::can_sample(cx),
        roots: roots::has_roots(cx),
    }
}

/// `call_ctx` asking its questions of `cx`'s client during the call, those the client can
/// answer there (before 2026-07-28, with sessions).
pub(crate) fn during_call(
    call_ctx: Context,
    cx: &RequestContext<RoleServer>,
    sessions: bool,
) -> Context {
    let mut call_ctx = call_ctx;
    if let Some(elicitor) = elicit::for_call(cx, sessions) {
        call_ctx = call_ctx.with_elicitor(elicitor);
    }
    if let Some(sampler) = sampling::for_call(cx, sessions) {
        call_ctx = call_ctx.with_sampler(sampler);
    }
    if let Some(source) = roots::for_call(cx, sessions) {
        call_ctx = call_ctx.with_roots_source(source);
    }
    call_ctx
}
