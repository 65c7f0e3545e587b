//! The client credentials grant with `private_key_jwt` client authentication (RFC 7523): the
//! client signs a short-lived JWT naming itself (`iss` = `sub` = its ID, `aud` = the
//! authorization server's issuer) with its private key and sends it instead of a secret.
//!
//! rmcp has this too (its `auth-client-credentials-jwt` feature), but the future of its
//! exchange is not `Send` (a URL-encoding serializer is held across an await), so it cannot
//! run inside the transport's HTTP client; and it would build a second `jsonwebtoken`. This is
//! the same request, signed with the `jsonwebtoken` (aws-lc-rs) that verifies tokens (Z2).

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rmcp::transport::auth::{AuthError, OAuthTokenResponse, StoredCredentials};
use serde_json::json;

use super::OAuthError;

/// How long an assertion is valid, in seconds.
const LIFETIME: u64 = 300;

/// The largest token response read.
const MAX_ANSWER: usize = 64 * 1024;

/// The algorithm a client's private key signs with (`private_key_jwt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (an RSA key).
    RS256,
    /// ECDSA on P-256 with SHA-256 (an EC key).
    ES256,
    /// ECDSA on P-384 with SHA-384 (an EC key).
    ES384,
}

impl SigningAlgorithm {
    fn key(self, pem: &[u8]) -> Result<(Algorithm, EncodingKey), jsonwebtoken::errors::Error> {
        Ok(match self {
            Self::RS256 => (Algorithm::RS256, EncodingKey::from_rsa_pem(pem)?),
            Self::ES256 => (Algorithm::ES256, EncodingKey::from_ec_pem(pem)?),
            Self::ES384 => (Algorithm::ES384, EncodingKey::from_ec_pem(pem)?),
        })
    }
}

/// Where the authorization server takes the grant: its token endpoint, issuer and the client
/// authentication methods it lists.
pub(super) struct TokenEndpoint {
    pub(super) url: String,
    pub(super) issuer: Option<String>,
    pub(super) methods: Option<Vec<String>>,
}

/// What the client sends.
pub(super) struct Grant<'a> {
    pub(super) client_id: &'a str,
    pub(super) key: &'a [u8],
    pub(super) algorithm: SigningAlgorithm,
    pub(super) scopes: &'a [String],
    pub(super) resource: &'a str,
}

fn refused(message: String) -> OAuthError {
    OAuthError::token(AuthError::ClientCredentialsError(message))
}

/// Asks `endpoint` for a token by `grant`; the credentials to store.
pub(super) async fn exchange(
    endpoint: &TokenEndpoint,
    grant: &Grant<'_>,
) -> Result<StoredCredentials, OAuthError> {
    if let Some(methods) = &endpoint.methods
        && !methods.iter().any(|m| m == "private_key_jwt")
    {
        return Err(OAuthError::registration(AuthError::ClientCredentialsError(
            format!(
                "the authorization server does not offer private_key_jwt (it offers {methods:?})"
            ),
        )));
    }
    let audience = endpoint.issuer.as_deref().unwrap_or(&endpoint.url);
    let assertion = sign(grant, audience)?;
    let mut form = vec![
        ("grant_type", "client_credentials".to_owned()),
        (
            "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
        ),
        ("client_assertion", assertion),
        ("resource", grant.resource.to_owned()),
    ];
    if !grant.scopes.is_empty() {
        form.push(("scope", grant.scopes.join(" ")));
    }
    let body = form_body(&form);
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| refused(format!("no HTTP client: {e}")))?;
    let response = (client.post(&endpoint.url))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| refused(format!("the token request failed: {e}")))?;
    let status = response.status();
    let answer = response
        .bytes()
        .await
        .map_err(|e| refused(format!("the token answer was cut: {e}")))?;
    if answer.len() > MAX_ANSWER {
        return Err(refused(format!("a token answer of {} bytes", answer.len())));
    }
    if !status.is_success() {
        let error: serde_json::Value = serde_json::from_slice(&answer).unwrap_or_default();
        let code = error["error"].as_str().unwrap_or("no error code");
        return Err(refused(format!(
            "the token endpoint answered {status}: {code}"
        )));
    }
    // Parsed without quoting the answer in an error: it holds the token.
    let token: OAuthTokenResponse = serde_json::from_slice(&answer)
        .map_err(|_| refused("the token answer is not a token response".into()))?;
    Ok(StoredCredentials::new(
        grant.client_id.to_owned(),
        Some(token),
        Vec::new(),
        Some(now()),
    )
    .with_issuer(endpoint.issuer.clone()))
}

