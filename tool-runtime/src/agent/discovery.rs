//! Discovery (A2, A3): which of the agent's tools a run advertises, asked of their policies
//! once, in declaration order, before any model I/O.

use tool_core::error::find_in_chain;
use tool_core::{Context, ErrorKind, Panicked};

use super::error::RunError;
use super::shared::Shared;

/// Discovery (A2, A3): every policy once, in declaration order, before any model I/O.
/// Returns, for each tool, whether it is advertised.
///
/// # Cancel safety
///
/// Returns kind `Cancelled` as soon as `ctx` is cancelled.
pub(crate) async fn discover(shared: &Shared, ctx: &Context) -> Result<Vec<bool>, RunError> {
    if ctx.is_cancelled() {
        return Err(cancelled());
    }
    // A1: a tool without a policy is available; there is nothing to ask it. Only the tools
    // with a policy are asked, in declaration order.
    let mut visible = vec![true; shared.set.tools.len()];
    for &at in &shared.with_policy {
        let tool = &shared.set.tools[at];
        let checked = tokio::select! {
            biased;
            () = ctx.cancelled() => return Err(cancelled()),
            checked = tool.available(ctx) => checked,
        };
        match checked {
            Ok(shown) => {
                tracing::debug!(tool = tool.name(), available = shown, "discovery");
                visible[at] = shown;
            }
            Err(cause) => {
                let panicked = find_in_chain::<Panicked>(&*cause).is_some();
                let (kind, what) = if panicked {
                    (ErrorKind::Panic, "panicked")
                } else {
                    (ErrorKind::Availability, "failed")
                };
                return Err(RunError::with_source(
                    kind,
                    format!(
                        "the availability policy of `{}` {what} at discovery; no model request was made",
                        tool.name()
                    ),
                    cause,
                )
                .with_tool(tool.name()));
            }
        }
    }
    Ok(visible)
}

/// The error of a run cancelled by its caller (P4).
pub(crate) fn cancelled() -> RunError {
    RunError::new(ErrorKind::Cancelled, "the run was cancelled by its caller")
}
