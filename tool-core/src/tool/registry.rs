//! The link-time registry of `#[tool]`s (R1, N3), and [`index_by_name`]: the one check of a
//! set of declarations that the registry, the agent builder and the MCP server builder share
//! (N3, D2).

use std::collections::HashMap;

use super::{DeclarationError, Site};
use crate::tool::Tool;

/// One `#[tool]`, submitted at link time. Made by the macro; not public API.
#[doc(hidden)]
#[derive(Debug)]
pub struct Registration {
    name: &'static str,
    site: Site,
    make: fn() -> Tool,
}

impl Registration {
    /// A registration of the tool `name` declared at `site`, built by `make`.
    pub const fn new(name: &'static str, site: Site, make: fn() -> Tool) -> Self {
        Self { name, site, make }
    }
}

inventory::collect!(Registration);

fn sorted() -> Result<Vec<&'static Registration>, DeclarationError> {
    let mut all: Vec<&'static Registration> = inventory::iter::<Registration>.into_iter().collect();
    all.sort_by(|a, b| (a.name, a.site).cmp(&(b.name, b.site)));
    let index = index_by_name(all.iter().map(|r| (r.name, r.site, None)));
    match index.problems.into_iter().flatten().next() {
        Some(duplicate) => Err(duplicate),
        None => Ok(all),
    }
}

/// Every `#[tool]` linked into this binary, ordered by name (R1).
///
/// # Errors
///
/// Returns [`DeclarationError::DuplicateName`], naming both declaration sites, when two tools
/// share a name (N3).
pub fn registry() -> Result<Vec<Tool>, DeclarationError> {
    Ok(sorted()?.into_iter().map(|r| (r.make)()).collect())
}

/// The registered tools with these names, in the order given (R1).
///
/// # Errors
///
/// Returns [`DeclarationError::UnknownTool`] for a name that is not registered, and
/// [`DeclarationError::DuplicateName`] as [`registry`] does.
pub fn registered<S: AsRef<str>>(
    names: impl IntoIterator<Item = S>,
) -> Result<Vec<Tool>, DeclarationError> {
    let all = sorted()?;
    names
        .into_iter()
        .map(|name| {
            let name = name.as_ref();
            all.binary_search_by(|r| r.name.cmp(name))
                .map(|i| (all[i].make)())
                .map_err(|_| DeclarationError::UnknownTool {
                    name: name.to_owned(),
                })
        })
        .collect()
}

/// A set of declarations indexed by name, made by [`index_by_name`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NameIndex {
    /// The position of each name's first declaration, in the order given.
    pub by_name: HashMap<String, usize>,
    /// One entry per declaration, in the order given: `None` when it is usable, or the
    /// declaration error that makes it unusable.
    pub problems: Vec<Option<DeclarationError>>,
}

/// Indexes declarations by name, in the order given, and checks each one.
///
/// Each declaration is a tool's name, where it was declared, and its own declaration error if
/// it has one ([`Tool::declaration_error`]). A declaration whose name an earlier one already took gets
/// [`DeclarationError::DuplicateName`], naming the earlier site first and its own second (N3),
/// and is left out of [`NameIndex::by_name`]. Any other declaration is indexed, and gets its
/// own error, if any (D2).
///
/// ```
/// use tool_core::{DeclarationError, Site, index_by_name};
///
/// let a = Site { file: "a.rs", line: 1, column: 1 };
/// let b = Site { file: "b.rs", line: 2, column: 1 };
/// let index = index_by_name([("lookup", a, None), ("lookup", b, None), ("other", b, None)]);
/// assert_eq!(index.by_name["lookup"], 0);
/// assert_eq!(index.by_name["other"], 2);
/// assert!(index.problems[0].is_none() && index.problems[2].is_none());
/// assert!(matches!(
///     &index.problems[1],
///     Some(DeclarationError::DuplicateName { first, second, .. }) if *first == a && *second == b
/// ));
/// ```
pub fn index_by_name<'a>(
    declarations: impl IntoIterator<Item = (&'a str, Site, Option<&'a DeclarationError>)>,
) -> NameIndex {
    let mut index = NameIndex::default();
    let mut sites = Vec::new();
    for (i, (name, site, error)) in declarations.into_iter().enumerate() {
        sites.push(site);
        let problem = match index.by_name.get(name) {
            Some(&first) => Some(DeclarationError::DuplicateName {
                name: name.to_owned(),
                first: sites[first],
                second: site,
            }),
            None => {
                index.by_name.insert(name.to_owned(), i);
                error.cloned()
            }
        };
        index.problems.push(problem);
    }
    index
}
