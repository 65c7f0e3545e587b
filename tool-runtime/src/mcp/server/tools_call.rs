//! A `tools/call`, however it reached the server: [`Session::call`] is the one way in, from
//! rmcp's service (stdio, stateful and stateless HTTP: `handler`) and from the HTTP layer's
//! direct calls (`compat::direct_call`); a call that runs as a task (M5) and one that
//! continues 2026-07-28 input rounds (M3) go on from there. It takes the typed request,
//! records the call's metric (K5) and span (K2, K6), builds the call's context, routes a task,
//! and enters [`crate::call::enter`] with the MCP side of the call ([`McpSeam`]); its outcome
//! becomes the MCP result.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResponse, ProtocolVersion};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use tool_core::{CancellationToken, Context, Outcome, Tool};
use tracing::Instrument;

use crate::call::{self, CallRequest, Entered, Facts, Via};

use super::ask::Declared;
use super::request::{McpCall, McpTransport};
use super::result::result_of;
use super::rounds::{self, RoundElicitor, Rounds};
use super::seam::McpSeam;
use super::session::Session;
use super::spans::{self, Seen};
use super::{ask, logging, progress, protocol_error, questions, tasks};

/// Whom a call is answered for, as the pipeline sees them.
#[derive(Clone, Copy)]
pub(crate) enum Caller<'a> {
    /// A request rmcp's service read: its client may be sent progress and questions during
    /// the call.
    Service(&'a RequestContext<RoleServer>),
    /// A `tools/call` the HTTP layer read itself (`compat::direct_call`): stateless, on
    /// a protocol before 2026-07-28, without a progress token, from a client that declared
    /// nothing; nothing is sent to it during the call, as rmcp's stateless service sends
    /// nothing to such a client either.
    Direct(&'a Seen<'a>),
}

impl<'a> Caller<'a> {
    /// The request as rmcp's service read it.
    fn service(self) -> Option<&'a RequestContext<RoleServer>> {
        match self {
            Self::Service(cx) => Some(cx),
            Self::Direct(_) => None,
        }
    }
}

/// A call's own steps, after its request's context: its span, and what cancels it.
struct Answering<'a> {
    caller: Caller<'a>,
    id: String,
    span: tracing::Span,
    cancelled: &'a CancellationToken,
    /// Told when the client's user is asked for approval (`true`) and when the answer came.
    asking: &'a (dyn Fn(bool) + Sync),
    /// The protocol version the request names, when one is known.
    protocol: Option<&'a ProtocolVersion>,
    /// Whether the call runs as a task (M5).
    task: bool,
    /// Where a task's handler asks its client (M9, the Tasks extension): through the task.
    task_questions: Option<Arc<tasks::TaskQuestions>>,
    /// A call that becomes a task when its handler says so (M9), its questions before.
    later: Option<&'a Arc<tasks::Later>>,
}

impl Session {
    /// The one way a `tools/call` enters (U1): the metric (K5), the span (K2, K6), the
    /// request's context, a task (M5), then the pipeline. `cancelled` cancels the call's
    /// context (the request's cancellation).
    pub(crate) async fn call(
        &self,
        request: CallToolRequestParams,
        caller: Caller<'_>,
        cancelled: &CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let seen_of_service;
        let seen = match caller {
            Caller::Service(cx) => {
                seen_of_service = Seen::of(cx);
                &seen_of_service
            }
            Caller::Direct(seen) => seen,
        };
        // K5: the request's duration, however it is answered.
        let timer = spans::Timer::start(&self.shared, &request, seen, self.transport);
        // K2: a `tools/call {tool}` span, as the MCP semantic conventions name it.
        let span = spans::tools_call(&request, seen, self.transport);
        // Boxed: rmcp moves the handler's future into a task of its own per request, and a
        // call's pipeline is a large future; moved, it is a pointer.
        let answer = Box::pin(async {
            let ctx = (self
                .request_context(seen.parts)
                .instrument(span.clone())
                .await)
                .inspect_err(|error| spans::record_refused(&span, error))?;
            if let (Caller::Service(cx), true) = (caller, self.shared.tasks.enabled()) {
                // M5: a call of a tool that runs as a task, or a task asked of one that does not.
                let routed = (self.task_route(&request, cx, &ctx).await)
                    .inspect_err(|error| spans::record_refused(&span, error))?;
                if let Some((ttl, flavor)) = routed {
                    let later = flavor == tasks::Flavor::Extension
                        && self.shared.tasks.begins_later(&request.name);
                    if later {
                        return self.call_then_task(request, cx, ctx, span, cancelled).await;
                    }
                    return self.start_task(request, cx, ctx, span, ttl, flavor);
                }
            }
            let id = seen.id.to_string();
            let answering = Answering {
                caller,
                id,
                span,
                cancelled,
                asking: &|_| {},
                protocol: seen.protocol_version.as_ref(),
                task: false,
                task_questions: None,
                later: None,
            };
            self.answer(request, ctx, &answering).await
        })
        .await;
        timer.finish(&answer);
        answer
    }

