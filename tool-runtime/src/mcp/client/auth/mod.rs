//! Connecting to a protected MCP server (Z4): [`OAuthClient`], given to
//! [`McpToolsetBuilder::oauth`](super::McpToolsetBuilder::oauth), gets and keeps the access
//! token an HTTP server asks for, as the MCP authorization rules say.
//!
//! - `browser`: the user's step of the authorization-code flow, as the application's
//!   callback ([`Browser`], [`browser_fn`]).
//! - `session`: discovery, registration, the grants, refresh and step-up, over rmcp's OAuth
//!   client (its `auth` feature), with the checks it leaves out.
//! - `http`: the HTTP client of the MCP transport that asks the session for a token and
//!   answers a server's `401` and `403 insufficient_scope`.
//! - `assertion`: client credentials with `private_key_jwt` ([`SigningAlgorithm`]).
//! - `store`: where tokens are kept ([`CredentialStore`], memory by default).
//! - `error`: why authorization failed ([`OAuthError`]).
//!
//! What rmcp's client does and this module relies on: Protected Resource Metadata found from
//! the `resource_metadata` of a `WWW-Authenticate` challenge, then at the path-inserted and
//! root well-known URIs (RFC 9728); the authorization server's metadata at RFC 8414's and
//! OpenID Connect discovery's URIs in the order MCP specifies; the client registered in the
//! order MCP specifies (a pre-registered client, a client ID metadata document when the
//! server supports them, dynamic registration); PKCE S256; RFC 8707 `resource` in the
//! authorization, token and client credentials requests; the RFC 9207 `iss` of the redirect
//! checked against the issuer; stored credentials discarded when their issuer is no longer
//! the server's; a refresh when less than half the token's life, at most 30 s, remains.
//!
//! What it checks beyond rmcp (where rmcp is laxer than MCP): an authorization server whose
//! metadata does not list `S256` in `code_challenge_methods_supported` is refused (rmcp
//! accepts a missing list), and a server whose metadata cannot be found is refused (rmcp
//! falls back to `/authorize` and `/token` on the server's host, which MCP no longer allows).
//! What it does itself: the grant and step-up inside the transport's requests (rmcp's
//! `AuthClient` only refreshes), and `private_key_jwt` (see `assertion`).

mod assertion;
mod browser;
mod error;
mod http;
mod session;
mod store;

use std::fmt;
use std::sync::Arc;

pub use assertion::SigningAlgorithm;
pub use browser::{Browser, browser_fn};
pub use error::OAuthError;
pub use rmcp::transport::auth::{
    AuthError, CredentialStore, InMemoryCredentialStore, StoredCredentials,
};

pub(crate) use http::OAuthHttp;
pub(crate) use session::Session;

/// How many times one request may be retried after a `403 insufficient_scope`, each time with
/// a token for more scopes, unless set with [`OAuthClient::step_up_limit`].
pub const DEFAULT_STEP_UP_LIMIT: u32 = 2;

/// How an [`McpToolset`](super::McpToolset) authenticates to a protected HTTP server (Z4):
/// the grant, the client's registration, the scopes, and where tokens are kept.
///
/// A request that gets `401` starts discovery and the grant; a token is refreshed before it
/// expires; a `403 insufficient_scope` asks for a token with the scopes the server names
/// (step-up) and retries, at most [`OAuthClient::step_up_limit`] times per request. A token
/// never appears in a log, a span, an error or a model-facing text.
///
/// ```no_run
/// use tool_runtime::mcp::McpToolset;
/// use tool_runtime::mcp::oauth::{OAuthClient, browser_fn};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // The application shows the URL to its user and returns the URL the browser was sent
/// // back to (here a local callback server of the application's own).
/// let browser = browser_fn(|url: String| async move {
///     println!("open {url}");
///     Ok::<_, std::io::Error>(wait_for_redirect().await)
/// });
/// let tickets = McpToolset::builder()
///     .oauth(
///         OAuthClient::authorization_code("http://127.0.0.1:8765/callback", browser)
///             .scopes(["tickets:read"]),
///     )
///     .connect_http("https://tickets.example/mcp")
///     .await?;
/// # Ok(())
/// # }
/// # async fn wait_for_redirect() -> String { String::new() }
/// ```
#[derive(Clone)]
#[must_use = "an OAuth client does nothing until given to a toolset"]
pub struct OAuthClient {
    pub(crate) grant: Grant,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
    /// The private key (PEM) and algorithm of `private_key_jwt` client authentication.
    pub(crate) private_key: Option<(Vec<u8>, SigningAlgorithm)>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) client_name: String,
    pub(crate) scopes: Vec<String>,
    pub(crate) store: Arc<dyn CredentialStore>,
    pub(crate) step_up_limit: u32,
}

