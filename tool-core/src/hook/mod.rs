//! Hooks around each call that reaches a tool's handler (K1): application code that runs
//! before the handler, and may let the call go on, deny it with a message for the model, or
//! end the run; and after the handler, seeing how the call ended, and may replace the text the
//! model reads. A call refused before (see below) never reaches a hook: a transport's
//! `on_outcome` (`AgentBuilder::on_outcome`, `McpServerBuilder::on_outcome`) is what sees
//! every call's outcome.
//!
//! A transport holds its hooks in a [`Hooks`] and runs each call through [`Hooks::invoke`]:
//! the agent loop (`AgentBuilder::hook`) and the MCP server (`McpServerBuilder::hook`) both
//! do, so a guardrail written once holds on both.
//!
//! # Where a hook runs
//!
//! [`Hook::before`] runs after the availability re-check (A4), after the arguments were
//! validated (S2) and, for a tool that requires approval, after the call was approved (H1,
//! H4, H6): a call that is hidden, has invalid arguments, or waits for approval never
//! reaches a hook, and a hook sees only validated arguments, defaults filled in. Then the
//! handler runs, and [`Hook::after`] sees its [`Outcome`].
//!
//! - Hooks run one at a time, in the order they were registered, `before` and `after` alike.
//!   The first `before` that does not allow the call decides: the later ones, the handler and
//!   every `after` do not run.
//! - [`Before::Deny`] is the call's outcome: kind [`OutcomeKind::Denied`], the hook's message
//!   as the model's text. The model reads a denial the same way whoever denied the call (a
//!   person at resume, H4; a client's user over MCP, H6; a hook), so one kind serves all: a
//!   caller matches one kind, and MCP carries it to our client as it carries an approval's
//!   denial (T2), with no new wire form.
//! - [`Before::End`] is a permanent failure of the call, of kind [`ErrorKind::Hook`] (P1):
//!   the agent cancels the turn's other calls, joins them, and the run returns that error
//!   with the hook's cause (P2, P3). A server cannot end its client's run: over MCP the call
//!   answers `the tool failed`, the error is logged, and the server goes on.
//! - [`After::Replace`] gives the model the hook's text in place of the outcome's. A success
//!   stays a success (a tool with an output schema has the new text checked against it, O1;
//!   the images of the result are dropped: the model reads only what the hook wrote). Any
//!   other outcome becomes [`OutcomeKind::Rejected`]: text the application approved for the
//!   model, as a [`ToolError`](crate::ToolError)'s is, which every transport passes on as it
//!   is. A fatal outcome keeps `the tool failed`: the run ends (or, over MCP, the client reads
//!   that) whatever a hook says. The unredacted error stays in the outcome for the
//!   application (E3).
//! - A hook that panics, in `before` or in `after`, is a failure of kind
//!   [`ErrorKind::Panic`] (permanent, E4), as a panicking handler is; nothing of the panic
//!   reaches the model.
//! - A call's timeout covers its hooks, and a call that times out or is cancelled while its
//!   future is dropped runs no `after`. A call whose context was cancelled while its hooks ran
//!   (over MCP on 2026-07-28, by a hook's own question, which ends the call) runs no handler,
//!   whatever the hooks decided then: its outcome is [`OutcomeKind::Cancelled`].
//!
//! # Redaction
//!
//! [`Hook::after`] is given the [`Outcome`] by reference, with its redacted text
//! ([`Outcome::text`]) and its unredacted error ([`Outcome::error`]), and returns at most a new
//! text. Nothing in this API copies the error into the model's text: a replacement is text
//! the application writes. Do not format the error into it, for the same reasons a handler
//! puts in a [`ToolError`](crate::ToolError) only what the model may read (E2).
//!
//! # Why not `tower`
//!
//! A `tower::Layer` around a `Service<Call, Response = Outcome>` is the shape Rust users
//! know, and it would bring timeouts, rate and concurrency limits as ready-made layers. It
//! is not the shape K1 needs:
//!
//! - **The split.** The hook point is inside the pipeline: after the availability re-check,
//!   validation and approval, before the handler. A service wrapping a call sees the model's
//!   raw bytes, before validation; making each stage a service would publish the pipeline's
//!   internals as API and let a layer reorder them (run a handler before the re-check, say).
//! - **Redaction.** A layer's response is the whole `Outcome`: it can build any outcome, one
//!   whose text is the unredacted error, or turn a fatal failure into a success. A hook
//!   returns a decision ([`Before`], [`After`]) and the pipeline builds the outcome, so kinds,
//!   fatal failures, the output schema check and redaction stay the pipeline's.
//! - **Order and panics.** Layers nest (the last added runs first on the way in and last on
//!   the way out); K1 wants registration order, each hook contained on its own.
//! - **Weight.** `tool-core` depends on no async runtime; `tower`'s timeout, rate and
//!   concurrency layers need tokio's timers, and every tool user would compile them. The agent
//!   already has per-call timeouts and concurrency slots (R2); a rate limit is a `before` hook
//!   that awaits a permit.
//! - **Ergonomics.** `Service::call` takes `&mut self`, needs `poll_ready`, and returns a
//!   `'static` future, so sharing one middleware between the agent and a server means
//!   `Clone` bounds and boxed clone-services. A hook is two `async fn`s with defaults, on
//!   `&self`.
//!
//! ```
//! use tool_core::hook::{After, Before, Hook, HookCall};
//! use tool_core::{Outcome, OutcomeKind};
//!
//! /// Who makes a request, as the application put it in the context.
//! struct Principal { admin: bool }
//!
//! /// Only admins may call destructive tools; failures read the same for everyone.
//! struct Guard;
//!
//! impl Hook for Guard {
//!     async fn before(&self, call: &HookCall<'_>) -> Before {
//!         let admin = call.context().get::<Principal>().is_some_and(|p| p.admin);
//!         if call.tool().annotations().destructive == Some(true) && !admin {
//!             return Before::deny("only an administrator may do that");
//!         }
//!         Before::Allow
//!     }
//!
//!     async fn after(&self, _call: &HookCall<'_>, outcome: &Outcome) -> After {
//!         match outcome.kind() {
//!             // Text the application writes: never the error itself.
//!             OutcomeKind::Failed => After::replace("the service is busy; try again later"),
//!             _ => After::Keep,
//!         }
//!     }
//! }
//! ```

