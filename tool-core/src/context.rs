//! The [`Context`] a run and each of its calls carry.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

pub use tokio_util::sync::CancellationToken;
use tokio_util::sync::WaitForCancellationFuture;

use crate::call_id::{CallId, CallName};
use crate::elicit::{ElicitAnswer, ElicitError, Elicited, Elicitor, elicitation_schema};
use crate::logging::{LogLevel, LogMessage, LogSink};
use crate::progress::{Listener, Progress};
use crate::schema::{Schema, parse_arguments};
use crate::violation::ParseCx;

/// What the application gives a run, and what a call's handler and policy see: typed
/// extensions (the principal, services), a cancellation signal, and inside a call its id,
/// tool name and where its progress goes ([`Context::progress`], K3).
///
/// Extensions are put in by the application with [`Context::with`] and are never reachable
/// from model input. Cloning is cheap. A context made for a call ([`Context::for_call`]) has a
/// child cancellation token: cancelling the run cancels the call, not the reverse.
#[derive(Clone, Default)]
pub struct Context {
    extensions: Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
    /// The cancellation token, and inside a call the call it belongs to.
    scope: Scope,
    progress: Option<Listener>,
    /// The run this context belongs to, once a run started with it (H9, W2).
    run: Option<Arc<str>>,
    /// The call's turn and position in it, inside a run (W2).
    position: Option<(usize, usize)>,
    /// Who a call's questions go to (M3), when someone can answer them.
    elicitor: Option<Arc<dyn Elicitor>>,
    /// Whether the call was approved by a person before it ran (H4, H6).
    approved: bool,
    /// Where a call's log messages go (M8), when someone listens.
    log: Option<LogSink>,
    /// Who a call's sampling requests go to (M8), when someone can answer them.
    pub(crate) sampler: Option<Arc<dyn crate::sampling::Sampler>>,
    /// Where a call's roots come from (M8), when someone has them.
    pub(crate) roots: Option<Arc<dyn crate::roots::RootsSource>>,
    /// Told when the call's handler says its work may go on as a task (M9), when a
    /// transport can make it one.
    pub(crate) task_start: Option<crate::task::TaskStart>,
}

/// The call a context belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallInfo {
    /// The call id the model gave.
    pub id: CallId,
    /// The tool's name.
    pub tool: CallName,
}

/// Where a context's cancellation token is.
#[derive(Clone)]
enum Scope {
    /// Outside a call: the context's own token.
    Plain(CancellationToken),
    /// Inside a call: the call (shared by the context's clones), and the token that replaced
    /// the call's own ([`Context::with_cancellation`], [`Context::child`]), if any.
    Call(Arc<CallState>, Option<CancellationToken>),
}

impl Default for Scope {
    fn default() -> Self {
        Scope::Plain(CancellationToken::new())
    }
}

/// One call, shared by the clones of its context.
///
/// The call's own token is a child of `parent`, made the first time anyone asks for it
/// ([`Context::cancellation`], [`Context::cancelled`], a context derived from the call's): a
/// call whose handler never looks at its token costs no node in the token tree. Until it is
/// made, nothing can have cancelled it, so the call is cancelled exactly when `parent` is.
struct CallState {
    info: CallInfo,
    parent: CancellationToken,
    own: OnceLock<CancellationToken>,
}

impl CallState {
    /// The call's own token, made now if nobody asked for it before.
    fn token(&self) -> &CancellationToken {
        self.own.get_or_init(|| self.parent.child_token())
    }

    /// Whether the call was cancelled, without making its token.
    fn is_cancelled(&self) -> bool {
        match self.own.get() {
            Some(own) => own.is_cancelled(),
            None => self.parent.is_cancelled(),
        }
    }
}

impl Scope {
    /// The token of a context of this scope.
    fn token(&self) -> &CancellationToken {
        match self {
            Scope::Plain(token) | Scope::Call(_, Some(token)) => token,
            Scope::Call(call, None) => call.token(),
        }
    }

