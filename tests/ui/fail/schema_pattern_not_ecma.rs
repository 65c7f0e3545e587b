use tool_runtime::Schema;

// Valid for the Rust `regex` crate, but not ECMA-262 patterns (what JSON Schema advertises).
#[derive(Schema)]
pub struct Query {
    #[schema(pattern = r"^\p{greek}+$")]
    pub word: String,
    #[schema(pattern = r"^[a-z]{,8}$")]
    pub short: String,
    #[schema(pattern = r"(?i)^abc$")]
    pub folded: String,
}

fn main() {}