/// How a token is obtained.
#[derive(Clone)]
pub(crate) enum Grant {
    /// The authorization-code flow with PKCE; the user's step through the browser.
    AuthorizationCode {
        redirect_uri: String,
        browser: Arc<dyn Browser>,
    },
    /// The client credentials grant (machine to machine).
    ClientCredentials,
}

impl OAuthClient {
    /// The authorization-code flow with PKCE S256, for a user: `browser` shows the
    /// authorization URL to the user and returns the URL the user's browser was redirected
    /// to, which must start with `redirect_uri`. The client is registered dynamically unless
    /// [`OAuthClient::client_id`] or [`OAuthClient::client_metadata_url`] says otherwise.
    pub fn authorization_code(redirect_uri: impl Into<String>, browser: impl Browser) -> Self {
        Self::new(Grant::AuthorizationCode {
            redirect_uri: redirect_uri.into(),
            browser: Arc::new(browser),
        })
    }

    /// The client credentials grant, for a service acting on its own behalf: the client
    /// authenticates at the token endpoint with its secret (`client_secret_basic` when the
    /// authorization server offers only that, else `client_secret_post`).
    pub fn client_credentials(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        let mut client = Self::new(Grant::ClientCredentials);
        client.client_id = Some(client_id.into());
        client.client_secret = Some(client_secret.into());
        client
    }

    /// The client credentials grant, the client authenticating with a JWT it signs with its
    /// private key (`private_key_jwt`, RFC 7523): `private_key_pem` is an RSA or EC key in
    /// PEM, `algorithm` the one its public key is registered for.
    pub fn client_credentials_private_key_jwt(
        client_id: impl Into<String>,
        private_key_pem: impl Into<Vec<u8>>,
        algorithm: SigningAlgorithm,
    ) -> Self {
        let mut client = Self::new(Grant::ClientCredentials);
        client.client_id = Some(client_id.into());
        client.private_key = Some((private_key_pem.into(), algorithm));
        client
    }

    fn new(grant: Grant) -> Self {
        Self {
            grant,
            client_id: None,
            client_secret: None,
            private_key: None,
            client_metadata_url: None,
            client_name: "tool-runtime".to_owned(),
            scopes: Vec::new(),
            store: Arc::new(InMemoryCredentialStore::new()),
            step_up_limit: DEFAULT_STEP_UP_LIMIT,
        }
    }

    /// A client registered beforehand with the authorization server, by its ID (no dynamic
    /// registration).
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The secret of a confidential pre-registered client.
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// The HTTPS URL of this client's metadata document, its client ID at authorization
    /// servers that support client ID metadata documents (used before dynamic registration,
    /// after a pre-registered ID).
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The name the client registers under (default `tool-runtime`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The scopes to ask for first. Without any, the scopes the server's challenge names, or
    /// else those its Protected Resource Metadata lists.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Keeps tokens in `store` (default: in memory, for this client only). Stored tokens are
    /// bound to the issuer that granted them: once the server names another authorization
    /// server, they are discarded.
    pub fn store(mut self, store: impl CredentialStore + 'static) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// How many times one request is retried after `403 insufficient_scope`, each time after
    /// asking for the scopes the server named (default [`DEFAULT_STEP_UP_LIMIT`]; `0`: never,
    /// the `403` is the request's error).
    pub fn step_up_limit(mut self, limit: u32) -> Self {
        self.step_up_limit = limit;
        self
    }
}

impl fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let grant = match self.grant {
            Grant::AuthorizationCode { .. } => "authorization_code",
            Grant::ClientCredentials => "client_credentials",
        };
        f.debug_struct("OAuthClient")
            .field("grant", &grant)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field(
                "private_key",
                &self.private_key.as_ref().map(|(_, alg)| alg),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("step_up_limit", &self.step_up_limit)
            .finish_non_exhaustive()
    }
}
