//! [`ScopeHierarchy`]: which scope implies which (Z3).

use std::collections::{BTreeMap, BTreeSet};

/// Which scope implies which, as the server declares it (Z3): a token granting `admin` may be
/// said to grant `tickets:read` and `tickets:write` too. Implication is transitive.
#[derive(Clone, Debug, Default)]
pub struct ScopeHierarchy {
    implies: BTreeMap<String, Vec<String>>,
}

impl ScopeHierarchy {
    /// No scope implies another.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares that `scope` implies each of `implied`.
    #[must_use]
    pub fn implies(
        mut self,
        scope: impl Into<String>,
        implied: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.implies
            .entry(scope.into())
            .or_default()
            .extend(implied.into_iter().map(Into::into));
        self
    }

    /// The scopes `granted` grants: themselves and all they imply.
    pub fn expand<'a>(&self, granted: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
        let mut all = BTreeSet::new();
        let mut todo: Vec<String> = granted.into_iter().map(str::to_owned).collect();
        while let Some(scope) = todo.pop() {
            if let Some(implied) = self.implies.get(&scope) {
                todo.extend(implied.iter().filter(|s| !all.contains(*s)).cloned());
            }
            all.insert(scope);
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z3_a_hierarchy_is_transitive_and_ends_on_cycles() {
        let h = ScopeHierarchy::new()
            .implies("admin", ["write"])
            .implies("write", ["read"])
            .implies("read", ["admin"].iter().copied().filter(|_| false))
            .implies("x", ["y"])
            .implies("y", ["x"]);
        let all: Vec<_> = h.expand(["admin"]).into_iter().collect();
        assert_eq!(all, ["admin", "read", "write"]);
        assert_eq!(h.expand(["x"]).len(), 2);
        assert_eq!(h.expand(["read"]).len(), 1);
    }
}
