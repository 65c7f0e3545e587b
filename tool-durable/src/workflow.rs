//! [`AgentRun`]: an agent's run as a Restate workflow keyed by the run's id (W1, W3, W5).
//!
//! - `named`: an agent served under a workflow name of its own (W10).

pub(crate) mod named;

use std::sync::Arc;

use restate_sdk::prelude::*;
use tool_runtime::{
    Agent, BoxFuture, Context, Decision, Decisions, ErrorKind, PausedRun, PendingKind, RunError,
    RunOptions, RunOutput,
};

use crate::journal::{self, CANCELLED, RestateJournal};
use crate::text::{self, TextPoster};
pub use named::WorkflowNameError;
use restate_sdk::context::RequestTarget;

use crate::state;
use crate::types::{
    CallRequest, DecidedCall, DecisionBody, PendingApproval, Phase, RunEnd, RunRequest, RunStatus,
    UNFIT_DECISION,
};

/// Makes a run's [`Context`] from its request's context data, on every attempt: the context
/// is the worker's, never journaled (W4).
pub type ContextFactory = dyn Fn(&serde_json::Value) -> Result<Context, String> + Send + Sync;

/// An agent served as the Restate workflow `AgentRun`: each workflow is one run, keyed by the
/// run's id, its steps journaled (W1); calls that wait for a decision wait as awakeables, with
/// no process holding the run (W3); `status` reads where it is, what waits and what it used
/// (W5).
///
/// Bind it to a Restate endpoint ([`crate::serve`], or `Endpoint::builder().bind(..)`), and
/// register the endpoint with the Restate server. Its handlers, as the ingress serves them:
///
/// - `POST /AgentRun/{run-id}/run` (or `/run/send` to start it without waiting) with a
///   [`RunRequest`]: the run, answering its [`RunEnd`];
/// - `POST /AgentRun/{run-id}/status`: its [`RunStatus`];
/// - `POST /restate/awakeables/{id}/resolve` with a [`DecisionBody`]: a decision;
/// - `call`: one call of a run whose turns run their calls concurrently
///   ([`AgentRun::parallel_calls`], W9), invoked by the run itself.
pub struct AgentRun {
    agent: Arc<Agent>,
    contexts: Arc<ContextFactory>,
    max_step: usize,
    parallel: bool,
    /// The workflow's name: [`crate::WORKFLOW`] unless [`AgentRun::named`] (W10).
    name: String,
    /// How a run of the agent goes: for its output, or for a typed answer (W10).
    execute: Arc<Execute>,
    /// Where the runs' text is posted as it streams, if anywhere (W10).
    text: Option<TextPoster>,
}

/// How the workflow runs its agent on a request: for the run's output, or for a typed answer
/// whose output it keeps ([`AgentRun::typed`]).
type Execute = dyn for<'r> Fn(
        &'r Agent,
        &'r Context,
        tool_runtime::RunRequest<'r>,
    ) -> BoxFuture<'r, Result<RunOutput, RunError>>
    + Send
    + Sync;

/// The default of [`AgentRun::max_step_bytes`]: 30 MiB, under the 32 MiB a Restate server
/// takes in one message by default.
pub const DEFAULT_MAX_STEP_BYTES: usize = 30 * 1024 * 1024;

impl AgentRun {
    /// `agent`'s runs, each in an empty [`Context`].
    pub fn new(agent: impl Into<Arc<Agent>>) -> Self {
        Self {
            agent: agent.into(),
            contexts: Arc::new(|_| Ok(Context::new())),
            max_step: DEFAULT_MAX_STEP_BYTES,
            parallel: false,
            name: crate::WORKFLOW.to_owned(),
            execute: Arc::new(|agent, ctx, request| Box::pin(agent.execute(ctx, request))),
            text: None,
        }
    }

