//! How a Bedrock request is authenticated: signed with SigV4 (AWS's `aws-sigv4` signer,
//! service `bedrock`), or a Bedrock API key sent as `Authorization: Bearer`.
//!
//! The secret key, the session token, the API key and every signature are sensitive: the
//! headers that carry them are marked so, and no `Debug` output or error shows them.

use std::fmt;
use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;

use crate::providers::http::ApiKey;

/// The SigV4 signing name of Bedrock's runtime API.
pub(super) const SIGNING_NAME: &str = "bedrock";

/// An access key pair, with the session token of temporary credentials.
#[derive(Clone)]
pub(super) struct AwsKeys {
    pub(super) access_key_id: String,
    pub(super) secret_access_key: ApiKey,
    pub(super) session_token: Option<ApiKey>,
}

impl fmt::Debug for AwsKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsKeys")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &self.secret_access_key)
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "[redacted]"),
            )
            .finish()
    }
}

/// How requests prove who sends them.
#[derive(Debug, Clone)]
pub(super) enum Auth {
    /// SigV4 with these keys, in this region.
    SigV4 { keys: AwsKeys, region: String },
    /// A Bedrock API key, as `Authorization: Bearer`.
    Bearer(ApiKey),
}

/// Why a request could not be signed.
#[derive(Debug, thiserror::Error)]
pub(super) enum SignError {
    /// The signer refused the request or its parameters (its words never hold a secret).
    #[error("the request could not be signed with SigV4: {0}")]
    Signer(String),
}

/// The headers that authenticate one request (`authorization`, and for SigV4
/// `x-amz-date` and `x-amz-security-token`), given the request's URL, the headers it will
/// carry that are signed (`host`, `content-type`, `accept`), and its body. Each header says
/// whether its value is sensitive.
pub(super) fn headers(
    auth: &Auth,
    url: &str,
    signed: &[(&str, &str)],
    body: &[u8],
    at: SystemTime,
) -> Result<Vec<(&'static str, String, bool)>, SignError> {
    match auth {
        Auth::Bearer(key) => Ok(vec![(
            "authorization",
            format!("Bearer {}", key.expose()),
            true,
        )]),
        Auth::SigV4 { keys, region } => sigv4(keys, region, url, signed, body, at),
    }
}

fn sigv4(
    keys: &AwsKeys,
    region: &str,
    url: &str,
    signed: &[(&str, &str)],
    body: &[u8],
    at: SystemTime,
) -> Result<Vec<(&'static str, String, bool)>, SignError> {
    let failed = |e: &dyn fmt::Display| SignError::Signer(e.to_string());
    let identity: Identity = Credentials::new(
        keys.access_key_id.clone(),
        keys.secret_access_key.expose().to_owned(),
        keys.session_token.as_ref().map(|t| t.expose().to_owned()),
        None,
        "tool-runtime",
    )
    .into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(SIGNING_NAME)
        .time(at)
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| failed(&e))?
        .into();
    let request = SignableRequest::new(
        "POST",
        url,
        signed.iter().copied(),
        SignableBody::Bytes(body),
    )
    .map_err(|e| failed(&e))?;
    let (instructions, _signature) = sign(request, &params).map_err(|e| failed(&e))?.into_parts();
    let (headers, _params) = instructions.into_parts();
    Ok(headers
        .into_iter()
        .map(|h| {
            let sensitive = h.sensitive() || h.name() == "authorization";
            (h.name(), h.value().to_owned(), sensitive)
        })
        .collect())
}
