//! Durable agent runs on [Restate](https://restate.dev) (W1–W5): a tool-runtime
//! [`tool_runtime::Agent`] run as a Restate workflow, each model request and each tool call a
//! journaled step, so that a worker killed at any point and started again continues the run
//! where its journal ends, running no recorded step again; calls that need approval wait as
//! awakeables, with no process holding the run, and are decided by one call to Restate from
//! anywhere.
//!
//! - [`AgentRun`]: the workflow, and [`Serving`] (or [`serve`]) to serve it, each step of a
//!   run with its own retry budget (W7); a turn's calls run concurrently with
//!   [`AgentRun::parallel_calls`] (W9); several agents on one deployment, each under its own
//!   workflow name ([`AgentRun::named`], [`Serving::with`]), and typed answers
//!   ([`AgentRun::typed`], W10); the model's text read while a run goes
//!   ([`AgentRun::text_to`], [`DurableClient::text`], W10).
//! - [`RunRequest`], [`RunEnd`], [`RunStatus`], [`PendingApproval`], [`DecisionBody`]: what
//!   goes in and out, as JSON.
//! - [`DurableClient`]: start a run, read its status from the engine (no worker needed),
//!   decide its calls (a call decided before answered as such), resume it when parked, wait
//!   for its end, each call with a timeout (W8).
//!
//! [`guide`] walks through a worker, a client and the operator's commands.
//!
//! Restate's Rust SDK is pinned exactly (`=0.13.0`) and lives in this crate only: an
//! application that runs agents in one process does not build it.

/// The guide's chapter on durable runs: the worker, the client, the example's commands, and
/// what to do with a parked run.
#[doc = include_str!("guide.md")]
pub mod guide {}

mod admin;
mod client;
mod http;
mod journal;
mod serve;
mod state;
mod text;
mod types;
mod workflow;

pub use admin::{Failure, FailureKind, Inspection};
pub use client::{
    ClientError, DEFAULT_TIMEOUT, DEFAULT_WAIT, Decided, DurableClient, Started, inspect, register,
};
pub use serve::{
    DEFAULT_MAX_RETRY_INTERVAL, DEFAULT_RETRY_INTERVAL, DEFAULT_STEP_ATTEMPTS, Serving, serve,
};
pub use text::{AgentRunText, MAX_KEPT_TEXT, TEXT_KEPT, TEXT_OBJECT, TextDelta, TextDeltas};
pub use types::{
    DecidedCall, DecisionBody, PendingApproval, Phase, RunEnd, RunRequest, RunStatus,
    UNFIT_DECISION, UNREADABLE_DECISION,
};
pub use workflow::{AgentRun, ContextFactory, DEFAULT_MAX_STEP_BYTES, WorkflowNameError};

/// The workflow's name in Restate, unless an agent is given its own
/// ([`AgentRun::named`], W10): the first segment of its ingress paths.
pub const WORKFLOW: &str = "AgentRun";
