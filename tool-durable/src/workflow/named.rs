//! An [`AgentRun`] served under a workflow name of its own (W10), so that one deployment
//! serves several agents.
//!
//! restate-sdk 0.13 names a workflow at compile time (`#[restate_sdk::workflow]` on one type)
//! and has no public way to rename one at bind time. So an agent given another name is bound
//! here by hand, as the macro's own expansion binds `AgentRun`: the discovery the macro made
//! for `AgentRun`, renamed, and a dispatcher that calls the same handlers. It uses the SDK's
//! code-generation surface (`service::macro_support`, `ContextInternal`), which is why the SDK
//! is pinned exactly: an upgrade checks this module against the macro's expansion.

use std::sync::Arc;

use restate_sdk::discovery::ServiceName;
use restate_sdk::endpoint::ContextInternal;
use restate_sdk::service::{Discoverable, Service, ServiceDefinition, macro_support};

use super::AgentRun;
use crate::journal::CALL_HANDLER;

/// Why a workflow name cannot serve an agent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WorkflowNameError {
    /// The name is not one Restate takes: a letter (or `_` and a letter or digit), then
    /// letters, digits, `.`, `_` and `-`.
    #[error(
        "`{0}` is not a workflow name: start with a letter, then letters, digits, `.`, `_`, `-`"
    )]
    Invalid(String),
    /// Two agents of one deployment were given the same name.
    #[error("two agents of the deployment are named `{0}`: each needs a workflow name of its own")]
    Duplicate(String),
}

/// `name` when Restate takes it as a service name and the client can put it in a path.
pub(super) fn checked(name: &str) -> Result<String, WorkflowNameError> {
    let path_safe = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if path_safe && ServiceName::try_from(name).is_ok() {
        Ok(name.to_owned())
    } else {
        Err(WorkflowNameError::Invalid(name.to_owned()))
    }
}

/// The service definition of `run` under its own name: `AgentRun`'s discovery renamed, and a
/// dispatcher to the same handlers.
pub(crate) fn definition(run: AgentRun) -> ServiceDefinition {
    let mut discovery = <AgentRun as Discoverable>::discover();
    // The name was checked when it was given (`AgentRun::named`).
    if let Ok(name) = ServiceName::try_from(run.name.as_str()) {
        discovery.name = name;
    }
    macro_support::service_definition(Named(Arc::new(run)), discovery)
}

/// Dispatches an invocation of a renamed `AgentRun` to its handler, as the macro's expansion
/// does.
struct Named(Arc<AgentRun>);

impl Service for Named {
    type Future = macro_support::ServiceBoxFuture;

    fn handle(&self, ctx: ContextInternal) -> Self::Future {
        let run = Arc::clone(&self.0);
        Box::pin(async move {
            match ctx.handler_name() {
                "run" => {
                    let (input, metadata) = ctx.input().await;
                    let result = run.run((&ctx, metadata).into(), input).await;
                    ctx.handle_handler_result(result);
                }
                CALL_HANDLER => {
                    let (input, metadata) = ctx.input().await;
                    let result = run.call_step((&ctx, metadata).into(), input).await;
                    ctx.handle_handler_result(result);
                }
                "status" => {
                    let (_, metadata) = ctx.input::<()>().await;
                    let result = run.status((&ctx, metadata).into()).await;
                    ctx.handle_handler_result(result);
                }
                _ => {
                    return Err(restate_sdk::endpoint::Error::unknown_handler(
                        ctx.service_name(),
                        ctx.handler_name(),
                    ));
                }
            }
            ctx.end();
            Ok(())
        })
    }
}
