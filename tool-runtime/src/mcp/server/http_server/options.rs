//! [`HttpOptions`]: where the streamable HTTP transport serves, whom it accepts (T4) and how
//! many sessions it holds (T5).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tool_core::Context;

use super::principal::KeyFn;
use crate::mcp::server::auth::Authorization;

/// Options of the streamable HTTP transport.
///
/// # Who may call (T4)
///
/// Only loopback `Host`s are accepted unless [`HttpOptions::allowed_hosts`] says otherwise,
/// and only requests without an `Origin` (non-browser clients) or from a loopback origin
/// unless [`HttpOptions::allowed_origins`] does: anything else is answered `403` before its
/// body is read. Every refusal (`401`, `403`, `404`, `405`, `413`, `429`, `503`, …) carries
/// `Connection: close`, so a client that pools connections opens a new one for its next
/// request instead of failing on one the server closed.
///
/// # Sessions (T5)
///
/// A server with sessions holds at most [`HttpOptions::max_sessions`] live sessions in all
/// (default 1,000) and [`HttpOptions::max_sessions_per_principal`] per principal (default
/// 100), and closes a session idle for [`HttpOptions::session_idle_timeout`] (default 5
/// minutes; later requests with its id get `404`, and the client initializes again). An
/// `initialize` past a bound opens no session and is answered `429` (the principal's bound)
/// or `503` (the server's), with `Retry-After`. A session's slot is free again once it is
/// closed: by the client's `DELETE`, by its idle timeout, or when the server stops.
///
/// A session costs about 50 KB (rmcp's session task and its channels), so the defaults hold
/// the server's session memory to about 50 MB, and one principal's to about 5 MB. The
/// principal is whom [`HttpOptions::principal_key`] names; without it, on a server that
/// authorizes its callers, the validated token's subject at its issuer; else the request's
/// `Authorization` header (its SHA-256 digest is kept, not the credential), or, for a request
/// without one, its peer's IP address (behind a proxy, the proxy's: name the principal
/// there). A stateless server ([`HttpOptions::stateless`]) holds no session, and none of this
/// applies.
///
/// # Authorization (Z1–Z3)
///
/// With [`HttpOptions::authorization`] the server is an OAuth 2.1 protected resource: see
/// [`crate::mcp::auth`].
#[derive(Clone)]
pub struct HttpOptions {
    pub(super) path: String,
    pub(super) allowed_hosts: Option<Vec<String>>,
    pub(super) allowed_origins: Option<Vec<String>>,
    pub(super) stateless: bool,
    pub(super) json_answers: bool,
    pub(super) max_sessions: usize,
    pub(super) max_sessions_per_principal: usize,
    pub(super) session_idle_timeout: Duration,
    pub(super) principal_key: Option<KeyFn>,
    pub(super) direct_calls: bool,
    pub(super) authorization: Option<Authorization>,
}

impl HttpOptions {
    /// The default bound on live sessions in all ([`HttpOptions::max_sessions`]).
    pub const DEFAULT_MAX_SESSIONS: usize = 1_000;
    /// The default bound on one principal's live sessions
    /// ([`HttpOptions::max_sessions_per_principal`]).
    pub const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL: usize = 100;
    /// The default time after which an idle session is closed
    /// ([`HttpOptions::session_idle_timeout`]).
    pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            path: "/mcp".to_owned(),
            allowed_hosts: None,
            allowed_origins: None,
            stateless: false,
            json_answers: false,
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            max_sessions_per_principal: Self::DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
            session_idle_timeout: Self::DEFAULT_SESSION_IDLE_TIMEOUT,
            principal_key: None,
            direct_calls: true,
            authorization: None,
        }
    }
}

impl HttpOptions {
    /// The default options: served at `/mcp`, accepting loopback `Host`s and origins only,
    /// with the default session bounds.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves at `path` instead of `/mcp`.
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Serves without sessions: no `Mcp-Session-Id`, each request stands alone, so replicas
    /// behind an ordinary load balancer can serve one client with no session affinity. A
    /// request's principal still comes from its own headers (the context function), and
    /// every call still goes through the whole pipeline. Clients that negotiate the
    /// 2026-07-28 protocol are served without sessions in any case. The session bounds do not
    /// apply: there is no session to hold.
    ///
    /// A call that needs approval (H6) asks a client on protocol 2026-07-28 or later with an
    /// `input_required` result, which any replica answers; a client on an older protocol
    /// cannot be asked without a session (its answer would not reach the waiting call) and is
    /// answered [`NO_ELICITATION_STATELESS`](crate::mcp::NO_ELICITATION_STATELESS) at once.
    #[must_use]
    pub fn stateless(mut self) -> Self {
        self.stateless = true;
        self
    }

    /// With [`HttpOptions::stateless`], answers a request with a plain JSON body
    /// (`application/json`) rather than an event stream when nothing else (a progress
    /// notification, an elicitation) is sent before the result.
    #[must_use]
    pub fn json_answers(mut self) -> Self {
        self.json_answers = true;
        self
    }

