use tool_runtime::{BoxError, tool};

pub struct Secret {
    pub value: String,
}

/// Reveals a secret.
#[tool]
pub async fn reveal() -> Result<Secret, BoxError> {
    Ok(Secret { value: String::new() })
}

fn main() {}
