//! [`IntrospectionVerifier`]: opaque access tokens checked by RFC 7662 introspection at the
//! authorization server (Z2), each answer cached until the token expires, the cache bounded.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use reqwest::Url;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{AuthConfigError, Claims, TokenVerifier, VerifyError, VerifyFuture};

/// The most read of an introspection answer.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// Validates opaque access tokens by asking the authorization server (RFC 7662), as a client
/// of its own (`client_id` and secret, sent with HTTP Basic).
///
/// A token is accepted when the answer says it is `active`, its `aud` contains the resource,
/// its `iss` is the issuer (when one is set) and its `exp`/`nbf` allow it now. An answer is
/// cached (keyed by the token's SHA-256 digest, never the token) until the token expires, at
/// most [`IntrospectionVerifier::cache_for`] (default 60 s), for at most
/// [`IntrospectionVerifier::max_cached`] tokens (default 10,000). When the endpoint cannot be
/// reached the token is refused (fail closed).
pub struct IntrospectionVerifier {
    endpoint: Url,
    client_id: String,
    client_secret: String,
    resource: String,
    issuer: Option<String>,
    cache_for: Duration,
    max_cached: usize,
    max_token_bytes: usize,
    client: reqwest::Client,
    cache: Mutex<HashMap<[u8; 32], (Claims, Instant)>>,
}

impl IntrospectionVerifier {
    /// Asks `endpoint` about the tokens of `resource`, as the client `client_id` with
    /// `client_secret`.
    ///
    /// # Errors
    ///
    /// Returns [`AuthConfigError::InvalidUri`] when `endpoint` is not a URL.
    pub fn new(
        endpoint: &str,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        resource: impl Into<String>,
    ) -> Result<Self, AuthConfigError> {
        let endpoint = Url::parse(endpoint).map_err(|_| AuthConfigError::InvalidUri {
            what: "introspection endpoint",
            uri: endpoint.to_owned(),
        })?;
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Ok(Self {
            endpoint,
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            resource: resource.into(),
            issuer: None,
            cache_for: Duration::from_secs(60),
            max_cached: 10_000,
            max_token_bytes: super::JwtVerifier::DEFAULT_MAX_TOKEN_BYTES,
            client,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// Requires the answer's `iss` to be `issuer`.
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Caches an answer at most this long (default 60 s; never past the token's `exp`).
    #[must_use]
    pub fn cache_for(mut self, ttl: Duration) -> Self {
        self.cache_for = ttl;
        self
    }

    /// Caches at most this many tokens' answers (default 10,000).
    #[must_use]
    pub fn max_cached(mut self, tokens: usize) -> Self {
        self.max_cached = tokens;
        self
    }

    /// The claims of `token`, from the cache or the authorization server.
    async fn check(&self, token: &str) -> Result<Claims, VerifyError> {
        if token.len() > self.max_token_bytes {
            return Err(VerifyError::TooLarge);
        }
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(claims) = self.cached(&key) {
            return Ok(claims);
        }
        let answer = self.introspect(token).await?;
        let claims = self.judge(answer)?;
        self.remember(key, &claims);
        Ok(claims)
    }

    /// A cached answer still valid.
    fn cached(&self, key: &[u8; 32]) -> Option<Claims> {
        let cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (claims, until) = cache.get(key)?;
        (Instant::now() < *until).then(|| claims.clone())
    }

    /// Caches `claims` until the token expires or the cache time is up, the cache bounded.
    fn remember(&self, key: [u8; 32], claims: &Claims) {
        let left = claims.expires_at.map_or(self.cache_for, |exp| {
            Duration::from_secs(exp.saturating_sub(now()))
        });
        let until = Instant::now() + left.min(self.cache_for);
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.len() >= self.max_cached {
            let now = Instant::now();
            cache.retain(|_, (_, until)| *until > now);
        }
        if cache.len() < self.max_cached {
            cache.insert(key, (claims.clone(), until));
        }
    }

    /// The authorization server's answer about `token`.
    async fn introspect(&self, token: &str) -> Result<Map<String, Value>, VerifyError> {
        let unavailable = |reason: String| VerifyError::KeysUnavailable(reason);
        let body = format!("token={}&token_type_hint=access_token", form_encode(token));
        let response = (self.client.post(self.endpoint.clone()))
            .basic_auth(
                form_encode(&self.client_id),
                Some(form_encode(&self.client_secret)),
            )
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| unavailable(format!("introspection failed: {}", e.without_url())))?;
        if !response.status().is_success() {
            return Err(unavailable(format!(
                "introspection answered {}",
                response.status()
            )));
        }
        let mut response = response;
        let mut bytes = Vec::new();
        while let Some(chunk) = (response.chunk().await)
            .map_err(|e| unavailable(format!("introspection read failed: {}", e.without_url())))?
        {
            if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(unavailable(
                    "the introspection answer is too large".to_owned(),
                ));
            }
            bytes.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&bytes)
            .map_err(|_| unavailable("the introspection answer is not a JSON object".to_owned()))
    }

    /// The claims of an answer, or why the token is refused.
    fn judge(&self, answer: Map<String, Value>) -> Result<Claims, VerifyError> {
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Err(VerifyError::Refused("the token is not active".to_owned()));
        }
        let now = now();
        if answer
            .get("nbf")
            .and_then(Value::as_u64)
            .is_some_and(|nbf| nbf > now)
        {
            return Err(VerifyError::NotYetValid);
        }
        let claims = Claims::from_payload(answer);
        if claims.expires_at.is_some_and(|exp| exp <= now) {
            return Err(VerifyError::Expired);
        }
        if !claims.audience.contains(&self.resource) {
            return Err(VerifyError::Audience);
        }
        if self
            .issuer
            .as_ref()
            .is_some_and(|issuer| *issuer != claims.issuer)
        {
            return Err(VerifyError::Issuer);
        }
        Ok(claims)
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.check(token))
    }
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.endpoint.as_str())
            .field("client_id", &self.client_id)
            .field("resource", &self.resource)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

/// Seconds since the Unix epoch.
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `text` encoded as `application/x-www-form-urlencoded` writes it.
fn form_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                encoded.push(char::from(byte));
            }
            b' ' => encoded.push('+'),
            other => encoded.push_str(&format!("%{other:02X}")),
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z2_form_encoding_keeps_unreserved_bytes_only() {
        assert_eq!(form_encode("a-b.c_d~e"), "a-b.c_d~e");
        assert_eq!(form_encode("a b+c/="), "a+b%2Bc%2F%3D");
        // Beyond ASCII, each byte of the UTF-8.
        assert_eq!(form_encode("\u{e9}"), format!("%{:02X}%{:02X}", 0xc3, 0xa9));
    }
}