    /// The same scope (the same call, if any), cancelled by `token` instead.
    fn with_token(&self, token: CancellationToken) -> Self {
        match self {
            Scope::Plain(_) => Scope::Plain(token),
            Scope::Call(call, _) => Scope::Call(Arc::clone(call), Some(token)),
        }
    }
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

    /// The same context, holding the value `value` shares (as [`Context::with`], without
    /// moving the value: a value already behind an `Arc`, such as claims a cache keeps).
    #[must_use]
    pub fn with_shared<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        Arc::make_mut(&mut self.extensions).insert(TypeId::of::<T>(), value);
        self
    }

    /// The extension of type `T`, if the application put one in.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions
            .get(&TypeId::of::<T>())
            .and_then(|v| v.downcast_ref::<T>())
    }

    /// Whether the context holds a value of the type `id` names (C1: a tool's context
    /// parameters are checked by type before its policy runs).
    pub(crate) fn holds(&self, id: TypeId) -> bool {
        self.extensions.contains_key(&id)
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
        self.scope = self.scope.with_token(token);
        self
    }

    /// The cancellation token of this context. A call context's token is its own: cancelling
    /// it cancels that call (and what it started with it), never the run or the call's
    /// siblings.
    pub fn cancellation(&self) -> &CancellationToken {
        self.scope.token()
    }

    /// Whether this context was cancelled.
    pub fn is_cancelled(&self) -> bool {
        match &self.scope {
            Scope::Plain(token) | Scope::Call(_, Some(token)) => token.is_cancelled(),
            Scope::Call(call, None) => call.is_cancelled(),
        }
    }

    /// Completes when this context is cancelled.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future loses nothing.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.scope.token().cancelled()
    }

    /// A context with the same extensions and a child cancellation token (and, inside a
    /// call, the same call and progress listener).
    #[must_use]
    pub fn child(&self) -> Self {
        Self {
            extensions: Arc::clone(&self.extensions),
            scope: self.scope.with_token(self.scope.token().child_token()),
            progress: self.progress.clone(),
            run: self.run.clone(),
            position: self.position,
            elicitor: self.elicitor.clone(),
            approved: self.approved,
            log: self.log.clone(),
            sampler: self.sampler.clone(),
            roots: self.roots.clone(),
            task_start: self.task_start.clone(),
        }
    }

    /// The context of one call: the same extensions, a child cancellation token, and the
    /// call's id and tool name, with nobody listening to its progress yet. Transports call
    /// this; handlers read [`Context::call`].
    ///
    /// The child token is made the first time the call's token is asked for
    /// ([`Context::cancellation`], [`Context::cancelled`]); until then the call is cancelled
    /// exactly when this context is, so a call that never looks costs no node in the token
    /// tree.
    #[must_use]
    pub fn for_call(&self, id: impl Into<CallId>, tool: impl Into<CallName>) -> Self {
        let call = CallState {
            info: CallInfo {
                id: id.into(),
                tool: tool.into(),
            },
            parent: self.scope.token().clone(),
            own: OnceLock::new(),
        };
        Self {
            extensions: Arc::clone(&self.extensions),
            scope: Scope::Call(Arc::new(call), None),
            progress: None,
            run: self.run.clone(),
            position: None,
            elicitor: self.elicitor.clone(),
            approved: false,
            log: None,
            sampler: self.sampler.clone(),
            roots: self.roots.clone(),
            // A call made inside this one is not this call: it cannot make this call a task.
            task_start: None,
        }
    }

    /// The same context, belonging to the run `id` (the run's own id, stable across its
    /// pauses and, in a durable run, its restarts: H9, W1). The agent's run loop calls this;
    /// handlers read [`Context::run_id`] and [`Context::idempotency_key`].
    #[must_use]
    pub fn for_run(mut self, id: impl Into<Arc<str>>) -> Self {
        self.run = Some(id.into());
        self
    }

    /// Whether this call was approved by a person before it ran (H4, H6): the call pipeline
    /// says so to the handler of a call it runs approved ([`Tool::invoke_approved`]). A tool
    /// that relays its calls elsewhere answers the approval question of the other side with
    /// it, rather than ask a second time (M3).
    ///
    /// [`Tool::invoke_approved`]: crate::Tool::invoke_approved
    pub fn is_approved(&self) -> bool {
        self.approved
    }

    /// The same context, for a call that was approved (H4).
    #[must_use]
    pub(crate) fn approved_call(mut self) -> Self {
        self.approved = true;
        self
    }

    /// The id of the run this context belongs to, inside a run.
    pub fn run_id(&self) -> Option<&str> {
        self.run.as_deref()
    }

    /// The same call context, at position `index` (from 0) of turn `turn` (from 1) of its run
    /// (W2). The agent's run loop calls this for each call.
    #[must_use]
    pub fn at_position(mut self, turn: usize, index: usize) -> Self {
        self.position = Some((turn, index));
        self
    }

    /// A key for this call's effects that stays the same every time the same call runs
    /// (W2): `run-id/turn.index/call-id`, the run's id, the call's turn and position in it,
    /// and the call id the model gave (`%` and `/` in the ids escaped as `%25` and `%2F`), so
    /// that two calls never share a key even when a model reuses a call id in a later turn. A
    /// call that is cut mid-way and runs again (a durable run's worker restarted, at least
    /// once), or that runs after its run paused for approval, gets the same key, so a tool that
    /// hands it to the service it calls (an `Idempotency-Key` header, a unique column) makes
    /// its effect happen once. `None` outside a call of a run.
    ///
    /// ```
    /// use tool_core::Context;
    ///
    /// let call = Context::new().for_run("run-1").for_call("c7", "restart").at_position(2, 0);
    /// assert_eq!(call.idempotency_key().as_deref(), Some("run-1/2.0/c7"));
    /// assert_eq!(Context::new().for_call("c7", "restart").idempotency_key(), None);
    /// ```
    pub fn idempotency_key(&self) -> Option<String> {
        let run = self.run.as_deref()?;
        let call = self.call()?;
        let escape = |id: &str| id.replace('%', "%25").replace('/', "%2F");
        let (turn, index) = self.position?;
        Some(format!(
            "{}/{turn}.{index}/{}",
            escape(run),
            escape(&call.id)
        ))
    }

    /// Reports the progress of the call this context belongs to (K3): `done` so far, out of
    /// `total` when known, with an optional `message` for a person to read.
    ///
    /// Where the report goes is the transport's choice: tool-runtime's `Agent::run_stream`
    /// yields it as an event, an MCP server sends it as `notifications/progress` when the
    /// client asked for progress. When nobody listens (a plain `Agent::run`, a client without
    /// a progress token) this does nothing and allocates nothing, so a handler may call it
    /// freely. A report whose `done` or `total` is not finite is dropped.
    ///
    /// ```
    /// use tool_core::Context;
    ///
    /// fn scan(ctx: &Context, files: &[&str]) {
    ///     for (i, file) in files.iter().enumerate() {
    ///         // … read `file` …
    ///         ctx.progress((i + 1) as f64, files.len() as f64, *file);
    ///     }
    ///     ctx.progress(files.len() as f64, None, None);
    /// }
    /// # scan(&Context::new(), &["a", "b"]);
    /// ```
    pub fn progress<'m>(
        &self,
        done: f64,
        total: impl Into<Option<f64>>,
        message: impl Into<Option<&'m str>>,
    ) {
        if let Some(listener) = &self.progress {
            listener.report(done, total.into(), message.into());
        }
    }

    /// Whether anyone listens to [`Context::progress`]: a handler may skip building costly
    /// progress messages when nobody does.
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }

    /// The same context, sending its progress reports ([`Context::progress`]) to `listener`,
    /// replacing any listener it had. Transports call this on a call's context (K3).
    #[must_use]
    pub fn with_progress(mut self, listener: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Listener::new(listener));
        self
    }

    /// Sends a log message of `level` saying `data` (a string, or any JSON) to whoever serves
    /// the call (M8): an MCP server sends it to its client as `notifications/message` when the
    /// client asked for messages of that level. When nobody listens this does nothing.
    ///
    /// ```
    /// use tool_core::{Context, LogLevel};
    ///
    /// let ctx = Context::new().for_call("c1", "import");
    /// ctx.log(LogLevel::Info, "import started");
    /// assert!(!ctx.wants_log());
    /// ```
    pub fn log(&self, level: LogLevel, data: impl Into<serde_json::Value>) {
        if let Some(sink) = &self.log {
            sink.send(LogMessage::new(level, data));
        }
    }

    /// Sends `message` as [`Context::log`] does (with a logger's name, say).
    pub fn log_message(&self, message: LogMessage) {
        if let Some(sink) = &self.log {
            sink.send(message);
        }
    }

    /// Whether anyone listens to [`Context::log`].
    pub fn wants_log(&self) -> bool {
        self.log.is_some()
    }

    /// The same context, sending its log messages ([`Context::log`]) to `sink`, replacing any
    /// it had. Transports call this on a call's context (M8).
    #[must_use]
    pub fn with_log_sink(mut self, sink: impl Fn(LogMessage) + Send + Sync + 'static) -> Self {
        self.log = Some(LogSink::new(sink));
        self
    }

    /// The call this context belongs to, inside a handler or policy run for a call.
    pub fn call(&self) -> Option<&CallInfo> {
        match &self.scope {
            Scope::Plain(_) => None,
            Scope::Call(call, _) => Some(&call.info),
        }
    }
}

