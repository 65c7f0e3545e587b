//! [`TokenVerifier`]: how a server validates a bearer token (Z2), and why it refuses one.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::Claims;

/// The future of [`TokenVerifier::verify`].
pub type VerifyFuture<'a> = Pin<Box<dyn Future<Output = Result<Claims, VerifyError>> + Send + 'a>>;

/// Validates an access token and returns its claims (Z2): [`JwtVerifier`](super::JwtVerifier)
/// for JWT access tokens, or the application's own (its introspection, its session store).
///
/// A verifier must check that the token was issued for this server (its audience) and is
/// still valid, and must never log, store or forward the token: the server refuses a request
/// whose token it refuses with `401`, whatever the reason.
pub trait TokenVerifier: Send + Sync + 'static {
    /// The claims of `token` (the bearer credential, without the `Bearer ` scheme), or why
    /// it is refused.
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;

    /// [`TokenVerifier::verify`], the claims shared rather than owned: what the server puts
    /// in each request's context. A verifier that keeps the claims of the tokens it verified
    /// (as [`JwtVerifier`](super::JwtVerifier) does) hands out its copy, saving a copy of
    /// every claim per request; the default wraps [`TokenVerifier::verify`]'s.
    fn verify_shared<'a>(&'a self, token: &'a str) -> SharedVerifyFuture<'a> {
        let verified = self.verify(token);
        Box::pin(async move { verified.await.map(Arc::new) })
    }
}

/// The future of [`TokenVerifier::verify_shared`].
pub type SharedVerifyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Arc<Claims>, VerifyError>> + Send + 'a>>;

/// Why a token is refused (Z2). No variant holds the token or any part of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// It is not a well-formed token: bad base64, bad JSON, a missing part.
    #[error("the token is malformed")]
    Malformed,
    /// It is longer than the verifier reads.
    #[error("the token is too large")]
    TooLarge,
    /// Its algorithm is not one the verifier accepts (`none`, an HMAC, or one not allowed).
    #[error("the token's algorithm is not allowed")]
    Algorithm,
    /// Its `typ` is not an access token's (`at+jwt`).
    #[error("the token is not an access token (its typ)")]
    Type,
    /// No key of the issuer has its `kid`.
    #[error("no key of the issuer matches the token")]
    UnknownKey,
    /// Its signature does not verify.
    #[error("the token's signature does not verify")]
    Signature,
    /// Another issuer issued it.
    #[error("the token was issued by another authorization server")]
    Issuer,
    /// It is meant for another resource.
    #[error("the token is meant for another resource")]
    Audience,
    /// It has expired.
    #[error("the token has expired")]
    Expired,
    /// It is not valid yet (`nbf`).
    #[error("the token is not valid yet")]
    NotYetValid,
    /// It lacks a claim the verifier requires.
    #[error("the token lacks the `{0}` claim")]
    MissingClaim(String),
    /// The issuer's keys (or its introspection) cannot be reached and none are cached: the
    /// token is refused (fail closed).
    #[error("the issuer's keys are unavailable: {0}")]
    KeysUnavailable(String),
    /// The application's verifier refused it, for the reason given.
    #[error("the token was refused: {0}")]
    Refused(String),
}
