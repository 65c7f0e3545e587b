//! [`McpServerBuilder`]: a server's tools, context function and identity, checked all at once
//! by [`McpServerBuilder::build`] before anything is served.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    Implementation, JsonObject, ServerCapabilities, ServerConfig, Tool as McpTool, ToolAnnotations,
};
use tool_core::hook::{Hook, Transport};
use tool_core::{BoxError, Context, IntoTool, Limits, Tool};

use crate::agent::toolset::ToolSetBuilder;

use super::catalog::{Catalog, CatalogHook, CatalogHooks};
use super::handle::McpServer;
use super::icon::Icon;
use super::naming::{self, McpNaming};
use super::prompts::{IntoPrompt, McpPrompt};
use super::request::{McpCall, McpRequest};
use super::request_state::{self, RequestStates};
use super::resources::{IntoResource, McpResource};
use super::search::Deferred;
use super::shared::{ContextFn, OutcomeFn, Shared};
use super::tasks::{TaskSupport, Tasks};
use crate::agent::{BuildError, BuildProblem};

/// Builds an [`McpServer`]; start with [`McpServer::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct McpServerBuilder {
    /// The tools, hooks, limits and state key, checked together at `build()` (U4).
    set: ToolSetBuilder,
    context: Option<ContextFn>,
    name: String,
    version: String,
    instructions: Option<String>,
    on_outcome: Option<OutcomeFn>,
    approval_expiry: Duration,
    approval_edits: bool,
    naming: McpNaming,
    task_support: Vec<(String, TaskSupport)>,
    /// The tools (by declared name) whose calls become tasks after their questions (M9).
    questions_before_task: Vec<String>,
    /// The resources and templates, in the order added (M7).
    resources: Vec<McpResource>,
    /// The prompts, in the order added (M7).
    prompts: Vec<McpPrompt>,
    /// The hooks around each read and get, in the order added (M7).
    catalog_hooks: CatalogHooks,
    /// Icons of tools, by declared name.
    tool_icons: Vec<(String, Vec<Icon>)>,
}

impl McpServer {
    /// Starts a server. See [`McpServerBuilder`].
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn builder() -> McpServerBuilder {
        McpServerBuilder::new()
    }
}

impl McpServerBuilder {
    /// An empty server: no tools, an empty context for every request, this crate's name and
    /// version.
    pub(super) fn new() -> Self {
        Self {
            set: ToolSetBuilder::new(Transport::Mcp),
            context: None,
            name: "tool-runtime".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
            on_outcome: None,
            approval_expiry: request_state::DEFAULT_EXPIRY,
            approval_edits: false,
            naming: McpNaming::Declared,
            task_support: Vec::new(),
            questions_before_task: Vec::new(),
            resources: Vec::new(),
            catalog_hooks: CatalogHooks::default(),
            prompts: Vec::new(),
            tool_icons: Vec::new(),
        }
    }

    /// Publishes the tools under other MCP names than their declared ones (M2):
    /// [`McpNaming::SnakeCase`] (`lookup-window` as `lookup_window`), or a map. `tools/list`
    /// shows the published names and `tools/call` takes them; the handler's context, hooks and
    /// records ([`McpCall`]) speak of the declared name, and the `tools/call` span names the
    /// tool as the client called it. Checked at `build()`:
    /// each published name a valid MCP tool name, no two tools under one name, no name given
    /// for a tool the server does not hold.
    pub fn naming(mut self, naming: McpNaming) -> Self {
        self.naming = naming;
        self
    }

    /// Adds a tool: a [`Tool`], or the handle `#[tool]` generates. Tools keep the order they
    /// are added in (the order of `tools/list` and of its policy checks).
    ///
    /// A tool declared `deferred_loading` (Q1) makes the server serve the search tool
    /// ([`SEARCH_TOOL`](crate::SEARCH_TOOL)) beside the others and declare
    /// `tools.listChanged`: the deferred tool is listed, and runs, only for a caller a search
    /// of its own returned it to (its session; without sessions, the holder of the same
    /// `Authorization`); to anyone else it is a name the server does not hold (A5).
    pub fn tool(mut self, tool: impl IntoTool) -> Self {
        self.set.tool(tool);
        self
    }

