//! MCP authorization on the server side (Z1–Z3): an HTTP server as an OAuth 2.1 protected
//! resource.
//!
//! Give [`HttpOptions::authorization`](crate::mcp::HttpOptions::authorization) an
//! [`Authorization`]: the server's canonical URI, its authorization servers, the scopes it
//! supports, a [`TokenVerifier`] ([`JwtVerifier`] for JWT access tokens,
//! [`IntrospectionVerifier`] for opaque ones, or the application's own) and a
//! [`ScopeHierarchy`]. The server then serves its Protected Resource Metadata (RFC 9728),
//! answers a request without a valid token `401` with a challenge naming that metadata, lists
//! to each token the tools its scopes grant (`#[tool(scopes = "…")]`), answers a call lacking a
//! scope `403 insufficient_scope`, and puts the token's validated [`Claims`] in the context of
//! every request, where a handler takes them as `&Claims` (C1).
//!
//! - `claims`: [`Claims`].
//! - `verifier`: [`TokenVerifier`], [`VerifyError`].
//! - `jwt`, `jwks`: [`JwtVerifier`] and its key cache.
//! - `introspection`: [`IntrospectionVerifier`], for opaque tokens (RFC 7662).
//! - `hierarchy`: [`ScopeHierarchy`].
//! - `challenge`: the metadata document and the `401`/`403` answers.

mod challenge;
mod claims;
mod hierarchy;
mod introspection;
mod jwks;
mod jwt;
mod verified;
mod verifier;

use std::fmt;
use std::sync::Arc;

use reqwest::Url;

pub use claims::Claims;
pub use hierarchy::ScopeHierarchy;
pub use introspection::IntrospectionVerifier;
pub use jsonwebtoken::Algorithm;
pub use jwt::{JwtVerifier, MAX_LEEWAY};
pub use verifier::{SharedVerifyFuture, TokenVerifier, VerifyError, VerifyFuture};

pub(crate) use challenge::Challenge;

/// The scope MCP keeps out of a resource's metadata and challenges: whether a client gets a
/// refresh token is between it and the authorization server.
const OFFLINE_ACCESS: &str = "offline_access";

/// A configuration that cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthConfigError {
    /// A URI that is not an absolute `http` or `https` URL without a fragment.
    #[error("the {what} {uri:?} is not an absolute http(s) URL without a fragment")]
    InvalidUri {
        /// Which URI.
        what: &'static str,
        /// The URI as given.
        uri: String,
    },
}

/// How an HTTP MCP server authorizes its callers (Z1–Z3): the server as an OAuth 2.1
/// protected resource.
///
/// ```
/// use tool_runtime::mcp::HttpOptions;
/// use tool_runtime::mcp::auth::Authorization;
///
/// let auth = Authorization::jwt("https://mcp.example.com/mcp", "https://auth.example.com")?
///     .scopes_supported(["tickets:read", "tickets:write"])
///     .scope_implies("tickets:write", ["tickets:read"]);
/// assert_eq!(
///     auth.metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// let options = HttpOptions::new().authorization(auth);
/// # Ok::<(), tool_runtime::mcp::auth::AuthConfigError>(())
/// ```
#[derive(Clone)]
pub struct Authorization {
    pub(crate) resource: String,
    resource_url: Url,
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) verifier: Arc<dyn TokenVerifier>,
    pub(crate) hierarchy: ScopeHierarchy,
    pub(crate) step_up: bool,
}

impl Authorization {
    /// The server at the canonical URI `resource` (as clients name it: scheme, host, port and
    /// path, no fragment), its tokens checked by `verifier`.
    ///
    /// # Errors
    ///
    /// Returns [`AuthConfigError::InvalidUri`] when `resource` is not such a URL.
    pub fn new(resource: &str, verifier: impl TokenVerifier) -> Result<Self, AuthConfigError> {
        let resource_url = http_url("resource", resource)?;
        Ok(Self {
            resource: resource.to_owned(),
            resource_url,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            verifier: Arc::new(verifier),
            hierarchy: ScopeHierarchy::new(),
            step_up: false,
        })
    }

    /// The server at `resource`, its JWT access tokens issued by `issuer` (which is also its
    /// authorization server) and checked by a [`JwtVerifier`] with its defaults.
    ///
    /// # Errors
    ///
    /// Returns [`AuthConfigError::InvalidUri`] when either is not an http(s) URL.
    pub fn jwt(resource: &str, issuer: &str) -> Result<Self, AuthConfigError> {
        http_url("issuer", issuer)?;
        Ok(Self::new(resource, JwtVerifier::new(issuer, resource))?.authorization_server(issuer))
    }

    /// Adds an authorization server (its issuer identifier) to the metadata.
    #[must_use]
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes the server supports, in its metadata and in its `401` challenges
    /// (`offline_access` is left out).
    #[must_use]
    pub fn scopes_supported(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes_supported = scopes
            .into_iter()
            .map(Into::into)
            .filter(|scope| scope != OFFLINE_ACCESS)
            .collect();
        self
    }

    /// Declares that a token granting `scope` grants each of `implied` too (Z3).
    #[must_use]
    pub fn scope_implies(
        mut self,
        scope: impl Into<String>,
        implied: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.hierarchy = self.hierarchy.implies(scope, implied);
        self
    }

    /// Sets the whole scope hierarchy (Z3).
    #[must_use]
    pub fn hierarchy(mut self, hierarchy: ScopeHierarchy) -> Self {
        self.hierarchy = hierarchy;
        self
    }

    /// Lists every tool to every valid token, for step-up: a call of a tool whose scopes the
    /// token lacks is still answered `403` with the scopes to ask for (Z3). By default a tool
    /// is listed only to a token that grants its scopes.
    #[must_use]
    pub fn list_for_step_up(mut self) -> Self {
        self.step_up = true;
        self
    }

    /// The URL of the server's Protected Resource Metadata, as its challenges name it: the
    /// well-known URI with the resource's path inserted (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> String {
        let mut url = self.resource_url.clone();
        url.set_path(&format!(
            "{}{}",
            challenge::WELL_KNOWN,
            self.resource_path()
        ));
        url.set_query(None);
        url.to_string()
    }

    /// The resource's path without a trailing `/` (`""` for a root resource).
    fn resource_path(&self) -> &str {
        self.resource_url.path().trim_end_matches('/')
    }
}

impl fmt::Debug for Authorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorization")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("hierarchy", &self.hierarchy)
            .field("step_up", &self.step_up)
            .finish_non_exhaustive()
    }
}

/// `uri` as an absolute http(s) URL without a fragment.
fn http_url(what: &'static str, uri: &str) -> Result<Url, AuthConfigError> {
    let invalid = || AuthConfigError::InvalidUri {
        what,
        uri: uri.to_owned(),
    };
    let url = Url::parse(uri).map_err(|_| invalid())?;
    if !matches!(url.scheme(), "http" | "https") || url.fragment().is_some() || !url.has_host() {
        return Err(invalid());
    }
    Ok(url)
}
