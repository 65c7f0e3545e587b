//! The link-time registry of `#[resource]` and `#[prompt]` items (M7, as R1 is for tools):
//! [`registered_resources`] and [`registered_prompts`], each in a stable order; two items of
//! one URI or name are refused when a server is built with them.

use tool_core::__private::inventory;

use super::prompts::McpPrompt;
use super::resources::McpResource;

/// One `#[resource]`, submitted at link time. Made by the macro; not public API.
#[doc(hidden)]
#[derive(Debug)]
pub struct ResourceRegistration {
    make: fn() -> McpResource,
}

impl ResourceRegistration {
    /// The registration of the resource `make` builds.
    pub const fn new(make: fn() -> McpResource) -> Self {
        Self { make }
    }
}

/// One `#[prompt]`, submitted at link time. Made by the macro; not public API.
#[doc(hidden)]
#[derive(Debug)]
pub struct PromptRegistration {
    make: fn() -> McpPrompt,
}

impl PromptRegistration {
    /// The registration of the prompt `make` builds.
    pub const fn new(make: fn() -> McpPrompt) -> Self {
        Self { make }
    }
}

inventory::collect!(ResourceRegistration);
inventory::collect!(PromptRegistration);

/// Every `#[resource]` linked into this binary, ordered by URI (then name). Give them to a
/// server with [`McpServerBuilder::resources`](super::McpServerBuilder::resources), which
/// refuses two of one URI.
pub fn registered_resources() -> Vec<McpResource> {
    let mut all: Vec<McpResource> = (inventory::iter::<ResourceRegistration>.into_iter())
        .map(|registration| (registration.make)())
        .collect();
    all.sort_by(|a, b| (a.uri(), a.name()).cmp(&(b.uri(), b.name())));
    all
}

/// Every `#[prompt]` linked into this binary, ordered by name. Give them to a server with
/// [`McpServerBuilder::prompts`](super::McpServerBuilder::prompts), which refuses two of one
/// name.
pub fn registered_prompts() -> Vec<McpPrompt> {
    let mut all: Vec<McpPrompt> = (inventory::iter::<PromptRegistration>.into_iter())
        .map(|registration| (registration.make)())
        .collect();
    all.sort_by(|a, b| a.name().cmp(b.name()));
    all
}
