//! [`Session`]: what serving one stdio session, or the requests of one HTTP session, holds
//! (the server's [`Shared`], the transport, whether requests can be sent during a call), and
//! what it works out of a request: its context, and who owns the tasks it makes (M5) and the
//! tools its searches load (Q1, whose catalog is `search`'s).

use std::sync::Arc;

use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::{ErrorData, RoleServer};
use tool_core::{Context, Outcome, OutcomeKind, Tool};

use crate::agent::catalog::{self, RunScope};

use super::request::{McpRequest, McpTransport};
use super::shared::Shared;

/// The owner of what requests without a lasting session or an `Authorization` leave: every
/// such caller alike.
pub(crate) const ANYONE: &str = "anyone";

/// The [`Context`] the HTTP layer built for a request, carried in the request's extensions.
#[derive(Clone)]
pub(crate) struct Authenticated(pub(crate) Context);

/// One stdio session, or the requests of one HTTP session.
#[derive(Clone)]
pub(crate) struct Session {
    pub(crate) shared: Arc<Shared>,
    pub(crate) transport: McpTransport,
    /// Whether a request the server sends during a call can be answered (false for a
    /// stateless HTTP server, H6).
    pub(crate) sessions: bool,
    /// Who owns what this session leaves over stdio (tasks M5, loaded tools Q1): its own id.
    /// An HTTP session is named by its `Mcp-Session-Id` ([`http_owner`]), which the HTTP
    /// layer reads too; this id only names one whose request names none (an `initialize`).
    connection: Arc<str>,
    /// The level of log messages its client asked for (`logging/setLevel`, M8).
    pub(crate) log_level: super::logging::SessionLevel,
}

impl Session {
    pub(crate) fn new(shared: Arc<Shared>, transport: McpTransport) -> Self {
        Self {
            shared,
            transport,
            sessions: true,
            connection: crate::agent::new_id("session-").into(),
            log_level: super::logging::SessionLevel::default(),
        }
    }

    /// The same session, for a server that keeps sessions or not: one without them never
    /// sends a request during a call whose answer it would have to wait for (H6).
    pub(crate) fn with_sessions(mut self, sessions: bool) -> Self {
        self.sessions = sessions;
        self
    }

    /// Whose the tasks a request makes or asks after are (M5): the session's (stdio, or a
    /// stateful HTTP server, which makes a handler per session); without sessions, the
    /// holder of the request's `Authorization` (a digest of it), else anyone's.
    pub(crate) fn task_owner(&self, cx: &RequestContext<RoleServer>) -> String {
        let parts = cx.extensions.get::<http::request::Parts>();
        self.owner(parts, cx.protocol_version().as_ref())
    }

    /// Whether what a request leaves (tasks, tools a search loaded) stays with a session
    /// that lasts: stdio, or a stateful HTTP server before 2026-07-28, which has no sessions
    /// over HTTP (a handler may serve one request only).
    pub(crate) fn lasts(&self, protocol: Option<&ProtocolVersion>) -> bool {
        self.transport == McpTransport::Stdio || (self.sessions && !is_modern(protocol))
    }

    /// Whether notifications can reach this session later, unasked: one that lasts, on a
    /// protocol before 2026-07-28. On 2026-07-28 a client hears of changes only on the
    /// `subscriptions/listen` streams it opens, of only what it asked for there.
    pub(crate) fn told_unasked(&self, protocol: Option<&ProtocolVersion>) -> bool {
        self.lasts(protocol) && !is_modern(protocol)
    }

    /// Who owns what a request of `protocol` with the HTTP `parts` leaves (tasks, tools a
    /// search loaded): the session that lasts, else the holder of its `Authorization`, else
    /// anyone. An HTTP session is named as [`http_owner`] names it, so that the HTTP layer,
    /// which reads a request before any session does, names the same owner.
    pub(crate) fn owner(
        &self,
        parts: Option<&http::request::Parts>,
        protocol: Option<&ProtocolVersion>,
    ) -> String {
        match self.transport {
            McpTransport::Stdio => self.connection.to_string(),
            McpTransport::Http => http_owner(self.sessions, parts, protocol)
                .unwrap_or_else(|| self.connection.to_string()),
        }
    }