    /// Makes the call a task of the client's (M5): it runs on in a task of the runtime, its
    /// pipeline the same as any call's; the answer is the task.
    fn start_task(
        &self,
        request: CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
        ctx: Context,
        span: tracing::Span,
        ttl: Option<Duration>,
        flavor: tasks::Flavor,
    ) -> Result<CallToolResponse, ErrorData> {
        let owner = self.task_owner(cx);
        let (session, cx) = (self.clone(), cx.clone());
        tasks::start(
            &self.shared.tasks,
            &owner,
            ttl,
            flavor,
            move |task| async move {
                let protocol = cx.protocol_version();
                // M9: on the Tasks extension the handler's questions wait in the task.
                let task_questions = (flavor == tasks::Flavor::Extension)
                    .then(|| task.questions(questions::declared(&cx)));
                let answering = Answering {
                    caller: Caller::Service(&cx),
                    id: cx.id.to_string(),
                    span,
                    cancelled: task.cancelled(),
                    // While the client's user is asked for approval, the task waits on input.
                    asking: &|asking| task.asking(asking),
                    protocol: protocol.as_ref(),
                    task: true,
                    task_questions,
                    later: None,
                };
                session.answer(request, ctx, &answering).await
            },
        )
    }

    /// Runs a call that becomes a task when its handler says so (M9), its questions asked
    /// in its answer until then: the answer is the task, or the call's own answer when it
    /// ends first (`input_required` among them). It runs in a task of the runtime from its
    /// start, so that it can go on after its request is answered.
    async fn call_then_task(
        &self,
        request: CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
        ctx: Context,
        span: tracing::Span,
        cancelled: &CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = questions::declared(cx);
        let (later, replied) = tasks::Later::new(&self.shared.tasks, self.task_owner(cx), declared);
        let (session, cx, running) = (self.clone(), cx.clone(), Arc::clone(&later));
        let call = tokio::spawn(async move {
            let protocol = cx.protocol_version();
            let answering = Answering {
                caller: Caller::Service(&cx),
                id: cx.id.to_string(),
                span,
                cancelled: running.cancelled(),
                asking: &|_| {},
                protocol: protocol.as_ref(),
                task: true,
                task_questions: None,
                later: Some(&running),
            };
            let answered = session.answer(request, ctx, &answering).await;
            running.finish(answered);
        });
        later.reply(replied, call, cancelled).await
    }

    /// Whether a call runs as a task (M5), and of which protocol: on 2026-07-28 the server
    /// decides for a client that declared the Tasks extension; on 2025-11-25 the client asks
    /// with `task`. `Err` refuses a call made the wrong way.
    async fn task_route(
        &self,
        request: &CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
        ctx: &Context,
    ) -> Result<Option<(Option<Duration>, tasks::Flavor)>, ErrorData> {
        let tasks = &self.shared.tasks;
        let tool = self.tool_for(&request.name, &self.task_owner(cx));
        let version = cx.protocol_version();
        if version
            .as_ref()
            .is_some_and(|v| *v >= ProtocolVersion::V_2026_07_28)
        {
            let declared = cx.client_capabilities().is_some_and(|c| c.supports_tasks());
            let required = tasks.support(&request.name) == tasks::TaskSupport::Required;
            if !declared && !required {
                return Ok(None);
            }
            let task = tasks::as_extension_task(tasks, tool, &request.name, ctx).await;
            // M9: a tool that runs only as a task, called by a client without the extension.
            if task && !declared {
                return Err(tasks::extension_required());
            }
            return Ok(task.then_some((None, tasks::Flavor::Extension)));
        }
        // The SDK may keep a request's `_meta` in its context rather than its params.
        let meta = (request.meta.as_ref())
            .filter(|meta| meta.contains_key(tasks::TASK_META_KEY))
            .unwrap_or(&cx.meta);
        // Only 2025-11-25 has these tasks (an unknown version is taken for it).
        let has_tasks = version.is_none_or(|version| version == ProtocolVersion::V_2025_11_25);
        let route = tasks::route(tasks, tool, &request.name, Some(meta), ctx, has_tasks).await?;
        Ok(match route {
            tasks::Route::Plain => None,
            tasks::Route::Task(ttl) => Some((ttl, tasks::Flavor::Augmented)),
        })
    }

