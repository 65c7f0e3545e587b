//! Hooks around each `resources/read` and `prompts/get` that reaches its handler (M7, as K1
//! is for tools): the public [`CatalogHook`] (whose documentation says where a hook runs and
//! what each decision does), what it is given, and the list a server runs.

use std::any::type_name;
use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};
use tool_core::Context;
use tool_core::error::ErrorKind;
use tool_core::hook::Before;
use tool_core::panic::CatchUnwind;
use tool_core::policy::BoxFuture;

use super::problem::Failure;
use crate::mcp::server::prompts::McpPrompt;
use crate::mcp::server::resources::McpResource;

/// Code that runs around every `resources/read` and `prompts/get` of an
/// [`McpServer`](crate::mcp::McpServer) that reaches its handler: [`CatalogHook::before`]
/// the handler, with the validated arguments, and [`CatalogHook::after`] it, with how it
/// ended. Added with [`McpServerBuilder::catalog_hook`](crate::mcp::McpServerBuilder::catalog_hook).
///
/// Both are async and do nothing by default: implement the one you need, with `async fn`.
/// A hook is shared by every request, which may run concurrently: keep its state behind
/// `&self` (an `Arc<H>` is a hook when `H` is).
///
/// # Where a hook runs
///
/// `before` runs after the item was found, after its availability was checked again (A4) and
/// after its arguments (a template's URI variables, a prompt's arguments) were validated (S2):
/// a request for a hidden item, or with invalid arguments, never reaches a hook, and a hook
/// sees only arguments that passed. Then the handler runs, and `after` sees how it ended
/// ([`CatalogEnd`]).
///
/// - Hooks run one at a time, in the order they were added, `before` and `after` alike. The
///   first `before` that does not allow the request decides: the later ones, the handler and
///   every `after` do not run.
/// - [`Before::Deny`]: the client reads the hook's message, as the text of a
///   [`ToolError`](tool_core::ToolError) a handler returned (a `-32603` error: a read or a
///   get has no result that could carry a refusal).
/// - [`Before::End`]: a server cannot end its client's run, so the request is answered as a
///   failed handler is (`the resource failed`, `the prompt failed`), whatever the cause
///   holds, and the cause is logged (E3).
/// - A hook that panics, in `before` or in `after`, fails the request as a panicking handler
///   does (E4): `the resource failed`, the panic logged.
/// - A hook asks its client through the request's context as a handler does
///   (`ctx.elicit`, …). On 2026-07-28 a question of `before` or of the handler that no
///   round answered ends the request (`input_required`); the hooks and the handler run again
///   when the client brings its answer, as every check does, and a handler's question is
///   seen by `after` as [`CatalogEnd::Asked`]. `after` runs once the answer is decided: its
///   context asks nobody in the request's rounds (`Unsupported`).
///
/// ```
/// use tool_runtime::hook::Before;
/// use tool_runtime::mcp::{CatalogEnd, CatalogHook, CatalogRequest};
///
/// /// Who makes a request, as the application put it in the context.
/// struct Principal { staff: bool }
///
/// /// Internal documents go to staff only; every read is audited.
/// struct Guard;
///
/// impl CatalogHook for Guard {
///     async fn before(&self, request: &CatalogRequest<'_>) -> Before {
///         let staff = request.context().get::<Principal>().is_some_and(|p| p.staff);
///         if request.uri().is_some_and(|uri| uri.starts_with("internal://")) && !staff {
///             return Before::deny("internal documents are for staff");
///         }
///         Before::Allow
///     }
///
///     async fn after(&self, request: &CatalogRequest<'_>, ended: &CatalogEnd<'_>) {
///         let served = matches!(ended, CatalogEnd::Served);
///         tracing::info!(item = request.name(), served, "audited");
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a hook of resources and prompts",
    label = "implement `tool_runtime::mcp::CatalogHook` for it"
)]
pub trait CatalogHook: Send + Sync + 'static {
    /// Decides whether the request goes on, after the availability re-check and validation,
    /// before the handler: [`Before::Allow`] (the default), [`Before::Deny`] with the
    /// client's text, or [`Before::End`] to give it up (`the resource failed`, the cause
    /// logged).
    fn before(&self, request: &CatalogRequest<'_>) -> impl Future<Output = Before> + Send {
        let _ = request;
        std::future::ready(Before::Allow)
    }

    /// Sees how the request ended once its handler did. It changes nothing the client reads,
    /// unless it panics: what a failure tells the client is the handler's to say (a
    /// [`ToolError`](tool_core::ToolError)).
    fn after(
        &self,
        request: &CatalogRequest<'_>,
        ended: &CatalogEnd<'_>,
    ) -> impl Future<Output = ()> + Send {
        let _ = (request, ended);
        std::future::ready(())
    }
}

