//! Generated code stays clean under strict lints, in a crate that forbids unsafe code.
#![forbid(unsafe_code)]
#![deny(warnings, missing_docs, unreachable_pub, unused_qualifications, rust_2018_idioms)]
#![deny(clippy::all, clippy::pedantic)]

use tool_runtime::{BoxError, Context, Invalid, Schema, tool};

/// Checks an id.
///
/// # Errors
///
/// When the id is empty.
pub fn check_id(id: &str) -> Result<(), Invalid> {
    if id.is_empty() {
        return Err(Invalid::violation("must not be empty"));
    }
    Ok(())
}

/// A query.
#[derive(Schema, Debug)]
#[schema(rename_all = "camelCase")]
pub struct Query {
    /// The id.
    #[schema(validate = check_id, max_len = 10, example = "a-1")]
    pub item_id: String,
    /// The limit.
    #[schema(default = 10, range = 1..=100)]
    pub limit: u32,
    /// The kind.
    #[schema(default)]
    pub kind: Kind,
    /// A nested filter.
    pub filter: Option<Filter>,
}

/// A kind.
#[derive(Schema, Debug, Default)]
pub enum Kind {
    /// Any kind.
    #[default]
    Any,
    /// Only new ones.
    New,
}

/// A filter.
#[derive(Schema, Debug)]
#[schema(tag = "op")]
pub enum Filter {
    /// Equal.
    Eq {
        /// The value.
        value: String,
    },
    /// Not.
    Not {
        /// The inner filter.
        inner: Box<Filter>,
    },
}

/// Whether the caller may search.
///
/// # Errors
///
/// Never.
pub async fn allowed(ctx: &Context) -> Result<bool, BoxError> {
    Ok(!ctx.is_cancelled())
}

/// Searches.
///
/// # Errors
///
/// Never.
#[tool(available = allowed)]
pub async fn search(ctx: Context, input: Query) -> Result<String, BoxError> {
    let _ = ctx;
    Ok(format!("{input:?}"))
}

/// Counts.
#[tool]
#[must_use]
pub fn count(
    #[schema(describe = "From.")] from: u32,
    #[schema(describe = "To.", default = 10)] to: u32,
) -> u32 {
    to.saturating_sub(from)
}

fn main() {
    let _ = (Search, Count);
}
