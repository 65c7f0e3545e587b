//! The headers of a POST a direct call may answer: those with which rmcp's stateless service
//! would serve a `tools/call` without refusing it or reading it differently. Each check here
//! is narrower than rmcp's (a header it cannot decide is a reason to leave the request to
//! rmcp), never wider: passing them means rmcp would pass its own.

use http::uri::Authority;
use http::{HeaderMap, Uri, header};
use rmcp::model::ProtocolVersion;

use crate::mcp::server::protocol_header::{NamedVersion, PROTOCOL_VERSION, named_version};

/// The media types a client must accept (rmcp's `JSON_MIME_TYPE`, `EVENT_STREAM_MIME_TYPE`).
const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";

/// The protocol version rmcp's stateless service takes a request for when it names none.
const UNNAMED_VERSION: ProtocolVersion = ProtocolVersion::V_2025_03_26;

/// The protocol version rmcp's stateless service serves a `tools/call` with `headers` on,
/// when it serves it as a plain call answered with one JSON body; `None` when it might do
/// anything else (refuse the request, check more headers against the body, answer in rounds
/// on 2026-07-28) or when these checks cannot tell.
pub(super) fn served_version(uri: &Uri, headers: &HeaderMap) -> Option<ProtocolVersion> {
    let plain = names_a_host(uri, headers)
        && accepts_json_and_events(headers)
        && is_json(headers)
        && !has_other_mcp_headers(headers);
    if !plain {
        return None;
    }
    match named_version(headers) {
        NamedVersion::Absent => Some(UNNAMED_VERSION),
        // 2026-07-28 has standard headers (SEP-2243) and rounds of questions: rmcp's.
        NamedVersion::Known(version) if version < ProtocolVersion::V_2026_07_28 => Some(version),
        NamedVersion::Known(_) | NamedVersion::Unreadable => None,
    }
}

/// Whether the request names a host rmcp can read (the guard checked it against the same
/// list rmcp holds): a `Host` that is an authority, or, without one, its URI's authority.
fn names_a_host(uri: &Uri, headers: &HeaderMap) -> bool {
    match headers.get(header::HOST) {
        Some(host) => (host.to_str().ok()).is_some_and(|host| Authority::try_from(host).is_ok()),
        None => uri.authority().is_some(),
    }
}

/// Whether `Accept` lists both JSON and event streams, read only where its entries are plain
/// media types (no parameter, no quality, nothing quoted), where rmcp reads the same.
fn accepts_json_and_events(headers: &HeaderMap) -> bool {
    let (mut json, mut events) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            continue;
        };
        if value.contains([';', '"']) {
            return false;
        }
        for essence in value.split(',').map(str::trim) {
            json |= essence.eq_ignore_ascii_case(JSON);
            events |= essence.eq_ignore_ascii_case(EVENT_STREAM);
        }
    }
    json && events
}

/// Whether `Content-Type` is JSON, as rmcp reads it (its first value's essence).
fn is_json(headers: &HeaderMap) -> bool {
    (headers.get(header::CONTENT_TYPE))
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case(JSON)
        })
}

/// Whether a header of MCP's own other than the protocol version is present (a session id,
/// `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`): rmcp then checks more than this module does.
fn has_other_mcp_headers(headers: &HeaderMap) -> bool {
    headers.keys().any(|name| {
        let name = name.as_str();
        name.starts_with("mcp-") && name != PROTOCOL_VERSION
    })
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        headers
    }

    const PLAIN: [(&str, &str); 3] = [
        ("host", "127.0.0.1:1"),
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
    ];

    #[test]
    fn a_plain_post_is_served_on_the_version_it_names() {
        let uri = Uri::from_static("/mcp");
        assert_eq!(
            served_version(&uri, &headers(&PLAIN)),
            Some(ProtocolVersion::V_2025_03_26)
        );
        let mut named = PLAIN.to_vec();
        named.push(("mcp-protocol-version", "2025-06-18"));
        assert_eq!(
            served_version(&uri, &headers(&named)),
            Some(ProtocolVersion::V_2025_06_18)
        );
    }

    #[test]
    fn headers_rmcp_may_read_otherwise_are_left_to_it() {
        let uri = Uri::from_static("/mcp");
        for (name, value) in [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-protocol-version", "1999-01-01"),
            ("mcp-session-id", "x"),
            ("mcp-method", "tools/call"),
            ("accept", "text/event-stream;q=0"),
        ] {
            let mut more = PLAIN.to_vec();
            more.push((name, value));
            assert_eq!(served_version(&uri, &headers(&more)), None, "{name}");
        }
        assert_eq!(served_version(&uri, &headers(&PLAIN[1..])), None);
        assert_eq!(served_version(&uri, &headers(&PLAIN[..2])), None);
        let only_json = [PLAIN[0], ("accept", "application/json"), PLAIN[2]];
        assert_eq!(served_version(&uri, &headers(&only_json)), None);
    }
}
