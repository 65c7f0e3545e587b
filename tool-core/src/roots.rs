//! Reading the client's roots in the middle of a call (M8): [`Context::roots`](crate::Context::roots),
//! and the [`RootsSource`] a transport or an agent puts in the call's context to bring them.
//!
//! A root is a place the client lets the server work in (a directory, as a `file://` URI).
//! Over MCP they are the answer to a `roots/list` request to the client (before 2026-07-28
//! during the call; on 2026-07-28 in the call's answer, round by round); in an agent run they
//! are the application's. An answer of more than [`MAX_ROOTS`] roots, or with a root whose URI
//! is empty or longer than [`MAX_URI_LEN`], is an error, never unchecked data.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::Context;

/// A boxed future, as a [`RootsSource`] returns.
pub type RootsFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<Root>, RootsError>> + Send + 'a>>;

/// The most roots a handler is given.
pub const MAX_ROOTS: usize = 1024;

/// The longest URI a root may have, in bytes.
pub const MAX_URI_LEN: usize = 4096;

/// A place the client lets the server work in (M8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Its URI (`file:///home/ada/project`).
    pub uri: String,
    /// A name to show for it, when the client gives one.
    pub name: Option<String>,
}

impl Root {
    /// The root at `uri`, unnamed.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: None,
        }
    }

    /// The same root named `name`.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Whether `roots` can be given to a handler: at most [`MAX_ROOTS`] of them, each with a URI of
/// 1 to [`MAX_URI_LEN`] bytes.
///
/// # Errors
///
/// [`RootsError::Invalid`] naming what is wrong.
pub fn check_roots(roots: Vec<Root>) -> Result<Vec<Root>, RootsError> {
    if roots.len() > MAX_ROOTS {
        return Err(RootsError::Invalid(format!(
            "{} roots, more than the {MAX_ROOTS} a handler is given",
            roots.len()
        )));
    }
    if let Some(root) = roots
        .iter()
        .find(|root| root.uri.is_empty() || root.uri.len() > MAX_URI_LEN)
    {
        return Err(RootsError::Invalid(format!(
            "a root's URI is empty or longer than {MAX_URI_LEN} bytes ({} bytes)",
            root.uri.len()
        )));
    }
    Ok(roots)
}

/// Why the client's roots could not be read (M8). A handler that returns it fails as any
/// handler failure does: redacted for the model (E2).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RootsError {
    /// Nobody in this call has roots: the MCP client declared no roots capability, or the agent
    /// was given none.
    #[error("no roots capability: the client declared no roots, or the agent was given none")]
    Unsupported,
    /// The name the handler gave the request cannot name it.
    #[error("the roots request cannot be named `{0}`")]
    Key(String),
    /// The answer is not one the handler can take.
    #[error("the client's roots are not ones a handler can take: {0}")]
    Invalid(String),
    /// The call was cancelled while the roots were asked for.
    #[error("the call was cancelled while the client's roots were asked for")]
    Cancelled,
    /// The transport failed to ask or to bring the answer back.
    #[error("the client's roots could not be read: {0}")]
    Failed(String),
}

/// Brings a call's roots (M8): an MCP server's client, an agent's application. Transports and
/// agents put one in a call's context ([`Context::with_roots_source`]); handlers read them
/// through [`Context::roots`].
pub trait RootsSource: Send + Sync {
    /// The roots, asked under the name `key` when the handler named the request
    /// ([`Context::roots_named`]): over MCP 2026-07-28 the key of its input request.
    fn roots<'a>(&'a self, key: Option<&'a str>) -> RootsFuture<'a>;
}

/// An application's fixed roots.
impl RootsSource for Vec<Root> {
    fn roots<'a>(&'a self, _key: Option<&'a str>) -> RootsFuture<'a> {
        Box::pin(async move { Ok(self.clone()) })
    }
}

impl Context {
    /// The same context, reading its roots from `source` (M8). Transports and agents call this
    /// for a call's context.
    #[must_use]
    pub fn with_roots_source(mut self, source: Arc<dyn RootsSource>) -> Self {
        self.roots = Some(source);
        self
    }

    /// Whether roots can be read in this call ([`Context::roots`]).
    pub fn has_roots(&self) -> bool {
        self.roots.is_some()
    }

    /// The client's roots (M8).
    ///
    /// # Errors
    ///
    /// [`RootsError::Unsupported`] when there is no roots capability here;
    /// [`RootsError::Invalid`] for an answer a handler cannot take; [`RootsError::Cancelled`]
    /// and [`RootsError::Failed`] as the transport reports.
    pub async fn roots(&self) -> Result<Vec<Root>, RootsError> {
        self.roots_as(None).await
    }

    /// Reads the roots as [`Context::roots`] does, naming the request `key` (over MCP
    /// 2026-07-28 the key of its input request; elsewhere not shown).
    ///
    /// # Errors
    ///
    /// As [`Context::roots`]; [`RootsError::Key`] when `key` is not 1 to 64 ASCII letters,
    /// digits, `_`, `-` and `.`, or has the form `question-N`, which unnamed questions get.
    pub async fn roots_named(&self, key: &str) -> Result<Vec<Root>, RootsError> {
        crate::elicit::check_key(key)
            .map_err(|_| RootsError::Key(crate::violation::preview_str(key)))?;
        self.roots_as(Some(key)).await
    }

    async fn roots_as(&self, key: Option<&str>) -> Result<Vec<Root>, RootsError> {
        let Some(source) = self.roots.as_deref() else {
            return Err(RootsError::Unsupported);
        };
        check_roots(source.roots(key).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn m8_roots_without_a_source_are_refused_and_too_many_are_invalid() {
        assert_eq!(Context::new().roots().await, Err(RootsError::Unsupported));
        let many: Vec<Root> = (0..=MAX_ROOTS)
            .map(|i| Root::new(format!("file:///r{i}")))
            .collect();
        let ctx = Context::new().with_roots_source(Arc::new(many));
        assert!(matches!(ctx.roots().await, Err(RootsError::Invalid(_))));
        let one = vec![Root::new("file:///work").with_name("work")];
        let ctx = Context::new().with_roots_source(Arc::new(one.clone()));
        assert_eq!(ctx.roots_named("client_roots").await, Ok(one));
        assert!(matches!(ctx.roots_named("").await, Err(RootsError::Key(_))));
    }
}
