//! What is wrong with a server's resources or prompts ([`CatalogProblem`], found at
//! `build()`), and why a request for one did not produce its answer ([`Failure`]): what the
//! items, their requests and their checks share, apart from the catalog that holds them.

use tool_core::BoxError;

/// Why a request for a resource or a prompt did not produce its answer.
pub(crate) enum Failure {
    /// The arguments broke the type's schema: the rendered violations (S2, S3).
    Invalid(String),
    /// The handler (or a custom validator, S5) failed, or panicked: redacted for the client
    /// (E2).
    Failed(BoxError),
    /// A hook or a custom validator panicked: redacted for the client (E4).
    Panicked(BoxError),
    /// A hook refused the request: the client reads its message.
    Denied(String),
    /// A hook gave the request up: logged, and the client reads that the item failed,
    /// whatever the cause holds.
    Ended(BoxError),
}

/// One problem of a server's resources or prompts, found at `build()`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogProblem {
    /// A resource or resource template is declared wrong.
    #[error("resource `{uri}` is declared wrong: {reason}")]
    Resource {
        /// Its URI or URI template.
        uri: String,
        /// What is wrong, and what to do.
        reason: String,
    },
    /// A prompt is declared wrong.
    #[error("prompt `{name}` is declared wrong: {reason}")]
    Prompt {
        /// Its name.
        name: String,
        /// What is wrong, and what to do.
        reason: String,
    },
    /// Two resources share a URI (or URI template).
    #[error("two resources have the URI `{uri}`: give each its own")]
    DuplicateUri {
        /// The URI.
        uri: String,
    },
    /// Icons are given for a tool the server does not hold.
    #[error("icons are given for `{name}`, but the server holds no tool of that name")]
    IconsForUnknownTool {
        /// The name given.
        name: String,
    },
    /// Two prompts share a name.
    #[error("two prompts are named `{name}`: give each its own name")]
    DuplicatePrompt {
        /// The name.
        name: String,
    },
}
