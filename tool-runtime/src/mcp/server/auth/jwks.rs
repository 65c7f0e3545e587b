//! The issuer's keys for [`JwtVerifier`](super::JwtVerifier) (Z2): found through its metadata
//! (RFC 8414, then OpenID discovery), fetched over HTTP, cached for a set time, fetched again
//! on an unknown `kid` at most once per interval, whatever the number of tokens naming one.
//! Keys cached serve until their time is up, reachable issuer or not (fail closed after).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey};
use reqwest::Url;
use serde::Deserialize;

use super::VerifyError;

/// The most read of a metadata document or a key set.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// One key of the set.
struct Key {
    kid: Option<String>,
    /// The algorithm the key declares, when it declares one.
    alg: Option<String>,
    key: DecodingKey,
}

/// What the cache holds.
#[derive(Default)]
struct State {
    keys: Arc<Vec<Key>>,
    /// When the keys were fetched.
    fetched: Option<Instant>,
    /// When a fetch was last tried.
    tried: Option<Instant>,
    /// The key set's URI, once known.
    jwks_uri: Option<Url>,
}

/// The key cache of one issuer.
pub(super) struct Keys {
    issuer: String,
    configured_uri: Option<Url>,
    pub(super) ttl: Duration,
    pub(super) refetch: Duration,
    client: reqwest::Client,
    state: RwLock<State>,
    /// One fetch at a time; the others wait for it and read its result.
    fetching: tokio::sync::Mutex<()>,
    fetches: AtomicU64,
}

impl Keys {
    /// The keys of `issuer`, at `jwks_uri` or found through its metadata.
    pub(super) fn new(issuer: String, jwks_uri: Option<Url>, timeout: Duration) -> Self {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self {
            issuer,
            configured_uri: jwks_uri,
            ttl: Duration::from_secs(300),
            refetch: Duration::from_secs(30),
            client,
            state: RwLock::new(State::default()),
            fetching: tokio::sync::Mutex::new(()),
            fetches: AtomicU64::new(0),
        }
    }

    /// How many times the key set (or the metadata) was fetched.
    pub(super) fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// When the cached keys stop being fresh (and are fetched again before use).
    pub(super) fn fresh_until(&self) -> Option<Instant> {
        let state = self
            .state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.fetched.map(|at| at + self.ttl)
    }

