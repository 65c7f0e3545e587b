//! The `MCP-Protocol-Version` header of an HTTP request, read one way for every part of the
//! server that decides by it: the authorization's challenge and the direct call's seam.

use http::HeaderMap;
use rmcp::model::ProtocolVersion;

/// The header that names the protocol version of a request (header names are matched
/// without regard to case).
pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// What a request's `MCP-Protocol-Version` header names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NamedVersion {
    /// The request has no such header.
    Absent,
    /// One header, naming a version this server knows.
    Known(ProtocolVersion),
    /// A version this server does not know, a value that is not text, or the header more
    /// than once: nothing to decide by.
    Unreadable,
}

/// What `headers` name as the request's protocol version.
pub(crate) fn named_version(headers: &HeaderMap) -> NamedVersion {
    let mut named = headers.get_all(PROTOCOL_VERSION).iter();
    let (Some(value), None) = (named.next(), named.next()) else {
        return if headers.contains_key(PROTOCOL_VERSION) {
            NamedVersion::Unreadable
        } else {
            NamedVersion::Absent
        };
    };
    let known = value.to_str().ok().and_then(|value| {
        (ProtocolVersion::KNOWN_VERSIONS.iter())
            .find(|known| known.as_str() == value)
            .cloned()
    });
    known.map_or(NamedVersion::Unreadable, NamedVersion::Known)
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(values: &[&'static str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("MCP-Protocol-Version", HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn one_known_version_is_read_and_anything_else_is_not() {
        assert_eq!(named_version(&headers(&[])), NamedVersion::Absent);
        assert_eq!(
            named_version(&headers(&["2025-06-18"])),
            NamedVersion::Known(ProtocolVersion::V_2025_06_18)
        );
        let unreadable = [
            &["1999-01-01"][..],
            &["2025-06-18", "2025-06-18"][..],
            &[""][..],
        ];
        for values in unreadable {
            assert_eq!(
                named_version(&headers(values)),
                NamedVersion::Unreadable,
                "{values:?}"
            );
        }
    }
}
