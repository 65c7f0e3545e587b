//! Core types of `tool-runtime`. Applications depend on `tool-runtime`, which re-exports
//! everything here together with the `#[tool]` and `#[derive(Schema)]` macros.
//!
//! | module | what it holds |
//! |---|---|
//! | [`schema`] | the [`Schema`] trait, its parser and the wording of violations (S1–S5) |
//! | [`violation`] | the violations a parse collects, and the [`violation::ParseCx`] holding them |
//! | [`json`] | the decoded [`json::Json`] tree the parser reads |
//! | [`name`] | tool names (N1) |
//! | [`context`] | the [`Context`] a run and each call carry |
//! | [`policy`] | availability [`Policy`] (A1) |
//! | [`approval`] | approval of calls (H1) |
//! | [`hook`] | [`Hook`]s around each call (K1) |
//! | [`elicit`], [`progress`] | asking the user, reporting progress, from inside a call |
//! | [`error`], [`panic`](mod@panic), [`preview`] | errors, contained panics, short quotes of outside text |
//! | [`contract`] | the behaviour contract, where every rule id these docs cite is defined |
//!
//! The call pipeline is [`Tool::invoke`]; tools declared with `#[tool]` are found in the
//! link-time [`registry`].
//!
//! Descriptions, names and schemas are sent to the model provider (D3): keep secrets out of
//! them.

#![deny(unreachable_pub)]

pub mod approval;
pub mod call_id;
pub mod context;
// The contract's one text is `docs/contract.md`; the package holds it through a link, so that
// the rule ids these docs cite resolve on the published docs as in the repository.
#[doc = include_str!("../contract.md")]
pub mod contract {}
pub mod elicit;
pub mod error;
pub mod hook;
pub mod logging;
pub mod name {
    //! Tool names: rule N1, checked by [`check_name`] and kept in a [`ToolName`]. The rules
    //! live in `tool-rules`, which the macros check them with at compile time.
    pub use tool_rules::name::{MAX_NAME_LEN, NameError, ToolName, check_name, suggest_name};
}
pub mod panic;
pub mod policy;
pub mod preview;
pub mod progress;
pub mod roots;
pub mod sampling;
pub mod schema;
pub mod task;
mod tool;

#[doc(hidden)]
pub mod __private;

/// The schemars crate (feature `schemars`), whose `JsonSchema` a [`schema::Parameters`] input
/// derives (C3).
#[cfg(feature = "schemars")]
pub use schemars;

pub use approval::{Approval, ApprovalPredicate, NOT_APPROVED};
pub use call_id::{CallId, CallName};
pub use context::{CallInfo, CancellationToken, Context, MissingExtension};
pub use elicit::{ElicitAnswer, ElicitError, Elicited, Elicitor};
pub use error::{BoxError, Error, ErrorKind, Panicked, Permanent, Relayed, RelayedKind, ToolError};
pub use hook::{Hook, Hooks};
pub use logging::{LogLevel, LogMessage};
pub use name::{NameError, ToolName};
pub use policy::Policy;
pub use progress::Progress;
pub use roots::{Root, RootsError, RootsSource};
pub use sampling::{SampleError, Sampler, SamplingAnswer, SamplingRequest};
pub use schema::{Invalid, Schema};
pub use schema::{json, violation};
pub use tool::{
    AWAITING_APPROVAL, CANCELLED, DEFAULT_MAX_ARGUMENT_BYTES, DEFERRED, FAILED, Limits, Outcome,
    OutcomeKind, RECORDED_ERROR, TIMED_OUT, UNAVAILABLE,
};
pub use tool::{Annotations, OutputSchema, WRAPPED_OUTPUT_KEY};
pub use tool::{ArgumentValidator, DeclarationError, Site};
pub use tool::{Image, Rendered, Resource, WithImages, render_rich};
pub use tool::{IntoTool, Tool, ToolBuilder, render_result};
pub use tool::{NameIndex, index_by_name, registered, registry};
pub use violation::{Rule, Violation};