impl Context {
    /// The same context, asking its questions through `elicitor` (M3). Transports and agents
    /// call this for a call's context.
    #[must_use]
    pub fn with_elicitor(mut self, elicitor: Arc<dyn Elicitor>) -> Self {
        self.elicitor = Some(elicitor);
        self
    }

    /// Whether a question can be asked in this call ([`Context::elicit`]).
    pub fn can_elicit(&self) -> bool {
        self.elicitor.is_some()
    }

    /// Asks the user `message`, wanting a `T` (M3): its schema is sent, and the answer is
    /// parsed by `T`'s own parser (defaults filled in, every rule checked).
    ///
    /// # Errors
    ///
    /// [`ElicitError::Unsupported`] when nobody can be asked here; [`ElicitError::Schema`] when
    /// `T` is not a flat object of strings, numbers, integers, booleans and enums;
    /// [`ElicitError::Invalid`] when the answer does not fit `T`; [`ElicitError::Failed`] when
    /// the transport failed.
    pub async fn elicit<T: Schema>(&self, message: &str) -> Result<Elicited<T>, ElicitError> {
        self.ask::<T>(None, message).await
    }

    /// Asks as [`Context::elicit`] does, naming the question `key` (M10): over MCP 2026-07-28
    /// the key of its input request, which a client may read (`user_name`, say); elsewhere
    /// the name is not shown. A call's questions have names of their own.
    ///
    /// # Errors
    ///
    /// As [`Context::elicit`]; [`ElicitError::Key`] when `key` is not 1 to 64 ASCII letters,
    /// digits, `_`, `-` and `.`, has the form `question-N`, which unnamed questions get
    /// ([`check_key`](crate::elicit::check_key)), or names another question of the call.
    pub async fn elicit_named<T: Schema>(
        &self,
        key: &str,
        message: &str,
    ) -> Result<Elicited<T>, ElicitError> {
        crate::elicit::check_key(key)?;
        self.ask::<T>(Some(key), message).await
    }

