//! tool-runtime: `#[derive(Schema)]` and `#[tool]`, called through `Tool::invoke`.

use std::collections::HashMap;
use std::convert::Infallible;

use tool_runtime::{Context, IntoTool, Schema, Tool, UNAVAILABLE, tool};

use crate::shared::{Triage, triage};

/// What kind of ticket it is.
#[derive(Schema, Debug, Clone, Copy)]
#[schema(rename_all = "lowercase")]
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

/// A ticket to triage.
#[derive(Schema, Debug)]
pub struct Ticket {
    /// A short title.
    #[schema(min_len = 1, max_len = 80)]
    pub title: String,
    /// Who reported it.
    #[schema(min_len = 1, max_len = 40)]
    pub reporter: String,
    /// How urgent it is, from 1 (lowest) to 5.
    #[schema(range = 1..=5)]
    pub priority: u8,
    /// The estimated effort, in hours.
    pub estimate_hours: Option<f64>,
    /// What kind of ticket it is.
    pub kind: Kind,
    /// Free-form labels.
    pub labels: Vec<String>,
}

/// Triage a ticket: file it in a queue and score it.
#[tool(name = "triage-ticket")]
pub fn triage_ticket(input: Ticket) -> Triage {
    triage(
        &input.title,
        &input.reporter,
        input.priority,
        input.estimate_hours,
        input.kind.as_str(),
        &input.labels,
    )
}

/// The tools by name, and the context calls run in: what a transport holds.
pub struct Caller {
    tools: HashMap<String, Tool>,
    ctx: Context,
}

impl Caller {
    /// The `#[tool]` above.
    pub fn new() -> Self {
        Self::with(TriageTicket.into_tool())
    }

    /// The same tool built at run time with `Tool::builder` and a closure: the path of tools
    /// built at run time. (Until 32f5998 `#[tool]` rendered its result twice and this path
    /// once; they now cost the same: see RESULTS.md, F1.)
    pub fn builder() -> Self {
        Self::with(
            Tool::builder(
                crate::TOOL_NAME,
                "Triage a ticket: file it in a queue and score it.",
            )
            .handler(|_ctx: Context, input: Ticket| async move {
                Ok::<_, Infallible>(triage_ticket(input))
            })
            .build(),
        )
    }

    fn with(tool: Tool) -> Self {
        assert!(
            tool.declaration_error().is_none(),
            "{:?}",
            tool.declaration_error()
        );
        let mut tools = HashMap::new();
        tools.insert(tool.name().to_owned(), tool);
        Self {
            tools,
            ctx: Context::new(),
        }
    }

    /// From (tool name, argument bytes) to the model-facing text.
    pub async fn call(&self, name: &str, args: &[u8]) -> String {
        match self.tools.get(name) {
            Some(tool) => tool.invoke(&self.ctx, args).await.text().to_owned(),
            None => UNAVAILABLE.to_owned(),
        }
    }

    /// The tool, for direct use.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name)
    }

    pub fn context(&self) -> &Context {
        &self.ctx
    }
}

impl Default for Caller {
    fn default() -> Self {
        Self::new()
    }
}
