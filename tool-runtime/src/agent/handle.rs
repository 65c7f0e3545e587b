//! [`Agent`]: the handle of a built agent, cheap to clone. Its builder is in `builder`, the
//! ways to run it in the parent module.

use std::fmt;
use std::sync::Arc;

use super::shared::Shared;

/// A model with instructions and tools, ready to run. Cheap to clone; one agent may run many
/// conversations at once.
///
/// ```
/// use std::collections::BTreeMap;
/// use tool_runtime::{Agent, Context, ScriptedModel, ScriptedTurn, Tool};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// type Args = BTreeMap<String, serde_json::Value>;
/// let echo = Tool::builder("echo", "Repeats its arguments.")
///     .handler(|_ctx: Context, args: Args| async move { Ok::<_, std::convert::Infallible>(args) })
///     .build();
///
/// let model = ScriptedModel::new([
///     ScriptedTurn::new().call("call-1", "echo", r#"{"word":"hi"}"#),
///     ScriptedTurn::reply("It said hi."),
/// ]);
/// let agent = Agent::builder(model.clone())
///     .instructions("Use the tools.")
///     .tool(echo)
///     .build()?;
///
/// let out = agent.run(&Context::new(), "Say hi through echo").await?;
/// assert_eq!(out.text, "It said hi.");
/// assert_eq!(out.calls[0].text(), r#"{"word":"hi"}"#);
/// // The model saw the tool's result in its second request.
/// assert_eq!(model.requests()[1].tool_results()[0].text, r#"{"word":"hi"}"#);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Agent {
    pub(super) shared: Arc<Shared>,
}

impl Agent {
    pub(crate) fn from_shared(shared: Arc<Shared>) -> Self {
        Self { shared }
    }
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.shared.name)
            .field("tools", &self.shared.specs)
            .field("max_concurrency", &self.shared.max_concurrency)
            .field("max_turns", &self.shared.max_turns)
            .finish_non_exhaustive()
    }
}