    /// The same workflow, each run ending only with a final answer that parses as `T` (O2,
    /// W10): the model answers through its native structured output or a final-answer tool,
    /// the run checks the answer with `T`'s parser (asking again, within the agent's retries,
    /// when it does not parse), and the run's [`RunEnd::Answer`] holds the answer's JSON as
    /// its text, which [`RunEnd::answer_as`] reads. A resumed run asks for the same type.
    #[must_use]
    pub fn typed<T: tool_runtime::Schema + Send + 'static>(mut self) -> Self {
        self.execute = Arc::new(|agent, ctx, request| {
            Box::pin(async move {
                let typed = agent.execute(ctx, request.typed::<T>()).await?;
                Ok(typed.output)
            })
        });
        self
    }

    /// The same workflow, served under the name `name` rather than [`crate::WORKFLOW`]
    /// (W10): one deployment serves several agents, each under a name of its own
    /// ([`crate::Serving::with`]); its ingress paths start with `/{name}/`, and a client
    /// reaches its runs with [`crate::DurableClient::for_workflow`]. A run is replayed by the
    /// agent of the name it was started under: keep an agent's name as long as its runs live.
    ///
    /// # Errors
    ///
    /// [`WorkflowNameError::Invalid`] for a name Restate does not take (a letter first, then
    /// letters, digits, `.`, `_`, `-`).
    pub fn named(mut self, name: &str) -> Result<Self, WorkflowNameError> {
        self.name = named::checked(name)?;
        Ok(self)
    }

    /// The workflow's name in Restate.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same workflow, a turn's calls run concurrently (W9): each call an invocation of the
    /// workflow's `call` handler, keyed by the run, which any worker of the deployment takes;
    /// the run starts them in the model's order, at most the agent's `max_concurrency` in
    /// flight (R2), and its journal holds their commands in that order and their results as
    /// they came, so a replay starts the same calls at the same points. Each call gets its
    /// own retry budget ([`crate::Serving::step_attempts`], W7); a call that keeps failing is
    /// parked as its own invocation, which [`crate::DurableClient::inspect`] finds and
    /// [`crate::DurableClient::resume`] resumes with the run (W8).
    ///
    /// Off by default: the calls of a turn are then steps of the run itself, one at a time in
    /// the model's order, which costs no invocation per call and no replay of the run as each
    /// call ends.
    #[must_use]
    pub fn parallel_calls(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }

    /// The same workflow, a step's result refused past `bytes` of JSON (default
    /// [`DEFAULT_MAX_STEP_BYTES`]; keep it under the server's message limit): the step records
    /// a failure in its place and the run ends with kind `Journal`, saying the step and the
    /// size, instead of failing every attempt to record it (W10).
    #[must_use]
    pub fn max_step_bytes(mut self, bytes: usize) -> Self {
        self.max_step = bytes;
        self
    }

    /// The same workflow, each run's text posted as the model streams it to the Restate
    /// ingress at `ingress` (its base URL, such as `http://127.0.0.1:8080`), where a client
    /// reads it while the run goes ([`crate::DurableClient::text`], W10). The text is kept by
    /// the virtual object [`crate::AgentRunText`] (which [`crate::Serving`] binds) until
    /// [`crate::TEXT_KEPT`] after the run ends. Best effort: a step taken again after a crash
    /// streams its text again under the next attempt number, and text an attempt had not
    /// posted when it died is lost (the run's answer is not).
    #[must_use]
    pub fn text_to(mut self, ingress: &str) -> Self {
        self.text = Some(TextPoster::new(ingress));
        self
    }

    /// Whether the runs' text is posted ([`AgentRun::text_to`]).
    pub(crate) fn posts_text(&self) -> bool {
        self.text.is_some()
    }

    /// The same workflow, making each run's context with `factory` from its request's
    /// context data (its principal, say). A factory's error ends the run at its start.
    #[must_use]
    pub fn with_context(
        mut self,
        factory: impl Fn(&serde_json::Value) -> Result<Context, String> + Send + Sync + 'static,
    ) -> Self {
        self.contexts = Arc::new(factory);
        self
    }
}

