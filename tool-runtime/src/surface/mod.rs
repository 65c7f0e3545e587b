//! The tool surface (C2): every tool of an agent, an MCP server or a list, as one
//! deterministic JSON document, compared with a committed copy by a test.
//!
//! A tool's entry holds what it declares (name, title, description, the input schema the
//! parser enforces, the output schema, the hints, whether calls wait for approval, whether
//! it has an availability policy, whether it is deferred or sequential, its retry budget,
//! whether it is offered only once a search loads it: `deferred_loading`, Q1)
//! and, under `published`, the tool exactly as each publisher sends it, rendered by the
//! publisher's own code: Chat Completions in strict mode where the schema allows it and with
//! strict mode off, Responses in strict mode, Anthropic's Messages API with and without strict
//! tools, Gemini and Bedrock (with their drivers' features), and an MCP server's
//! `tools/list`. Tools are keyed by name and every object's members sorted, so the same
//! tools render the same bytes whatever order they were registered in, and a change reads
//! well in a diff.
//!
//! [`Surface::portability`] says, per tool and per publisher, what each dialect loses of the
//! schema the parser enforces (V4): read off the renderings, held in the document beside the
//! tools, and checked against them when a document is read.
//!
//! [`Surface::diff`] lists the changes from one surface to another, each at its JSON pointer
//! with what was and what is, and classified ([`Compatibility`]): a tool removed or renamed,
//! a field newly required, a type or bound narrowed, an enum value removed,
//! `additionalProperties` newly false, approval newly required or loading newly deferred is
//! breaking; a tool or an
//! optional field added, a description changed, a bound widened or an enum value added is
//! compatible. [`assert_snapshot`] holds a surface against a committed file in a test.
//!
//! ```rust,ignore
//! use tool_runtime::surface::{Surface, assert_snapshot};
//!
//! #[test]
//! fn c2_surface() {
//!     let surface = Surface::of_tools([LookupWindow, RestartService]).expect("the tools render");
//!     // `UPDATE_SURFACE=1 cargo test` rewrites the file; otherwise a change fails with the diff.
//!     assert_snapshot(&surface, concat!(env!("CARGO_MANIFEST_DIR"), "/surface/tools.json"));
//! }
//! ```

// What a change is, and whether it breaks a caller.
mod classify;
// The changes between two surfaces.
mod diff;
// What each publisher's rendering loses of each tool (V4).
mod portability;
// One tool's entry, from the publishers' own renderings.
mod render;
// A surface held against a committed file.
mod snapshot;

use std::collections::BTreeMap;

use serde_json::Value;
use tool_core::{DeclarationError, IntoTool, Tool, index_by_name};

pub use classify::{ChangeKind, Compatibility, Part};
pub use diff::{Change, SurfaceDiff};
pub use portability::{Fate, Loss, Portability};
pub use snapshot::{Checked, Snapshot, SnapshotError, UPDATE_ENV, assert_snapshot};

use crate::Agent;
use crate::mcp::{McpNaming, McpServer};
use crate::model::SchemaUnsupported;
use render::Publishers;

/// The member of the document holding [`Surface::portability`] (after `tools`, in key order).
const REPORT: &str = "what_each_provider_loses";

/// The version of the document's shape, its `surface_version` member.
pub const SURFACE_VERSION: u64 = 1;

/// A set of tools as their callers see them (C2). Render it with [`Surface::to_json`],
/// compare two with [`Surface::diff`].
#[derive(Debug, Clone, PartialEq)]
pub struct Surface {
    tools: BTreeMap<String, Value>,
}

