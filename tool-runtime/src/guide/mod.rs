//! The guide: how to build with tool-runtime, chapter by chapter.
//!
//! Each chapter is a module with no items, only its text; every code block in it is compiled,
//! and most are run, as a doc test. Read them in order the first time:
//!
//! 1. [`declaring_tools`]: `#[tool]`, `#[derive(Schema)]`, the context a handler takes,
//!    availability, typed outputs, hints and rich results.
//! 2. [`running_agents`]: an [`Agent`](crate::Agent), its runs and their options, limits,
//!    typed answers, steering, hooks and every call's outcome.
//! 3. [`providers`]: OpenAI, Anthropic and OpenAI-compatible servers, from the environment or in
//!    code.
//! 4. [`approvals`]: calls that ask a person first, paused runs, their sealed state and where to
//!    keep it.
//! 5. `mcp_server` (feature `mcp`): the same tools served over stdio and streamable HTTP, with
//!    approvals by elicitation and replicas behind a balancer.
//! 6. `mcp_client` (feature `mcp`): the tools of MCP servers held by an agent beside its own.
//! 7. Durable runs on Restate, and operating them: the chapter
//!    [`tool_durable::guide`](https://docs.rs/tool-durable/latest/tool_durable/guide/) of the
//!    `tool-durable` crate (it holds the code it shows).
//! 8. [`telemetry`]: spans and metrics as the OpenTelemetry conventions name them.
//! 9. `surface` (feature `mcp`): what the models and clients are told, as a committed snapshot
//!    with a diff classed breaking or compatible.
//! 10. [`performance`]: what a call, a run and a server cost, measured against rmcp and rig.
//! 11. `from_rmcp` (features `mcp` and `schemars`): an rmcp server moved over.
//! 12. [`migrating`]: names that changed, and what to write instead.
//!
//! The rules the chapters cite by id are stated in [`tool_core::contract`].

#[doc = include_str!("declaring_tools.md")]
pub mod declaring_tools {}

#[doc = include_str!("running_agents.md")]
pub mod running_agents {}

#[doc = include_str!("providers.md")]
#[cfg(all(feature = "openai", feature = "anthropic", feature = "gemini"))]
pub mod providers {}

#[doc = include_str!("approvals.md")]
pub mod approvals {}

#[doc = include_str!("mcp_server.md")]
#[cfg(feature = "mcp")]
pub mod mcp_server {}

#[doc = include_str!("mcp_client.md")]
#[cfg(feature = "mcp")]
pub mod mcp_client {}

#[doc = include_str!("telemetry.md")]
pub mod telemetry {}

#[doc = include_str!("surface.md")]
#[cfg(all(feature = "mcp", feature = "openai", feature = "anthropic"))]
pub mod surface {}

#[doc = include_str!("performance.md")]
pub mod performance {}

#[doc = include_str!("from_rmcp.md")]
#[cfg(all(feature = "mcp", feature = "schemars"))]
pub mod from_rmcp {}

#[doc = include_str!("migrating.md")]
pub mod migrating {}
