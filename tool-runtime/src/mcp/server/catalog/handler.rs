//! A resource's reader or a prompt's handler as an item holds it (M7): a function that
//! validates a request's arguments (S2) and readies the handler, which `run` then runs between
//! the hooks. Apart from both, so that the items depend on nothing that names them.

use std::sync::Arc;

use serde_json::{Map, Value};
use tool_core::policy::BoxFuture;
use tool_core::{BoxError, Context};

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
        Err(Failure::Panicked(
            format!("a validator panicked: {panic}").into(),
        ))
    })
}
