//! A session with a remote MCP server, and the calls its tools make through it.

use std::collections::HashSet;
use std::fmt;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    PaginatedRequestParams, ResourceContents, Tool as McpTool,
};
use rmcp::model::{MetaObject, RequestMetaObject};
use rmcp::service::{RunningService, ServiceError};

use super::elicit::ToolsetClient;
use crate::telemetry::metrics::{self, McpRecord, Side};
use rmcp::{Peer, RoleClient};
use serde_json::Value;
use tokio::sync::Mutex;
use tool_core::violation::MAX_VIOLATIONS;
use tool_core::{
    BoxError, Context, FAILED, Image, Relayed, RelayedKind, Rule, ToolError, Violation, WithImages,
};

use super::error::RemoteCallError;
use super::remote_input::{Answering, MAX_ROUNDS};
use super::remote_schema::JsonSchemaValidator;
use super::task_listing::TASK_SUPPORT_META;
use crate::mcp::meta::{OUTCOME_META_KEY, VIOLATIONS_META_KEY};

/// The most pages of `tools/list` followed, and the most tools accepted from one server.
const MAX_PAGES: usize = 64;
const MAX_TOOLS: usize = 1024;

/// A session with one MCP server. Dropping the last handle ends it (and a child process is
/// killed).
pub(crate) struct Connection {
    server: String,
    pub(super) peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, ToolsetClient>>>,
    /// The tools that answered a plain call `-32601`: each runs only as a task (M5).
    pub(super) task_tools: std::sync::Mutex<HashSet<String>>,
    /// The server's process, killed when the connection is dropped.
    child: Option<tokio::process::Child>,
    /// Who answers the server's questions during calls (M3).
    pub(super) answering: Answering,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Connection {
    pub(crate) fn new(server: String, service: RunningService<RoleClient, ToolsetClient>) -> Self {
        Self {
            server,
            peer: service.peer().clone(),
            service: Mutex::new(Some(service)),
            task_tools: std::sync::Mutex::default(),
            child: None,
            answering: Answering::default(),
        }
    }

    /// The same connection, whose calls answer the server's questions through `answering`.
    pub(crate) fn with_answering(mut self, answering: Answering) -> Self {
        self.answering = answering;
        self
    }

    /// The same connection, which owns the server's process.
    pub(crate) fn with_child(mut self, child: tokio::process::Child) -> Self {
        self.child = Some(child);
        self
    }

    /// The server: its command or URL.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// Every tool the server lists, following at most [`MAX_PAGES`] pages and keeping at most
    /// [`MAX_TOOLS`] tools (a server that pages forever cannot hang the toolset).
    pub(crate) async fn list_tools(&self) -> Result<Vec<McpTool>, BoxError> {
        let mut tools = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let page = self.peer.list_tools(Some(params)).await?;
            // M5: a tool that runs only as a task is called as one.
            for tool in &page.tools {
                let support = (tool.meta.as_ref())
                    .and_then(|meta| meta.get(TASK_SUPPORT_META))
                    .and_then(Value::as_str);
                if support == Some("required") {
                    self.remember_task_tool(&tool.name);
                }
            }
            tools.extend(page.tools);
            if tools.len() > MAX_TOOLS {
                return Err(format!("the server lists more than {MAX_TOOLS} tools").into());
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
        Err(format!("the server's tool list has more than {MAX_PAGES} pages").into())
    }

    /// Ends the session.
    pub(crate) async fn close(&self) {
        if let Some(mut service) = self.service.lock().await.take()
            && let Err(error) = service.close().await
        {
            tracing::warn!(server = %self.server, error = %error, "closing an MCP session failed");
        }
    }

    /// Calls the remote tool `tool` with `args` (already validated against its schema).
    ///
    /// Cancelling `ctx` drops the request, which sends `notifications/cancelled` (or, for a
    /// call running as a task, `tasks/cancel`).
    ///
    /// On protocol 2025-11-25 a tool that answers a plain call `-32601` is one that runs only
    /// as a task (M5): the call is made again as a task, and so is every later call of the
    /// tool.
    ///
    /// # Errors
    ///
    /// A remote `isError` result is a [`ToolError`] with the remote text (shown to the
    /// model), unless our server marked it `failed` or `fatal` (T2); that, and anything else,
    /// is a [`RemoteCallError`] (redacted as `the tool failed`, E2, E3).
    pub(crate) async fn call(
        &self,
        ctx: &Context,
        tool: &str,
        args: Value,
        output: Option<&JsonSchemaValidator>,
    ) -> Result<WithImages<String>, BoxError> {
        // K5: the request's duration, as the client sees it.
        let started = std::time::Instant::now();
        let answer = self.call_untimed(ctx, tool, args, output).await;
        metrics::record_mcp(&McpRecord {
            side: Side::Client,
            method: "tools/call",
            tool: Some(tool),
            protocol_version: (self.peer.peer_info()).map(|info| info.protocol_version.to_string()),
            transport: None,
            error_type: answer
                .as_ref()
                .err()
                .map(|error| error_type(error).into_owned()),
            elapsed: started.elapsed(),
        });
        answer
    }

    /// [`Self::call`], untimed.
    async fn call_untimed(
        &self,
        ctx: &Context,
        tool: &str,
        args: Value,
        output: Option<&JsonSchemaValidator>,
    ) -> Result<WithImages<String>, BoxError> {
        let tasks = self.takes_tasks();
        if tasks && self.runs_as_task(tool) {
            let result = self.call_as_task(ctx, tool, args).await?;
            return answer(tool, result, output);
        }
        let again = tasks.then(|| args.clone());
        let result = match (self.call_plain(ctx, tool, args).await, again) {
            (Err(Plain::MethodNotFound(_)), Some(args)) => {
                self.remember_task_tool(tool);
                self.call_as_task(ctx, tool, args).await?
            }
            (Err(Plain::MethodNotFound(error)) | Err(Plain::Failed(error)), _) => {
                return Err(error);
            }
            (Ok(result), _) => result,
        };
        answer(tool, result, output)
    }

    /// A plain `tools/call`; the server's questions in its answer (`input_required`) answered
    /// and the call made again, at most [`MAX_ROUNDS`] times.
    async fn call_plain(
        &self,
        ctx: &Context,
        tool: &str,
        args: Value,
    ) -> Result<CallToolResult, Plain> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(arguments) = &args {
            params = params.with_arguments(arguments.clone());
        }
        // K6: the call's trace goes with it.
        params.meta = trace_meta();
        let unsupported = |what| {
            Plain::Failed(
                RemoteCallError::Unsupported {
                    tool: tool.to_owned(),
                    what,
                }
                .into(),
            )
        };
        for _ in 0..MAX_ROUNDS {
            let response = tokio::select! {
                biased;
                () = ctx.cancelled() => return Err(Plain::Failed(cancelled(tool))),
                response = self.peer.call_tool_once(params.clone()) => response,
            };
            match response {
                Ok(CallToolResponse::Complete(result)) => return Ok(result),
                Ok(CallToolResponse::InputRequired(input)) => {
                    // M3: the questions answered, the call made again with the answers.
                    let answers = (self.answering.answers(ctx, tool, &args, &input).await)
                        .map_err(Plain::Failed)?;
                    params.input_responses = Some(answers);
                    params.request_state = input.request_state;
                }
                // M5: a task of the Tasks extension (2026-07-28), awaited.
                Ok(CallToolResponse::Task(created)) => {
                    return (self
                        .await_extension_task(ctx, (tool, &args), &created.task)
                        .await)
                        .map_err(Plain::Failed);
                }
                Ok(_) => return Err(unsupported("a result of an unknown kind")),
                Err(ServiceError::McpError(error)) => {
                    let not_found = error.code == ErrorCode::METHOD_NOT_FOUND;
                    let error = protocol_error(tool, error);
                    return Err(if not_found {
                        Plain::MethodNotFound(error)
                    } else {
                        Plain::Failed(error)
                    });
                }
                Err(other) => return Err(Plain::Failed(transport_error(tool, other))),
            }
        }
        Err(unsupported("more rounds of questions than a call may take"))
    }
}

/// Why a plain call gave no result.
pub(super) enum Plain {
    /// The server answered `-32601`: on 2025-11-25, the tool runs only as a task.
    MethodNotFound(BoxError),
    /// Anything else.
    Failed(BoxError),
}

/// T2, P4: a cancelled remote call is `cancelled` here, as it would be were it local.
/// The `error.type` of a failed call (K5): `tool_error` for a result with `isError`, as the
/// conventions say, the JSON-RPC code of a refused request, else `_OTHER`.
fn error_type(error: &BoxError) -> std::borrow::Cow<'static, str> {
    if error.downcast_ref::<ToolError>().is_some() {
        return "tool_error".into();
    }
    match error.downcast_ref::<RemoteCallError>() {
        Some(RemoteCallError::Failed { .. }) => "tool_error".into(),
        Some(RemoteCallError::Protocol { code, .. }) => code.to_string().into(),
        Some(RemoteCallError::Cancelled { .. }) => "cancelled".into(),
        _ => "_OTHER".into(),
    }
}

