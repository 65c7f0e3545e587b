//! What can be wrong with a tool's declaration (D2, N3), found before any model I/O, and where
//! a tool was declared.

use std::fmt;

use super::Annotations;
use crate::error::{Error, ErrorKind};
use crate::name::{NameError, check_name};
use crate::schema::SchemaError;

/// Where a tool was declared: the `#[tool]` attribute, or the call to `Tool::builder`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Site {
    /// The source file.
    pub file: &'static str,
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1.
    pub column: u32,
}

impl Site {
    /// The site of the caller of the `#[track_caller]` function that calls this.
    #[track_caller]
    pub fn caller() -> Self {
        let at = std::panic::Location::caller();
        Self {
            file: at.file(),
            line: at.line(),
            column: at.column(),
        }
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A tool or agent that cannot be used, found before any model I/O (D2, N3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeclarationError {
    /// The tool's name breaks N1.
    #[error("invalid tool name {name:?} (declared at {site}): {source}")]
    InvalidName {
        /// The name as given.
        name: String,
        /// Where the tool was declared.
        site: Site,
        /// The rule it breaks.
        source: NameError,
    },
    /// The tool has no description.
    #[error("tool `{name}` (declared at {site}) has no description: the model needs one")]
    MissingDescription {
        /// The tool's name.
        name: String,
        /// Where the tool was declared.
        site: Site,
    },
    /// The tool has no handler, and is not declared deferred (H5).
    #[error(
        "tool `{name}` (declared at {site}) has no handler: give it one, or declare it \
         deferred if its calls are run elsewhere"
    )]
    MissingHandler {
        /// The tool's name.
        name: String,
        /// Where the tool was declared.
        site: Site,
    },
    /// The tool's hints contradict each other (O4): read-only and destructive.
    #[error("tool `{name}` (declared at {site}) has hints that contradict each other: {reason}")]
    ContradictoryHints {
        /// The tool's name.
        name: String,
        /// Where the tool was declared.
        site: Site,
        /// Which hints, and why.
        reason: &'static str,
    },
    /// The tool's input schema cannot be rendered.
    #[error("tool `{name}` (declared at {site}): {source}")]
    Schema {
        /// The tool's name.
        name: String,
        /// Where the tool was declared.
        site: Site,
        /// Why the schema cannot be rendered.
        source: SchemaError,
    },
    /// A deferred tool declares an approval: its calls pause the run anyway, and are decided
    /// by whoever gives their result (H5).
    #[error(
        "tool `{name}` (declared at {site}) is deferred and also requires approval: a deferred \
         call always pauses the run, and whoever gives its result decides it; drop the approval"
    )]
    ApprovalOnDeferred {
        /// The tool's name.
        name: String,
        /// Where the tool was declared.
        site: Site,
    },
    /// The approval predicate takes another input type than the handler (H1).
    #[error(
        "tool `{name}` (declared at {site}): its approval predicate takes `&{found}`, but its \
         handler's input is `{expected}`; the predicate sees the handler's validated input"
    )]
    ApprovalInputMismatch {
        /// The tool's name.
        name: String,
        /// Where the tool was declared.
        site: Site,
        /// The handler's input type.
        expected: &'static str,
        /// The predicate's input type.
        found: &'static str,
    },
    /// A scope the tool declares is not an OAuth scope token (Z3): empty, or with a space,
    /// a quote, a backslash or a control character.
    #[error(
        "tool `{name}` (declared at {site}) declares the scope {scope:?}, which is not an OAuth scope token"
    )]
    InvalidScope {
        /// The tool's name.
        name: String,
        /// Where the tool was declared.
        site: Site,
        /// The scope as given.
        scope: String,
    },
    /// An example input the tool's own parser refuses (Q3).
    #[error(
        "tool `{name}` (declared at {site}): its example #{index} is not an input it accepts \
         ({reason}); fix the example so that it fits the input schema, or remove it"
    )]
    InvalidExample {
        /// The tool's name.
        name: String,
        /// Where the tool was declared.
        site: Site,
        /// The example's index, from 0.
        index: usize,
        /// What the parser refused.
        reason: String,
    },
    /// Two tools share one name (N3).
    #[error("two tools are named `{name}`: one declared at {first}, one at {second}")]
    DuplicateName {
        /// The shared name.
        name: String,
        /// Where the first was declared.
        first: Site,
        /// Where the second was declared.
        second: Site,
    },
    /// A selection names a tool that is not registered.
    #[error("no tool named `{name}` is registered")]
    UnknownTool {
        /// The name asked for.
        name: String,
    },
}

impl From<DeclarationError> for Error {
    fn from(e: DeclarationError) -> Self {
        Error::with_source(ErrorKind::Declaration, "a tool is declared wrong", e)
    }
}

/// The first problem of a declaration's name, description, hints and scopes (D2), if any.
pub(super) fn problem(
    name: &str,
    description: &str,
    site: Site,
    annotations: &Annotations,
    scopes: &[String],
) -> Option<DeclarationError> {
    if let Err(source) = check_name(name) {
        return Some(DeclarationError::InvalidName {
            name: name.to_owned(),
            site,
            source,
        });
    }
    if description.trim().is_empty() {
        return Some(DeclarationError::MissingDescription {
            name: name.to_owned(),
            site,
        });
    }
    if let Some(reason) = annotations.contradiction() {
        return Some(DeclarationError::ContradictoryHints {
            name: name.to_owned(),
            site,
            reason,
        });
    }
    super::scopes::check(name, site, scopes)
}
