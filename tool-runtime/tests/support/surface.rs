//! The inputs and helpers the C2 tests share (`surface_c2.rs`, `surface_c2_snapshot.rs`): a
//! lookup's input, the same with a field newly required and with an optional field added, and
//! tools and surfaces made of them.
#![allow(dead_code, unreachable_pub)]

use tool_runtime::surface::Surface;
use tool_runtime::{Context, Schema, Tool, ToolBuilder, ToolError};

/// A lookup.
#[derive(Schema)]
pub struct Base {
    /// The service.
    #[schema(max_len = 64, pattern = "^[a-z0-9-]+$")]
    pub service_id: String,
    /// How many days ahead.
    #[schema(range = 1..=30)]
    pub days: u32,
    /// How urgent.
    #[schema(one_of = ["low", "high", "now"])]
    pub urgency: String,
    /// A weight.
    pub weight: f64,
}

// The same, with a field newly required.
/// A lookup.
#[derive(Schema)]
pub struct WithRequired {
    /// The service.
    #[schema(max_len = 64, pattern = "^[a-z0-9-]+$")]
    pub service_id: String,
    /// How many days ahead.
    #[schema(range = 1..=30)]
    pub days: u32,
    /// How urgent.
    #[schema(one_of = ["low", "high", "now"])]
    pub urgency: String,
    /// A weight.
    pub weight: f64,
    /// The region.
    pub region: String,
}

// The same, with an optional field added.
/// A lookup.
#[derive(Schema)]
pub struct WithOptional {
    /// The service.
    #[schema(max_len = 64, pattern = "^[a-z0-9-]+$")]
    pub service_id: String,
    /// How many days ahead.
    #[schema(range = 1..=30)]
    pub days: u32,
    /// How urgent.
    #[schema(one_of = ["low", "high", "now"])]
    pub urgency: String,
    /// A weight.
    pub weight: f64,
    /// The region.
    pub region: Option<String>,
}

/// A tool named `name` taking `I`.
pub fn tool<I: Schema + Send + 'static>(name: &str) -> ToolBuilder {
    Tool::builder(name, "Look a maintenance window up.")
        .handler(|_ctx: Context, _input: I| async { Ok::<_, ToolError>("ok") })
}

pub fn surface(tools: impl IntoIterator<Item = Tool>) -> Surface {
    Surface::of_tools(tools).expect("the tools render")
}
