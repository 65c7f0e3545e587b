//! [`JwtVerifier`]: JWT access tokens (RFC 9068) checked against the issuer's keys (Z2), with
//! `jsonwebtoken`.

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation, decode, decode_header};
use reqwest::Url;
use serde_json::{Map, Value};

use super::jwks::Keys;
use super::verified::Verified;
use super::{
    AuthConfigError, Claims, SharedVerifyFuture, TokenVerifier, VerifyError, VerifyFuture,
};

/// The most leeway a verifier allows on `exp` and `nbf`.
pub const MAX_LEEWAY: Duration = Duration::from_secs(300);

/// Validates JWT access tokens (RFC 9068) issued by one authorization server for one
/// resource (Z2).
///
/// The signature is checked against the issuer's JWKS, found through its metadata (RFC 8414,
/// then OpenID discovery) unless [`JwtVerifier::jwks_uri`] names it; the keys are cached for
/// [`JwtVerifier::keys_ttl`] (default 5 minutes) and fetched again on a token whose `kid` is
/// unknown at most once per [`JwtVerifier::refetch_interval`] (default 30 s). When the keys
/// cannot be fetched, tokens are refused, except that keys already cached serve until their
/// time is up. Checked besides: the algorithm (an allow-list of asymmetric ones: never
/// `none`, never an HMAC), the header's `typ` (`at+jwt`), `iss`, `aud` (it must contain the
/// resource), `exp` (required) and `nbf` with a leeway of at most [`MAX_LEEWAY`], and the
/// token's size (at most [`JwtVerifier::max_token_bytes`], 8 KiB by default).
///
/// A token it verified is remembered by its text (at most [`JwtVerifier::max_cached`]
/// tokens) until its keys are due to be fetched again or it expires, whichever is first: a
/// client's next request with the same token skips the signature check, not the expiry.
pub struct JwtVerifier {
    audience: String,
    issuer: String,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    max_token_bytes: usize,
    keys: Keys,
    verified: Verified,
}

impl JwtVerifier {
    /// The default bound on a token's size.
    pub const DEFAULT_MAX_TOKEN_BYTES: usize = 8 * 1024;

    /// The default bound on the verified tokens remembered.
    pub const DEFAULT_MAX_CACHED: usize = 4096;

    /// Validates the tokens `issuer` issues for `resource` (the server's canonical URI).
    pub fn new(issuer: impl Into<String>, resource: impl Into<String>) -> Self {
        let issuer = issuer.into();
        Self {
            audience: resource.into(),
            keys: Keys::new(issuer.clone(), None, Duration::from_secs(5)),
            issuer,
            algorithms: vec![
                Algorithm::ES256,
                Algorithm::ES384,
                Algorithm::RS256,
                Algorithm::RS384,
                Algorithm::RS512,
                Algorithm::PS256,
                Algorithm::PS384,
                Algorithm::PS512,
                Algorithm::EdDSA,
            ],
            leeway: Duration::from_secs(60),
            max_token_bytes: Self::DEFAULT_MAX_TOKEN_BYTES,
            verified: Verified::new(Self::DEFAULT_MAX_CACHED),
        }
    }

    /// Fetches the keys from `uri` rather than from the URI the issuer's metadata names.
    ///
    /// # Errors
    ///
    /// Returns [`AuthConfigError::InvalidUri`] when `uri` is not a URL.
    pub fn jwks_uri(mut self, uri: &str) -> Result<Self, AuthConfigError> {
        let uri = Url::parse(uri).map_err(|_| AuthConfigError::InvalidUri {
            what: "jwks_uri",
            uri: uri.to_owned(),
        })?;
        self.keys = Keys::new(self.issuer.clone(), Some(uri), Duration::from_secs(5));
        Ok(self)
    }

    /// Accepts only `algorithms` (an HMAC among them is dropped: a token is never checked
    /// with a shared secret).
    #[must_use]
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = (algorithms.into_iter())
            .filter(|alg| !matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512))
            .collect();
        self
    }

    /// The leeway on `exp` and `nbf` (default 60 s, at most [`MAX_LEEWAY`]).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway.min(MAX_LEEWAY);
        self
    }

    /// How long fetched keys serve (default 5 minutes).
    #[must_use]
    pub fn keys_ttl(mut self, ttl: Duration) -> Self {
        self.keys.ttl = ttl;
        self
    }

    /// The least time between two fetches of the keys (default 30 s): an unknown `kid` within
    /// it is refused without a fetch.
    #[must_use]
    pub fn refetch_interval(mut self, interval: Duration) -> Self {
        self.keys.refetch = interval;
        self
    }

    /// The longest token read (default [`Self::DEFAULT_MAX_TOKEN_BYTES`]); a longer one is
    /// refused unread.
    #[must_use]
    pub fn max_token_bytes(mut self, bytes: usize) -> Self {
        self.max_token_bytes = bytes;
        self
    }

    /// Remembers at most `tokens` verified tokens (default [`Self::DEFAULT_MAX_CACHED`]; 0:
    /// every request's token is verified in full).
    #[must_use]
    pub fn max_cached(mut self, tokens: usize) -> Self {
        self.verified.max = tokens;
        self
    }

    /// How many documents (metadata, key sets) the verifier has fetched.
    pub fn fetches(&self) -> u64 {
        self.keys.fetches()
    }

    /// The claims of `token`, or why it is refused.
    async fn check(&self, token: &str) -> Result<Arc<Claims>, VerifyError> {
        if token.len() > self.max_token_bytes {
            return Err(VerifyError::TooLarge);
        }
        if let Some(claims) = self.verified.get(token, self.leeway) {
            return Ok(claims);
        }
        let claims = Arc::new(self.verify_in_full(token).await?);
        if let Some(until) = self.keys.fresh_until() {
            self.verified.put(token, &claims, until);
        }
        Ok(claims)
    }

    /// The claims of `token` after every check, its signature included.
    async fn verify_in_full(&self, token: &str) -> Result<Claims, VerifyError> {
        let header = decode_header(token).map_err(|e| refusal(e.kind()))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(VerifyError::Algorithm);
        }
        let typ = header.typ.as_deref().map(str::to_ascii_lowercase);
        if !matches!(typ.as_deref(), Some("at+jwt" | "application/at+jwt")) {
            return Err(VerifyError::Type);
        }
        let key = self.keys.key(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        let data = decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| refusal(e.kind()))?;
        Ok(Claims::from_payload(data.claims))
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move { self.check(token).await.map(Arc::unwrap_or_clone) })
    }

    /// The claims the cache holds, shared: no copy per request.
    fn verify_shared<'a>(&'a self, token: &'a str) -> SharedVerifyFuture<'a> {
        Box::pin(self.check(token))
    }
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("algorithms", &self.algorithms)
            .field("leeway", &self.leeway)
            .finish_non_exhaustive()
    }
}

/// Why `jsonwebtoken` refused a token, as a [`VerifyError`] (which holds none of it).
fn refusal(kind: &ErrorKind) -> VerifyError {
    match kind {
        ErrorKind::InvalidSignature => VerifyError::Signature,
        ErrorKind::ExpiredSignature => VerifyError::Expired,
        ErrorKind::ImmatureSignature => VerifyError::NotYetValid,
        ErrorKind::InvalidIssuer => VerifyError::Issuer,
        ErrorKind::InvalidAudience => VerifyError::Audience,
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => VerifyError::Algorithm,
        ErrorKind::MissingRequiredClaim(claim) => VerifyError::MissingClaim(claim.clone()),
        _ => VerifyError::Malformed,
    }
}