/// K6: the W3C trace context of the call's span (the agent's `execute_tool`), for the
/// request's `_meta`, so that the server's span of the call continues the trace; `None` when
/// the span is not part of an OpenTelemetry trace.
pub(super) fn trace_meta() -> Option<RequestMetaObject> {
    let trace = crate::telemetry::of_span(&tracing::Span::current())?;
    let mut meta = MetaObject::new();
    meta.set_traceparent(trace.traceparent);
    if let Some(state) = trace.tracestate {
        meta.set_tracestate(state);
    }
    Some(meta.into())
}

pub(super) fn cancelled(tool: &str) -> BoxError {
    let cause = RemoteCallError::Cancelled {
        tool: tool.to_owned(),
    };
    Relayed::new(RelayedKind::Cancelled)
        .with_source(cause)
        .into()
}

/// A JSON-RPC error the server answered a request of the call of `tool` with.
pub(super) fn protocol_error(tool: &str, error: rmcp::ErrorData) -> BoxError {
    RemoteCallError::Protocol {
        tool: tool.to_owned(),
        code: error.code.0,
        message: error.message.into_owned(),
    }
    .into()
}

/// A failure to reach the server during the call of `tool`.
pub(super) fn transport_error(tool: &str, error: ServiceError) -> BoxError {
    RemoteCallError::Transport {
        tool: tool.to_owned(),
        source: Box::new(error),
    }
    .into()
}

