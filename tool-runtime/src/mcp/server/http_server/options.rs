//! [`HttpOptions`]: where the streamable HTTP transport serves, and whom it accepts (T4).

/// Options of the streamable HTTP transport.
///
/// # Who may call (T4)
///
/// Only loopback `Host`s are accepted unless [`HttpOptions::allowed_hosts`] says otherwise,
/// and only requests without an `Origin` (non-browser clients) or from a loopback origin
/// unless [`HttpOptions::allowed_origins`] does: anything else is answered `403` before its
/// body is read. Every refusal (`401`, `403`, `404`, `405`, `413`, …) carries
/// `Connection: close`, so a client that pools connections opens a new one for its next
/// request instead of failing on one the server closed.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub(super) path: String,
    pub(super) allowed_hosts: Option<Vec<String>>,
    pub(super) allowed_origins: Option<Vec<String>>,
    pub(super) stateless: bool,
    pub(super) json_answers: bool,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            path: "/mcp".to_owned(),
            allowed_hosts: None,
            allowed_origins: None,
            stateless: false,
            json_answers: false,
        }
    }
}

impl HttpOptions {
    /// The default options: served at `/mcp`, accepting loopback `Host`s and origins only.
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
    /// 2026-07-28 protocol are served without sessions in any case.
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
}