impl<H: CatalogHook> CatalogHook for Arc<H> {
    fn before(&self, request: &CatalogRequest<'_>) -> impl Future<Output = Before> + Send {
        H::before(self, request)
    }

    fn after(
        &self,
        request: &CatalogRequest<'_>,
        ended: &CatalogEnd<'_>,
    ) -> impl Future<Output = ()> + Send {
        H::after(self, request, ended)
    }
}

/// What a request is for: a resource read or a prompt got.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum CatalogItem<'a> {
    /// `resources/read` of `uri`, served by this resource or template.
    Resource {
        /// The resource or template that serves the URI.
        resource: &'a McpResource,
        /// The URI read.
        uri: &'a str,
    },
    /// `prompts/get` of this prompt.
    Prompt(&'a McpPrompt),
}

/// One `resources/read` or `prompts/get`, as a [`CatalogHook`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct CatalogRequest<'a> {
    item: CatalogItem<'a>,
    arguments: &'a Map<String, Value>,
    context: &'a Context,
}

impl<'a> CatalogRequest<'a> {
    /// A request for `item` on `context` with these validated `arguments`: what the server
    /// gives hooks; made by hand to test a hook.
    pub fn new(
        item: CatalogItem<'a>,
        arguments: &'a Map<String, Value>,
        context: &'a Context,
    ) -> Self {
        Self {
            item,
            arguments,
            context,
        }
    }

    /// What is read or got.
    pub fn item(&self) -> CatalogItem<'a> {
        self.item
    }

    /// `resources/read` or `prompts/get`.
    pub fn method(&self) -> &'static str {
        match self.item {
            CatalogItem::Resource { .. } => "resources/read",
            CatalogItem::Prompt(_) => "prompts/get",
        }
    }

    /// The resource's name or the prompt's.
    pub fn name(&self) -> &'a str {
        match self.item {
            CatalogItem::Resource { resource, .. } => resource.name(),
            CatalogItem::Prompt(prompt) => prompt.name(),
        }
    }

    /// The URI read; `None` for a prompt.
    pub fn uri(&self) -> Option<&'a str> {
        match self.item {
            CatalogItem::Resource { uri, .. } => Some(uri),
            CatalogItem::Prompt(_) => None,
        }
    }

    /// A template's URI variables (strings) or a prompt's arguments, as the client sent them,
    /// once they passed validation (S2): not read by the type's schema, no default filled in;
    /// empty for a plain resource.
    pub fn arguments(&self) -> &'a Map<String, Value> {
        self.arguments
    }

    /// The request's context: what the application put in (the principal), its cancellation.
    pub fn context(&self) -> &'a Context {
        self.context
    }
}

/// How a request that reached its handler ended, as [`CatalogHook::after`] sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum CatalogEnd<'a> {
    /// The handler answered: the client gets its contents or messages.
    Served,
    /// The handler failed (or panicked): the unredacted error, for the application (E3); the
    /// client reads `the resource failed` (`the prompt failed`) or a `ToolError`'s text.
    Failed(&'a (dyn StdError + Send + Sync + 'static)),
    /// The handler asked its client a question that ends the request (2026-07-28): it runs
    /// again, hooks and all, when the client brings the answer.
    Asked,
}

/// The hooks of one server's resources and prompts, in the order added.
#[derive(Clone, Default)]
pub(crate) struct CatalogHooks {
    entries: Vec<Entry>,
}

/// One hook, with its type's name for the application's logs.
#[derive(Clone)]
struct Entry {
    hook: Arc<dyn ErasedHook>,
    name: &'static str,
}