/// What the call of `tool` gives, from the server's result.
fn answer(
    tool: &str,
    result: CallToolResult,
    output: Option<&JsonSchemaValidator>,
) -> Result<WithImages<String>, BoxError> {
    let failed = result.is_error == Some(true);
    let claimed = claimed_kind(&result);
    if !failed && let Some(checker) = output {
        check_output(tool, result.structured_content.as_ref(), checker)?;
    }
    let (text, images) = render(result);
    if !failed {
        // O3: the remote images go to the model beside the text.
        return Ok(images
            .into_iter()
            .fold(WithImages::new(text), WithImages::image));
    }
    match claimed {
        // T2: our server says the tool failed (its text is `the tool failed`): a failure
        // here too, redacted the same way, not approved text.
        Some(kind @ (RemoteKind::Failed | RemoteKind::Fatal)) => Err(RemoteCallError::Failed {
            tool: tool.to_owned(),
            kind: kind.name(),
            text,
        }
        .into()),
        // T2: a kind whose model text is fixed is that kind here too, with the same text.
        // Claiming one only ever says less to the model (see `Relayed`).
        Some(RemoteKind::Relayed(kind)) => Err(Relayed::new(kind).into()),
        // T1, T2: a rule only the server checks (a custom validator, S5): the violations it
        // found, with the text it rendered of them.
        Some(RemoteKind::Invalid(violations)) => {
            Err(Relayed::invalid_arguments(violations, text).into())
        }
        // T2: a call the server's user did not approve (H6) is `denied` here too.
        Some(RemoteKind::Denied) => Err(Relayed::denied(text).into()),
        // Anything else with `isError` is text for the model, as a third-party server's
        // `isError` result is (T2): `rejected`, with the remote text.
        None => {
            let text = if text.is_empty() {
                FAILED.to_owned()
            } else {
                text
            };
            Err(ToolError::new(text).into())
        }
    }
}

/// Checks a successful result's `structuredContent` against the tool's output schema (O1): a
/// result that breaks it, or lacks it, is not used (the call fails, redacted, E2).
fn check_output(
    tool: &str,
    structured: Option<&Value>,
    checker: &JsonSchemaValidator,
) -> Result<(), RemoteCallError> {
    let Some(structured) = structured else {
        return Err(RemoteCallError::InvalidOutput {
            tool: tool.to_owned(),
            reason: "it has no `structuredContent`".to_owned(),
        });
    };
    let mut cx = tool_core::violation::ParseCx::new();
    tool_core::ArgumentValidator::validate(checker, structured, &mut cx);
    let (violations, dropped, failure) = cx.finish();
    if violations.is_empty() && dropped == 0 && failure.is_none() {
        return Ok(());
    }
    let mut reason = tool_core::violation::render_violations(&violations, dropped);
    if let Some(failure) = failure {
        reason = format!("{reason}\n- the check failed: {failure}");
    }
    Err(RemoteCallError::InvalidOutput {
        tool: tool.to_owned(),
        reason,
    })
}

/// The outcome kinds a remote result may claim in `_meta` (T2) that change how it is read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RemoteKind {
    /// The remote tool failed; its text is not for the model.
    Failed,
    /// The remote call ended the remote side's run.
    Fatal,
    /// The remote call ended as a kind whose model text is fixed: unavailable, timed out,
    /// cancelled.
    Relayed(RelayedKind),
    /// The arguments broke these rules there.
    Invalid(Vec<Violation>),
    /// The call was not approved there (H6).
    Denied,
}

