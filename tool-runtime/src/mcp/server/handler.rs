//! The MCP request handler of [`McpServer`](super::McpServer): `tools/list` and `tools/call`,
//! each on the request's [`Context`], each call through [`Tool::invoke_with`].

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, CustomRequest,
    CustomResult, GetTaskParams, GetTaskResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, RequestId, ServerConfig, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tool_core::CancellationToken;
use tool_core::elicit::Elicitor;
use tool_core::{Context, Outcome, OutcomeKind, Tool};
use tracing::Instrument;

use super::approval::{Asked, NO_ELICITATION, NO_ELICITATION_STATELESS, ask};
use super::malformed::custom_request_error;
use super::request::{McpCall, McpRequest, McpTransport};
use super::result::result_of;
use super::rounds::{self, RoundElicitor, Rounds};
use super::shared::Shared;
use super::{elicit, progress, spans, tasks};

/// The [`Context`] the HTTP layer built for a request, carried in the request's extensions.
#[derive(Clone)]
pub(crate) struct Authenticated(pub(crate) Context);

/// Serves one session (stdio) or the requests of one HTTP session.
#[derive(Clone)]
pub(crate) struct Handler {
    shared: Arc<Shared>,
    transport: McpTransport,
    /// Whether a request the server sends during a call can be answered (false for a
    /// stateless HTTP server, H6).
    sessions: bool,
    /// Who owns the tasks this handler makes when it serves one session (M5): its own id.
    connection: Arc<str>,
}

impl Handler {
    pub(crate) fn new(shared: Arc<Shared>, transport: McpTransport) -> Self {
        Self {
            shared,
            transport,
            sessions: true,
            connection: crate::agent::new_id("session-").into(),
        }
    }

    /// The server's tasks (M5).
    pub(crate) fn tasks(&self) -> &tasks::Tasks {
        &self.shared.tasks
    }

