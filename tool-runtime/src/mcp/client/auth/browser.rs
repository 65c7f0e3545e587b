//! The user's step of the authorization-code flow, as the application's callback: it shows
//! the authorization URL to the user (a browser, a printed link, a test's own user agent) and
//! gives back the URL the authorization server redirected the browser to.

use std::future::Future;

use tool_core::BoxError;
use tool_core::policy::BoxFuture;

/// Takes the user through the authorization server's pages (Z4).
///
/// [`Browser::authorize`] gets the authorization URL and returns the full URL the browser
/// was redirected to (the redirect URI with `code`, `state` and `iss`). The redirect is
/// checked by the caller: its `state`, and its `iss` against the authorization server's
/// issuer (RFC 9207). Use [`browser_fn`] for a closure.
pub trait Browser: Send + Sync + 'static {
    /// Shows `authorization_url` to the user; returns the URL the browser came back to.
    ///
    /// # Errors
    ///
    /// Whatever kept the user from finishing (closed, timed out, refused); it ends the
    /// authorization with [`OAuthError::Browser`](super::OAuthError::Browser).
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> BoxFuture<'a, Result<String, BoxError>>;
}

/// A [`Browser`] from a function of the authorization URL that returns the redirect URL.
pub fn browser_fn<F, Fut, E>(f: F) -> impl Browser
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, E>> + Send + 'static,
    E: Into<BoxError>,
{
    BrowserFn(f)
}

struct BrowserFn<F>(F);

impl<F, Fut, E> Browser for BrowserFn<F>
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, E>> + Send + 'static,
    E: Into<BoxError>,
{
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> BoxFuture<'a, Result<String, BoxError>> {
        let answer = (self.0)(authorization_url.to_owned());
        Box::pin(async move { answer.await.map_err(Into::into) })
    }
}
