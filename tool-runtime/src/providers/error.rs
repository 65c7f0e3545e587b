//! [`ConfigError`]: a driver that cannot be set up, found before any I/O.

use tool_core::BoxError;

/// Why a driver could not be configured. Never shows an API key or a header's value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The provider needs an API key and none was given.
    #[error("no API key: set one with `api_key(…)` or the environment variable {var}")]
    MissingApiKey {
        /// The environment variable that would hold it.
        var: &'static str,
    },
    /// No model name was given, and the provider has no default (an OpenAI-compatible
    /// server).
    #[error(
        "no model name: an OpenAI-compatible server has no default model; set one with \
         `model(…)` or the environment variable {var}"
    )]
    MissingModel {
        /// The environment variable that would hold it.
        var: &'static str,
    },
    /// The provider needs a region (Amazon Bedrock) and none was given.
    #[error("no region: set one with `region(…)` or the environment variable {var}")]
    MissingRegion {
        /// The environment variable that would hold it.
        var: &'static str,
    },
    /// The base URL is not an absolute `http` or `https` URL.
    #[error("the base URL {url:?} cannot be used: {reason}")]
    InvalidBaseUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An extra header has a name or value that HTTP does not allow.
    #[error("the header `{name}` is not a valid HTTP header (its value is not shown)")]
    InvalidHeader {
        /// The header's name, as given.
        name: String,
    },
    /// The API key holds characters an HTTP header cannot carry.
    #[error("the API key cannot be sent in an HTTP header (the key is not shown)")]
    InvalidApiKey,
    /// The HTTP client could not be built (its TLS setup, say).
    #[error("the HTTP client could not be built")]
    Client(#[source] BoxError),
}