    /// Whose the tasks a request makes or asks after are (M5): the session's (stdio, or a
    /// stateful HTTP server, which makes a handler per session); without sessions, the
    /// holder of the request's `Authorization` (a digest of it), else anyone's.
    pub(crate) fn task_owner(&self, cx: &RequestContext<RoleServer>) -> String {
        // 2026-07-28 has no sessions over HTTP: a handler may serve one request only.
        let modern = cx
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        if self.transport == McpTransport::Stdio || (self.sessions && !modern) {
            return self.connection.to_string();
        }
        let authorization = cx
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get(http::header::AUTHORIZATION));
        match authorization {
            Some(value) => {
                use sha2::Digest;
                let digest = sha2::Sha256::digest(value.as_bytes());
                format!("authorization-{}", base16ct::lower::encode_string(&digest))
            }
            None => "anyone".to_owned(),
        }
    }

    /// The same handler, for a server that keeps sessions or not: one without them never
    /// sends a request during a call whose answer it would have to wait for (H6).
    pub(crate) fn with_sessions(mut self, sessions: bool) -> Self {
        self.sessions = sessions;
        self
    }

    /// The context of one request: built by the HTTP layer (which rejected the request if it
    /// could not be built), or by the context function for stdio.
    async fn request_context(&self, cx: &RequestContext<RoleServer>) -> Result<Context, ErrorData> {
        match self.transport {
            McpTransport::Http => http_context(cx.extensions.get::<http::request::Parts>()),
            McpTransport::Stdio => {
                self.shared
                    .context_for(McpRequest::stdio)
                    .await
                    .map_err(|error| {
                        tracing::warn!(
                            error = %error,
                            "MCP request rejected: the context function failed"
                        );
                        ErrorData::invalid_request("the request could not be authenticated", None)
                    })
            }
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
    ) -> Result<Option<Rounds>, ErrorData> {
        let Some(cx) = cx else {
            return Ok(None);
        };
        let modern = cx
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        if !modern || !elicit::can_ask(cx) {
            return Ok(None);
        }
        let Some(state) = request
            .request_state
            .as_deref()
            .filter(|s| rounds::is_rounds_state(s))
        else {
            return Ok(Some(Rounds::default()));
        };
        let states = &self.shared.request_states;
        let responses = request.input_responses.as_ref();
        match rounds::open(states, state, declared, args, responses) {
            Ok(rounds) => Ok(Some(rounds)),
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

    /// The outcome of a call of a tool the server holds: run, asked for approval (H6) and
    /// run approved; or the `input_required` answer a question of its handler ends it with
    /// (M3).
    async fn outcome_of(
        &self,
        call: &Call<'_>,
        asking: &(dyn Fn(bool) + Sync),
    ) -> Result<Outcome, CallToolResponse> {
        let approved_before = call.round.is_some_and(RoundElicitor::approved);
        let outcome = self.run_or_ask(call, approved_before).await?;
        if outcome.kind() != OutcomeKind::AwaitingApproval {
            return Ok(outcome);
        }
        // H6: the client's user decides; an unapproved call never runs.
        let states = &self.shared.request_states;
        asking(true);
        let (tool, request, args) = (call.tool, call.request, call.args);
        let asked = ask(
            tool,
            &outcome,
            request,
            args,
            call.cx,
            self.sessions,
            states,
        )
        .await;
        asking(false);
        Ok(match asked {
            Asked::Approved => self.run_or_ask(call, true).await?,
            Asked::NotApproved => Outcome::not_approved(),
            Asked::Unsupported => Outcome::denied(NO_ELICITATION),
            Asked::Stateless => Outcome::denied(NO_ELICITATION_STATELESS),
            Asked::Cancelled => Outcome::cancelled(tool_core::Error::new(
                tool_core::ErrorKind::Cancelled,
                "the client cancelled the call while its user was asked for approval",
            )),
            Asked::InputRequired(input) => return Err(CallToolResponse::InputRequired(input)),
        })
    }

    /// Runs the call; on 2026-07-28 a question of its handler no round answered ends the run
    /// (its context cancelled, its end awaited: P2) with the question as the answer.
    async fn run_or_ask(
        &self,
        call: &Call<'_>,
        approved: bool,
    ) -> Result<Outcome, CallToolResponse> {
        let running = run(
            call.tool,
            call.ctx,
            call.args,
            &self.shared,
            call.cancelled,
            approved,
        );
        let Some(round) = call.round else {
            return Ok(running.await);
        };
        tokio::pin!(running);
        tokio::select! {
            biased;
            outcome = &mut running => Ok(outcome),
            () = round.question() => {
                call.ctx.cancellation().cancel();
                let _ = running.await;
                let states = &self.shared.request_states;
                match round.input_required(states, call.tool.name(), call.args, approved) {
                    Ok(input) => Err(CallToolResponse::InputRequired(input)),
                    Err(refusal) => {
                        tracing::error!(reason = %refusal, "a handler's question could not be sealed");
                        Ok(Outcome::failure(tool_core::Error::new(
                            tool_core::ErrorKind::Handler,
                            "a handler's question could not be sealed",
                        )))
                    }
                }
            }
        }
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
        let tool = (self.shared.by_name.get(request.name.as_ref())).map(|&i| &self.shared.tools[i]);
        let version = cx.protocol_version();
        if version
            .as_ref()
            .is_some_and(|v| *v >= ProtocolVersion::V_2026_07_28)
        {
            let declared = cx.client_capabilities().is_some_and(|c| c.supports_tasks());
            let task = declared && tasks::as_extension_task(tasks, tool, &request.name, ctx).await;
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

    /// Answers one call on `ctx` (the request's context), in `span`: the whole pipeline, the
    /// approval question, the span's end, the outcome observed. `cancelled` cancels the call's
    /// context (the request's cancellation, or its task's, M5); `asking` is told when the
    /// client's user is asked for approval (`true`) and when the answer came (`false`).
    pub(crate) async fn answer(
        &self,
        request: CallToolRequestParams,
        caller: Caller<'_>,
        ctx: Context,
        span: tracing::Span,
        cancelled: &CancellationToken,
        asking: &(dyn Fn(bool) + Sync),
    ) -> Result<CallToolResponse, ErrorData> {
        let content = self.shared.record_tool_content;
        let call_id = caller.id().to_string();
        let cx = caller.service();
        let name = request.name.as_ref();
        // The arguments as the bytes the pipeline parses, serialized from the request's map
        // (no copy of it): `{}` when there are none.
        let bytes = match &request.arguments {
            Some(arguments) => serde_json::to_vec(arguments).unwrap_or_default(),
            None => b"{}".to_vec(),
        };
        spans::record_arguments(&span, &bytes, content);
        // The handler's context names the tool as it was declared (M2).
        let declared = self
            .shared
            .by_name
            .get(name)
            .map_or(name, |&i| self.shared.tools[i].name());
        let call_ctx = ctx.for_call(call_id.clone(), declared);
        // K3: progress goes to the client when it gave a progress token.
        let (call_ctx, progress) = match cx {
            Some(cx) => progress::relay(call_ctx, request.meta.as_ref(), cx),
            None => (call_ctx, progress::Relay::inert()),
        };
        // M3: the handler's questions go to the client, when it can answer them: during the
        // call, or (2026-07-28) in the answer, round by round.
        let round = (self.rounds_of(&request, declared, &bytes, cx))
            .inspect_err(|error| spans::record_refused(&span, error))?
            .map(|rounds| RoundElicitor::new(rounds, call_ctx.cancellation().clone()));
        let elicitor = cx.and_then(|cx| elicit::for_call(cx, self.sessions));
        let call_ctx = match (&round, elicitor) {
            (Some(round), _) => call_ctx.with_elicitor(Arc::clone(round) as Arc<dyn Elicitor>),
            (None, Some(elicitor)) => call_ctx.with_elicitor(elicitor),
            (None, None) => call_ctx,
        };
        let outcome = match self.shared.by_name.get(name) {
            // A5: a name the server does not hold gets the same answer as a hidden tool.
            None => Outcome::unavailable(),
            Some(&i) => {
                let call = Call {
                    tool: &self.shared.tools[i],
                    request: &request,
                    args: &bytes,
                    cx,
                    ctx: &call_ctx,
                    cancelled,
                    round: round.as_deref(),
                };
                match self
                    .outcome_of(&call, asking)
                    .instrument(span.clone())
                    .await
                {
                    Ok(outcome) => outcome,
                    Err(response) => return Ok(response),
                }
            }
        };
        progress.finish().await;
        spans::record_outcome(&span, &outcome, content);
        if outcome.is_fatal() {
            let error = outcome
                .error()
                .map(|e| format!("{e:#}"))
                .unwrap_or_default();
            tracing::error!(
                parent: &span,
                tool = %tool_core::violation::preview_str(name),
                call_id = %call_id,
                error = %error,
                "an MCP tool call failed fatally; the client is told only that it failed"
            );
        }
        if let Some(observe) = &self.shared.on_outcome {
            observe(&McpCall {
                tool: declared,
                call_id: &call_id,
                transport: self.transport,
                outcome: &outcome,
            });
        }
        let output = self
            .shared
            .by_name
            .get(name)
            .and_then(|&i| self.shared.tools[i].output_schema());
        Ok(CallToolResponse::Complete(result_of(&outcome, output)))
    }
}

impl Handler {
    /// Answers a `tools/call` the HTTP layer read itself (`http_server::direct_call`) with
    /// the steps [`ServerHandler::call_tool`] takes for it: the metric (K5), the span (K2,
    /// K6), the request's context, then [`Handler::answer`]. `seen` is what rmcp's service
    /// would have put in the request's context; `cancelled` cancels the call's context.
    pub(crate) async fn call_direct(
        &self,
        request: CallToolRequestParams,
        seen: &spans::Seen<'_>,
        cancelled: &CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let timer = spans::Timer::start(&self.shared, &request, seen, self.transport);
        let span = spans::tools_call(&request, seen, self.transport);
        let answer = match http_context(seen.parts) {
            Ok(ctx) => {
                let caller = Caller::Direct(seen.id);
                (self.answer(request, caller, ctx, span, cancelled, &|_| {})).await
            }
            Err(error) => {
                spans::record_refused(&span, &error);
                Err(error)
            }
        };
        timer.finish(&answer);
        answer
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        self.shared.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let ctx = self.request_context(&cx).await?;
        let mut listed = Vec::new();
        // Declaration order, one policy at a time (A2). A tool left out is still guarded:
        // a call by its name goes through its policy again (A4, A5).
        for (tool, entry) in self.shared.tools.iter().zip(&self.shared.listed) {
            match tool.available(&ctx).await {
                Ok(true) => listed.push(entry.clone()),
                Ok(false) => {}
                Err(error) => {
                    tracing::error!(
                        tool = tool.name(),
                        error = %error,
                        "an availability policy failed while listing MCP tools; the list is refused"
                    );
                    return Err(ErrorData::internal_error(
                        "the tool list is unavailable",
                        None,
                    ));
                }
            }
        }
        // The list depends on who asks: no cache may keep it or share it.
        let mut result = ListToolsResult::with_all_items(listed).with_ttl_ms(0);
        result.cache_scope = Some(CacheScope::Private);
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let seen = spans::Seen::of(&cx);
        // K5: the request's duration, however it is answered.
        let timer = spans::Timer::start(&self.shared, &request, &seen, self.transport);
        // K2: a `tools/call {tool}` span, as the MCP semantic conventions name it.
        let span = spans::tools_call(&request, &seen, self.transport);
        // Boxed: rmcp moves the handler's future into a task of its own per request, and a
        // call's pipeline is a large future; moved, it is a pointer.
        let answer = Box::pin(async {
            let ctx = (self.request_context(&cx).instrument(span.clone()).await)
                .inspect_err(|error| spans::record_refused(&span, error))?;
            if self.shared.tasks.enabled() {
                // M5: a call of a tool that runs as a task, or a task asked of one that does not.
                let routed = (self.task_route(&request, &cx, &ctx).await)
                    .inspect_err(|error| spans::record_refused(&span, error))?;
                if let Some((ttl, flavor)) = routed {
                    return tasks::start(self, request, cx, ctx, span, ttl, flavor);
                }
            }
            let caller = Caller::Service(&cx);
            (self.answer(request, caller, ctx, span, &cx.ct, &|_| {})).await
        })
        .await;
        timer.finish(&answer);
        answer
    }

    /// `tasks/get` of the Tasks extension (SEP-2663, M5), on the tasks of the client that asks.
    async fn get_task(
        &self,
        request: GetTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let task = tasks::get(&self.shared.tasks, &self.task_owner(&cx), &request.task_id)?;
        Ok(GetTaskResult::new(task))
    }

    /// `tasks/cancel` of the Tasks extension: the task and its call's context cancelled.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks::cancel(&self.shared.tasks, &self.task_owner(&cx), &request.task_id).map(|_| ())
    }

    /// `tasks/update` of the Tasks extension: no task of this server waits for input there.
    async fn update_task(
        &self,
        _request: UpdateTaskParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Err(ErrorData::invalid_params(
            "no task of this server waits for input: its questions go to the client directly",
            None,
        ))
    }

    /// A request rmcp could not read as one it knows: a method we do not serve, or one we
    /// serve with malformed params (`tools/call` without `name`, say), which is `-32602
    /// Invalid params` rather than rmcp's `-32601 Method not found` (issue 10).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        cx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // M5: the `tasks/*` requests, on the tasks of the client that asks.
        let owner = self.task_owner(&cx);
        if let Some(answer) =
            tasks::answer_method(&self.shared.tasks, &owner, &request, &cx.ct).await
        {
            return answer.map(CustomResult);
        }
        let error = custom_request_error(&request.method, request.params.as_ref());
        tracing::debug!(
            method = %tool_core::violation::preview_str(&request.method),
            code = error.code.0,
            message = %error.message,
            "an MCP request was refused: its method or params are not ones this server reads"
        );
        Err(error)
    }
}

/// Whom a call is answered for, as the pipeline sees them.
#[derive(Clone, Copy)]
pub(crate) enum Caller<'a> {
    /// A request rmcp's service read: its client may be sent progress and questions during
    /// the call.
    Service(&'a RequestContext<RoleServer>),
    /// A `tools/call` the HTTP layer read itself (`http_server::direct_call`): stateless, on
    /// a protocol before 2026-07-28, without a progress token, from a client that declared
    /// nothing; nothing is sent to it during the call, as rmcp's stateless service sends
    /// nothing to such a client either.
    Direct(&'a RequestId),
}

impl<'a> Caller<'a> {
    /// The request's JSON-RPC id.
    fn id(self) -> &'a RequestId {
        match self {
            Self::Service(cx) => &cx.id,
            Self::Direct(id) => id,
        }
    }

    /// The request as rmcp's service read it.
    fn service(self) -> Option<&'a RequestContext<RoleServer>> {
        match self {
            Self::Service(cx) => Some(cx),
            Self::Direct(_) => None,
        }
    }
}

/// The context the HTTP layer built for a request (the guard rejected the request if it
/// could not be built), from the request's parts.
fn http_context(parts: Option<&http::request::Parts>) -> Result<Context, ErrorData> {
    parts
        .and_then(|parts| parts.extensions.get::<Authenticated>())
        .map(|auth| auth.0.clone())
        .ok_or_else(|| {
            tracing::error!("an MCP request over HTTP reached the handler without a context");
            ErrorData::internal_error("the request has no context", None)
        })
}

/// One call of a tool the server holds, as the steps of its answer take it.
struct Call<'a> {
    tool: &'a Tool,
    request: &'a CallToolRequestParams,
    args: &'a [u8],
    /// The request as rmcp's service read it; `None` for one the HTTP layer answers directly.
    cx: Option<&'a RequestContext<RoleServer>>,
    ctx: &'a Context,
    cancelled: &'a CancellationToken,
    /// The rounds of questions, on 2026-07-28 (M3).
    round: Option<&'a RoundElicitor>,
}

/// Runs one call through the shared pipeline (`approved`: without asking for approval again,
/// H6); `notifications/cancelled` cancels the call's context, and the handler is still
/// awaited (cancellation kills nothing, P2).
async fn run(
    tool: &Tool,
    ctx: &Context,
    args: &[u8],
    shared: &Shared,
    cancelled: &CancellationToken,
    approved: bool,
) -> Outcome {
    let call = async {
        // K1: the hooks wrap the handler (without hooks, a branch).
        if approved {
            shared
                .hooks
                .invoke_approved(tool, ctx, args, &shared.limits)
                .await
        } else {
            shared.hooks.invoke(tool, ctx, args, &shared.limits).await
        }
    };
    tokio::pin!(call);
    tokio::select! {
        outcome = &mut call => outcome,
        () = cancelled.cancelled() => {
            tracing::debug!(tool = tool.name(), "the MCP client cancelled a call");
            ctx.cancellation().cancel();
            // The client expects no answer; the outcome still goes to the application (E3).
            call.await
        }
    }
}