    /// Whether a stateless server with JSON answers answers a plain `tools/call` itself
    /// rather than through rmcp's framing (default: yes). The answers are the same either
    /// way; this switch is for the tests that prove it, and for measuring the difference.
    #[doc(hidden)]
    #[must_use]
    pub fn direct_calls(mut self, on: bool) -> Self {
        self.direct_calls = on;
        self
    }

    /// The path served.
    pub fn served_path(&self) -> &str {
        &self.path
    }

    /// Accepts requests whose `Host` is one of `hosts` (`"example.com"`, any port, or
    /// `"example.com:8443"`) instead of loopback names only, which guard a local server
    /// against DNS rebinding. Any other `Host` is answered `403` before the context function
    /// runs or the body is read (T4). An empty list accepts any `Host`: only for a server
    /// that something in front of it guards.
    #[must_use]
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Accepts requests from the browser origins `origins` instead of loopback ones (T4).
    /// An entry is an origin, `scheme://host[:port]` (without a port, the scheme's default:
    /// `https://app.example.com` is port 443), the same with the port `*` for any port
    /// (`http://localhost:*`), or `null` for the opaque origin of a sandboxed frame or a local
    /// file. An entry that is none of these is logged when the server starts and matches
    /// nothing. A request without `Origin` is always accepted (it comes from no browser);
    /// one from another origin is answered `403` before its body is read. An empty list
    /// accepts no browser at all.
    #[must_use]
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Holds at most `sessions` live sessions in all (T5; default
    /// [`DEFAULT_MAX_SESSIONS`](Self::DEFAULT_MAX_SESSIONS)): an `initialize` past it is
    /// answered `503 Service Unavailable` with `Retry-After`, and opens no session. `0` opens
    /// none (clients on the 2026-07-28 protocol, which needs none, are still served).
    #[must_use]
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// Holds at most `sessions` live sessions per principal (T5; default
    /// [`DEFAULT_MAX_SESSIONS_PER_PRINCIPAL`](Self::DEFAULT_MAX_SESSIONS_PER_PRINCIPAL)): an
    /// `initialize` past it is answered `429 Too Many Requests` with `Retry-After`, and opens
    /// no session. See [`HttpOptions::principal_key`] for who a principal is.
    #[must_use]
    pub fn max_sessions_per_principal(mut self, sessions: usize) -> Self {
        self.max_sessions_per_principal = sessions;
        self
    }

    /// Closes a session after `idle` without activity (T5; default
    /// [`DEFAULT_SESSION_IDLE_TIMEOUT`](Self::DEFAULT_SESSION_IDLE_TIMEOUT)), freeing its
    /// memory and its slot; a later request with its id is answered `404 Not Found`, and the
    /// client initializes again. Activity is a message either way: a request, a notification,
    /// an answer, a progress notification; a call that runs longer than `idle` without sending
    /// anything ends with its session. The `Retry-After` of a refused `initialize` is this
    /// time, between 1 and 60 seconds.
    #[must_use]
    pub fn session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle_timeout = idle;
        self
    }

    /// Names the principal the session bounds count a request's sessions against, from the
    /// [`Context`] the context function built for it (T5): the user's or the tenant's id, say.
    /// When it is not set or returns `None`, a request is counted against its `Authorization`
    /// header (one principal per credential) or, without one, its peer's IP address (one
    /// principal per address: every unauthenticated client behind one proxy is one).
    ///
    /// ```
    /// use tool_runtime::mcp::HttpOptions;
    ///
    /// # #[derive(Clone)] struct Principal { tenant: String }
    /// // All the users of one tenant share its bound.
    /// let options = HttpOptions::new()
    ///     .max_sessions_per_principal(20)
    ///     .principal_key(|ctx| ctx.get::<Principal>().map(|p| p.tenant.clone()));
    /// ```
    #[must_use]
    pub fn principal_key(
        mut self,
        key: impl Fn(&Context) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.principal_key = Some(Arc::new(key));
        self
    }
}

impl HttpOptions {
    /// Makes the server an OAuth 2.1 protected resource (Z1–Z3): it serves its Protected
    /// Resource Metadata at the well-known URIs, answers a request without a valid bearer
    /// token `401` with a challenge naming that metadata (before the context function runs),
    /// lists to each token only the tools its scopes grant (or all, for step-up), answers a
    /// call whose token lacks a scope of its tool `403 insufficient_scope`, and puts the
    /// token's [`Claims`](crate::mcp::auth::Claims) in every request's context, where a
    /// handler takes them as `&Claims` (C1). The context function still runs, for what the
    /// application adds; the claims are added to what it returns.
    #[must_use]
    pub fn authorization(mut self, authorization: Authorization) -> Self {
        self.authorization = Some(authorization);
        self
    }
}

impl fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpOptions")
            .field("path", &self.path)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("stateless", &self.stateless)
            .field("json_answers", &self.json_answers)
            .field("max_sessions", &self.max_sessions)
            .field(
                "max_sessions_per_principal",
                &self.max_sessions_per_principal,
            )
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("principal_key", &self.principal_key.as_ref().map(|_| ".."))
            .field("direct_calls", &self.direct_calls)
            .field("authorization", &self.authorization)
            .finish()
    }
}
