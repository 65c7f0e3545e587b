//! Context parameters (C1): borrowed (`&T`), cloned (`#[context]`), beside the `Context`
//! itself, in any order, with one input or none; none of them is in the schema.

use std::sync::Arc;

use tool_runtime::{Context, IntoTool, Schema, tool};

/// Who is asking.
pub struct Operator {
    pub name: String,
}

/// A connection pool, cheap to clone.
#[derive(Clone)]
pub struct Pool(Arc<str>);

/// Input of a restart.
#[derive(Schema)]
pub struct RestartInput {
    /// The service to restart.
    pub service_id: String,
}

/// Restart a service now.
#[tool(name = "restart-service")]
pub async fn restart(op: &Operator, #[context] pool: Pool, input: RestartInput) -> String {
    format!("{} restarts {} on {}", op.name, input.service_id, pool.0)
}

/// Say who is asking.
#[tool]
pub fn whoami(ctx: &Context, op: &'_ Operator, _: &Pool) -> String {
    let _ = ctx.is_cancelled();
    op.name.clone()
}

/// Add two numbers, for an operator.
#[tool]
pub fn add(
    _op: &Operator,
    #[schema(describe = "The first number.")] a: i64,
    #[schema(describe = "The second number.")] b: i64,
) -> i64 {
    a + b
}

fn main() {
    for tool in [
        RestartService.into_tool(),
        Whoami.into_tool(),
        Add.into_tool(),
    ] {
        assert!(tool.declaration_error().is_none());
        assert!(!tool.schema_json().contains("\"op\""), "{}", tool.schema_json());
        assert!(!tool.schema_json().contains("\"pool\""), "{}", tool.schema_json());
        assert!(tool.has_policy());
    }
    let names: Vec<&str> = RestartService.into_tool().required_context().collect();
    assert_eq!(names.len(), 2);
}