    /// Adds tools: every registered tool (`registry()?`), a named selection
    /// (`registered([...])?`), or any other list.
    pub fn tools<T: IntoTool>(mut self, tools: impl IntoIterator<Item = T>) -> Self {
        self.set.tools(tools);
        self
    }

    /// Sets the context function: it builds the [`Context`] of each request from what the
    /// transport authenticated ([`McpRequest`]: the headers of an HTTP request, say, whose
    /// bearer token the application verifies; for stdio, read the process environment).
    ///
    /// An error (or a panic) rejects the request: over HTTP with `401 Unauthorized`, over
    /// stdio with a JSON-RPC error; its text is logged, never sent. Without a context
    /// function every request gets an empty [`Context`].
    pub fn context<F, Fut, E>(mut self, f: F) -> Self
    where
        F: Fn(McpRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Context, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        let f = Arc::new(f);
        self.context = Some(Arc::new(move |request| {
            let f = Arc::clone(&f);
            Box::pin(async move { f(request).await.map_err(Into::into) })
        }));
        self
    }

    /// Sets the name the server gives in its `serverInfo` (default `tool-runtime`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets the version the server gives in its `serverInfo` (default: this crate's).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Sets the instructions the server gives the client.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets the limits applied to each call's arguments (default: 1 MiB of arguments).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.set.limits(limits);
        self
    }

    /// Calls `f` with every call's outcome, unredacted: the violations and the error behind
    /// `the tool failed` (E3). Failures are also logged with `tracing`.
    pub fn on_outcome(mut self, f: impl Fn(&McpCall<'_>) + Send + Sync + 'static) -> Self {
        self.on_outcome = Some(Arc::new(f));
        self
    }

    /// Records each call's arguments and the result text the client got on the call's
    /// `tools/call` span, as `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`
    /// (K2). Off by default: arguments and results may hold personal or secret data, and
    /// whoever reads the traces sees them. The result recorded is the client's text, so an
    /// error redacted from the client (E2) stays out of the span.
    pub fn record_tool_content(mut self, record: bool) -> Self {
        self.set.record_tool_content(record);
        self
    }

    /// Adds a hook around every call that reaches the handler (K1), as `AgentBuilder::hook`
    /// does for an agent: its `before` runs after the availability re-check, validation and
    /// approval (H6), its `after` once the handler ended, in the order hooks are added; a call
    /// refused before reaches no hook ([`McpServerBuilder::on_outcome`] sees every call). A
    /// hook that denies a call answers it with its message (kind `denied`); one that ends the
    /// run, or panics, answers `the tool failed`: a server cannot end its client's run, so
    /// the error is logged (and given to [`McpServerBuilder::on_outcome`]) and the server
    /// goes on. See [`tool_core::hook`].
    pub fn hook(mut self, hook: impl Hook) -> Self {
        self.set.hook(hook);
        self
    }

    /// Adds a hook around every `resources/read` and `prompts/get` that reaches its handler
    /// (M7, as [`McpServerBuilder::hook`] is for tools): its `before` runs after the
    /// availability re-check and validation, its `after` once the handler ended, in the order
    /// hooks are added. A hook that denies a request answers it with its message; one that
    /// gives it up, or panics, answers `the resource failed` (`the prompt failed`), the cause
    /// logged. See [`CatalogHook`].
    pub fn catalog_hook(mut self, hook: impl CatalogHook) -> Self {
        self.catalog_hooks.push(hook);
        self
    }

    /// Seals the `requestState` of approval questions with HMAC-SHA256 under `key` (H10).
    ///
    /// On protocol 2026-07-28 a call that needs approval (H6) is answered with an
    /// `input_required` result whose `requestState` the client brings back with its user's
    /// answer. That state is sealed with the server's key and bound to the tool, the
    /// arguments and the question asked, so a client cannot make up an answer to a question
    /// it was never asked: a forged, altered, expired or (on the same process) replayed state
    /// is answered `the call was not approved`, and nothing runs.
    ///
    /// Without a key the server makes a random one of 32 bytes at `build()` (from the
    /// operating system), which serves one process. Replicas behind a load balancer must share
    /// a configured key: a question asked by one replica may be answered on another, which
    /// can take the answer only if it holds the key that sealed the question. Give at least
    /// 32 random bytes (a shorter key is accepted, with a warning; an empty one is refused at
    /// build); keep it secret, and keep the replicas' clocks in step (a state's expiry is
    /// checked against the clock of the replica that takes the answer). The state is signed,
    /// not encrypted: it holds a nonce and an expiry, nothing of the call.
    pub fn state_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.set.state_key(key.into());
        self
    }

    /// Sets how long a client has to bring back the answer to an approval question (H10):
    /// past it, the answer is `the call was not approved` (default ten minutes). Counted in
    /// whole seconds, rounded up, with the second the question was sealed in: a state counts
    /// for at least `expiry` and less than a second more. Kept between one second and a day.
    ///
    /// Within its expiry a state answered once is refused again by the same process, which
    /// remembers answered states until they expire (at most 100,000 at once: past that,
    /// answers are refused until some expire). Replicas do not share what they remember, so
    /// across replicas the expiry alone bounds a replay: keep it short.
    pub fn approval_expiry(mut self, expiry: Duration) -> Self {
        self.approval_expiry = expiry;
        self
    }

    /// Lets the client's user edit a call's arguments when asked to approve it (B3; off by
    /// default, when the question asks yes or no). The approval form then offers each
    /// top-level argument whose value is a string, a number or a boolean (what an elicitation
    /// form can carry: at most 32, text up to 4 KiB), the model's value its default. What the
    /// user changes is the call's: validated again against the tool's schema before the
    /// handler runs (S2), what the handler gets and what the outcome records. An answer that
    /// sets a field the form did not offer, or gives a value of another type, is `the call was
    /// not approved`, and nothing runs. A retry's answer is sealed with its question (H10), so
    /// the form a retry is answered against is the one the user was shown.
    pub fn approval_edits(mut self, edits: bool) -> Self {
        self.approval_edits = edits;
        self
    }

    /// Serves a resource or resource template (M7): an [`McpResource`], or the handle
    /// `#[resource]` generates. `resources/list` and `resources/templates/list` show those the
    /// caller's context is offered (their policies, in the order added); `resources/read`
    /// checks the policy again, parses a template's variables as its typed parameters, and
    /// answers a URI no offered resource serves with `-32602` (`data.uri` naming it).
    pub fn resource(mut self, resource: impl IntoResource) -> Self {
        self.resources.push(resource.into_resource());
        self
    }

    /// Serves resources: every `#[resource]` of the binary
    /// ([`registered_resources`](super::registered_resources)), or any other list.
    pub fn resources<R: IntoResource>(mut self, resources: impl IntoIterator<Item = R>) -> Self {
        self.resources
            .extend(resources.into_iter().map(IntoResource::into_resource));
        self
    }

    /// Serves prompts: every `#[prompt]` of the binary
    /// ([`registered_prompts`](super::registered_prompts)), or any other list.
    pub fn prompts<P: IntoPrompt>(mut self, prompts: impl IntoIterator<Item = P>) -> Self {
        self.prompts
            .extend(prompts.into_iter().map(IntoPrompt::into_prompt));
        self
    }

    /// Serves a prompt (M7): an [`McpPrompt`], or the handle `#[prompt]` generates.
    /// `prompts/list` shows those the caller's context is offered; `prompts/get` checks the
    /// policy again and validates the arguments before the handler runs.
    pub fn prompt(mut self, prompt: impl IntoPrompt) -> Self {
        self.prompts.push(prompt.into_prompt());
        self
    }

    /// Shows `icons` beside the tool declared `name` in `tools/list` (MCP 2025-11-25).
    pub fn tool_icons(
        mut self,
        name: impl Into<String>,
        icons: impl IntoIterator<Item = Icon>,
    ) -> Self {
        self.tool_icons
            .push((name.into(), icons.into_iter().collect()));
        self
    }

    /// Runs the calls of the tool declared `name` as MCP tasks, as protocol 2025-11-25 defines
    /// them (M5): its `tools/list` entry shows `execution.taskSupport`, and a client may
    /// (`Optional`) or must (`Required`) call it with `task`, then poll `tasks/get`, wait on
    /// `tasks/result` and cancel with `tasks/cancel`. Each call still goes through the whole
    /// pipeline (availability, validation, approval, hooks, redaction). A tool not named
    /// here is `Forbidden` (a task-augmented call of it is refused `-32601`).
    ///
    /// A task is seen only by the session that made it (by the holder of the same
    /// `Authorization` on a stateless HTTP server; with neither, by anyone who has its id, 128
    /// random bits); a client holds at most 100 tasks, each kept at most an hour after it ends
    /// (the client's `ttl`, else 10 minutes). Clients on protocol 2026-07-28 cannot make these
    /// tasks, so a `Required` tool serves only clients on 2025-11-25.
    pub fn task_support(mut self, name: impl Into<String>, support: TaskSupport) -> Self {
        self.task_support.push((name.into(), support));
        self
    }

    /// Lets the calls of the tool declared `name`, which runs as a task
    /// ([`McpServerBuilder::task_support`]), ask their first questions before they become a
    /// task (M9, the Tasks extension of 2026-07-28): such a call runs as a call, its
    /// handler's questions asked in the call's own answer (`input_required`, round by round,
    /// as for any call); when the handler calls [`tool_core::Context::continue_as_task`], the
    /// client is answered with the task, and the handler goes on inside it (what it asks from
    /// then on waits in the task, `tasks/update`). A handler that ends before it says so is
    /// answered as a plain call; a question asked at the moment it says so is the call's
    /// answer (no task is made, and the handler asks again when called again); a client that
    /// holds as many tasks as it may is refused, and the handler cancelled. Without this, such
    /// a call is a task from its start, and every question waits in it.
    ///
    /// A client on 2025-11-25 that asks for a task (`task`) gets one from the start as before.
    pub fn questions_before_task(mut self, name: impl Into<String>) -> Self {
        self.questions_before_task.push(name.into());
        self
    }

    /// Builds the server, checking every tool before anything is served.
    ///
    /// # Errors
    ///
    /// Returns a [`BuildError`] (kind `Declaration`) listing every problem: each tool
    /// declared wrong (its [`Tool::declaration_error`], D2), each pair of tools sharing a name,
    /// naming both declaration sites (N3), each deferred tool (H5: a server answers each
    /// call when it is made, and a deferred tool has no handler here to answer it), an
    /// empty [`McpServerBuilder::state_key`] ([`BuildProblem::EmptyStateKey`], H10), and
    /// each published name that is not an MCP tool name, is taken twice or names no tool
    /// ([`McpServerBuilder::naming`], M2), and each task support given for a tool the server
    /// does not hold ([`BuildProblem::TaskSupportForUnknownTool`], M5), and each tool
    /// declared to ask before its task that runs as no task
    /// ([`BuildProblem::QuestionsBeforeTaskWithoutTasks`], M9).
    pub fn build(mut self) -> Result<McpServer, BuildError> {
        let mut problems = Vec::new();
        // Q1: a server with deferred tools serves the search over them.
        let index = crate::agent::catalog::prepare(&mut self.set);
        let (set, sound) = self.set.check(&mut problems);
        let deferred = index
            .and_then(|index| crate::agent::catalog::finish(index, &set))
            .map(|catalog| Deferred::new(catalog, &self.naming));
        let mut listed = Vec::with_capacity(set.tools.len());
        for (tool, _) in set.tools.iter().zip(&sound).filter(|(_, sound)| **sound) {
            if tool.is_deferred() {
                problems.push(BuildProblem::DeferredOverMcp {
                    name: tool.name().to_owned(),
                    site: tool.site(),
                });
            } else {
                listed.push(list_entry(tool, &self.naming));
            }
        }
        let by_name = published_names(&set.tools, &self.naming, &mut problems);
        let supports = (self.task_support, self.questions_before_task);
        let tasks = task_supports(&set.tools, &self.naming, supports, &mut problems);
        add_icons(&set.tools, &mut listed, self.tool_icons, &mut problems);
        let mut catalog_problems = Vec::new();
        let catalog = Catalog::check(
            self.resources,
            self.prompts,
            self.catalog_hooks,
            &mut catalog_problems,
        );
        problems.extend(catalog_problems.into_iter().map(BuildProblem::from));
        if !problems.is_empty() {
            return Err(BuildError::new(problems));
        }
        let request_states = RequestStates::new(set.state_key.as_deref(), self.approval_expiry);
        // M8: a handler may log to its client (`logging`, before 2026-07-28).
        #[allow(deprecated)]
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_tools();
        // Q1: a search that loads tools changes the list its session sees.
        let capabilities = if deferred.is_some() {
            capabilities.enable_tool_list_changed()
        } else {
            capabilities
        };
        // M5: the Tasks extension of 2026-07-28 is declared when some tool takes tasks.
        let mut capabilities = if tasks.enabled() {
            capabilities.enable_tasks().build()
        } else {
            capabilities.build()
        };
        catalog_capabilities(&mut capabilities, &catalog);
        let mut info = ServerConfig::new(capabilities);
        info.server_info = Implementation::new(self.name, self.version);
        info.instructions = self.instructions;
        let context = self.context;
        Ok(McpServer {
            shared: Arc::new(Shared {
                listed,
                by_name,
                context,
                info,
                on_outcome: self.on_outcome,
                request_states,
                approval_edits: self.approval_edits,
                set,
                tasks: Arc::new(tasks),
                catalog,
                deferred,
            }),
        })
    }
}

