//! T4: which `Host`s the server answers to, a guard of a local server against DNS rebinding.
//! rmcp checks the same list again inside its service; checking it here first refuses a
//! request before the context function runs and before anything else is decided about it.

use http::uri::Authority;
use http::{HeaderMap, Uri};

/// A `Host` the server accepts: a name, with a port or any port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Allowed {
    host: String,
    port: Option<u16>,
}

/// The `Host`s a server accepts.
#[derive(Debug, Clone)]
pub(super) struct Hosts {
    /// Empty: any `Host` (as rmcp reads an empty list).
    allowed: Vec<Allowed>,
}

impl Hosts {
    /// The loopback names rmcp accepts by default, any port.
    pub(super) fn loopback() -> Self {
        Self::from_entries(&["localhost", "127.0.0.1", "::1"])
    }

    /// The hosts `entries` name (`example.com`, `example.com:8443`).
    pub(super) fn from_entries(entries: &[impl AsRef<str>]) -> Self {
        let allowed = entries
            .iter()
            .filter_map(|entry| {
                let entry = entry.as_ref().trim();
                if entry.is_empty() {
                    return None;
                }
                Some(match entry.parse::<Authority>() {
                    Ok(authority) => Allowed {
                        host: normalize(authority.host()),
                        port: authority.port_u16(),
                    },
                    // A bare IPv6 address (`::1`) is no authority.
                    Err(_) => Allowed {
                        host: normalize(entry),
                        port: None,
                    },
                })
            })
            .collect();
        Self { allowed }
    }

    /// Whether a request to `uri` with `headers` names an allowed host. One without any
    /// (no `Host`, no authority in its URI) is left to rmcp, which refuses it (`400`).
    pub(super) fn admit(&self, uri: &Uri, headers: &HeaderMap) -> bool {
        if self.allowed.is_empty() {
            return true;
        }
        let named = match headers.get(http::header::HOST) {
            Some(value) => match value.to_str().ok().and_then(|v| v.parse().ok()) {
                Some(authority) => authority,
                None => return false,
            },
            None => match uri.authority() {
                Some(authority) => authority.clone(),
                None => return true,
            },
        };
        let host = normalize(named.host());
        let port = named.port_u16();
        self.allowed
            .iter()
            .any(|allowed| allowed.host == host && allowed.port.is_none_or(|p| Some(p) == port))
    }
}

/// A host name lowercase, an IPv6 address without its brackets.
fn normalize(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn host(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::HOST, HeaderValue::from_static(value));
        headers
    }

    /// T4: loopback names pass by default, any other name does not; a list replaces them.
    #[test]
    fn t4_loopback_hosts_pass_and_others_do_not() {
        let uri = Uri::from_static("/mcp");
        let hosts = Hosts::loopback();
        for ok in ["localhost", "LOCALHOST:8080", "127.0.0.1:1", "[::1]:80"] {
            assert!(hosts.admit(&uri, &host(ok)), "{ok}");
        }
        for refused in ["evil.example", "127.0.0.1.evil.example:80", "a b"] {
            assert!(!hosts.admit(&uri, &host(refused)), "{refused}");
        }
        assert!(hosts.admit(&uri, &HeaderMap::new()));

        let hosts = Hosts::from_entries(&["mcp.example.com", "mcp.example.com:8443"]);
        assert!(hosts.admit(&uri, &host("mcp.example.com:9")));
        assert!(!hosts.admit(&uri, &host("localhost")));
        let hosts = Hosts::from_entries(&["mcp.example.com:8443"]);
        assert!(hosts.admit(&uri, &host("mcp.example.com:8443")));
        assert!(!hosts.admit(&uri, &host("mcp.example.com")));
        assert!(Hosts::from_entries(&[] as &[&str]).admit(&uri, &host("anything")));
    }
}
