//! Shared items of the integration tests: a user crate that names only `tool-runtime`.
//!
//! Every test here goes through the public surface a user has: the derive, `#[tool]`, the
//! rendered schema, the parser and `Tool::invoke`.

pub mod fuzz;

use tool_runtime::Schema;
use tool_runtime::schema::{SchemaError, parse_arguments, parse_root, render_root};
use tool_runtime::violation::{ParseCx, Violation};

/// The input schema of `T`, as a tool renders it.
///
/// # Errors
///
/// Returns the schema error when `T` does not render as an object.
pub fn schema_of<T: Schema>() -> Result<serde_json::Value, SchemaError> {
    render_root::<T>()
}

/// Parses `args` as a `T` the way a call's arguments are: read once, straight from the bytes
/// (S2).
///
/// # Errors
///
/// Returns every violation found, the way the model would get them.
pub fn parse_args<T: Schema>(args: &str) -> Result<T, Vec<Violation>> {
    let mut cx = ParseCx::new();
    match parse_arguments::<T>(args.as_bytes(), &mut cx) {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(cx.finish().0),
        Err(e) => Err(vec![syntax(&e)]),
    }
}

/// Decodes `args` into a JSON tree first, then parses the tree as a `T` (the path of a value
/// already decoded).
///
/// # Errors
///
/// Returns every violation found.
pub fn parse_decoded<T: Schema>(args: &str) -> Result<T, Vec<Violation>> {
    let json = tool_runtime::json::decode(args.as_bytes()).map_err(|e| vec![syntax(&e)])?;
    parse_root::<T>(json).map_err(|cx| cx.finish().0)
}

fn syntax(e: &tool_runtime::json::DecodeError) -> Violation {
    Violation {
        path: String::new(),
        rule: tool_runtime::Rule::Syntax,
        message: e.to_string(),
    }
}

/// The `(path, rule)` pairs of violations, for compact assertions.
pub fn paths_and_rules(violations: &[Violation]) -> Vec<(String, String)> {
    violations
        .iter()
        .map(|v| (v.path.clone(), v.rule.keyword().to_owned()))
        .collect()
}
