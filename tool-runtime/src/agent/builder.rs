//! [`AgentBuilder`]: an agent's model, instructions, tools and limits, checked all at once by
//! [`AgentBuilder::build`] before any model I/O.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tool_core::hook::{Hook, Transport};
use tool_core::{IntoTool, Limits, Tool};

use super::compose::AgentTool;
use super::error::{BuildError, BuildProblem};
use super::handle::Agent;
use super::options::RunOptions;
use super::output::CallRecord;
use super::pause::PauseLedger;
use super::repair::RepairArguments;
use super::shared::{OutcomeFn, Shared};
use super::toolset::ToolSetBuilder;
use crate::model::Model;

/// The default [`AgentBuilder::max_concurrency`].
pub const DEFAULT_MAX_CONCURRENCY: usize = 8;
/// The default [`AgentBuilder::max_turns`].
pub const DEFAULT_MAX_TURNS: usize = 16;

/// The retry budget of a tool that sets none (L1): [`AgentBuilder::retries`].
pub const DEFAULT_RETRIES: u32 = 3;

/// Builds an [`Agent`]; start with [`Agent::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct AgentBuilder {
    model: Box<dyn Model>,
    name: Option<String>,
    instructions: Option<String>,
    /// The tools, hooks, limits and state key, checked together at `build()` (U4).
    set: ToolSetBuilder,
    max_concurrency: usize,
    max_turns: usize,
    call_timeout: Option<Duration>,
    tool_timeouts: Vec<(String, Duration)>,
    ledger: Option<Arc<dyn PauseLedger>>,
    elicitor: Option<Arc<dyn tool_core::Elicitor>>,
    /// Who answers the handlers' sampling requests and roots requests (M8).
    pub(super) answerers: super::sampling::Answerers,
    options: RunOptions,
    retries: u32,
    on_outcome: Option<OutcomeFn>,
    /// The sub-agents held as tools (B1), by tool name.
    sub_agents: Vec<(String, Agent)>,
    /// The repair of malformed arguments (Q4), when asked for.
    repair: Option<Arc<dyn RepairArguments>>,
}

impl Agent {
    /// Starts an agent on `model`. See [`AgentBuilder`].
    pub fn builder(model: impl Model) -> AgentBuilder {
        AgentBuilder::new(Box::new(model))
    }
}

impl AgentBuilder {
    pub(crate) fn new(model: Box<dyn Model>) -> Self {
        Self {
            model,
            name: None,
            on_outcome: None,
            repair: None,
            instructions: None,
            set: ToolSetBuilder::new(Transport::Agent),
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            max_turns: DEFAULT_MAX_TURNS,
            call_timeout: None,
            tool_timeouts: Vec::new(),
            ledger: None,
            elicitor: None,
            answerers: super::sampling::Answerers::default(),
            options: RunOptions::default(),
            retries: DEFAULT_RETRIES,
            sub_agents: Vec::new(),
        }
    }

    /// Names the agent, for telemetry (K2): each run's span is named `invoke_agent {name}`
    /// and carries `gen_ai.agent.name`. Without a name it is `invoke_agent`. The name is not
    /// sent to the model.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Records each call's arguments (as the model sent them) and the text the model got
    /// back on the call's `execute_tool` span, as `gen_ai.tool.call.arguments` and
    /// `gen_ai.tool.call.result` (K2). Off by default: arguments and results may hold
    /// personal or secret data, and whoever reads the traces sees them. The result recorded
    /// is the model's text, so an error redacted from the model (E2) stays out of the span.
    pub fn record_tool_content(mut self, record: bool) -> Self {
        self.set.record_tool_content(record);
        self
    }

    /// Sets the instructions (the system prompt) sent with every request.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Adds a tool: a [`Tool`], or the handle `#[tool]` generates. Tools keep the order they
    /// are added in (the declaration order of discovery, A2).
    pub fn tool(mut self, tool: impl IntoTool) -> Self {
        self.set.tool(tool);
        self
    }

    /// Adds a sub-agent as a tool (B1, B2): [`Agent::as_tool`]. Its runs count toward this
    /// agent's runs' usage and are bounded by their limits, and a pause inside one pauses
    /// this agent's run, which holds the sub-agent's paused run.
    pub fn agent_tool(mut self, tool: AgentTool) -> Self {
        self.sub_agents
            .push((tool.tool().name().to_owned(), tool.agent().clone()));
        self.set.tool(tool.into_tool());
        self
    }

