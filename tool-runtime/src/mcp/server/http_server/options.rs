//! [`HttpOptions`]: where the streamable HTTP transport serves, and whom it accepts.

/// Options of the streamable HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub(super) path: String,
    pub(super) allowed_hosts: Option<Vec<String>>,
    pub(super) stateless: bool,
    pub(super) json_answers: bool,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            path: "/mcp".to_owned(),
            allowed_hosts: None,
            stateless: false,
            json_answers: false,
        }
    }
}

impl HttpOptions {
    /// The default options: served at `/mcp`, accepting loopback `Host`s only.
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

    /// Accepts requests whose `Host` is one of `hosts` (`"example.com"` or
    /// `"example.com:8443"`) instead of loopback names only, which guard a local server
    /// against DNS rebinding.
    #[must_use]
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }
}
