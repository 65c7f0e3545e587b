//! What the name of an MCP tool, prompt or resource may be (rules M2, M7): the MCP name rule
//! (SEP-986), 1 to 128 characters of `A–Z a–z 0–9 _ - .`, checked by `#[prompt]` and
//! `#[resource]` at compile time and by the server when it is built.

/// The longest MCP name, in bytes.
pub const MAX_MCP_NAME_LEN: usize = 128;

/// Why `name` cannot be an MCP tool, prompt or resource name, in words; `None` when it can.
pub fn invalid_mcp_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name.len() > MAX_MCP_NAME_LEN {
        Some("it is longer than 128 characters")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        Some("it holds a character other than A–Z, a–z, 0–9, `_`, `-` and `.`")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m7_mcp_names() {
        assert_eq!(invalid_mcp_name("test_simple_prompt"), None);
        assert_eq!(invalid_mcp_name("review-code.v2"), None);
        assert!(invalid_mcp_name("").is_some());
        assert!(invalid_mcp_name("has space").is_some());
        assert!(invalid_mcp_name(&"a".repeat(129)).is_some());
    }
}
