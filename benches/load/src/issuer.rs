//! The authorization server of the `ours-jwt` server: an ES256 key made at start, its RFC 8414
//! metadata and JWKS served on loopback (fetched once by the server, then cached), and one
//! access token for the load generator to send with every call.

use std::net::SocketAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// The key's id in the JWKS and in the token's header.
const KID: &str = "load-key";

/// A running issuer and its signing key.
pub struct Issuer {
    /// Its identifier, `http://127.0.0.1:PORT`.
    pub url: String,
    /// The signing key, PKCS#8 DER.
    key: Vec<u8>,
}

impl Issuer {
    /// Makes a key and serves the issuer's metadata and JWKS on a free loopback port.
    pub async fn start() -> Result<Self, String> {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .map_err(|e| format!("cannot make a P-256 key: {e}"))?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
            .map_err(|e| format!("cannot read the key just made: {e}"))?;
        let point = pair.public_key().as_ref();
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("cannot bind the issuer: {e}"))?;
        let addr: SocketAddr = listener
            .local_addr()
            .map_err(|e| format!("no local address: {e}"))?;
        let url = format!("http://{addr}");
        let jwks = json!({"keys": [{
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": KID,
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        }]});
        let metadata = json!({
            "issuer": url,
            "jwks_uri": format!("{url}/jwks"),
            "authorization_endpoint": format!("{url}/authorize"),
            "token_endpoint": format!("{url}/token"),
            "code_challenge_methods_supported": ["S256"],
        });
        let router = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                axum::routing::get(move || std::future::ready(answer(&metadata))),
            )
            .route(
                "/jwks",
                axum::routing::get(move || std::future::ready(answer(&jwks))),
            );
        tokio::spawn(async move { axum::serve(listener, router).await });
        Ok(Self {
            url,
            key: pkcs8.as_ref().to_vec(),
        })
    }

    /// An access token for `resource` (RFC 9068: ES256, `typ: at+jwt`), good for a day.
    pub fn token(&self, resource: &str) -> Result<String, String> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|e| e.to_string())?
            .as_secs();
        let claims = json!({
            "iss": self.url, "sub": "load-client", "aud": resource, "scope": "tickets",
            "client_id": "load-client", "iat": now, "exp": now + 86_400, "jti": "load",
        });
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("at+jwt".to_owned());
        header.kid = Some(KID.to_owned());
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ec_der(&self.key))
            .map_err(|e| format!("cannot sign the token: {e}"))
    }
}

fn answer(value: &Value) -> ([(&'static str, &'static str); 1], String) {
    ([("content-type", "application/json")], value.to_string())
}