    /// Who owns what a call leaves (the tools a search loaded, Q1).
    fn owner_of(&self, answering: &Answering<'_>) -> String {
        match answering.caller {
            Caller::Service(cx) => self.task_owner(cx),
            Caller::Direct(seen) => self.owner(seen.parts, seen.protocol_version.as_ref()),
        }
    }

    /// Answers one call on `ctx` (the request's context): the MCP side of the call (progress,
    /// questions, rounds) around [`call::enter`], the span's end, the outcome observed.
    async fn answer(
        &self,
        request: CallToolRequestParams,
        ctx: Context,
        answering: &Answering<'_>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (span, cx) = (&answering.span, answering.caller.service());
        let bytes = argument_bytes(&request);
        spans::record_arguments(span, &bytes, self.shared.set.record_tool_content);
        let owner = self.owner_of(answering);
        let tool = self.tool_for(&request.name, &owner);
        // The handler's context names the tool as it was declared (M2).
        let declared = tool.map_or(request.name.as_ref(), Tool::name);
        let call_ctx = (self.search_scope(tool, ctx))
            .await
            .for_call(answering.id.clone(), declared);
        let (call_ctx, progress, log) = self.relays(call_ctx, &request, cx);
        // M3: the handler's questions go to the client, when it can answer them: during the
        // call, or (2026-07-28) in the answer, round by round.
        let round = match answering.task_questions {
            Some(_) => None,
            None => (self.rounds_of(&request, declared, &bytes, cx))
                .inspect_err(|error| spans::record_refused(span, error))?
                .map(|(rounds, asks)| {
                    RoundElicitor::new(rounds, call_ctx.cancellation().clone(), asks)
                }),
        };
        let call_ctx = self.asking_in(call_ctx, round.as_ref(), answering);
        let task_asks = answering.task_questions.clone().map(ask::Through);
        let outcome = match tool {
            // A5: a name the server does not hold gets the same answer as a hidden tool.
            None => Outcome::unavailable(),
            Some(tool) => {
                let seam = McpSeam {
                    tool,
                    request: &request,
                    args: &bytes,
                    cx,
                    sessions: self.sessions,
                    states: &self.shared.request_states,
                    edits: self.shared.approval_edits,
                    round: round.as_deref(),
                    asking: answering.asking,
                    task_questions: (task_asks.as_ref())
                        .map(|asks| asks as &dyn tool_core::elicit::Elicitor),
                    task_shared: owner == super::session::ANYONE,
                };
                // B3: an earlier round's approval that edited the arguments runs them.
                let edited = round.as_deref().and_then(RoundElicitor::edited);
                let entering = CallRequest {
                    tool,
                    ctx: &call_ctx,
                    args: edited.as_deref().unwrap_or(&bytes),
                    hooks: &self.shared.set.hooks,
                    limits: &self.shared.set.limits,
                    approved: round.as_deref().is_some_and(RoundElicitor::approved),
                    cancelled: Some(answering.cancelled),
                    facts: self.facts(answering, round.is_some()),
                };
                match call::enter(&entering, &seam).instrument(span.clone()).await {
                    Entered::Outcome(outcome) => outcome,
                    Entered::Held(input) => return Ok(CallToolResponse::InputRequired(input)),
                }
            }
        };
        progress.finish().await;
        log.finish().await;
        self.observe(&request.name, declared, &outcome, answering);
        self.load_found(&call_ctx, &outcome, &owner, cx).await;
        // M9: a handler that ended its call with a protocol error is answered with that error.
        if let Some(error) = protocol_error::of_outcome(&outcome) {
            return Err(error);
        }
        Ok(CallToolResponse::Complete(result_of(
            &outcome,
            tool.and_then(Tool::output_schema),
        )))
    }

