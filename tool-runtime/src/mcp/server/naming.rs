//! [`McpNaming`]: the names a server publishes its tools under (M2).

use std::borrow::Cow;
use std::collections::BTreeMap;

/// The names an [`crate::mcp::McpServer`] publishes its tools under over MCP (M2), for clients
/// and migrated servers that expect names a declaration cannot have (`lookup_window`, as
/// rmcp's fn-derived names are). Declared names keep their rules (N1); the published names are
/// one to one with them, checked when the server is built, and must be MCP tool names: 1 to
/// 128 of `A–Z a–z 0–9 _ - .`.
///
/// The handler's [`tool_core::Context::call`], hooks and the application's records
/// ([`crate::mcp::McpCall`]) speak of a tool by its declared name; `tools/list`, the name a
/// `tools/call` gives and that request's span, by its published name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpNaming {
    /// Each tool under its declared name (the default).
    #[default]
    Declared,
    /// snake_case: each `-` of a declared name becomes `_` (`lookup-window` is published as
    /// `lookup_window`).
    SnakeCase,
    /// The names given, declared name to published name; a tool not named keeps its
    /// declared name. A name given for a tool the server does not hold is an error at build.
    Map(BTreeMap<String, String>),
}

impl McpNaming {
    /// A map of declared names to published names ([`McpNaming::Map`]).
    pub fn map<D: Into<String>, P: Into<String>>(pairs: impl IntoIterator<Item = (D, P)>) -> Self {
        McpNaming::Map(
            pairs
                .into_iter()
                .map(|(declared, published)| (declared.into(), published.into()))
                .collect(),
        )
    }

    /// The name the tool declared as `declared` is published under.
    pub(crate) fn published<'a>(&'a self, declared: &'a str) -> Cow<'a, str> {
        match self {
            McpNaming::Declared => Cow::Borrowed(declared),
            McpNaming::SnakeCase => Cow::Owned(declared.replace('-', "_")),
            McpNaming::Map(names) => {
                Cow::Borrowed(names.get(declared).map_or(declared, String::as_str))
            }
        }
    }

    /// The declared names this naming names explicitly.
    pub(crate) fn named(&self) -> impl Iterator<Item = &str> {
        let names = match self {
            McpNaming::Map(names) => Some(names.keys().map(String::as_str)),
            _ => None,
        };
        names.into_iter().flatten()
    }
}

/// Why `name` cannot be an MCP tool name, if it cannot: the MCP name rule (SEP-986) that
/// prompts and resources follow too, held by `tool-rules` for the server and the macros alike.
pub(crate) fn invalid(name: &str) -> Option<&'static str> {
    tool_rules::mcp_name::invalid_mcp_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m2_published_names() {
        assert_eq!(
            McpNaming::Declared.published("lookup-window"),
            "lookup-window"
        );
        assert_eq!(
            McpNaming::SnakeCase.published("lookup-window"),
            "lookup_window"
        );
        let map = McpNaming::map([("lookup-window", "windows.lookup")]);
        assert_eq!(map.published("lookup-window"), "windows.lookup");
        assert_eq!(map.published("restart"), "restart");
        assert_eq!(map.named().collect::<Vec<_>>(), ["lookup-window"]);
    }

    #[test]
    fn m2_mcp_tool_names() {
        for good in ["a", "test_simple_text", "a.b-c_D9", &"x".repeat(128)] {
            assert_eq!(invalid(good), None, "{good}");
        }
        for bad in ["", "a b", "a/b", "é", &"x".repeat(129)] {
            assert!(invalid(bad).is_some(), "{bad:?}");
        }
    }
}
