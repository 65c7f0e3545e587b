//! The link-time registry of `#[tool]`s (R1, N3).

use crate::error::{DeclarationError, Site};
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
    if let Some(pair) = all.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(DeclarationError::DuplicateName {
            name: pair[0].name.to_owned(),
            first: pair[0].site,
            second: pair[1].site,
        });
    }
    Ok(all)
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
