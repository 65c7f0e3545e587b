//! Why a toolset could not be authorized by a protected server ([`OAuthError`]).

use rmcp::transport::auth::AuthError;
use tool_core::BoxError;

/// Why the client could not get a token for a protected MCP server (Z4). None of these
/// carries a token: rmcp's errors name what failed, never a credential.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// The server's Protected Resource Metadata or its authorization server's metadata
    /// could not be found or used.
    #[error("cannot discover the authorization server of {server}: {source}")]
    Discovery {
        /// The MCP server's URL.
        server: String,
        /// What failed.
        source: Box<AuthError>,
    },
    /// Neither Protected Resource Metadata nor authorization server metadata was found at
    /// any of the URIs MCP specifies (no endpoint is guessed).
    #[error("{server} names no authorization server: no metadata at any well-known URI")]
    NoMetadata {
        /// The MCP server's URL.
        server: String,
    },
    /// The authorization server does not list PKCE `S256` in its metadata
    /// (`code_challenge_methods_supported`): MCP forbids the flow without it.
    #[error("the authorization server {issuer} does not support PKCE with S256: refused")]
    PkceUnsupported {
        /// The authorization server's issuer (or its authorization endpoint).
        issuer: String,
    },
    /// The client could not be registered (dynamic registration refused, a client ID
    /// metadata URL that is not HTTPS, a client credentials method the server lacks).
    #[error("the client cannot be registered: {0}")]
    Registration(Box<AuthError>),
    /// The application's [`Browser`](super::Browser) did not bring the user back.
    #[error("the user's authorization did not complete: {0}")]
    Browser(BoxError),
    /// The redirect back from the authorization server is refused: an `error` from the
    /// server, another redirect URI, an unknown `state`, or an `iss` that is not the
    /// authorization server's issuer (RFC 9207).
    #[error("the authorization redirect is refused: {0}")]
    Redirect(String),
    /// The token endpoint did not give a token (the exchange, a refresh, client credentials).
    #[error("no token from the authorization server: {0}")]
    Token(Box<AuthError>),
    /// The server asked for more scopes (`403 insufficient_scope`) without naming them.
    #[error("the server refused the token for its scopes without naming the scopes it needs")]
    UnnamedScope,
    /// The token store failed.
    #[error("the token store failed: {0}")]
    Store(Box<AuthError>),
}

impl OAuthError {
    /// [`OAuthError::Registration`].
    pub(super) fn registration(e: AuthError) -> Self {
        Self::Registration(Box::new(e))
    }

    /// [`OAuthError::Token`].
    pub(super) fn token(e: AuthError) -> Self {
        Self::Token(Box::new(e))
    }

    /// [`OAuthError::Store`].
    pub(super) fn store(e: AuthError) -> Self {
        Self::Store(Box::new(e))
    }
}