    /// Asks `message` (named `key`, when given) wanting a `T`, and parses the answer.
    async fn ask<T: Schema>(
        &self,
        key: Option<&str>,
        message: &str,
    ) -> Result<Elicited<T>, ElicitError> {
        let Some(elicitor) = self.elicitor.as_deref() else {
            return Err(ElicitError::Unsupported);
        };
        let type_name = std::any::type_name::<T>();
        let schema = elicitation_schema::<T>()
            .map_err(|reason| ElicitError::Schema { type_name, reason })?;
        let answer = match key {
            Some(key) => elicitor.elicit_named(key, message, &schema).await?,
            None => elicitor.elicit(message, &schema).await?,
        };
        match answer {
            ElicitAnswer::Decline => Ok(Elicited::Declined),
            ElicitAnswer::Cancel => Ok(Elicited::Cancelled),
            ElicitAnswer::Accept(content) => {
                let bytes =
                    serde_json::to_vec(&content).map_err(|e| ElicitError::Failed(e.to_string()))?;
                // Read as a call's arguments are: once, by the reader.
                let mut cx = ParseCx::new();
                match parse_arguments::<T>(&bytes, &mut cx) {
                    Ok(Some(value)) => Ok(Elicited::Accepted(value)),
                    Ok(None) => Err(ElicitError::Invalid {
                        type_name,
                        violations: cx.violations().to_vec(),
                    }),
                    Err(e) => Err(ElicitError::Failed(e.to_string())),
                }
            }
        }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("extensions", &self.extensions.len())
            .field("cancelled", &self.is_cancelled())
            .field("call", &self.call())
            .field("progress", &self.progress.is_some())
            .field("run", &self.run)
            .field("elicitor", &self.elicitor.is_some())
            .field("sampler", &self.sampler.is_some())
            .field("roots", &self.roots.is_some())
            .field("task_start", &self.task_start.is_some())
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
        assert_eq!(b.call().map(|c| &*c.id), Some("c2"));
    }

