use tool_runtime::Schema;

#[derive(Schema)]
#[schema(rename_al = "camelCase")]
pub struct Query {
    #[schema(min_lenn = 1, describ = "x")]
    pub id: String,
}

fn main() {}