impl AgentRun {
    /// `request`, its text posted as it streams when the workflow posts text (W10).
    fn streaming<'j>(
        &self,
        ctx: &WorkflowContext<'_>,
        request: tool_runtime::RunRequest<'j>,
    ) -> tool_runtime::RunRequest<'j> {
        match &self.text {
            Some(poster) => request.on_event(poster.observer(&self.name, ctx.key())),
            None => request,
        }
    }

    /// The run's end ([`end`]); when the run's text is kept, its forgetting scheduled
    /// [`crate::TEXT_KEPT`] later.
    fn end(
        &self,
        ctx: &WorkflowContext<'_>,
        journal: &RestateJournal<'_>,
        result: Result<RunOutput, RunError>,
    ) -> Result<Json<RunEnd>, HandlerError> {
        let ended = end(ctx, journal, result);
        if self.text.is_some() && ended.is_ok() {
            let target =
                RequestTarget::object(text::TEXT_OBJECT, text::key(&self.name, ctx.key()), "clear");
            ctx.request::<(), ()>(target, ())
                .send_after(text::TEXT_KEPT);
        }
        ended
    }

    /// A request's options, its usage limits bounded by the agent's: whoever reaches the
    /// ingress may tighten a limit, never lift one (as a resume may, H7).
    fn bounded(&self, options: RunOptions) -> RunOptions {
        let limits = options
            .usage_limits()
            .tightened(self.agent.options().usage_limits());
        options.limits(limits)
    }
}

#[restate_sdk::workflow]
impl AgentRun {
    /// The run: the agent's run journaled in this workflow (W1), its pauses waiting as
    /// awakeables (W3), to its end.
    #[handler]
    async fn run(
        &self,
        ctx: WorkflowContext<'_>,
        request: Json<RunRequest>,
    ) -> Result<Json<RunEnd>, HandlerError> {
        let Json(request) = request;
        // The factory runs on every attempt; one that fails (its lookup down, say) fails the
        // attempt, which Restate retries, and its message stays in the worker's log (W4).
        let run_ctx = (self.contexts)(&request.context).map_err(|e| {
            tracing::warn!(error = %e, "the run's context could not be made; the attempt is retried");
            HandlerError::from("the run's context could not be made (the worker's log says why)")
        })?;
        ctx.set(state::PHASE, Json(Phase::Running));
        let mut journal = RestateJournal::new(&ctx, self.max_step);
        if self.parallel {
            journal = journal.parallel(&self.name, request.context.clone());
        }
        let options = request.options.map(|options| self.bounded(options));
        let run = tool_runtime::RunRequest::new(request.input)
            .options(options)
            .journal(&journal);
        let mut result = (self.execute)(&self.agent, &run_ctx, self.streaming(&ctx, run)).await;
        let mut decided = Vec::new();
        loop {
            let paused = match result.map_err(RunError::into_paused) {
                Err(Ok(paused)) => paused,
                Err(Err(e)) => return self.end(&ctx, &journal, Err(e)),
                Ok(output) => return self.end(&ctx, &journal, Ok(output)),
            };
            let decisions = wait_for_decisions(&ctx, &self.agent, &paused, &mut decided).await?;
            ctx.set(state::PHASE, Json(Phase::Running));
            ctx.clear(state::PENDING);
            let resumed = tool_runtime::RunRequest::resume(paused, decisions).journal(&journal);
            result = (self.execute)(&self.agent, &run_ctx, self.streaming(&ctx, resumed)).await;
        }
    }

    /// One call of the run (W9), invoked by the run itself when its turns run their calls
    /// concurrently: the call's pipeline, its outcome in its recorded form as the invocation's
    /// output. A failure to retry fails the attempt, retried under the workflow's retry policy
    /// (W7); a result too large to journal is refused as the run's own steps are (W10).
    #[handler(name = "call")]
    async fn call_step(
        &self,
        ctx: SharedWorkflowContext<'_>,
        request: Json<CallRequest>,
    ) -> Result<Json<serde_json::Value>, HandlerError> {
        let Json(request) = request;
        let run_ctx = (self.contexts)(&request.context).map_err(|e| {
            tracing::warn!(error = %e, "the call's context could not be made; the attempt is retried");
            HandlerError::from("the run's context could not be made (the worker's log says why)")
        })?;
        let value = request
            .call
            .run(&self.agent, &run_ctx, ctx.key())
            .await
            .map_err(HandlerError::from)?;
        let step = request.call.kind().to_string();
        Ok(Json(journal::fitting(&step, value, self.max_step)?))
    }

