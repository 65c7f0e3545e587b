//! A completer: what suggests values for one argument of a resource template or a prompt
//! (M7), held by the item and asked by `completion/complete`.

use std::future::Future;
use std::sync::Arc;

use tool_core::policy::BoxFuture;
use tool_core::{BoxError, Context};

/// What a completer is, erased: the context and what the client typed, to suggestions.
type SuggestFn =
    dyn Fn(Context, String) -> BoxFuture<'static, Result<Vec<String>, BoxError>> + Send + Sync;

/// Suggests values for one argument: the context, and what the client typed so far.
#[derive(Clone)]
pub(crate) struct Completer(Arc<SuggestFn>);

impl Completer {
    pub(crate) fn new<F, Fut, E>(f: F) -> Self
    where
        F: Fn(Context, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        // Called when the box is first polled, so that a panic in the call itself (not only
        // in its future) is contained where `completion/complete` polls it (E4).
        let f = Arc::new(f);
        Self(Arc::new(move |ctx, typed| {
            let f = Arc::clone(&f);
            Box::pin(async move { f(ctx, typed).await.map_err(Into::into) })
        }))
    }

    /// Its suggestions for what the client typed, in `ctx`.
    pub(crate) fn suggest(
        &self,
        ctx: Context,
        typed: String,
    ) -> BoxFuture<'static, Result<Vec<String>, BoxError>> {
        (self.0)(ctx, typed)
    }
}

/// The completers of one item's arguments, by argument name.
#[derive(Clone, Default)]
pub(crate) struct Completers(Vec<(String, Completer)>);

impl Completers {
    pub(crate) fn push(&mut self, argument: String, completer: Completer) {
        self.0.retain(|(name, _)| *name != argument);
        self.0.push((argument, completer));
    }

    pub(crate) fn get(&self, argument: &str) -> Option<&Completer> {
        self.0
            .iter()
            .find(|(name, _)| name == argument)
            .map(|(_, completer)| completer)
    }
}
