//! [`Hooks`]: the hooks of one transport, in registration order, and how the pipeline runs
//! them around a handler (K1).

use std::any::type_name;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use crate::context::Context;
use crate::error::{Error, ErrorKind};
use crate::panic::CatchUnwind;
use crate::policy::BoxFuture;
use crate::tool::{Limits, Outcome, OutcomeKind, Tool};
use crate::violation::render_violations;

use super::{After, Before, Hook, HookCall, Transport};

/// The hooks a transport runs around each call (K1), in registration order, and the
/// transport they run on.
///
/// Cheap to clone. Without hooks it holds no allocation, and a call through
/// [`Hooks::invoke`] is a call through [`Tool::invoke_with`] behind one branch: no hook, no
/// cost.
#[derive(Clone)]
pub struct Hooks {
    /// `None` when there are no hooks: cloning copies nothing, and calls take the plain path.
    chain: Option<Arc<Vec<Entry>>>,
    transport: Transport,
}

/// One registered hook, with its type's name for the application's logs.
#[derive(Clone)]
struct Entry {
    hook: Arc<dyn ErasedHook>,
    name: &'static str,
}

impl Hooks {
    /// No hooks, for calls that come over `transport`.
    pub fn new(transport: Transport) -> Self {
        Self {
            chain: None,
            transport,
        }
    }

    /// Adds `hook` after those already there: it runs after them (K1).
    pub fn push(&mut self, hook: impl Hook) {
        let entry = Entry {
            name: type_name_of(&hook),
            hook: Arc::new(hook),
        };
        match &mut self.chain {
            Some(chain) => Arc::make_mut(chain).push(entry),
            None => self.chain = Some(Arc::new(vec![entry])),
        }
    }

    /// The same hooks, and `hook` after them.
    #[must_use]
    pub fn with(mut self, hook: impl Hook) -> Self {
        self.push(hook);
        self
    }

    /// How many hooks there are.
    pub fn len(&self) -> usize {
        self.chain.as_ref().map_or(0, |chain| chain.len())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.chain.is_none()
    }

    /// The transport the hooks' calls come over.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// Runs one call of `tool` with these hooks around its handler: the pipeline of
    /// [`Tool::invoke_with`], with each hook's `before` after the availability re-check,
    /// validation and approval, and each hook's `after` once the handler ended (K1).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the hook's or the handler's future at its current await
    /// point; no `after` runs then.
    pub fn invoke(
        &self,
        tool: &Tool,
        ctx: &Context,
        args: &[u8],
        limits: &Limits,
    ) -> impl Future<Output = Outcome> {
        self.call(tool, ctx, args, limits, false)
    }

    /// Runs one call that was approved (H4, H6), as [`Tool::invoke_approved`] does, with these
    /// hooks around its handler: they run now, for the approved call, and never for a call
    /// that waits for approval.
    ///
    /// # Cancel safety
    ///
    /// As [`Hooks::invoke`].
    pub fn invoke_approved(
        &self,
        tool: &Tool,
        ctx: &Context,
        args: &[u8],
        limits: &Limits,
    ) -> impl Future<Output = Outcome> {
        self.call(tool, ctx, args, limits, true)
    }

    /// [`Hooks::invoke_approved`] when `approved`, else [`Hooks::invoke`]: one future type for
    /// both, so that a transport holding either holds no second one.
    ///
    /// # Cancel safety
    ///
    /// As [`Hooks::invoke`].
    pub fn call(
        &self,
        tool: &Tool,
        ctx: &Context,
        args: &[u8],
        limits: &Limits,
        approved: bool,
    ) -> impl Future<Output = Outcome> {
        tool.call(ctx, args, limits, approved, self.scope())
    }

    /// What the pipeline runs the hooks with: nothing without hooks.
    fn scope(&self) -> Option<Scope<'_>> {
        self.chain.as_deref().map(|entries| Scope {
            entries,
            transport: self.transport,
        })
    }
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self
            .chain
            .iter()
            .flat_map(|chain| chain.iter().map(|entry| entry.name))
            .collect();
        f.debug_struct("Hooks")
            .field("transport", &self.transport)
            .field("hooks", &names)
            .finish()
    }
}

fn type_name_of<T>(_: &T) -> &'static str {
    type_name::<T>()
}

/// A hook with its futures boxed, so that hooks of different types share one list.
trait ErasedHook: Send + Sync + 'static {
    fn before<'a>(&'a self, call: &'a HookCall<'a>) -> BoxFuture<'a, Before>;

    fn after<'a>(&'a self, call: &'a HookCall<'a>, outcome: &'a Outcome) -> BoxFuture<'a, After>;
}

