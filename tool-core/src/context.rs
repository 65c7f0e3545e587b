//! The [`Context`] a run and each of its calls carry.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

pub use tokio_util::sync::CancellationToken;
use tokio_util::sync::WaitForCancellationFuture;

/// What the application gives a run, and what a call's handler and policy see: typed
/// extensions (the principal, services), a cancellation signal, and inside a call its id and
/// tool name.
///
/// Extensions are put in by the application with [`Context::with`] and are never reachable
/// from model input. Cloning is cheap. A context made for a call ([`Context::for_call`]) has a
/// child cancellation token: cancelling the run cancels the call, not the reverse.
#[derive(Clone, Default)]
pub struct Context {
    extensions: Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
    cancel: CancellationToken,
    call: Option<Arc<CallInfo>>,
}

/// The call a context belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallInfo {
    /// The call id the model gave.
    pub id: String,
    /// The tool's name.
    pub tool: String,
}

/// [`Context::require`] found no extension of the type asked for. An application bug:
/// redacted from the model like any handler failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the context holds no `{type_name}`: put it in with `Context::with` before the run")]
pub struct MissingExtension {
    /// The type asked for.
    pub type_name: &'static str,
}

impl Context {
    /// An empty context with a fresh cancellation token.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same context, holding `value` as well (replacing any value of the same type).
    #[must_use]
    pub fn with<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        Arc::make_mut(&mut self.extensions).insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// The extension of type `T`, if the application put one in.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions
            .get(&TypeId::of::<T>())
            .and_then(|v| v.downcast_ref::<T>())
    }

    /// The extension of type `T`.
    ///
    /// # Errors
    ///
    /// Returns [`MissingExtension`] when there is none; with `?` in a handler it becomes a
    /// redacted failure.
    pub fn require<T: Send + Sync + 'static>(&self) -> Result<&T, MissingExtension> {
        self.get::<T>().ok_or(MissingExtension {
            type_name: type_name::<T>(),
        })
    }

    /// The same context, cancelled by `token`.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// The cancellation token of this context.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether this context was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Completes when this context is cancelled.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future loses nothing.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.cancel.cancelled()
    }

    /// A context with the same extensions and a child cancellation token.
    #[must_use]
    pub fn child(&self) -> Self {
        Self {
            extensions: Arc::clone(&self.extensions),
            cancel: self.cancel.child_token(),
            call: self.call.clone(),
        }
    }

    /// The context of one call: the same extensions, a child cancellation token, and the
    /// call's id and tool name. Transports call this; handlers read [`Context::call`].
    #[must_use]
    pub fn for_call(&self, id: impl Into<String>, tool: impl Into<String>) -> Self {
        Self {
            extensions: Arc::clone(&self.extensions),
            cancel: self.cancel.child_token(),
            call: Some(Arc::new(CallInfo {
                id: id.into(),
                tool: tool.into(),
            })),
        }
    }

    /// The call this context belongs to, inside a handler or policy run for a call.
    pub fn call(&self) -> Option<&CallInfo> {
        self.call.as_deref()
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("extensions", &self.extensions.len())
            .field("cancelled", &self.cancel.is_cancelled())
            .field("call", &self.call)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Principal(&'static str);

    #[test]
    fn extensions_are_typed_and_copy_on_write() {
        let base = Context::new().with(Principal("ada"));
        let other = base.clone().with(Principal("bob")).with(7_u32);
        assert_eq!(base.get::<Principal>(), Some(&Principal("ada")));
        assert_eq!(other.get::<Principal>(), Some(&Principal("bob")));
        assert_eq!(base.get::<u32>(), None);
        let missing = base.require::<u32>().unwrap_err();
        assert!(missing.to_string().contains("u32"));
    }

    #[test]
    fn call_contexts_cancel_with_their_parent_only() {
        let run = Context::new();
        let a = run.for_call("c1", "t");
        let b = run.for_call("c2", "t");
        a.cancellation().cancel();
        assert!(a.is_cancelled() && !b.is_cancelled() && !run.is_cancelled());
        run.cancellation().cancel();
        assert!(b.is_cancelled());
        assert_eq!(b.call().map(|c| c.id.as_str()), Some("c2"));
    }
}
