//! A resource's reader or a prompt's handler, run for one request (M7): its arguments
//! validated first (S2), then the hooks' `before`, the handler (a panic contained, E4; on
//! 2026-07-28 its question ending the request), and the hooks' `after`. What `resources/read`
//! and `prompts/get` share once they found the item and checked its availability.

use std::sync::Arc;

use rmcp::ErrorData;
use serde_json::{Map, Value};
use tool_core::panic::CatchUnwind;
use tool_core::policy::BoxFuture;
use tool_core::{BoxError, Context};

use super::asking::{Asking, Got};
use super::hooks::{CatalogEnd, CatalogHooks, CatalogRequest};
use super::problem::Failure;

/// A handler whose arguments were validated, not yet polled.
pub(crate) type Handler<T> = BoxFuture<'static, Result<T, BoxError>>;

/// Validates a request's arguments (a template's URI variables, a prompt's arguments) and
/// readies the handler on the request's context; the violations (or a custom validator's
/// error, S5) when they do not pass.
pub(crate) type Prepare<T> =
    Arc<dyn Fn(Context, &Map<String, Value>) -> Result<Handler<T>, Failure> + Send + Sync>;

/// `prepare` on `ctx` and `arguments`, a panic of a custom validator contained (E4).
pub(crate) fn prepared<T>(
    prepare: &Prepare<T>,
    ctx: Context,
    arguments: &Map<String, Value>,
) -> Result<Handler<T>, Failure> {
    tool_core::panic::catch(|| prepare(ctx, arguments)).unwrap_or_else(|panic| {
        Err(Failure::Failed(
            format!("a validator panicked: {panic}").into(),
        ))
    })
}

/// Runs `handler` for `request` between the hooks, asking in `asking`'s rounds when there are
/// any: what the handler answered, the failure that answers the request instead, or its
/// question (2026-07-28).
///
/// # Errors
///
/// The handler's question could not be sealed (the server's states are full).
pub(crate) async fn run<T>(
    hooks: &CatalogHooks,
    request: &CatalogRequest<'_>,
    handler: Handler<T>,
    asking: Option<&Asking<'_>>,
) -> Result<Got<Result<T, Failure>>, ErrorData> {
    if let Some(refused) = hooks.before(request).await {
        drop(handler);
        return Ok(Got::Done(Err(refused)));
    }
    let running = contained(handler);
    let got = match asking {
        Some(asking) => asking.answer(running).await?,
        None => Got::Done(running.await),
    };
    if !hooks.is_empty() {
        let ended = match &got {
            Got::Done(Ok(_)) => CatalogEnd::Served,
            Got::Done(Err(error)) => CatalogEnd::Failed(error.as_ref()),
            Got::Asked(_) => CatalogEnd::Asked,
        };
        if let Some(failure) = hooks.after(request, &ended).await {
            return Ok(Got::Done(Err(failure)));
        }
    }
    Ok(match got {
        Got::Done(answer) => Got::Done(answer.map_err(Failure::Failed)),
        Got::Asked(input) => Got::Asked(input),
    })
}

/// Runs a handler's future, a panic in it an error (E4).
async fn contained<T>(future: Handler<T>) -> Result<T, BoxError> {
    match CatchUnwind::new(future).await {
        Ok(result) => result,
        Err(panic) => Err(format!("the handler panicked: {panic}").into()),
    }
}
