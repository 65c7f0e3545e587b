use tool_runtime::tool;

/// A connection pool that cannot be cloned.
pub struct Pool;

/// Checks the database.
#[tool]
pub async fn ping(#[context] pool: Pool) -> String {
    let _ = pool;
    "pong".to_owned()
}

fn main() {}
