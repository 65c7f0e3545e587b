//! What the application's functions are given: [`McpRequest`], what the transport knows
//! about a request (for the context function), and [`McpCall`], one call the server answered
//! (for `on_outcome`).

use http::{HeaderMap, Method, Uri, header};
use tool_core::Outcome;

/// The transport a request came over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum McpTransport {
    /// Standard input and output (or another byte stream given to
    /// [`McpServer::serve_io`](super::McpServer::serve_io)): the peer is whoever started the
    /// process, so the application authenticates it from the process environment.
    Stdio,
    /// Streamable HTTP: the application authenticates each request from its headers (a bearer
    /// token, say).
    Http,
}

/// What the transport authenticated about one request: given to the context function of an
/// [`McpServer`](super::McpServer), which builds the [`Context`](tool_core::Context) the
/// request's policies and handlers see.
///
/// It holds only what the transport carried (for HTTP, the method, the URI and the headers);
/// the model's or the client's tool arguments never reach the context function.
#[derive(Debug, Clone)]
pub struct McpRequest {
    transport: McpTransport,
    method: Option<Method>,
    uri: Option<Uri>,
    headers: HeaderMap,
}

impl McpRequest {
    /// A request that came over stdio.
    pub(crate) fn stdio() -> Self {
        Self {
            transport: McpTransport::Stdio,
            method: None,
            uri: None,
            headers: HeaderMap::new(),
        }
    }

    /// A request that came over HTTP.
    pub(crate) fn http(method: Method, uri: Uri, headers: HeaderMap) -> Self {
        Self {
            transport: McpTransport::Http,
            method: Some(method),
            uri: Some(uri),
            headers,
        }
    }

    /// The transport the request came over.
    pub fn transport(&self) -> McpTransport {
        self.transport
    }

    /// The HTTP headers (empty for stdio).
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The value of the header `name`, if it is present once and is visible ASCII.
    pub fn header(&self, name: &str) -> Option<&str> {
        let mut values = self.headers.get_all(name).iter();
        let value = values.next()?;
        if values.next().is_some() {
            return None;
        }
        value.to_str().ok()
    }

    /// The token of an `Authorization: Bearer <token>` header, if there is exactly one.
    ///
    /// The token is not verified: verifying it is the application's job.
    ///
    /// ```
    /// # use tool_runtime::mcp::McpRequest;
    /// fn principal(req: &McpRequest) -> Option<&str> {
    ///     req.bearer_token()
    /// }
    /// ```
    pub fn bearer_token(&self) -> Option<&str> {
        let value = self.header(header::AUTHORIZATION.as_str())?;
        let (scheme, token) = value.split_once(' ')?;
        let token = token.trim();
        (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
    }

    /// The HTTP method (`None` for stdio).
    pub fn method(&self) -> Option<&Method> {
        self.method.as_ref()
    }

    /// The HTTP request's URI (`None` for stdio).
    pub fn uri(&self) -> Option<&Uri> {
        self.uri.as_ref()
    }
}

/// One call the server answered, for
/// [`McpServerBuilder::on_outcome`](super::McpServerBuilder::on_outcome): the name the client
/// asked for, the request id, and the outcome with its unredacted error (E3).
#[derive(Debug)]
#[non_exhaustive]
pub struct McpCall<'a> {
    /// The tool name the client asked for (it may name no tool, A5).
    pub tool: &'a str,
    /// The JSON-RPC id of the request.
    pub call_id: &'a str,
    /// The transport the request came over.
    pub transport: McpTransport,
    /// How the call ended: the text the client got, and for the application the violations
    /// and the unredacted error.
    pub outcome: &'a Outcome,
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn with_auth(values: &[&'static str]) -> McpRequest {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(header::AUTHORIZATION, HeaderValue::from_static(v));
        }
        McpRequest::http(Method::POST, Uri::from_static("/mcp"), headers)
    }

    #[test]
    fn bearer_tokens_are_read_strictly() {
        assert_eq!(with_auth(&["Bearer abc"]).bearer_token(), Some("abc"));
        assert_eq!(with_auth(&["bearer  abc "]).bearer_token(), Some("abc"));
        assert_eq!(with_auth(&["Basic abc"]).bearer_token(), None);
        assert_eq!(with_auth(&["Bearer "]).bearer_token(), None);
        assert_eq!(with_auth(&["Bearer a", "Bearer b"]).bearer_token(), None);
        assert_eq!(McpRequest::stdio().bearer_token(), None);
        assert_eq!(McpRequest::stdio().transport(), McpTransport::Stdio);
    }
}
