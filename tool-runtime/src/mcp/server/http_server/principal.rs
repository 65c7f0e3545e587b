//! T5: whom a session is counted against. The application may name the principal
//! ([`HttpOptions::principal_key`](super::HttpOptions::principal_key)); otherwise a request's
//! credential (its `Authorization` header, kept as a digest) names it, and a request without
//! one is counted against its peer's IP address.

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

use http::HeaderMap;
use http::header::AUTHORIZATION;
use sha2::{Digest, Sha256};
use tool_core::Context;

/// Names the principal of a request from the [`Context`] the context function built, or
/// `None` to fall back to the request's credential or peer address.
pub(super) type KeyFn = Arc<dyn Fn(&Context) -> Option<String> + Send + Sync>;

/// Whom a session is counted against.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) enum Owner {
    /// The key the application named.
    Named(Arc<str>),
    /// The SHA-256 digest of the request's `Authorization` header (the credential itself is
    /// not kept).
    Credential([u8; 32]),
    /// A request without credentials, by its peer's address (a proxy's, behind one).
    Peer(IpAddr),
    /// A request nothing names (no credential, no peer address known).
    Unknown,
}

impl Owner {
    /// The owner of a request with `headers` from `peer`, whose context is `ctx`.
    pub(super) fn of(
        key: Option<&KeyFn>,
        ctx: &Context,
        headers: &HeaderMap,
        peer: Option<IpAddr>,
    ) -> Self {
        if let Some(name) = key.and_then(|key| key(ctx)) {
            return Self::Named(name.into());
        }
        let mut credentials = headers.get_all(AUTHORIZATION).iter().peekable();
        if credentials.peek().is_some() {
            let mut digest = Sha256::new();
            for value in credentials {
                digest.update(value.as_bytes());
                digest.update(b"\n");
            }
            return Self::Credential(digest.finalize().into());
        }
        peer.map_or(Self::Unknown, Self::Peer)
    }
}

impl fmt::Debug for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Named(name) => write!(f, "principal {name:?}"),
            // A prefix of the digest tells credentials apart in a log and reveals nothing.
            Self::Credential(digest) => write!(
                f,
                "credential {:02x}{:02x}{:02x}{:02x}…",
                digest[0], digest[1], digest[2], digest[3]
            ),
            Self::Peer(ip) => write!(f, "peer {ip}"),
            Self::Unknown => f.write_str("unknown"),
        }
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn bearer(token: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_static(token));
        headers
    }

    /// T5: the application's key first, then the credential, then the peer address.
    #[test]
    fn t5_a_sessions_owner_is_the_applications_key_else_the_credential_else_the_peer() {
        let ctx = Context::new().with("ada");
        let named: KeyFn = Arc::new(|ctx: &Context| ctx.get::<&str>().map(|s| (*s).to_owned()));
        let none: KeyFn = Arc::new(|_: &Context| None);
        let peer: Option<IpAddr> = "192.0.2.7".parse().ok();
        let a = bearer("Bearer a");
        assert_eq!(
            Owner::of(Some(&named), &ctx, &a, peer),
            Owner::Named("ada".into())
        );
        let by_token = Owner::of(Some(&none), &ctx, &a, peer);
        assert!(matches!(by_token, Owner::Credential(_)));
        assert_eq!(by_token, Owner::of(None, &ctx, &bearer("Bearer a"), None));
        assert_ne!(by_token, Owner::of(None, &ctx, &bearer("Bearer b"), peer));
        assert!(!format!("{by_token:?}").contains("Bearer"));
        assert_eq!(
            Owner::of(None, &ctx, &HeaderMap::new(), peer),
            Owner::Peer("192.0.2.7".parse().expect("an address"))
        );
        assert_eq!(
            Owner::of(None, &ctx, &HeaderMap::new(), None),
            Owner::Unknown
        );
    }
}