/// Why a surface could not be made or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SurfaceError {
    /// A tool is not usable (D2), or two tools share a name (N3).
    #[error("a tool cannot be published: {0}")]
    Declaration(#[from] DeclarationError),
    /// A provider driver could not be built to render the tools.
    #[error("a provider driver could not be built to render the tools: {source}")]
    Driver {
        /// What the driver's builder said.
        source: crate::providers::ConfigError,
    },
    /// A publisher cannot express a tool's schema.
    #[error("`{publisher}` cannot publish tool `{tool}`: {source}")]
    Unsupported {
        /// The tool's name.
        tool: String,
        /// The publisher's key in `published`.
        publisher: &'static str,
        /// Why.
        source: SchemaUnsupported,
    },
    /// A driver kept no rendering of a tool.
    #[error("`{publisher}` kept no rendering of tool `{tool}`")]
    NotRendered {
        /// The tool's name.
        tool: String,
        /// The publisher's key in `published`.
        publisher: &'static str,
    },
    /// A publisher's rendering of a tool is not JSON.
    #[error("`{publisher}`'s rendering of tool `{tool}` is not JSON: {source}")]
    Rendering {
        /// The tool's name.
        tool: String,
        /// The publisher's key in `published`.
        publisher: &'static str,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// A document is not JSON.
    #[error("the surface document is not JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// A document is JSON but not a surface.
    #[error("the document is not a tool surface: {0}")]
    NotASurface(&'static str),
}

impl Surface {
    /// The surface of these tools: as each provider driver sends them with its default
    /// settings, and as an `McpServer` serving them under their declared names lists them.
    ///
    /// # Errors
    ///
    /// [`SurfaceError::Declaration`] for a tool that is not usable or a name used twice;
    /// [`SurfaceError::Unsupported`] for a schema a provider cannot take (a root that is not
    /// an object).
    pub fn of_tools<T: IntoTool>(tools: impl IntoIterator<Item = T>) -> Result<Self, SurfaceError> {
        let tools: Vec<Tool> = tools.into_iter().map(IntoTool::into_tool).collect();
        check(&tools)?;
        let naming = McpNaming::Declared;
        let entries = tools
            .iter()
            .map(|tool| Ok((tool, render::mcp_entry(tool, &naming)?)))
            .collect::<Result<Vec<_>, SurfaceError>>()?;
        Self::render(entries)
    }

    /// The surface of an agent's tools ([`Agent::tools`]).
    ///
    /// # Errors
    ///
    /// As [`Surface::of_tools`].
    pub fn of_agent(agent: &Agent) -> Result<Self, SurfaceError> {
        Self::of_tools(agent.tools().iter().cloned())
    }

    /// The surface of an MCP server's tools, its `tools/list` entries under the names it
    /// publishes them by (M2).
    ///
    /// # Errors
    ///
    /// As [`Surface::of_tools`].
    pub fn of_mcp_server(server: &McpServer) -> Result<Self, SurfaceError> {
        let entries = server
            .listed()
            .map(|(tool, entry)| {
                let listed =
                    serde_json::to_value(entry).map_err(|source| SurfaceError::Rendering {
                        tool: tool.name().to_owned(),
                        publisher: render::MCP,
                        source,
                    })?;
                Ok((tool, listed))
            })
            .collect::<Result<Vec<_>, SurfaceError>>()?;
        Self::render(entries)
    }

    /// The entries of tools already checked, each with its MCP listing.
    fn render(tools: Vec<(&Tool, Value)>) -> Result<Self, SurfaceError> {
        let publishers = Publishers::new()?;
        let mut entries = BTreeMap::new();
        for (tool, mcp) in tools {
            let entry = render::tool_entry(tool, &publishers, mcp)?;
            entries.insert(tool.name().to_owned(), render::sorted(&entry));
        }
        Ok(Self { tools: entries })
    }

    /// The names of the tools, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// The entry of the tool named `name`, as the document holds it.
    pub fn tool(&self, name: &str) -> Option<&Value> {
        self.tools.get(name)
    }

    /// Per tool and per publisher, what the publisher's rendering of the tool's input schema
    /// loses against the schema the parser enforces: moved into the description, rewritten,
    /// inlined, changed, dropped, or the whole tool unsupported (V4).
    pub fn portability(&self) -> Portability {
        Portability::of(&self.tools)
    }

    /// The document: `{"surface_version": 1, "tools": {name: entry, …},
    /// "what_each_provider_loses": {name: {publisher: [loss, …]}}}` (the last is
    /// [`Surface::portability`]), pretty-printed with two spaces, every object's members
    /// sorted by key, ending with a newline. The same tools give the same bytes.
    pub fn to_json(&self) -> String {
        let document = serde_json::json!({
            "surface_version": SURFACE_VERSION,
            "tools": self.tools,
            REPORT: self.portability().to_value(),
        });
        // Serializing a `Value` cannot fail: its keys are strings.
        let mut text = serde_json::to_string_pretty(&render::sorted(&document)).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads a document [`Surface::to_json`] wrote (however reformatted).
    ///
    /// # Errors
    ///
    /// [`SurfaceError::Json`] for text that is not JSON, [`SurfaceError::NotASurface`] for
    /// JSON of another shape or version.
    pub fn from_json(text: &str) -> Result<Self, SurfaceError> {
        let document: Value = serde_json::from_str(text).map_err(SurfaceError::Json)?;
        if document.get("surface_version").and_then(Value::as_u64) != Some(SURFACE_VERSION) {
            return Err(SurfaceError::NotASurface("its `surface_version` is not 1"));
        }
        let Some(tools) = document.get("tools").and_then(Value::as_object) else {
            return Err(SurfaceError::NotASurface("it has no `tools` object"));
        };
        let tools = tools
            .iter()
            .map(|(name, entry)| (name.clone(), render::sorted(entry)))
            .collect();
        let surface = Self { tools };
        // V4: a report that no longer says what the renderings lose (a rendering rewritten
        // without its report) is refused.
        if let Some(report) = document.get(REPORT)
            && render::sorted(report) != render::sorted(&surface.portability().to_value())
        {
            return Err(SurfaceError::NotASurface(
                "its `what_each_provider_loses` does not say what its renderings lose",
            ));
        }
        Ok(surface)
    }

    /// The changes from this surface (what was) to `newer` (what is), classified.
    pub fn diff(&self, newer: &Surface) -> SurfaceDiff {
        diff::diff(&self.tools, &newer.tools)
    }
}

/// The first declaration problem of `tools`: an unusable tool (D2) or a name used twice (N3).
fn check(tools: &[Tool]) -> Result<(), DeclarationError> {
    let index = index_by_name(
        tools
            .iter()
            .map(|tool| (tool.name(), tool.site(), tool.declaration_error())),
    );
    match index.problems.into_iter().flatten().next() {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}
