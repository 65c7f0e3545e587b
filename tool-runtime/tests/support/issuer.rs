//! An authorization server's public side for the authorization tests (Z5): its RFC 8414
//! metadata and its JWKS on loopback, the fetches counted, the key set switchable off; and
//! the key it signs access tokens with, made by the test.
#![allow(unreachable_pub)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// The `kid` of the issuer's key.
pub const KID: &str = "key-1";

/// A running issuer.
pub struct Issuer {
    /// Its issuer identifier, `http://127.0.0.1:PORT`.
    pub url: String,
    /// How many times its JWKS was fetched.
    pub jwks_fetches: Arc<AtomicUsize>,
    /// Whether its JWKS endpoint answers `503`.
    pub down: Arc<AtomicBool>,
    /// The signing key (PKCS#8 DER).
    key: Vec<u8>,
    /// The public key, the uncompressed point.
    pub public: Vec<u8>,
    /// The subject of its tokens, its own so that tests running at once tell their calls
    /// apart.
    pub subject: String,
}

impl Issuer {
    /// Starts an issuer on a free loopback port.
    pub async fn start() -> Self {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .expect("a P-256 key");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
            .expect("the key just made");
        let public = pair.public_key().as_ref().to_vec();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port is free");
        let url = format!("http://{}", listener.local_addr().expect("bound"));
        let jwks_fetches = Arc::new(AtomicUsize::new(0));
        let down = Arc::new(AtomicBool::new(false));
        let jwks = json!({"keys": [{
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": KID,
            "x": URL_SAFE_NO_PAD.encode(&public[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&public[33..65]),
        }]});
        let metadata = json!({
            "issuer": url,
            "jwks_uri": format!("{url}/jwks"),
            "authorization_endpoint": format!("{url}/authorize"),
            "token_endpoint": format!("{url}/token"),
            "code_challenge_methods_supported": ["S256"],
        });
        let (fetches, off) = (Arc::clone(&jwks_fetches), Arc::clone(&down));
        let router = Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                get(move || std::future::ready(json_answer(&metadata))),
            )
            .route(
                "/jwks",
                get(move || {
                    fetches.fetch_add(1, Ordering::SeqCst);
                    let answer = if off.load(Ordering::SeqCst) {
                        Err(StatusCode::SERVICE_UNAVAILABLE)
                    } else {
                        Ok(json_answer(&jwks))
                    };
                    std::future::ready(answer)
                }),
            );
        tokio::spawn(async move { axum::serve(listener, router).await });
        let subject = format!("user-ada-{}", url.rsplit(':').next().unwrap_or("0"));
        Self {
            subject,
            url,
            jwks_fetches,
            down,
            key: pkcs8.as_ref().to_vec(),
            public,
        }
    }

    /// The claims of a good token for `resource` with `scope`, expiring in an hour.
    pub fn claims(&self, resource: &str, scope: &str) -> Value {
        let now = now();
        json!({
            "iss": self.url, "sub": self.subject, "aud": resource, "scope": scope,
            "client_id": "client-1", "iat": now, "exp": now + 3600, "jti": format!("{now}"),
        })
    }

    /// A token of `claims` signed with the issuer's key, with header `header` (`alg` ES256).
    pub fn sign(&self, header: Header, claims: &Value) -> String {
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(&self.key))
            .expect("the token is signed")
    }

    /// A good access token's header: ES256, `typ: at+jwt`, the issuer's `kid`.
    pub fn header() -> Header {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("at+jwt".to_owned());
        header.kid = Some(KID.to_owned());
        header
    }

    /// A good token for `resource` with `scope`.
    pub fn token(&self, resource: &str, scope: &str) -> String {
        self.sign(Self::header(), &self.claims(resource, scope))
    }
}

/// `value` as a JSON answer.
fn json_answer(value: &Value) -> ([(&'static str, &'static str); 1], String) {
    ([("content-type", "application/json")], value.to_string())
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `value` as base64url without padding, as JWS parts are.
pub fn b64(value: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(value)
}
