//! The OAuth scopes a tool's calls need (Z3): declared on the tool, checked against a
//! caller's granted scopes by the MCP server before a call runs.

use super::{DeclarationError, Site, Tool, ToolBuilder};

impl Tool {
    /// The OAuth scopes a call of this tool needs (Z3), in declaration order, without
    /// duplicates. Empty for a tool any authorized caller may call. An MCP server that
    /// authorizes its callers lists the tool only to a token that grants them all (or lists it
    /// for step-up), and answers a call whose token lacks one `403 insufficient_scope`.
    pub fn scopes(&self) -> &[String] {
        &self.inner.scopes
    }
}

impl ToolBuilder {
    /// Declares the OAuth scopes a call of this tool needs (Z3). Each item may hold several
    /// scopes separated by spaces (`"tickets:read tickets:write"`); duplicates are dropped.
    /// A scope that is not an OAuth scope token (RFC 6749 §3.3: printable ASCII without a
    /// space, `"` or `\`) makes the tool unusable ([`DeclarationError::InvalidScope`]).
    ///
    /// ```
    /// use tool_core::{Context, Tool};
    ///
    /// # type Args = std::collections::BTreeMap<String, serde_json::Value>;
    /// let close = Tool::builder("close-ticket", "Closes a ticket.")
    ///     .scopes(["tickets:write"])
    ///     .handler(|_ctx: Context, _input: Args| async move { Ok::<_, std::io::Error>("closed") })
    ///     .build();
    /// assert_eq!(close.scopes(), ["tickets:write"]);
    /// ```
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl AsRef<str>>) -> Self {
        for item in scopes {
            let item = item.as_ref();
            if item.trim().is_empty() {
                // Kept, so that `build()` reports it.
                self.scopes.push(item.to_owned());
                continue;
            }
            for scope in item.split(' ').filter(|scope| !scope.is_empty()) {
                if !self.scopes.iter().any(|known| known == scope) {
                    self.scopes.push(scope.to_owned());
                }
            }
        }
        self
    }
}

/// Whether `scope` is an OAuth scope token (RFC 6749 §3.3).
pub(crate) fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

/// The first scope of `scopes` that is not a scope token, as a declaration error.
pub(super) fn check(name: &str, site: Site, scopes: &[String]) -> Option<DeclarationError> {
    scopes
        .iter()
        .find(|scope| !is_scope_token(scope))
        .map(|scope| DeclarationError::InvalidScope {
            name: name.to_owned(),
            site,
            scope: scope.clone(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z3_scope_tokens_are_printable_ascii_without_space_quote_or_backslash() {
        for good in [
            "read",
            "tickets:write",
            "https://api.example.com/x",
            "a!#[]~",
        ] {
            assert!(is_scope_token(good), "{good}");
        }
        for bad in ["", "a b", "a\"b", "a\\b", "é", "a\tb", "a\u{7f}"] {
            assert!(!is_scope_token(bad), "{bad:?}");
        }
    }

    #[test]
    fn z3_the_builder_splits_dedups_and_refuses_what_is_not_a_scope() {
        let tool = Tool::builder("t", "T.").scopes(["a b", "a", "c"]).build();
        assert_eq!(tool.scopes(), ["a", "b", "c"]);
        let bad = Tool::builder("t", "T.").scopes(["ok", "x\\y"]).build();
        assert!(matches!(
            bad.declaration_error(),
            Some(DeclarationError::InvalidScope { scope, .. }) if scope == "x\\y"
        ));
    }
}