    /// Adds tools: for example every registered tool (`registry()?`) or a named selection
    /// (`registered(["lookup-window"])?`) (R1).
    pub fn tools<T: IntoTool>(mut self, tools: impl IntoIterator<Item = T>) -> Self {
        self.set.tools(tools);
        self
    }

    /// Sets how many calls of one turn may run at once (default 8, R2).
    ///
    /// The calls run concurrently as futures of the run's own task (no task per call): a
    /// handler that computes for long should hand that work to
    /// `tokio::task::spawn_blocking`, as any async code should.
    pub fn max_concurrency(mut self, n: usize) -> Self {
        self.max_concurrency = n;
        self
    }

    /// Sets how many model requests a run may make (default 16, R3).
    pub fn max_turns(mut self, n: usize) -> Self {
        self.max_turns = n;
        self
    }

    /// Sets how long a call may take (after it gets its concurrency slot) before it is dropped
    /// and the model is told `the tool timed out`. Default: no limit.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = Some(timeout);
        self
    }

    /// Sets the timeout of the tool named `name`, overriding [`AgentBuilder::call_timeout`].
    pub fn tool_timeout(mut self, name: impl Into<String>, timeout: Duration) -> Self {
        self.tool_timeouts.push((name.into(), timeout));
        self
    }

    /// Sets the limits applied to each call's arguments (default: 1 MiB of arguments).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.set.limits(limits);
        self
    }

    /// Seals paused runs with HMAC-SHA256 under `key` (H3), instead of a plain SHA-256
    /// digest: a paused run then resumes only in an agent that holds the same key, and one
    /// sealed without a key is refused. Without a key the digest detects accidental and
    /// unkeyed edits, not someone who rewrites the file and its digest. Keep the key secret
    /// (at least 16 random bytes); the paused run itself is not encrypted.
    pub fn state_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.set.state_key(key.into());
        self
    }

    /// Consumes each paused run's pause id in `ledger` when it is resumed (H9): a paused run
    /// resumes once, and a replayed state is refused with [`crate::ResumeError::Replayed`]
    /// before anything runs. Without a ledger a saved state can be resumed again (its approved
    /// calls would run again): keep one wherever states are stored. A resume may give its own
    /// ([`crate::ResumeOptions::ledger`]).
    pub fn ledger(mut self, ledger: impl PauseLedger) -> Self {
        self.ledger = Some(Arc::new(ledger));
        self
    }

    /// Answers the questions the agent's handlers ask ([`tool_core::Context::elicit`], M3):
    /// `elicitor` gets each question's message and schema and answers for the user (a prompt
    /// in a terminal, a form in an application). A run whose context holds an elicitor of its
    /// own ([`tool_core::Context::with_elicitor`]) uses that one. Without either, a handler's
    /// `elicit` fails with [`tool_core::ElicitError::Unsupported`].
    pub fn elicitor(mut self, elicitor: impl tool_core::Elicitor + 'static) -> Self {
        self.elicitor = Some(Arc::new(elicitor));
        self
    }

    /// Sets the options of every run that [`Agent::run`] and [`Agent::run_stream`] start: tool
    /// choice, usage limits, stopping tools (L2, L3, L5). A [`RunRequest`](crate::RunRequest) takes its own ([`RunRequest::options`](crate::RunRequest::options)).
    pub fn options(mut self, options: RunOptions) -> Self {
        self.options = options;
        self
    }

    /// Sets the retry budget of the tools that set none of their own (default
    /// [`DEFAULT_RETRIES`], L1): a run ends with kind `RetriesExhausted` when more than `n`
    /// calls of one tool in a row fail with invalid arguments or a
    /// [`ToolError::retry`](tool_core::ToolError::retry).
    pub fn retries(mut self, n: u32) -> Self {
        self.retries = n;
        self
    }

    /// Adds a hook around each call of the agent's runs that passes the availability
    /// re-check, validation and approval (K1): its `before` may deny the call or end the run;
    /// its `after` sees the outcome and may replace the model's text. A call refused before
    /// that (a tool the run did not advertise, invalid arguments, a call awaiting approval)
    /// never reaches a hook: [`on_outcome`](Self::on_outcome) sees every call. Hooks run in
    /// the order they are added. See [`tool_core::hook`]; the same hook on an `McpServer`
    /// holds there too.
    pub fn hook(mut self, hook: impl Hook) -> Self {
        self.set.hook(hook);
        self
    }

    /// Repairs the arguments of a call that are not JSON before they are validated (Q4, off
    /// by default): [`LenientJson`](super::LenientJson) fixes code fences, single quotes,
    /// unquoted keys, trailing commas and a truncated end. What the repair gives is validated
    /// like any arguments, goes into the transcript, and the call's record keeps what the
    /// model sent ([`CallRecord::repaired_from`]). Arguments that are JSON are never touched.
    pub fn repair_arguments(mut self, repair: impl RepairArguments) -> Self {
        self.repair = Some(Arc::new(repair));
        self
    }

    /// Calls `f` with the record of every call of the agent's runs once its turn's calls have
    /// ended, whatever ended it: refused before the handler (unavailable, invalid arguments),
    /// denied by a hook, awaiting approval at a pause (and again with its final outcome at
    /// resume), run, timed out or cancelled. The record has the unredacted error (E3) and the
    /// violations, as `McpServerBuilder::on_outcome` gives them on MCP, so one observer can
    /// watch both transports. `f` runs on the run's task: keep it short.
    pub fn on_outcome(mut self, f: impl Fn(&CallRecord) + Send + Sync + 'static) -> Self {
        self.on_outcome = Some(Arc::new(f));
        self
    }

    /// Builds the agent, checking everything before any model I/O.
    ///
    /// Each tool's spec is rendered once, here, by the model's driver
    /// ([`Model::tool_spec`]); runs reuse it.
    ///
    /// # Errors
    ///
    /// Returns a [`BuildError`] (kind `Declaration`) listing every problem found: each tool
    /// declared wrong (its [`Tool::declaration_error`], D2), each pair of tools sharing a name, naming both
    /// declaration sites (N3), each schema the driver cannot express (V1), each timeout for a
    /// tool the agent does not hold, a zero `max_concurrency` or `max_turns`, and an empty
    /// [`AgentBuilder::state_key`].
    pub fn build(mut self) -> Result<Agent, BuildError> {
        let mut problems = Vec::new();
        let index = super::catalog::prepare(&mut self.set);
        let (set, sound) = self.set.check(&mut problems);
        let catalog = index.and_then(|index| super::catalog::finish(index, &set));
        let mut specs = Vec::with_capacity(set.tools.len());
        for (tool, _) in set.tools.iter().zip(&sound).filter(|(_, sound)| **sound) {
            match self.model.tool_spec(tool) {
                Ok(spec) => specs.push(spec),
                Err(source) => problems.push(BuildProblem::SchemaUnsupported {
                    name: tool.name().to_owned(),
                    site: tool.site(),
                    source,
                }),
            }
        }
        let mut timeouts = vec![self.call_timeout; set.tools.len()];
        for (name, timeout) in &self.tool_timeouts {
            match set.by_name.get(name.as_str()) {
                Some(&i) => timeouts[i] = Some(*timeout),
                None => problems.push(BuildProblem::TimeoutForUnknownTool { name: name.clone() }),
            }
        }
        if self.max_concurrency == 0 {
            problems.push(BuildProblem::ZeroConcurrency);
        }
        if self.max_turns == 0 {
            problems.push(BuildProblem::ZeroTurns);
        }
        if !problems.is_empty() {
            return Err(BuildError::new(problems));
        }
        let tools = &set.tools;
        let pauses = tools.iter().any(Tool::can_pause) || !self.sub_agents.is_empty();
        let budgets = tools
            .iter()
            .map(|tool| tool.retries().unwrap_or(self.retries))
            .collect();
        let names = tools.iter().map(|tool| tool.name().to_owned()).collect();
        let with_policy = (0..tools.len())
            .filter(|&i| tools[i].has_policy())
            .collect();
        Ok(Agent::from_shared(Arc::new(Shared {
            model: self.model,
            name: self.name,
            on_outcome: self.on_outcome,
            repair: self.repair,
            instructions: self.instructions,
            specs,
            names,
            with_policy,
            timeouts,
            max_concurrency: self.max_concurrency,
            max_turns: self.max_turns,
            pauses,
            ledger: self.ledger,
            elicitor: self.elicitor,
            answerers: self.answerers,
            budgets,
            default_retries: self.retries,
            options: self.options,
            sub_agents: self.sub_agents,
            catalog,
            set,
        })))
    }
}

impl fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("name", &self.name)
            .field("tools", &self.set)
            .field("max_concurrency", &self.max_concurrency)
            .field("max_turns", &self.max_turns)
            .finish_non_exhaustive()
    }
}
