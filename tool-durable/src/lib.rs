//! Durable agent runs on [Restate](https://restate.dev) (W1–W5): a tool-runtime
//! [`tool_runtime::Agent`] run as a Restate workflow, each model request and each tool call a
//! journaled step, so that a worker killed at any point and started again continues the run
//! where its journal ends, running no recorded step again; calls that need approval wait as
//! awakeables, with no process holding the run, and are decided by one call to Restate from
//! anywhere.
//!
//! - [`AgentRun`]: the workflow, and [`serve`] to serve it.
//! - [`RunRequest`], [`RunEnd`], [`RunStatus`], [`PendingApproval`], [`DecisionBody`]: what
//!   goes in and out, as JSON.
//! - [`DurableClient`]: start a run, read its status, decide its calls, wait for its end,
//!   over Restate's ingress.
//!
//! Restate's Rust SDK is pinned exactly (`=0.13.0`) and lives in this crate only: an
//! application that runs agents in one process does not build it.

mod client;
mod journal;
mod serve;
mod state;
mod types;
mod workflow;

pub use client::{ClientError, DurableClient, Inspection, Started, inspect, register};
pub use serve::{DEFAULT_ATTEMPTS, serve};
pub use types::{
    DecisionBody, PendingApproval, Phase, RunEnd, RunRequest, RunStatus, UNFIT_DECISION,
    UNREADABLE_DECISION,
};
pub use workflow::{AgentRun, ContextFactory};

/// The workflow's name in Restate: the first segment of its ingress paths.
pub const WORKFLOW: &str = "AgentRun";