mod chain;

pub use chain::Hooks;
pub(crate) use chain::Scope;

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use crate::context::Context;
use crate::error::BoxError;
#[cfg(doc)]
use crate::error::ErrorKind;
#[cfg(doc)]
use crate::tool::OutcomeKind;
use crate::tool::{Outcome, Tool};

/// Code that runs around every call of a transport that reaches its handler (K1):
/// [`Hook::before`] the handler, with the validated arguments, and [`Hook::after`] it, with the
/// outcome. A call refused before (unavailable, invalid arguments, waiting for approval)
/// reaches no hook; the transports' `on_outcome` observers see every call.
///
/// Both are async and do nothing by default: implement the one you need, with `async fn`.
/// A hook is shared by every call of its transport, which may run concurrently: keep its
/// state behind `&self` (atomics, a mutex, a semaphore). To put one hook on an agent and on
/// an MCP server, register an `Arc` of it on each (`Arc<H>` is a hook when `H` is).
///
/// A panic in either is contained and fails the call as a panicking handler does (kind
/// `Panic`, permanent, E4). See the [module](self) for where hooks run and why this is not a
/// `tower` layer.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a hook",
    label = "implement `tool_core::hook::Hook` for it, or use `hook::before_fn` / `hook::after_fn`"
)]
pub trait Hook: Send + Sync + 'static {
    /// Decides whether the call goes on, after the availability re-check, validation and
    /// approval, before the handler: [`Before::Allow`] (the default), [`Before::Deny`] with
    /// the model's text, or [`Before::End`] to end the run.
    fn before(&self, call: &HookCall<'_>) -> impl Future<Output = Before> + Send {
        let _ = call;
        std::future::ready(Before::Allow)
    }

    /// Sees how the call ended (the text the model is to read, and for the application the
    /// unredacted error) and may give the model another text: [`After::Keep`] (the default)
    /// or [`After::Replace`]. A hook registered later sees the outcome with this text.
    ///
    /// A replacement is text the application writes: do not copy [`Outcome::error`] into it,
    /// which would reveal to the model what E2 keeps from it.
    fn after(&self, call: &HookCall<'_>, outcome: &Outcome) -> impl Future<Output = After> + Send {
        let _ = (call, outcome);
        std::future::ready(After::Keep)
    }
}

impl<H: Hook> Hook for Arc<H> {
    fn before(&self, call: &HookCall<'_>) -> impl Future<Output = Before> + Send {
        H::before(self, call)
    }

    fn after(&self, call: &HookCall<'_>, outcome: &Outcome) -> impl Future<Output = After> + Send {
        H::after(self, call, outcome)
    }
}

/// What a [`Hook::before`] decides for one call.
#[derive(Debug)]
#[non_exhaustive]
pub enum Before {
    /// The call goes on: to the next hook, then to the handler.
    Allow,
    /// The call does not run: its outcome is of kind [`OutcomeKind::Denied`] and the model
    /// reads this text. Write it for the model: it is sent as it is.
    Deny(String),
    /// The call does not run, and the run ends (P1): a permanent failure of kind
    /// [`ErrorKind::Hook`] whose source is this cause, for the application. The model is told
    /// nothing of it; over MCP the client reads `the tool failed`.
    End(BoxError),
}