impl fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field("name", &self.name)
            .field("tools", &self.set)
            .field("approval_expiry", &self.approval_expiry)
            .finish_non_exhaustive()
    }
}

/// Declares what the catalog serves (M7): resources (with subscriptions and list changes),
/// prompts (with list changes) and completions, each when there is something to serve.
fn catalog_capabilities(capabilities: &mut ServerCapabilities, catalog: &Catalog) {
    if !catalog.resources.is_empty() {
        let mut resources = rmcp::model::ResourcesCapability::default();
        resources.subscribe = Some(true);
        resources.list_changed = Some(true);
        capabilities.resources = Some(resources);
    }
    if !catalog.prompts.is_empty() {
        let mut prompts = rmcp::model::PromptsCapability::default();
        prompts.list_changed = Some(true);
        capabilities.prompts = Some(prompts);
    }
    if !catalog.resources.is_empty() || !catalog.prompts.is_empty() {
        capabilities.completions = Some(JsonObject::new());
    }
}

/// Puts each tool's icons on its `tools/list` entry, with a problem for a name the server
/// does not hold.
fn add_icons(
    tools: &[Tool],
    listed: &mut [McpTool],
    icons: Vec<(String, Vec<Icon>)>,
    problems: &mut Vec<BuildProblem>,
) {
    for (declared, icons) in icons {
        let at = tools.iter().position(|tool| tool.name() == declared);
        match at.and_then(|at| listed.get_mut(at)) {
            Some(entry) => entry.icons = super::icon::to_mcp(&icons),
            None => problems.push(BuildProblem::from(
                super::catalog::CatalogProblem::IconsForUnknownTool { name: declared },
            )),
        }
    }
}

