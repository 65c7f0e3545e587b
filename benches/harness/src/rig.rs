//! rig: `#[rig_tool]` (rig-core), called through `ToolSet::execute` (rig-agent), the by-name
//! dispatch rig's agent runs. `#[rig_tool]` takes plain parameters and generates the input
//! struct (serde + schemars) from them, so the JSON arguments are the same as everywhere else;
//! it has no way to declare the limits, and rig enforces none.

use std::convert::Infallible;

use rig_agent::tool::{ToolContext, ToolSet};
use rig_core::rig_tool;
use serde::Deserialize;

use crate::shared::{Triage, triage};

/// What kind of ticket it is.
#[derive(Deserialize, schemars::JsonSchema, Debug, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Bug,
    Feature,
    Chore,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Bug => "bug",
            Kind::Feature => "feature",
            Kind::Chore => "chore",
        }
    }
}

/// Triage a ticket: file it in a queue and score it.
#[rig_tool(
    name = "triage-ticket",
    params(
        title = "A short title (1 to 80 characters).",
        reporter = "Who reported it (1 to 40 characters).",
        priority = "How urgent it is, from 1 (lowest) to 5.",
        estimate_hours = "The estimated effort, in hours.",
        kind = "What kind of ticket it is.",
        labels = "Free-form labels."
    )
)]
pub fn triage_ticket(
    title: String,
    reporter: String,
    priority: u8,
    estimate_hours: Option<f64>,
    kind: Kind,
    labels: Vec<String>,
) -> Result<Triage, Infallible> {
    Ok(triage(
        &title,
        &reporter,
        priority,
        estimate_hours,
        kind.as_str(),
        &labels,
    ))
}

/// The tool set, as rig's agent holds it.
pub struct Caller {
    set: ToolSet,
}

impl Caller {
    pub fn new() -> Self {
        let mut set = ToolSet::default();
        set.add_tool(TriageTicket);
        Self { set }
    }

    /// From (tool name, argument bytes) to the model-facing text. rig takes the arguments as
    /// a `String`.
    pub async fn call(&self, name: &str, args: &[u8]) -> String {
        let args = match std::str::from_utf8(args) {
            Ok(s) => s.to_owned(),
            Err(e) => return format!("failed to parse tool arguments: {e}"),
        };
        let mut context = ToolContext::new();
        let result = self.set.execute(name, args, &mut context).await;
        result.output().render()
    }
}

impl Default for Caller {
    fn default() -> Self {
        Self::new()
    }
}