    /// Where the run is, what waits for a decision and what the run used so far (W5).
    #[handler]
    async fn status(
        &self,
        ctx: SharedWorkflowContext<'_>,
    ) -> Result<Json<RunStatus>, HandlerError> {
        let phase = ctx.get::<Json<Phase>>(state::PHASE).await?;
        let pending = ctx
            .get::<Json<Vec<PendingApproval>>>(state::PENDING)
            .await?;
        let usage = ctx.get::<Json<tool_runtime::Usage>>(state::USAGE).await?;
        let decided = ctx.get::<Json<Vec<DecidedCall>>>(state::DECIDED).await?;
        Ok(Json(RunStatus {
            phase: phase.map_or(Phase::NotStarted, |Json(phase)| phase),
            pending: pending.map(|Json(pending)| pending).unwrap_or_default(),
            usage: usage.map(|Json(usage)| usage).unwrap_or_default(),
            decided: decided.map(|Json(decided)| decided).unwrap_or_default(),
        }))
    }
}

/// Each pending call of `paused` waits as an awakeable (W3), listed in the state with its id;
/// the decisions, in the calls' order, once every one has arrived. A decision that cannot be
/// read, or an awakeable rejected, denies its call. Each decision the run takes is added to
/// `decided`, which the state lists (W8).
async fn wait_for_decisions(
    ctx: &WorkflowContext<'_>,
    agent: &Agent,
    paused: &PausedRun,
    decided: &mut Vec<DecidedCall>,
) -> Result<Decisions, HandlerError> {
    let mut listed = Vec::new();
    let mut waits = Vec::new();
    for call in paused.pending() {
        let (awakeable_id, decision) = ctx.awakeable::<Vec<u8>>();
        listed.push(PendingApproval {
            call_id: call.id().to_owned(),
            tool: call.tool().to_owned(),
            arguments: call.arguments().clone(),
            kind: call.kind(),
            reason: call.reason().map(str::to_owned),
            awakeable_id: awakeable_id.clone(),
        });
        let tool = agent.tools().iter().find(|tool| tool.name() == call.tool());
        waits.push((
            call.id().to_owned(),
            call.kind(),
            tool,
            awakeable_id,
            decision,
        ));
    }
    ctx.set(state::PENDING, Json(listed));
    ctx.set(state::PHASE, Json(Phase::Waiting));
    let mut decisions = Decisions::new();
    for (call_id, kind, tool, awakeable_id, decision) in waits {
        let decision = match decision.await {
            Ok(body) => fitting(DecisionBody::taken(&body), kind, tool),
            // An operator cancelled the run while it waited: it ends so, nothing more runs.
            Err(cancelled) if cancelled.code() == CANCELLED => {
                ctx.set(state::PHASE, Json(Phase::Ended));
                return Err(cancelled.into());
            }
            Err(rejected) => {
                tracing::info!(call = %call_id, reason = rejected.message(), "a decision was rejected; the call is denied");
                DecisionBody::Deny { message: None }
            }
        };
        decided.push(DecidedCall {
            call_id: call_id.clone(),
            awakeable_id,
            decision: decision.clone(),
        });
        ctx.set(state::DECIDED, Json(decided.clone()));
        decisions.insert(call_id, Decision::from(decision));
    }
    Ok(decisions)
}

/// `decision`, when it fits a call waiting for `kind`: an approval takes "approve",
/// "approve_with" (arguments that fit `tool`'s schema, B3), "allow_for_run" or "deny", a
/// deferred call its result or "deny". One that does not fit denies its call alone, as a
/// decision that cannot be read does (W3).
fn fitting(
    decision: DecisionBody,
    kind: PendingKind,
    tool: Option<&tool_runtime::Tool>,
) -> DecisionBody {
    let fits = match (&decision, kind) {
        (DecisionBody::ApproveWith { arguments }, PendingKind::Approval) => {
            tool.is_some_and(|tool| {
                let limits = tool_runtime::tools::Limits::default();
                tool.validate(arguments.to_string().as_bytes(), &limits)
                    .is_ok()
            })
        }
        (DecisionBody::Deny { .. }, _)
        | (DecisionBody::Approve | DecisionBody::AllowForRun, PendingKind::Approval)
        | (DecisionBody::Result { .. }, PendingKind::Deferred) => true,
        _ => false,
    };
    if fits {
        decision
    } else {
        tracing::warn!(
            ?kind,
            "a decision does not fit its call; the call is denied"
        );
        DecisionBody::Deny {
            message: Some(UNFIT_DECISION.to_owned()),
        }
    }
}

