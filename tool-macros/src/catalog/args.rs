//! `#[resource(...)]` and `#[prompt(...)]`: the keys each takes.

use darling::FromMeta;
use syn::{LitStr, Path};

/// `#[resource(...)]`.
#[derive(Debug, Default, FromMeta)]
pub(crate) struct ResourceArgs {
    /// The URI, or a URI template with `{variables}`.
    pub(crate) uri: Option<LitStr>,
    /// The resource's name; else the fn's name with `_` → `-`.
    pub(crate) name: Option<LitStr>,
    /// A title to show people.
    pub(crate) title: Option<LitStr>,
    /// The description; else the fn's doc comment (none is allowed).
    pub(crate) description: Option<LitStr>,
    /// The media type of its contents.
    pub(crate) mime_type: Option<LitStr>,
    /// The availability policy: a fn of `&Context`.
    pub(crate) available: Option<Path>,
    /// The OAuth scopes a token must grant (Z3), separated by spaces.
    pub(crate) scopes: Option<LitStr>,
    /// The name of the generated handle.
    pub(crate) handle: Option<Path>,
    /// The path of the facade crate, `::tool_runtime` by default.
    #[darling(rename = "crate")]
    pub(crate) krate: Option<Path>,
}

/// `#[prompt(...)]`.
#[derive(Debug, Default, FromMeta)]
pub(crate) struct PromptArgs {
    /// The prompt's name; else the fn's name with `_` → `-`.
    pub(crate) name: Option<LitStr>,
    /// A title to show people.
    pub(crate) title: Option<LitStr>,
    /// The description; else the fn's doc comment (one of them is required).
    pub(crate) description: Option<LitStr>,
    /// The availability policy: a fn of `&Context`.
    pub(crate) available: Option<Path>,
    /// The OAuth scopes a token must grant (Z3), separated by spaces.
    pub(crate) scopes: Option<LitStr>,
    /// The name of the generated handle.
    pub(crate) handle: Option<Path>,
    /// The path of the facade crate, `::tool_runtime` by default.
    #[darling(rename = "crate")]
    pub(crate) krate: Option<Path>,
}

/// What both attributes hold besides their own keys.
pub(crate) struct Common {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) available: Option<Path>,
    pub(crate) scopes: Option<LitStr>,
    pub(crate) handle: Option<Path>,
    pub(crate) krate: Option<Path>,
}

/// The common arguments of an attribute's keys.
macro_rules! common_of {
    ($args:ty) => {
        impl $args {
            pub(crate) fn common(&self) -> Common {
                Common {
                    name: self.name.clone(),
                    title: self.title.clone(),
                    description: self.description.clone(),
                    available: self.available.clone(),
                    scopes: self.scopes.clone(),
                    handle: self.handle.clone(),
                    krate: self.krate.clone(),
                }
            }
        }
    };
}

common_of!(ResourceArgs);
common_of!(PromptArgs);