/// The tasks of a server: each task support by the tool's published name; a problem for each
/// name the server does not hold.
fn task_supports(
    tools: &[Tool],
    naming: &McpNaming,
    (supports, before_task): (Vec<(String, TaskSupport)>, Vec<String>),
    problems: &mut Vec<BuildProblem>,
) -> Tasks {
    let mut by_published = HashMap::new();
    for (declared, support) in supports {
        if tools.iter().any(|tool| tool.name() == declared) {
            by_published.insert(naming.published(&declared).into_owned(), support);
        } else {
            problems.push(BuildProblem::TaskSupportForUnknownTool { declared });
        }
    }
    let mut later = HashSet::new();
    for declared in before_task {
        let published = naming.published(&declared).into_owned();
        match by_published.get(&published) {
            Some(TaskSupport::Optional | TaskSupport::Required) => {
                later.insert(published);
            }
            _ => problems.push(BuildProblem::QuestionsBeforeTaskWithoutTasks { declared }),
        }
    }
    Tasks::new(by_published, later)
}

/// Each tool's index by the name it is published under (M2), with a problem for each name
/// that is not an MCP tool name or is taken twice, and for each name the naming gives a tool
/// the server does not hold.
fn published_names(
    tools: &[Tool],
    naming: &McpNaming,
    problems: &mut Vec<BuildProblem>,
) -> HashMap<String, usize> {
    let mut by_name: HashMap<String, usize> = HashMap::with_capacity(tools.len());
    for (at, tool) in tools.iter().enumerate() {
        let published = naming.published(tool.name());
        if let Some(reason) = naming::invalid(&published) {
            problems.push(BuildProblem::McpName {
                declared: tool.name().to_owned(),
                published: published.into_owned(),
                reason,
            });
            continue;
        }
        match by_name.entry(published.into_owned()) {
            Entry::Vacant(free) => {
                free.insert(at);
            }
            // Two tools of one declared name are reported as such (N3), not here.
            Entry::Occupied(taken) if tools[*taken.get()].name() != tool.name() => {
                problems.push(BuildProblem::McpNameTaken {
                    published: taken.key().clone(),
                    first: tools[*taken.get()].name().to_owned(),
                    second: tool.name().to_owned(),
                });
            }
            Entry::Occupied(_) => {}
        }
    }
    for declared in naming.named() {
        if !tools.iter().any(|tool| tool.name() == declared) {
            problems.push(BuildProblem::McpNameForUnknownTool {
                declared: declared.to_owned(),
            });
        }
    }
    by_name
}

/// A tool as `tools/list` shows it: its published name (M2), description, the neutral input
/// schema, the output schema of a typed result (O1), and the title and hints it declares
/// (O4).
pub(crate) fn list_entry(tool: &Tool, naming: &McpNaming) -> McpTool {
    let schema: JsonObject = tool.schema().as_object().cloned().unwrap_or_default();
    let mut entry = McpTool::new(
        naming.published(tool.name()).into_owned(),
        tool.description().to_owned(),
        Arc::new(schema),
    );
    if let Some(output) = tool.output_schema()
        && let Some(object) = output.schema().as_object()
    {
        entry.output_schema = Some(Arc::new(object.clone()));
    }
    let hints = tool.annotations();
    if !hints.is_empty() {
        entry.title.clone_from(&hints.title);
        let mut annotations = ToolAnnotations::default();
        annotations.title.clone_from(&hints.title);
        annotations.read_only_hint = hints.read_only;
        annotations.destructive_hint = hints.destructive;
        annotations.idempotent_hint = hints.idempotent;
        annotations.open_world_hint = hints.open_world;
        entry.annotations = Some(annotations);
    }
    entry
}