impl Before {
    /// The call goes on.
    pub fn allow() -> Self {
        Before::Allow
    }

    /// The call does not run; the model reads `message`.
    pub fn deny(message: impl Into<String>) -> Self {
        Before::Deny(message.into())
    }

    /// The call does not run and the run ends, for `cause`.
    pub fn end(cause: impl Into<BoxError>) -> Self {
        Before::End(cause.into())
    }
}

/// What a [`Hook::after`] decides for one call's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum After {
    /// The model reads the outcome's text.
    Keep,
    /// The model reads this text instead: text the application writes (see the
    /// [module](self) for what it does to the outcome's kind).
    Replace(String),
}

impl After {
    /// The model reads `text` instead of the outcome's text.
    pub fn replace(text: impl Into<String>) -> Self {
        After::Replace(text.into())
    }
}

/// The transport a call came over, as a hook sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Transport {
    /// The agent loop: the model asked for the call.
    Agent,
    /// An MCP server: a client called the tool (`tools/call`).
    Mcp,
}

/// One call, as a hook sees it: the tool, the call's id, its validated arguments, its
/// context (the principal and services the application put in) and the transport.
#[derive(Debug, Clone, Copy)]
pub struct HookCall<'a> {
    tool: &'a Tool,
    context: &'a Context,
    arguments: &'a Value,
    transport: Transport,
}

impl<'a> HookCall<'a> {
    /// A call of `tool` on `context` with these validated `arguments`: what the pipeline gives
    /// hooks; made by hand to test a hook.
    pub fn new(
        tool: &'a Tool,
        context: &'a Context,
        arguments: &'a Value,
        transport: Transport,
    ) -> Self {
        Self {
            tool,
            context,
            arguments,
            transport,
        }
    }

    /// The tool called: its name, its hints ([`Tool::annotations`]) and the rest.
    pub fn tool(&self) -> &'a Tool {
        self.tool
    }

    /// The tool's name.
    pub fn name(&self) -> &'a str {
        self.tool.name()
    }

    /// The call's id: the model's (agent) or the JSON-RPC request's (MCP); empty for a call
    /// made outside a transport.
    pub fn id(&self) -> &'a str {
        self.context.call().map_or("", |call| &*call.id)
    }

    /// The arguments as validated (S2: defaults filled in), rendered as JSON: what the
    /// handler receives.
    pub fn arguments(&self) -> &'a Value {
        self.arguments
    }

    /// The call's context: the extensions the application put in (the principal), and its
    /// cancellation.
    pub fn context(&self) -> &'a Context {
        self.context
    }

    /// The transport the call came over.
    pub fn transport(&self) -> Transport {
        self.transport
    }
}

/// A hook from a plain closure over the call, run before the handler: see [`before_fn`].
#[derive(Debug, Clone, Copy)]
pub struct BeforeFn<F>(F);

/// A hook that runs `f` before each call's handler. For a hook that awaits, implement
/// [`Hook`] with `async fn before`.
///
/// ```
/// use tool_core::hook::{Before, Hooks, Transport, before_fn};
///
/// let hooks = Hooks::new(Transport::Agent).with(before_fn(|call| {
///     if call.arguments()["service_id"] == "prod-db" {
///         Before::deny("the production database is off limits")
///     } else {
///         Before::Allow
///     }
/// }));
/// assert_eq!(hooks.len(), 1);
/// ```
pub fn before_fn<F>(f: F) -> BeforeFn<F>
where
    F: Fn(&HookCall<'_>) -> Before + Send + Sync + 'static,
{
    BeforeFn(f)
}

impl<F> Hook for BeforeFn<F>
where
    F: Fn(&HookCall<'_>) -> Before + Send + Sync + 'static,
{
    // An `async fn`: the closure is called when the future is polled, so that a panic
    // surfaces where the pipeline contains it (E4).
    async fn before(&self, call: &HookCall<'_>) -> Before {
        (self.0)(call)
    }
}

/// A hook from a plain closure over the call and its outcome, run after the handler: see
/// [`after_fn`].
#[derive(Debug, Clone, Copy)]
pub struct AfterFn<F>(F);

/// A hook that runs `f` after each call's handler. For a hook that awaits, implement
/// [`Hook`] with `async fn after`.
pub fn after_fn<F>(f: F) -> AfterFn<F>
where
    F: Fn(&HookCall<'_>, &Outcome) -> After + Send + Sync + 'static,
{
    AfterFn(f)
}

impl<F> Hook for AfterFn<F>
where
    F: Fn(&HookCall<'_>, &Outcome) -> After + Send + Sync + 'static,
{
    async fn after(&self, call: &HookCall<'_>, outcome: &Outcome) -> After {
        (self.0)(call, outcome)
    }
}