    /// The context of one request: built by the HTTP layer (which rejected the request if it
    /// could not be built) and found in `parts`, or by the context function for stdio.
    pub(crate) async fn request_context(
        &self,
        parts: Option<&http::request::Parts>,
    ) -> Result<Context, ErrorData> {
        match self.transport {
            McpTransport::Http => http_context(parts),
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
}

/// Whether `protocol` is 2026-07-28 or later, which has no sessions.
fn is_modern(protocol: Option<&ProtocolVersion>) -> bool {
    protocol.is_some_and(|version| *version >= ProtocolVersion::V_2026_07_28)
}

/// Who owns what an HTTP request of `protocol` with `parts` leaves, on a server that keeps
/// sessions (`sessions`) or not: where a session lasts (before 2026-07-28), the session its
/// `Mcp-Session-Id` names (rmcp routes the request to that session, or refuses it); else the
/// holder of its `Authorization` (a digest of it), else anyone. `None` for a request of a
/// lasting session that names none: its `initialize`, which leaves nothing.
///
/// The HTTP layer asks it before rmcp reads the request (Z3, A5), each session after:
/// both name the same owner.
pub(crate) fn http_owner(
    sessions: bool,
    parts: Option<&http::request::Parts>,
    protocol: Option<&ProtocolVersion>,
) -> Option<String> {
    let headers = parts.map(|parts| &parts.headers);
    if sessions && !is_modern(protocol) {
        let session = headers.and_then(|headers| headers.get(HEADER_SESSION_ID))?;
        return Some(format!("http-session-{}", digest(session.as_bytes())));
    }
    Some(
        match headers.and_then(|h| h.get(http::header::AUTHORIZATION)) {
            Some(value) => format!("authorization-{}", digest(value.as_bytes())),
            None => ANYONE.to_owned(),
        },
    )
}

/// The SHA-256 digest of `bytes`, in lowercase hex: an owner's key holds no credential.
fn digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    base16ct::lower::encode_string(&sha2::Sha256::digest(bytes))
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

// ─── Deferred tools and their search (Q1) ───

impl Session {
    /// The tool the server publishes as `name`, if `owner` may call it: a deferred tool no
    /// search of the owner's loaded is not (Q1, A5).
    pub(crate) fn tool_for(&self, name: &str, owner: &str) -> Option<&Tool> {
        self.shared.tool_for(name, Some(owner))
    }

    /// `call_ctx`, holding the scope of a search when `tool` is the search tool: the
    /// deferred tools the call's policies and scopes offer (A2, Z3), each checked on the
    /// request's context as `tools/list` checks it. A policy that fails offers its tool not.
    pub(crate) async fn search_scope(&self, tool: Option<&Tool>, call_ctx: Context) -> Context {
        let Some(deferred) = &self.shared.deferred else {
            return call_ctx;
        };
        let tools = &self.shared.set.tools;
        let at = tool.and_then(|tool| self.shared.set.by_name.get(tool.name()));
        if !at.is_some_and(|&at| deferred.is_search(at)) {
            return call_ctx;
        }
        let scope = deferred.scope(tools, &call_ctx).await;
        call_ctx.with(scope)
    }

    /// After a successful search of `owner`'s on `call_ctx` (its scope), loads the tools it
    /// returned. When something was loaded, tells the owner its tool list changed: its
    /// session, when it lasts on a protocol before 2026-07-28 (whose clients read the
    /// notification unasked), and on 2026-07-28 the `subscriptions/listen` streams it opened
    /// asking for tool list changes (M7); no other caller's list changed.
    pub(crate) async fn load_found(
        &self,
        call_ctx: &Context,
        outcome: &Outcome,
        owner: &str,
        cx: Option<&RequestContext<RoleServer>>,
    ) {
        let (Some(deferred), Some(scope)) = (&self.shared.deferred, call_ctx.get::<RunScope>())
        else {
            return;
        };
        let Some(offered) = scope.offered() else {
            return;
        };
        if outcome.kind() != OutcomeKind::Success {
            return;
        }
        let found: Vec<usize> = (catalog::found_in(outcome.text()).iter())
            .filter_map(|name| self.shared.by_name.get(name.as_str()).copied())
            .collect();
        if !deferred.load(owner, &found, &offered) {
            return;
        }
        if let Some(cx) = cx
            && self.told_unasked(cx.protocol_version().as_ref())
            && let Err(error) = cx.peer.notify_tool_list_changed().await
        {
            tracing::debug!(%error, "the tool list's change could not be told to the client");
        }
        // A stream is kept against its owner as `listen` keeps it: anonymous callers as none.
        let streams = Some(owner).filter(|owner| *owner != ANYONE);
        (self.shared.catalog.subscriptions)
            .tools_changed(streams)
            .await;
    }
}
