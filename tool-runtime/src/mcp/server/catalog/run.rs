//! A resource's reader or a prompt's handler, run for one request (M7): its arguments
//! validated first (S2), then the hooks' `before` and the handler (a panic contained, E4; on
//! 2026-07-28 a question of either ending the request), then the hooks' `after`: all that
//! `resources/read` and `prompts/get` share once they found the item and checked its
//! availability.

use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::ErrorData;
use rmcp::model::InputRequiredResult;
use serde_json::{Map, Value};
use tool_core::panic::CatchUnwind;
use tool_core::{BoxError, Context};

use super::asking::{Asking, Got};
use super::handler::{Handler, Prepare, prepared};
use super::hooks::{CatalogEnd, CatalogHooks, CatalogItem, CatalogRequest};
use super::problem::Failure;

/// Runs `prepare`'s handler for a request of `item` with `arguments`, between the hooks,
/// asking in `asking`'s rounds when there are any: what the handler answered, the failure that
/// answers the request instead (invalid arguments included), or the question of a hook's
/// `before` or of the handler (2026-07-28), which ends the request.
///
/// The handler and the hooks' `before` ask in the rounds; `after`, once the answer is decided,
/// is given `ctx` itself, which asks nobody there.
///
/// # Errors
///
/// The question could not be sealed (the server's states are full).
pub(crate) async fn run<T>(
    hooks: &CatalogHooks,
    item: CatalogItem<'_>,
    prepare: &Prepare<T>,
    arguments: &Map<String, Value>,
    ctx: Context,
    asking: Option<&Asking<'_>>,
) -> Result<Got<Result<T, Failure>>, ErrorData> {
    let asking_ctx = match asking {
        Some(asking) => asking.context(ctx.clone()),
        None => ctx.clone(),
    };
    let handler = match prepared(prepare, asking_ctx.clone(), arguments) {
        Ok(handler) => handler,
        Err(invalid) => return Ok(Got::Done(Err(invalid))),
    };
    let request = CatalogRequest::new(item, arguments, &asking_ctx);
    // Set once every `before` allowed the request: then its `after`s run, however it ended.
    let allowed = AtomicBool::new(false);
    let before_then_handler = async {
        if let Some(refused) = hooks.before(&request).await {
            return Err(refused);
        }
        if asking.is_some_and(Asking::was_asked) {
            // A hook's question ended the request (its answer is that question), whatever
            // the hook decided on being cancelled: the handler does not run for nothing.
            return Err(Failure::Ended("a hook's question ended the request".into()));
        }
        allowed.store(true, Ordering::Relaxed);
        Ok(contained(handler).await)
    };
    let got = match asking {
        Some(asking) => asking.answer(before_then_handler).await,
        None => Ok(Got::Done(before_then_handler.await)),
    };
    let ended = match got {
        Ok(Got::Done(Err(refused))) => return Ok(Got::Done(Err(refused))),
        Ok(Got::Done(Ok(answer))) => Ended::Answered(answer),
        Ok(Got::Asked(input)) => Ended::Asked(input),
        Err(unsealed) => Ended::Unsealed(unsealed),
    };
    if !hooks.is_empty() && allowed.load(Ordering::Relaxed) {
        let settled = CatalogRequest::new(item, arguments, &ctx);
        let unsealed: BoxError;
        let seen = match &ended {
            Ended::Answered(Ok(_)) => CatalogEnd::Served,
            Ended::Answered(Err(error)) => CatalogEnd::Failed(error.as_ref()),
            Ended::Asked(_) => CatalogEnd::Asked,
            Ended::Unsealed(_) => {
                unsealed = "a question could not be asked".into();
                CatalogEnd::Failed(unsealed.as_ref())
            }
        };
        if let Some(failure) = hooks.after(&settled, &seen).await {
            return Ok(Got::Done(Err(failure)));
        }
    }
    match ended {
        Ended::Answered(answer) => Ok(Got::Done(answer.map_err(Failure::Failed))),
        Ended::Asked(input) => Ok(Got::Asked(input)),
        Ended::Unsealed(error) => Err(error),
    }
}

/// How a request that every `before` allowed ended.
enum Ended<T> {
    /// The handler answered, or failed.
    Answered(Result<T, BoxError>),
    /// A question ended it.
    Asked(InputRequiredResult),
    /// A question could not be sealed.
    Unsealed(ErrorData),
}

/// Runs a handler's future, a panic in it an error (E4).
async fn contained<T>(future: Handler<T>) -> Result<T, BoxError> {
    match CatchUnwind::new(future).await {
        Ok(result) => result,
        Err(panic) => Err(format!("the handler panicked: {panic}").into()),
    }
}
