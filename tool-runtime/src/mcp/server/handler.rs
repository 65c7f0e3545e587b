//! The MCP request handler of [`McpServer`](super::McpServer): `tools/list` and `tools/call`,
//! each on the request's [`Context`], each call through [`Tool::invoke_with`].

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    CustomRequest, CustomResult, ListToolsResult, MetaObject, PaginatedRequestParams,
    ProtocolVersion, Resource as McpResource, ResourceContents, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tool_core::CancellationToken;
use tool_core::{Context, Image, Outcome, OutcomeKind, OutputSchema, Resource, Tool};
use tracing::Instrument;

use super::approval::{Asked, NO_ELICITATION, NO_ELICITATION_STATELESS, ask};
use super::malformed::custom_request_error;
use super::request::{McpCall, McpRequest, McpTransport};
use super::shared::Shared;
use super::{elicit, progress, spans, tasks};
use crate::mcp::{OUTCOME_META_KEY, VIOLATIONS_META_KEY};

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
        if self.sessions {
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
            McpTransport::Http => cx
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Authenticated>())
                .map(|auth| auth.0.clone())
                .ok_or_else(|| {
                    tracing::error!(
                        "an MCP request over HTTP reached the handler without a context"
                    );
                    ErrorData::internal_error("the request has no context", None)
                }),
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

    /// Answers one call on `ctx` (the request's context), in `span`: the whole pipeline, the
    /// approval question, the span's end, the outcome observed. `cancelled` cancels the call's
    /// context (the request's cancellation, or its task's, M5); `asking` is told when the
    /// client's user is asked for approval (`true`) and when the answer came (`false`).
    pub(crate) async fn answer(
        &self,
        request: CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
        ctx: Context,
        span: tracing::Span,
        cancelled: &CancellationToken,
        asking: &(dyn Fn(bool) + Sync),
    ) -> Result<CallToolResponse, ErrorData> {
        let content = self.shared.record_tool_content;
        let call_id = cx.id.to_string();
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
        let (call_ctx, progress) = progress::relay(call_ctx, request.meta.as_ref(), cx);
        // M3: the handler's questions go to the client, when it can answer them.
        let call_ctx = match elicit::for_call(cx, self.sessions) {
            Some(elicitor) => call_ctx.with_elicitor(elicitor),
            None => call_ctx,
        };
        let outcome = match self.shared.by_name.get(name) {
            // A5: a name the server does not hold gets the same answer as a hidden tool.
            None => Outcome::unavailable(),
            Some(&i) => {
                let tool = &self.shared.tools[i];
                let outcome = run(tool, &call_ctx, &bytes, &self.shared, cancelled, false)
                    .instrument(span.clone())
                    .await;
                if outcome.kind() == OutcomeKind::AwaitingApproval {
                    // H6: the client's user decides; an unapproved call never runs.
                    let states = &self.shared.request_states;
                    asking(true);
                    let asked = ask(tool, &outcome, &request, &bytes, cx, self.sessions, states);
                    let asked = asked.await;
                    asking(false);
                    match asked {
                        Asked::Approved => {
                            run(tool, &call_ctx, &bytes, &self.shared, cancelled, true)
                                .instrument(span.clone())
                                .await
                        }
                        Asked::NotApproved => Outcome::not_approved(),
                        Asked::Unsupported => Outcome::denied(NO_ELICITATION),
                        Asked::Stateless => Outcome::denied(NO_ELICITATION_STATELESS),
                        Asked::Cancelled => Outcome::cancelled(tool_core::Error::new(
                            tool_core::ErrorKind::Cancelled,
                            "the client cancelled the call while its user was asked for approval",
                        )),
                        Asked::InputRequired(input) => {
                            return Ok(CallToolResponse::InputRequired(input));
                        }
                    }
                } else {
                    outcome
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
        // K5: the request's duration, however it is answered.
        let timer = spans::Timer::start(&self.shared, &request, &cx, self.transport);
        let answer = async {
            // K2: a `tools/call {tool}` span, as the MCP semantic conventions name it.
            let span = spans::tools_call(&request, &cx, self.transport);
            let ctx = (self.request_context(&cx).instrument(span.clone()).await)
                .inspect_err(|error| spans::record_refused(&span, error))?;
            if self.shared.tasks.enabled() {
                // M5: a call of a tool that runs as a task, or a task asked of one that does not.
                let tool = (self.shared.by_name.get(request.name.as_ref()))
                    .map(|&i| &self.shared.tools[i]);
                // The SDK may keep a request's `_meta` in its context rather than its params.
                let meta = (request.meta.as_ref())
                    .filter(|meta| meta.contains_key(tasks::TASK_META_KEY))
                    .unwrap_or(&cx.meta);
                // Only 2025-11-25 has these tasks (an unknown version is taken for it).
                let has_tasks = cx
                    .protocol_version()
                    .is_none_or(|version| version == ProtocolVersion::V_2025_11_25);
                let route = tasks::route(
                    &self.shared.tasks,
                    tool,
                    &request.name,
                    Some(meta),
                    &ctx,
                    has_tasks,
                )
                .await;
                match route.inspect_err(|error| spans::record_refused(&span, error))? {
                    tasks::Route::Plain => {}
                    tasks::Route::Task(ttl) => {
                        return tasks::start(self, request, cx, ctx, span, ttl);
                    }
                }
            }
            let cancelled = cx.ct.clone();
            self.answer(request, &cx, ctx, span, &cancelled, &|_| {})
                .await
        }
        .await;
        timer.finish(&answer);
        answer
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

/// An image or audio clip as MCP content (O3, M4); other binary content as an embedded
/// resource of its own (a `data:` URI).
fn media_content(media: &Image) -> ContentBlock {
    if media.is_image() {
        ContentBlock::image(media.base64(), media.media_type())
    } else if media.is_audio() {
        ContentBlock::audio(media.base64(), media.media_type())
    } else {
        let data = media.base64();
        let uri = format!("data:{};base64,{data}", media.media_type());
        ContentBlock::resource(ResourceContents::BlobResourceContents {
            uri,
            mime_type: Some(media.media_type().to_owned()),
            blob: data,
            meta: None,
        })
    }
}

/// A resource as MCP content (M4): an embedded resource, or a resource link.
fn resource_content(resource: &Resource) -> ContentBlock {
    let uri = resource.uri().to_owned();
    let mime_type = resource.media_type().map(str::to_owned);
    if let Some(text) = resource.embedded_text() {
        return ContentBlock::resource(ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text: text.to_owned(),
            meta: None,
        });
    }
    if let Some(blob) = resource.embedded_blob() {
        return ContentBlock::resource(ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob: blob.to_owned(),
            meta: None,
        });
    }
    let (name, description) = resource.link_name().unwrap_or(("", None));
    let mut link = McpResource::new(uri, name);
    if let Some(mime_type) = mime_type {
        link = link.with_mime_type(mime_type);
    }
    if let Some(description) = description {
        link = link.with_description(description);
    }
    ContentBlock::resource_link(link)
}

/// The MCP result of an outcome: its text (E1), with `structuredContent` shaped by the tool's
/// output schema when it has one (O1), else when the text is a JSON object; `isError` for
/// anything but a success, and the outcome kind in `_meta` under [`OUTCOME_META_KEY`] (T2),
/// so that our own client can tell a failure (`the tool failed`) from text the tool approved
/// for the model.
fn result_of(outcome: &Outcome, output: Option<&OutputSchema>) -> CallToolResult {
    let text = outcome.text();
    let mut result = if outcome.kind() == OutcomeKind::Success {
        // O3, M4: images, audio and resources go beside the text, each as its own content.
        let mut content =
            Vec::with_capacity(1 + outcome.images().len() + outcome.resources().len());
        content.push(ContentBlock::text(text));
        content.extend(outcome.images().iter().map(media_content));
        content.extend(outcome.resources().iter().map(resource_content));
        let mut result = CallToolResult::success(content);
        result.structured_content = match output {
            Some(output) => output.structured(text),
            None if text.starts_with('{') => serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_object),
            None => None,
        };
        result
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    let mut meta = MetaObject::new();
    meta.insert(
        OUTCOME_META_KEY.to_owned(),
        Value::String(outcome.kind().to_string()),
    );
    if outcome.kind() == OutcomeKind::InvalidArguments {
        let violations = outcome
            .violations()
            .iter()
            .map(|v| json!({"path": v.path, "rule": v.rule.keyword(), "message": v.message}))
            .collect();
        meta.insert(VIOLATIONS_META_KEY.to_owned(), Value::Array(violations));
    }
    result.meta = Some(meta);
    result
}