/// The workflow's output for the run's end. A journal that failed fails the attempt, which
/// Restate retries (and parks under the workflow's retry policy, W5).
fn end(
    ctx: &WorkflowContext<'_>,
    journal: &RestateJournal<'_>,
    result: Result<RunOutput, RunError>,
) -> Result<Json<RunEnd>, HandlerError> {
    let end = match result {
        Ok(output) => RunEnd::Answer {
            text: output.text,
            usage: output
                .usage
                .iter()
                .fold(tool_runtime::Usage::default(), add),
            stopped_at: output.stopped_at,
        },
        // An operator cancelled the run: Restate records it as cancelled.
        Err(e) if e.kind() == ErrorKind::Cancelled => {
            ctx.set(state::PHASE, Json(Phase::Ended));
            return Err(TerminalError::new_with_code(CANCELLED, "the run was cancelled").into());
        }
        // A step's result too large to journal: every attempt would make it again.
        Err(e) if e.kind() == ErrorKind::Journal && journal.too_large().is_some() => {
            tracing::warn!(error = %format_args!("{e:#}"), "the run ended: a step's result was too large to journal");
            RunEnd::Failed {
                kind: e.kind(),
                message: journal.too_large().unwrap_or_default(),
                usage: journal.usage(),
            }
        }
        Err(e) if e.kind() == ErrorKind::Journal => {
            tracing::warn!(error = %format_args!("{e:#}"), "the run's journal failed; the attempt is retried");
            return Err(HandlerError::from(e.to_string()));
        }
        Err(e) => {
            tracing::warn!(error = %format_args!("{e:#}"), "the run ended without an answer");
            RunEnd::Failed {
                kind: e.kind(),
                message: e.to_string(),
                usage: journal.usage(),
            }
        }
    };
    ctx.set(state::PHASE, Json(Phase::Ended));
    Ok(Json(end))
}

fn add(total: tool_runtime::Usage, one: &tool_runtime::Usage) -> tool_runtime::Usage {
    tool_runtime::Usage::new(
        total.input_tokens.saturating_add(one.input_tokens),
        total.output_tokens.saturating_add(one.output_tokens),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// B3, W3: an approval with edited arguments fits a call awaiting approval only when the
    /// arguments fit its tool's schema; an allowance fits it as an approval does. What does
    /// not fit denies the call.
    #[test]
    fn b3_an_edit_that_does_not_fit_the_tools_schema_denies_the_call() {
        let tool = tool_runtime::Tool::builder("pay", "Pays.")
            .handler(
                |_ctx: Context, cents: std::collections::BTreeMap<String, u64>| async move {
                    Ok::<_, std::convert::Infallible>(cents.len())
                },
            )
            .build();
        let edit = |arguments: serde_json::Value| DecisionBody::ApproveWith { arguments };
        let fits = edit(serde_json::json!({"cents": 5}));
        assert_eq!(
            fitting(fits.clone(), PendingKind::Approval, Some(&tool)),
            fits
        );
        let unfit = fitting(
            edit(serde_json::json!({"cents": "five"})),
            PendingKind::Approval,
            Some(&tool),
        );
        assert!(matches!(unfit, DecisionBody::Deny { message: Some(m) } if m == UNFIT_DECISION));
        let unknown = fitting(fits, PendingKind::Approval, None);
        assert!(matches!(unknown, DecisionBody::Deny { .. }));
        assert_eq!(
            fitting(
                DecisionBody::AllowForRun,
                PendingKind::Approval,
                Some(&tool)
            ),
            DecisionBody::AllowForRun
        );
        let deferred = fitting(
            DecisionBody::AllowForRun,
            PendingKind::Deferred,
            Some(&tool),
        );
        assert!(matches!(deferred, DecisionBody::Deny { .. }));
    }
}