/// The signed assertion.
fn sign(grant: &Grant<'_>, audience: &str) -> Result<String, OAuthError> {
    let (algorithm, key) = (grant.algorithm.key(grant.key)).map_err(|e| {
        OAuthError::registration(AuthError::ClientCredentialsError(format!(
            "the private key cannot sign {:?}: {e}",
            grant.algorithm
        )))
    })?;
    let mut id = [0u8; 16];
    getrandom::fill(&mut id).map_err(|e| refused(format!("no randomness: {e}")))?;
    let issued = now();
    let claims = json!({
        "iss": grant.client_id,
        "sub": grant.client_id,
        "aud": audience,
        "iat": issued,
        "exp": issued + LIFETIME,
        "jti": base16ct::lower::encode_string(&id),
    });
    jsonwebtoken::encode(&Header::new(algorithm), &claims, &key)
        .map_err(|e| refused(format!("the assertion cannot be signed: {e}")))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// `application/x-www-form-urlencoded` of `pairs`.
fn form_body(pairs: &[(&str, String)]) -> String {
    let encode = |text: &str| {
        let mut out = String::with_capacity(text.len());
        for byte in text.bytes() {
            match byte {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    out.push(char::from(byte));
                }
                _ => out.push_str(&format!("%{byte:02X}")),
            }
        }
        out
    };
    let fields: Vec<String> = (pairs.iter())
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect();
    fields.join("&")
}

#[cfg(test)]
mod tests {
    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
    use base64::Engine as _;
    use jsonwebtoken::{DecodingKey, Validation};

    use super::*;

    #[test]
    fn z4_form_fields_are_percent_encoded() {
        let body = form_body(&[
            ("scope", "a:b c".into()),
            ("resource", "http://h/m?x=1&y".into()),
        ]);
        assert_eq!(
            body,
            "scope=a%3Ab%20c&resource=http%3A%2F%2Fh%2Fm%3Fx%3D1%26y"
        );
    }

    #[test]
    fn z4_the_assertion_names_the_client_and_the_issuer_and_verifies() {
        let rng = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("a key");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
            .expect("the key");
        let b64 = base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref());
        let pem = format!("-----BEGIN PRIVATE KEY-----\n{b64}\n-----END PRIVATE KEY-----\n");
        let grant = Grant {
            client_id: "svc",
            key: pem.as_bytes(),
            algorithm: SigningAlgorithm::ES256,
            scopes: &[],
            resource: "http://127.0.0.1/mcp",
        };
        let jwt = sign(&grant, "http://issuer.test").expect("signed");
        let key = DecodingKey::from_ec_der(pair.public_key().as_ref());
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&["http://issuer.test"]);
        validation.set_issuer(&["svc"]);
        let claims = jsonwebtoken::decode::<serde_json::Value>(&jwt, &key, &validation)
            .expect("verifies with the public key")
            .claims;
        assert_eq!(claims["sub"], "svc");
        assert!(claims["exp"].as_u64() > claims["iat"].as_u64());
        // A wrong key type is refused, not a panic.
        let wrong = Grant {
            algorithm: SigningAlgorithm::RS256,
            ..grant
        };
        assert!(sign(&wrong, "http://issuer.test").is_err());
    }
}