impl fmt::Debug for CatalogHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.entries.iter().map(|entry| entry.name);
        f.debug_list().entries(names).finish()
    }
}

impl CatalogHooks {
    /// Adds `hook` after those already there.
    pub(crate) fn push<H: CatalogHook>(&mut self, hook: H) {
        self.entries.push(Entry {
            hook: Arc::new(hook),
            name: type_name::<H>(),
        });
    }

    /// Each hook's `before`, in order: `None` when every one allowed the request, else the
    /// failure that answers it.
    pub(crate) async fn before(&self, request: &CatalogRequest<'_>) -> Option<Failure> {
        for (position, entry) in self.entries.iter().enumerate() {
            match CatchUnwind::boxed(entry.hook.before(request)).await {
                Ok(Before::Allow) => {}
                Ok(Before::Deny(message)) => {
                    tracing::debug!(
                        hook = entry.name,
                        position = position + 1,
                        item = %tool_core::violation::preview_str(request.name()),
                        "a hook refused an MCP {}; the client reads its message",
                        request.method()
                    );
                    return Some(Failure::Denied(message));
                }
                Ok(Before::End(cause)) => {
                    let what = format!(
                        "hook {} (`{}`) gave up the request before the handler ran",
                        position + 1,
                        entry.name
                    );
                    let ended = tool_core::Error::with_source(ErrorKind::Hook, what, cause);
                    return Some(Failure::Ended(ended.into()));
                }
                Ok(decision) => {
                    // A decision this server does not know: nothing runs on it.
                    let what = format!(
                        "hook {} (`{}`) decided {decision:?}, which a read or a get cannot take",
                        position + 1,
                        entry.name
                    );
                    return Some(Failure::Ended(what.into()));
                }
                Err(panic) => return Some(panicked(entry, position, "before", &panic)),
            }
        }
        None
    }

    /// Each hook's `after`, in order, each seeing how the request `ended`: `None`, or the
    /// failure that answers the request once a hook panicked (E4), the handler's own failure
    /// logged first.
    pub(crate) async fn after(
        &self,
        request: &CatalogRequest<'_>,
        ended: &CatalogEnd<'_>,
    ) -> Option<Failure> {
        let mut failure = None;
        for (position, entry) in self.entries.iter().enumerate() {
            let Err(panic) = CatchUnwind::boxed(entry.hook.after(request, ended)).await else {
                continue;
            };
            if let (CatalogEnd::Failed(error), None) = (ended, &failure) {
                tracing::warn!(
                    error = %error,
                    item = %tool_core::violation::preview_str(request.name()),
                    "an MCP {} failed, then a hook panicked after it",
                    request.method()
                );
            }
            failure.get_or_insert_with(|| panicked(entry, position, "after", &panic));
        }
        failure
    }

    /// Whether there are none: a request then pays one branch.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn panicked(entry: &Entry, position: usize, phase: &str, panic: &str) -> Failure {
    Failure::Panicked(
        format!(
            "hook {} (`{}`) panicked {phase} the handler ran: {panic}",
            position + 1,
            entry.name
        )
        .into(),
    )
}

/// A hook with its futures boxed, so that hooks of different types share one list.
trait ErasedHook: Send + Sync + 'static {
    fn before<'a>(&'a self, request: &'a CatalogRequest<'a>) -> BoxFuture<'a, Before>;

    fn after<'a>(
        &'a self,
        request: &'a CatalogRequest<'a>,
        ended: &'a CatalogEnd<'a>,
    ) -> BoxFuture<'a, ()>;
}

impl<H: CatalogHook> ErasedHook for H {
    fn before<'a>(&'a self, request: &'a CatalogRequest<'a>) -> BoxFuture<'a, Before> {
        // Called when first polled, so that a panic in the call itself is contained (E4).
        Box::pin(async move { CatalogHook::before(self, request).await })
    }

    fn after<'a>(
        &'a self,
        request: &'a CatalogRequest<'a>,
        ended: &'a CatalogEnd<'a>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move { CatalogHook::after(self, request, ended).await })
    }
}