impl RemoteKind {
    fn name(self) -> &'static str {
        match self {
            RemoteKind::Failed => "failed",
            RemoteKind::Fatal => "fatal",
            RemoteKind::Relayed(RelayedKind::Unavailable) => "unavailable",
            RemoteKind::Relayed(RelayedKind::TimedOut) => "timed_out",
            RemoteKind::Relayed(RelayedKind::InvalidArguments) | RemoteKind::Invalid(_) => {
                "invalid_arguments"
            }
            RemoteKind::Relayed(RelayedKind::Denied) | RemoteKind::Denied => "denied",
            RemoteKind::Relayed(_) => "cancelled",
        }
    }
}

/// The outcome kind our server put in the result's `_meta` (T2), when it is one that changes
/// how an `isError` result is read here.
///
/// The server is untrusted, so a claim can only lower what the model is shown, never end our
/// run: a remote `fatal` is read as `failed` (a remote server cannot end the agent's run, P1
/// holds for our own handlers only; the model is told only `the tool failed` either way), and
/// an unknown value is ignored (the result is then `rejected`, as a third party's is).
///
/// `unavailable`, `timed_out` and `cancelled` become the same kinds here through
/// [`Relayed`], with the same fixed texts. `success` never overrides `isError`, and `rejected`
/// and `invalid_arguments` are read as a third party's `isError` (`rejected`, with the remote
/// text; our client validates arguments before it sends them, so invalid arguments are found
/// here first).
fn claimed_kind(result: &CallToolResult) -> Option<RemoteKind> {
    let meta = result.meta.as_ref()?;
    let claimed = meta.get(OUTCOME_META_KEY)?.as_str()?;
    match claimed {
        "failed" => Some(RemoteKind::Failed),
        "fatal" => Some(RemoteKind::Fatal),
        "unavailable" => Some(RemoteKind::Relayed(RelayedKind::Unavailable)),
        "timed_out" => Some(RemoteKind::Relayed(RelayedKind::TimedOut)),
        "cancelled" => Some(RemoteKind::Relayed(RelayedKind::Cancelled)),
        "invalid_arguments" => claimed_violations(meta).map(RemoteKind::Invalid),
        "denied" => Some(RemoteKind::Denied),
        _ => None,
    }
}

/// The violations our server lists with an `invalid_arguments` result (T2): at most
/// [`MAX_VIOLATIONS`], each with a pointer, a known rule and a message; a list that is not
/// that is no claim at all.
fn claimed_violations(meta: &MetaObject) -> Option<Vec<Violation>> {
    let listed = meta.get(VIOLATIONS_META_KEY)?.as_array()?;
    if listed.is_empty() || listed.len() > MAX_VIOLATIONS {
        return None;
    }
    listed
        .iter()
        .map(|item| {
            let path = item.get("path")?.as_str()?;
            let rule = Rule::from_keyword(item.get("rule")?.as_str()?)?;
            let message = item.get("message")?.as_str()?;
            (path.is_empty() || path.starts_with('/')).then(|| Violation {
                path: path.to_owned(),
                rule,
                message: message.to_owned(),
            })
        })
        .collect()
}

/// The text of a remote result, for the model: its text blocks, one per line; a line naming
/// each block that is neither text nor an image; the structured content when there is nothing
/// else. And its images (O3): an image whose data is not base64 is named by a line instead.
fn render(result: CallToolResult) -> (String, Vec<Image>) {
    let mut lines: Vec<String> = Vec::with_capacity(result.content.len());
    let mut images = Vec::new();
    for block in result.content {
        match block {
            ContentBlock::Text(text) => lines.push(text.text),
            ContentBlock::Image(image) => match Image::from_base64(&image.mime_type, &image.data) {
                Ok(decoded) => images.push(decoded),
                Err(_) => lines.push(format!("[image: {}]", image.mime_type)),
            },
            ContentBlock::Audio(audio) => lines.push(format!("[audio: {}]", audio.mime_type)),
            ContentBlock::Resource(resource) => match resource.resource {
                ResourceContents::TextResourceContents { text, .. } => lines.push(text),
                ResourceContents::BlobResourceContents { uri, .. } => {
                    lines.push(format!("[resource: {uri}]"));
                }
                _ => lines.push("[resource]".to_owned()),
            },
            ContentBlock::ResourceLink(link) => {
                lines.push(format!("[resource link: {}]", link.uri))
            }
            _ => lines.push("[content]".to_owned()),
        }
    }
    if lines.is_empty()
        && images.is_empty()
        && let Some(structured) = result.structured_content
    {
        let text = match structured {
            Value::String(s) => s,
            other => other.to_string(),
        };
        return (text, images);
    }
    (lines.join("\n"), images)
}
