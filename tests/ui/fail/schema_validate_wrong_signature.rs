use tool_runtime::{Invalid, Schema};

pub fn check_id(id: &u64) -> Result<(), Invalid> {
    let _ = id;
    Ok(())
}

#[derive(Schema)]
pub struct Query {
    #[schema(validate = check_id)]
    pub id: String,
}

fn main() {}
