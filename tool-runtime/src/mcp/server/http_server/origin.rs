//! T4: which browser origins may call the server. The MCP transport requires a server to
//! validate `Origin` (a web page the user visits must not reach a local server through the
//! user's browser); a request without the header comes from no browser and passes.

use http::header::ORIGIN;
use http::{HeaderMap, Uri};

/// The ports an allowed origin matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Port {
    /// This port only (the scheme's default when the origin names none).
    Exact(u16),
    /// Any port (`:*`).
    Any,
    /// No port: a scheme without a default port, named without one.
    Unnamed,
}

/// One origin the server accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Allowed {
    /// The opaque origin `null` (a sandboxed frame, a `file:` page).
    Null,
    /// A scheme, a host and a port.
    Tuple {
        scheme: String,
        host: String,
        port: Port,
    },
}

/// The origins a server accepts in an `Origin` header.
#[derive(Debug, Clone)]
pub(super) struct Origins {
    allowed: Vec<Allowed>,
}

impl Origins {
    /// The loopback origins, `http` or `https`, any port: `localhost`, `127.0.0.1` and
    /// `[::1]`.
    pub(super) fn loopback() -> Self {
        let mut allowed = Vec::with_capacity(6);
        for scheme in ["http", "https"] {
            for host in ["localhost", "127.0.0.1", "[::1]"] {
                allowed.push(Allowed::Tuple {
                    scheme: scheme.to_owned(),
                    host: host.to_owned(),
                    port: Port::Any,
                });
            }
        }
        Self { allowed }
    }

    /// The origins `entries` name (`https://app.example.com`, `http://localhost:*`, `null`).
    /// An entry that names no origin is logged and matches nothing.
    pub(super) fn from_entries(entries: &[String]) -> Self {
        let allowed = entries
            .iter()
            .filter_map(|entry| {
                let parsed = parse_entry(entry);
                if parsed.is_none() {
                    tracing::warn!(
                        entry = %entry,
                        "an allowed MCP origin is not `scheme://host[:port]`, `:*` or `null`; \
                         it matches nothing"
                    );
                }
                parsed
            })
            .collect();
        Self { allowed }
    }

    /// Whether a request with `headers` may be served: it has no `Origin`, or one `Origin`
    /// that is allowed. A malformed or repeated `Origin` is not.
    pub(super) fn admit(&self, headers: &HeaderMap) -> bool {
        let mut values = headers.get_all(ORIGIN).iter();
        let Some(value) = values.next() else {
            return true;
        };
        if values.next().is_some() {
            return false;
        }
        let Ok(value) = value.to_str() else {
            return false;
        };
        let value = value.trim();
        if value == "null" {
            return self.allowed.contains(&Allowed::Null);
        }
        let Some((scheme, host, named)) = parse_tuple(value) else {
            return false;
        };
        let port = port_of(&scheme, named);
        self.allowed.iter().any(|allowed| match allowed {
            Allowed::Null => false,
            Allowed::Tuple {
                scheme: s,
                host: h,
                port: p,
            } => *s == scheme && *h == host && (*p == Port::Any || *p == port),
        })
    }
}

/// An allowed entry: `null`, or an origin whose port may be `*`.
fn parse_entry(entry: &str) -> Option<Allowed> {
    let entry = entry.trim();
    if entry.eq_ignore_ascii_case("null") {
        return Some(Allowed::Null);
    }
    let (origin, any_port) = match entry.strip_suffix(":*") {
        Some(origin) => (origin, true),
        None => (entry, false),
    };
    let (scheme, host, named) = parse_tuple(origin)?;
    let port = match (any_port, named) {
        (false, _) => port_of(&scheme, named),
        (true, None) => Port::Any,
        // `http://localhost:80:*` names a port twice.
        (true, Some(_)) => return None,
    };
    Some(Allowed::Tuple { scheme, host, port })
}

/// The scheme and host (lowercase) and the port named, if any, of a serialized origin
/// (`scheme://host[:port]`, nothing after).
fn parse_tuple(value: &str) -> Option<(String, String, Option<u16>)> {
    let uri: Uri = value.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    // An origin carries no user information, path, query or fragment.
    if authority.as_str().contains('@')
        || uri
            .path_and_query()
            .is_some_and(|p| !p.as_str().is_empty() && p.as_str() != "/")
        || value.ends_with('/')
    {
        return None;
    }
    let host = authority.host().to_ascii_lowercase();
    if host.is_empty() {
        return None;
    }
    Some((scheme, host, authority.port_u16()))
}

/// The port of an origin of `scheme` that names `port`: the scheme's default when it names
/// none.
fn port_of(scheme: &str, port: Option<u16>) -> Port {
    match (port, scheme) {
        (Some(port), _) => Port::Exact(port),
        (None, "http") => Port::Exact(80),
        (None, "https") => Port::Exact(443),
        (None, _) => Port::Unnamed,
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn with_origin(values: &[&'static str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(ORIGIN, HeaderValue::from_static(value));
        }
        headers
    }

    /// T4: by default, no `Origin` and loopback origins pass; any other origin does not.
    #[test]
    fn t4_loopback_origins_pass_and_foreign_ones_do_not() {
        let origins = Origins::loopback();
        assert!(origins.admit(&HeaderMap::new()));
        for ok in [
            "http://localhost",
            "http://localhost:3000",
            "https://LOCALHOST:8443",
            "http://127.0.0.1:6274",
            "https://127.0.0.1",
            "http://[::1]:8080",
            "https://[::1]",
        ] {
            assert!(origins.admit(&with_origin(&[ok])), "{ok}");
        }
        for refused in [
            "https://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.2",
            "http://evil.example@localhost",
            "http://localhost/path",
            "http://localhost/",
            "null",
            "localhost",
            "",
            "file://",
        ] {
            assert!(!origins.admit(&with_origin(&[refused])), "{refused:?}");
        }
        assert!(!origins.admit(&with_origin(&["http://localhost", "http://localhost"])));
    }

    /// T4: an explicit list replaces the loopback origins; ports are matched by RFC 6454.
    #[test]
    fn t4_an_explicit_list_matches_scheme_host_and_port() {
        let origins = Origins::from_entries(&[
            "https://app.example.com".to_owned(),
            "http://localhost:*".to_owned(),
            "null".to_owned(),
            "not an origin".to_owned(),
            "https://app.example.com:443:*".to_owned(),
        ]);
        assert_eq!(origins.allowed.len(), 3, "{:?}", origins.allowed);
        for ok in [
            "https://app.example.com",
            "https://app.example.com:443",
            "http://localhost:5173",
            "null",
        ] {
            assert!(origins.admit(&with_origin(&[ok])), "{ok}");
        }
        for refused in [
            "http://app.example.com",
            "https://app.example.com:8443",
            "https://127.0.0.1",
            "https://localhost:5173",
        ] {
            assert!(!origins.admit(&with_origin(&[refused])), "{refused}");
        }
    }
}