    /// The key for a token with `kid` and `alg`.
    pub(super) async fn key(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<DecodingKey, VerifyError> {
        if let Some(answer) = self.without_fetch(kid, alg) {
            return answer;
        }
        let _one = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        if let Some(answer) = self.without_fetch(kid, alg) {
            return answer;
        }
        self.refresh().await;
        match self.look(kid, alg) {
            (Some(key), true, _) => Ok(key),
            (_, true, _) => Err(VerifyError::UnknownKey),
            _ => Err(unavailable("the key set could not be fetched")),
        }
    }

    /// The answer when no fetch is to be made: the cached key while the cache is fresh, or a
    /// refusal while a fetch may not be tried yet; `None` when a fetch is due.
    fn without_fetch(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Option<Result<DecodingKey, VerifyError>> {
        match self.look(kid, alg) {
            (Some(key), true, _) => Some(Ok(key)),
            (_, true, false) => Some(Err(VerifyError::UnknownKey)),
            (_, false, false) => Some(Err(unavailable("fetched too recently"))),
            (_, _, true) => None,
        }
    }

    /// The key matching `kid` and `alg` among the cached ones, whether the cache is fresh,
    /// and whether a fetch may be tried now.
    fn look(&self, kid: Option<&str>, alg: Algorithm) -> (Option<DecodingKey>, bool, bool) {
        let state = self
            .state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        let fresh = state
            .fetched
            .is_some_and(|at| now.duration_since(at) < self.ttl);
        let may_fetch = state
            .tried
            .is_none_or(|at| now.duration_since(at) >= self.refetch);
        let alg_name = format!("{alg:?}");
        let candidates: Vec<&Key> = state
            .keys
            .iter()
            // A key of another family never checks the token (no HMAC against a public key).
            .filter(|key| key.key.family() == alg.family())
            .filter(|key| key.alg.as_deref().is_none_or(|a| a == alg_name))
            .collect();
        let found = match kid {
            Some(kid) => candidates
                .iter()
                .find(|key| key.kid.as_deref() == Some(kid)),
            // Without a `kid`, only a set with one usable key says which key it is.
            None if candidates.len() == 1 => candidates.first(),
            None => None,
        };
        (found.map(|key| key.key.clone()), fresh, may_fetch)
    }

    /// Fetches the key set (finding its URI first if need be) and caches it; on failure the
    /// keys cached stay, and serve until their time is up.
    async fn refresh(&self) {
        let now = Instant::now();
        let known = {
            let mut state = self
                .state
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state.tried = Some(now);
            state
                .jwks_uri
                .clone()
                .or_else(|| self.configured_uri.clone())
        };
        let fetched = async {
            let uri = match known {
                Some(uri) => uri,
                None => self.discover().await?,
            };
            let set: JwkSet = self.get_json(uri.clone()).await?;
            Ok::<_, String>((uri, keys_of(set)))
        }
        .await;
        match fetched {
            Ok((uri, keys)) => {
                let mut state = self
                    .state
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                state.keys = Arc::new(keys);
                state.fetched = Some(Instant::now());
                state.jwks_uri = Some(uri);
            }
            Err(reason) => tracing::warn!(
                issuer = %self.issuer,
                %reason,
                "the authorization server's keys could not be fetched; tokens are checked against \
                 the keys cached, if any are still fresh"
            ),
        }
    }

    /// The key set's URI from the issuer's metadata: RFC 8414 first, then OpenID discovery
    /// (path-inserted, then path-appended); its `issuer` must be the issuer.
    async fn discover(&self) -> Result<Url, String> {
        #[derive(Deserialize)]
        struct Metadata {
            issuer: String,
            jwks_uri: Option<String>,
        }
        let mut last = String::from("no metadata");
        for uri in metadata_uris(&self.issuer)? {
            match self.get_json::<Metadata>(uri).await {
                Ok(metadata) if metadata.issuer != self.issuer => {
                    return Err("the metadata names another issuer".to_owned());
                }
                Ok(metadata) => {
                    let jwks = metadata.jwks_uri.ok_or("the metadata has no jwks_uri")?;
                    return Url::parse(&jwks).map_err(|e| format!("bad jwks_uri: {e}"));
                }
                Err(reason) => last = reason,
            }
        }
        Err(last)
    }

    /// GETs `uri` as JSON, its body bounded.
    async fn get_json<T: serde::de::DeserializeOwned>(&self, uri: Url) -> Result<T, String> {
        self.fetches.fetch_add(1, Ordering::Relaxed);
        let mut response = (self
            .client
            .get(uri)
            .header("accept", "application/json")
            .send()
            .await)
            .map_err(|e| format!("request failed: {}", e.without_url()))?;
        if !response.status().is_success() {
            return Err(format!("answered {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) =
            (response.chunk().await).map_err(|e| format!("read failed: {}", e.without_url()))?
        {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err("the document is too large".to_owned());
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| format!("not the expected JSON: {e}"))
    }
}

/// `KeysUnavailable` for `reason`.
fn unavailable(reason: &str) -> VerifyError {
    VerifyError::KeysUnavailable(reason.to_owned())
}

/// The asymmetric keys of `set`: a symmetric (`oct`) key is never used, so an HMAC can never
/// be checked against a public key.
fn keys_of(set: JwkSet) -> Vec<Key> {
    set.keys
        .iter()
        .filter(|jwk| !matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)))
        .filter_map(|jwk: &Jwk| {
            let key = DecodingKey::from_jwk(jwk).ok()?;
            Some(Key {
                kid: jwk.common.key_id.clone(),
                alg: jwk.common.key_algorithm.map(|alg| format!("{alg:?}")),
                key,
            })
        })
        .collect()
}

/// Where the metadata of `issuer` may be, in the order MCP clients try them.
pub(super) fn metadata_uris(issuer: &str) -> Result<Vec<Url>, String> {
    let url = Url::parse(issuer).map_err(|e| format!("bad issuer: {e}"))?;
    let path = url.path().trim_end_matches('/').to_owned();
    let at = |suffix: String| {
        let mut uri = url.clone();
        uri.set_path(&suffix);
        uri.set_query(None);
        uri
    };
    let mut uris = vec![
        at(format!("/.well-known/oauth-authorization-server{path}")),
        at(format!("/.well-known/openid-configuration{path}")),
    ];
    if !path.is_empty() {
        uris.push(at(format!("{path}/.well-known/openid-configuration")));
    }
    Ok(uris)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z2_metadata_is_looked_for_as_rfc_8414_then_openid_discovery_say() {
        let uris = |issuer| -> Vec<String> {
            metadata_uris(issuer)
                .expect("an issuer")
                .iter()
                .map(Url::to_string)
                .collect()
        };
        assert_eq!(
            uris("https://as.example.com"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            uris("https://as.example.com/tenant/"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server/tenant",
                "https://as.example.com/.well-known/openid-configuration/tenant",
                "https://as.example.com/tenant/.well-known/openid-configuration",
            ]
        );
    }
}
