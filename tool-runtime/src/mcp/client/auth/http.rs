//! The HTTP client of an authorized MCP transport ([`OAuthHttp`]): each request carries the
//! session's token; a `401` is answered by authorizing and a `403 insufficient_scope` by
//! stepping up, each followed by one retry of the request.
//!
//! rmcp's own wrapper (`AuthClient`) refreshes on a `401` but leaves the grant and step-up to
//! its caller; here both happen inside the request, so a tool call needing a scope the token
//! lacks succeeds once the user grants it, and the session goes on.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::{OAuthError, Session};

/// An HTTP client `C` whose requests are authorized by a [`Session`].
pub(crate) struct OAuthHttp<C> {
    inner: C,
    session: Arc<Session>,
}

impl<C: Clone> Clone for OAuthHttp<C> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            session: Arc::clone(&self.session),
        }
    }
}

impl<C> OAuthHttp<C> {
    /// `inner`, its requests authorized by `session`.
    pub(crate) fn new(inner: C, session: Session) -> Self {
        Self {
            inner,
            session: Arc::new(session),
        }
    }
}

/// An authorization failure as the transport's error: the request fails with it (its text
/// names what failed, never a token).
fn refused<E: std::error::Error + Send + Sync + 'static>(e: OAuthError) -> StreamableHttpError<E> {
    tracing::debug!(error = %e, "authorization failed");
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(e.to_string()))
}

impl<C: StreamableHttpClient + Sync> OAuthHttp<C> {
    /// Runs `call` with the session's token; on `401` authorizes once and retries; on `403
    /// insufficient_scope` steps up and retries, at most the session's step-up limit.
    async fn authorized<T, F, Fut>(&self, call: F) -> Result<T, StreamableHttpError<C::Error>>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<C::Error>>>,
    {
        let mut token = self.session.token().await.map_err(refused)?;
        let (mut authorized, mut step_ups) = (false, 0);
        loop {
            match call(token.clone()).await {
                Err(StreamableHttpError::AuthRequired(challenge)) if !authorized => {
                    authorized = true;
                    let header = &challenge.www_authenticate_header;
                    let fresh = self.session.authorize(header, token.as_deref()).await;
                    token = Some(fresh.map_err(refused)?);
                }
                Err(StreamableHttpError::InsufficientScope(challenge))
                    if step_ups < self.session.step_up_limit() =>
                {
                    step_ups += 1;
                    let header = &challenge.www_authenticate_header;
                    let fresh = self.session.step_up(header, token.as_deref()).await;
                    token = Some(fresh.map_err(refused)?);
                }
                other => return other,
            }
        }
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for OAuthHttp<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            let (uri, session_id) = (uri.clone(), session_id.clone());
            (self.inner).delete_session(uri, session_id, token, custom_headers.clone())
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        self.authorized(|token| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        self.authorized(|token| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