    #[test]
    fn a_call_token_made_late_keeps_the_meaning_of_a_child_token() {
        let run = Context::new();
        let a = run.for_call("c1", "t");
        let clone = a.clone();
        let nested = a.child();
        // The call's own token, made by `child`, is shared by its clones.
        clone.cancellation().cancel();
        assert!(a.is_cancelled() && nested.is_cancelled() && !run.is_cancelled());
        // A call whose token nobody asked for is cancelled with its parent, and so is the
        // token made afterwards.
        let b = run.for_call("c2", "t");
        run.cancellation().cancel();
        assert!(b.is_cancelled() && b.cancellation().is_cancelled());
        // A replaced token is the context's alone; the call stays the same.
        let c = Context::new().for_call("c3", "t");
        let replaced = c.clone().with_cancellation(CancellationToken::new());
        replaced.cancellation().cancel();
        assert!(replaced.is_cancelled() && !c.is_cancelled());
        assert_eq!(replaced.call(), c.call());
    }

    #[test]
    fn k3_progress_goes_to_the_listener_of_the_call_only() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let call = Context::new()
            .for_call("c1", "t")
            .with_progress(move |p| log.lock().expect("not poisoned").push(p));
        assert!(call.wants_progress());
        call.progress(1.0, 4.0, "reading");
        call.progress(2.0, None, None);
        // Not finite: dropped.
        call.progress(f64::NAN, None, None);
        call.progress(3.0, f64::INFINITY, None);
        // A child of the call reports to the same listener; a new call does not.
        call.child().progress(3.0, 4.0, None);
        let other = call.for_call("c2", "t");
        assert!(!other.wants_progress());
        other.progress(9.0, None, None);
        // Nobody listens: nothing happens.
        Context::new().progress(1.0, None, "ignored");

        let seen = seen.lock().expect("not poisoned");
        assert_eq!(
            *seen,
            vec![
                Progress::new(1.0).with_total(4.0).with_message("reading"),
                Progress::new(2.0),
                Progress::new(3.0).with_total(4.0),
            ]
        );
    }
}
