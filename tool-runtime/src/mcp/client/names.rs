//! Reversible mapping from the names of remote MCP tools to valid local names (N1).
//!
//! MCP allows names such as `get_weather`, `Ops.Restart` or `searchDocs`; rule N1 does not.
//! Each remote name is mapped to the nearest valid name (lower case, `_` / `.` / spaces and
//! camel-case humps become `-`), optionally behind a prefix that namespaces one server, and
//! the map from the local name back to the remote one is kept for calls. Two remote names that
//! map to one local name are a collision, reported with both remote names.

use std::collections::HashMap;

use tool_core::NameError;
use tool_core::name::{MAX_NAME_LEN, check_name, suggest_name};

/// The local name for the remote tool `remote`, behind `prefix` if there is one, or `None` when
/// nothing of the name can be kept (a name made only of characters that are not ASCII).
///
/// A name that already follows N1 is kept as it is (with the prefix, if any, and a `-`).
///
/// ```
/// use tool_runtime::mcp::local_name;
///
/// assert_eq!(local_name("get_weather", None).as_deref(), Some("get-weather"));
/// assert_eq!(local_name("Ops.Restart", None).as_deref(), Some("ops-restart"));
/// assert_eq!(local_name("searchDocs", Some("kb")).as_deref(), Some("kb-search-docs"));
/// assert_eq!(local_name("lookup-window", None).as_deref(), Some("lookup-window"));
/// assert_eq!(local_name("日本", None), None);
/// ```
pub fn local_name(remote: &str, prefix: Option<&str>) -> Option<String> {
    let mapped = suggest_name(remote)?;
    match prefix {
        None => Some(mapped),
        Some(prefix) => {
            let mut joined = format!("{prefix}-{mapped}");
            joined.truncate(MAX_NAME_LEN);
            while joined.ends_with('-') {
                joined.pop();
            }
            Some(joined)
        }
    }
}

/// Checks a prefix: it must itself follow N1, and leave room for a name after it.
pub(crate) fn check_prefix(prefix: &str) -> Result<(), NameError> {
    check_name(prefix)?;
    if prefix.len() + 2 > MAX_NAME_LEN {
        return Err(NameError::TooLong {
            len: prefix.len() + 2,
        });
    }
    Ok(())
}

/// Why a remote tool could not get a local name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NameProblem {
    /// Nothing of the remote name can be kept.
    Unmappable { remote: String },
    /// A rename gave a name that breaks N1.
    InvalidRename { remote: String, source: NameError },
    /// Two remote names map to one local name.
    Collision {
        local: String,
        first_remote: String,
        second_remote: String,
    },
}

/// The map from local names to the remote names they stand for.
#[derive(Debug, Clone, Default)]
pub(crate) struct NameMap {
    /// `(local, remote)`, in the order of the remote listing.
    pairs: Vec<(String, String)>,
    by_local: HashMap<String, usize>,
}

impl NameMap {
    /// Maps every remote name (in order), applying `renames` (remote → local, used as given)
    /// and `prefix` to the others. Returns the map and every problem found.
    pub(crate) fn build<'a>(
        remotes: impl IntoIterator<Item = &'a str>,
        prefix: Option<&str>,
        renames: &HashMap<String, String>,
    ) -> (Self, Vec<NameProblem>) {
        let mut map = NameMap::default();
        let mut problems = Vec::new();
        for remote in remotes {
            let local = match renames.get(remote) {
                Some(local) => match check_name(local) {
                    Ok(()) => local.clone(),
                    Err(source) => {
                        problems.push(NameProblem::InvalidRename {
                            remote: remote.to_owned(),
                            source,
                        });
                        continue;
                    }
                },
                None => match local_name(remote, prefix) {
                    Some(local) => local,
                    None => {
                        problems.push(NameProblem::Unmappable {
                            remote: remote.to_owned(),
                        });
                        continue;
                    }
                },
            };
            if let Some(&i) = map.by_local.get(&local) {
                problems.push(NameProblem::Collision {
                    local,
                    first_remote: map.pairs[i].1.clone(),
                    second_remote: remote.to_owned(),
                });
                continue;
            }
            map.by_local.insert(local.clone(), map.pairs.len());
            map.pairs.push((local, remote.to_owned()));
        }
        (map, problems)
    }

    /// The remote name that `local` stands for.
    pub(crate) fn remote(&self, local: &str) -> Option<&str> {
        self.by_local.get(local).map(|&i| self.pairs[i].1.as_str())
    }

    /// The local name of `remote`.
    pub(crate) fn local(&self, remote: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(_, r)| r == remote)
            .map(|(l, _)| l.as_str())
    }

    /// Every `(local, remote)` pair, in the order of the remote listing.
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(l, r)| (l.as_str(), r.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(remotes: &[&str], prefix: Option<&str>) -> (NameMap, Vec<NameProblem>) {
        NameMap::build(remotes.iter().copied(), prefix, &HashMap::new())
    }

    #[test]
    fn n1_mapped_names_are_valid_and_reversible() {
        let remotes = [
            "get_weather",
            "Ops.Restart",
            "searchDocs",
            "ok-name",
            "A B  c",
        ];
        let (map, problems) = build(&remotes, None);
        assert!(problems.is_empty(), "{problems:?}");
        for remote in remotes {
            let local = map.local(remote).expect("mapped");
            assert_eq!(check_name(local), Ok(()), "{remote} -> {local}");
            assert_eq!(map.remote(local), Some(remote));
        }
        assert_eq!(map.local("ok-name"), Some("ok-name"));
    }

    #[test]
    fn n1_prefixes_namespace_and_stay_within_64_bytes() {
        let long = "x".repeat(100);
        let (map, problems) = build(&["get_weather", &long], Some("wx"));
        assert!(problems.is_empty());
        assert_eq!(map.local("get_weather"), Some("wx-get-weather"));
        let local = map.local(&long).expect("mapped");
        assert_eq!(local.len(), MAX_NAME_LEN);
        assert_eq!(check_name(local), Ok(()));
        assert!(check_prefix("Wx").is_err());
        assert!(check_prefix(&"p".repeat(63)).is_err());
        assert!(check_prefix("wx").is_ok());
    }

    #[test]
    fn n3_collisions_name_both_remote_names() {
        let (map, problems) = build(&["a_b", "a.b", "c"], None);
        assert_eq!(
            problems,
            vec![NameProblem::Collision {
                local: "a-b".into(),
                first_remote: "a_b".into(),
                second_remote: "a.b".into(),
            }]
        );
        assert_eq!(map.remote("a-b"), Some("a_b"));
        assert_eq!(map.pairs().count(), 2);
    }

    #[test]
    fn renames_resolve_collisions_and_are_checked() {
        let renames = HashMap::from([
            ("a.b".to_owned(), "a-dot-b".to_owned()),
            ("x".to_owned(), "Bad_Name".to_owned()),
        ]);
        let (map, problems) = NameMap::build(["a_b", "a.b", "x", "日本"], None, &renames);
        assert_eq!(map.remote("a-dot-b"), Some("a.b"));
        assert!(matches!(
            &problems[..],
            [
                NameProblem::InvalidRename { remote, .. },
                NameProblem::Unmappable { remote: other },
            ] if remote == "x" && other == "日本"
        ));
    }
}