    /// `call_ctx` asking its handler's questions where they can be answered (M3, M9): in the
    /// call's rounds (2026-07-28), in its task, or during the call; and, for a call that
    /// becomes a task when its handler says so, told when it does.
    fn asking_in(
        &self,
        call_ctx: Context,
        round: Option<&Arc<RoundElicitor>>,
        answering: &Answering<'_>,
    ) -> Context {
        let call_ctx = match (round, &answering.task_questions, answering.caller.service()) {
            (Some(round), _, _) => ask::questions_in(call_ctx, round),
            (None, Some(asks), _) => ask::questions_in(call_ctx, asks),
            (None, None, Some(cx)) => questions::during_call(call_ctx, cx, self.sessions),
            (None, None, None) => call_ctx,
        };
        match answering.later {
            Some(later) => later.context(call_ctx, round),
            None => call_ctx,
        }
    }

    /// `call_ctx` with what its handler reports relayed to the client: progress when the
    /// client gave a progress token (K3), log messages at the level it asked for (M8).
    fn relays(
        &self,
        call_ctx: Context,
        request: &CallToolRequestParams,
        cx: Option<&RequestContext<RoleServer>>,
    ) -> (Context, progress::Relay, logging::Relay) {
        let Some(cx) = cx else {
            return (call_ctx, progress::Relay::inert(), logging::Relay::inert());
        };
        let (call_ctx, progress) = progress::relay(call_ctx, request.meta.as_ref(), cx);
        let requested = (request.meta.as_ref())
            .and_then(|meta| meta.log_level())
            .or_else(|| cx.meta.log_level());
        let (call_ctx, log) = logging::relay(call_ctx, requested, &self.log_level, cx);
        (call_ctx, progress, log)
    }

    /// What the pipeline is told of a call of this session's (`round`: whether it continues
    /// input rounds).
    fn facts<'a>(&self, answering: &Answering<'a>, round: bool) -> Facts<'a> {
        let via = match self.transport {
            McpTransport::Stdio => Via::Stdio,
            McpTransport::Http => Via::Http {
                stateless: !self.sessions,
            },
        };
        Facts {
            via,
            protocol: (answering.protocol).map(|version| version as &(dyn fmt::Display + Sync)),
            task: answering.task,
            round,
        }
    }

    /// The end of a call of `name` (the tool `declared`): its span's outcome, a fatal failure
    /// logged, the outcome given to the application (E3).
    fn observe(&self, name: &str, declared: &str, outcome: &Outcome, answering: &Answering<'_>) {
        let span = &answering.span;
        spans::record_outcome(span, outcome, self.shared.set.record_tool_content);
        if outcome.is_fatal() {
            let error = outcome
                .error()
                .map(|e| format!("{e:#}"))
                .unwrap_or_default();
            tracing::error!(
                parent: span,
                tool = %tool_core::violation::preview_str(name),
                call_id = %answering.id,
                error = %error,
                "an MCP tool call failed fatally; the client is told only that it failed"
            );
        }
        if let Some(observe) = &self.shared.on_outcome {
            observe(&McpCall {
                tool: declared,
                call_id: &answering.id,
                transport: self.transport,
                outcome,
            });
        }
    }

    /// The rounds of questions a call on 2026-07-28 continues (M3): none before, or those its
    /// `requestState` carries; `None` where a handler's questions are not asked this way.
    fn rounds_of(
        &self,
        request: &CallToolRequestParams,
        declared: &str,
        args: &[u8],
        cx: Option<&RequestContext<RoleServer>>,
    ) -> Result<Option<(Rounds, Declared)>, ErrorData> {
        let Some(cx) = cx else {
            return Ok(None);
        };
        let modern = cx
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        let asks = questions::declared(cx);
        if !modern || !asks.any() {
            return Ok(None);
        }
        let Some(state) = request
            .request_state
            .as_deref()
            .filter(|s| rounds::is_rounds_state(s))
        else {
            return Ok(Some((Rounds::default(), asks)));
        };
        let states = &self.shared.request_states;
        let responses = request.input_responses.as_ref();
        match rounds::open(states, state, declared, args, responses) {
            Ok(rounds) => Ok(Some((rounds, asks))),
            Err(refusal) => {
                tracing::warn!(
                    tool = declared,
                    reason = %refusal,
                    "an MCP client's answer to a handler's question is refused"
                );
                Err(ErrorData::invalid_params(
                    "the requestState is not one this server gave for this call, or it \
                     expired or was used",
                    None,
                ))
            }
        }
    }
}

/// A call's arguments as the bytes the pipeline parses, serialized from the request's map (no
/// copy of it): `{}` when there are none.
fn argument_bytes(request: &CallToolRequestParams) -> Vec<u8> {
    match &request.arguments {
        Some(arguments) => serde_json::to_vec(arguments).unwrap_or_default(),
        None => b"{}".to_vec(),
    }
}