impl<H: Hook> ErasedHook for H {
    fn before<'a>(&'a self, call: &'a HookCall<'a>) -> BoxFuture<'a, Before> {
        // The hook is called when the box is first polled, so that a panic in the call
        // itself (not only in its future) is contained where the pipeline polls it (E4).
        Box::pin(async move { Hook::before(self, call).await })
    }

    fn after<'a>(&'a self, call: &'a HookCall<'a>, outcome: &'a Outcome) -> BoxFuture<'a, After> {
        Box::pin(async move { Hook::after(self, call, outcome).await })
    }
}

/// The hooks of one call, as the pipeline runs them.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    entries: &'a [Entry],
    transport: Transport,
}

impl Scope<'_> {
    pub(crate) fn transport(&self) -> Transport {
        self.transport
    }

    /// Runs each hook's `before` in order. `None`: every hook allowed the call. Otherwise the
    /// call's outcome: a denial, the end of the run, or a hook's panic.
    pub(crate) async fn before(&self, call: &HookCall<'_>) -> Option<Outcome> {
        for (position, entry) in self.entries.iter().enumerate() {
            match CatchUnwind::boxed(entry.hook.before(call)).await {
                Ok(Before::Allow) => {}
                Ok(Before::Deny(message)) => {
                    tracing::debug!(
                        hook = entry.name,
                        position = position + 1,
                        tool = call.name(),
                        "a hook denied a call; the model reads its message"
                    );
                    return Some(Outcome::denied(message));
                }
                Ok(Before::End(cause)) => {
                    return Some(Outcome::failure(
                        Error::with_source(
                            ErrorKind::Hook,
                            format!(
                                "hook {} (`{}`) ended the run before `{}` ran",
                                position + 1,
                                entry.name,
                                call.name()
                            ),
                            cause,
                        )
                        .into_permanent(),
                    ));
                }
                Err(panic) => return Some(panicked(entry, position, "before", call, &panic)),
            }
        }
        None
    }

    /// Runs each hook's `after` in order, each seeing the outcome as the hooks before it left
    /// it; a replacement is applied as the module says, a panic fails the call (E4).
    pub(crate) async fn after(&self, call: &HookCall<'_>, mut outcome: Outcome) -> Outcome {
        for (position, entry) in self.entries.iter().enumerate() {
            let decision = CatchUnwind::boxed(entry.hook.after(call, &outcome)).await;
            match decision {
                Ok(After::Keep) => {}
                Ok(After::Replace(text)) => outcome = replaced(call.tool(), outcome, text),
                Err(panic) => {
                    if let Some(error) = outcome.error() {
                        // The call's own failure, which the panic's replaces in the outcome.
                        tracing::warn!(
                            error = %format_args!("{error:#}"),
                            tool = call.name(),
                            "a call failed, then a hook panicked after it"
                        );
                    }
                    outcome = panicked(entry, position, "after", call, &panic);
                }
            }
        }
        outcome
    }
}

/// The outcome once a hook gave the model `text` instead of the outcome's (K1).
fn replaced(tool: &Tool, outcome: Outcome, text: String) -> Outcome {
    match outcome.kind() {
        // The run ends whatever a hook says; over MCP the client reads `the tool failed`.
        OutcomeKind::Fatal => {
            tracing::debug!(
                tool = tool.name(),
                "a hook replaced the text of a call that ends the run; it keeps `the tool failed`"
            );
            outcome
        }
        // Still the result: it must fit the output schema the transports publish (O1).
        OutcomeKind::Success => match tool.output_schema().map(|output| output.check(&text)) {
            None | Some(Ok(())) => Outcome::success(text),
            Some(Err(violations)) => Outcome::failure(Error::new(
                ErrorKind::Handler,
                format!(
                    "a hook replaced the result of `{}` with text that does not fit its output \
                     schema: {}",
                    tool.name(),
                    render_violations(&violations, 0)
                ),
            )),
        },
        // Text the application approved for the model, as a `ToolError`'s is.
        _ => outcome.approved(text),
    }
}

fn panicked(
    entry: &Entry,
    position: usize,
    phase: &str,
    call: &HookCall<'_>,
    panic: &str,
) -> Outcome {
    Outcome::failure(Error::new(
        ErrorKind::Panic,
        format!(
            "hook {} (`{}`) panicked {phase} `{}` ran: {panic}",
            position + 1,
            entry.name,
            call.name()
        ),
    ))
}
