//! [`McpToolsetBuilder`]: how a toolset names, filters and guards a server's tools, then
//! connects to it ([`Handshake`]) and turns each listed tool into a run-time [`Tool`].

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use rmcp::ClientServiceExt;
use tool_core::elicit::Elicitor;

use super::elicit::ToolsetClient;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProtocolVersion, Tool as McpTool,
};
use rmcp::service::ClientLifecycleMode;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tool_core::approval::Approval;
use tool_core::policy::{BoxFuture, Policy};
use tool_core::{Annotations, BoxError, Context, OutputSchema, Site, Tool};

use super::McpToolset;
use super::auth::{OAuthClient, OAuthHttp, Session};
use super::error::{ToolsetError, ToolsetProblem};
use super::names::{NameMap, NameProblem, check_prefix};
use super::remote_input::Answering;
use super::remote_schema::{JsonSchemaValidator, SchemaLimits};
use super::remote_tool::Connection;
use super::task_listing;

/// Configures an [`McpToolset`], then connects; start with [`McpToolset::builder`].
#[must_use = "a builder does nothing until it connects"]
pub struct McpToolsetBuilder {
    prefix: Option<String>,
    renames: HashMap<String, String>,
    excluded: HashSet<String>,
    policies: HashMap<String, Arc<dyn Policy>>,
    policy_for_all: Option<Arc<dyn Policy>>,
    limits: SchemaLimits,
    bearer_token: Option<String>,
    oauth: Option<OAuthClient>,
    handshake: Handshake,
    elicitor: Option<Arc<dyn Elicitor>>,
    pause_on_approval: bool,
    site: Site,
}

impl McpToolsetBuilder {
    /// A builder with no prefix, renames, exclusions or policies, started at `site` (where
    /// [`McpToolset::builder`] was called).
    pub(super) fn new(site: Site) -> Self {
        Self {
            prefix: None,
            renames: HashMap::new(),
            excluded: HashSet::new(),
            policies: HashMap::new(),
            policy_for_all: None,
            limits: SchemaLimits::default(),
            bearer_token: None,
            oauth: None,
            handshake: Handshake::default(),
            elicitor: None,
            pause_on_approval: false,
            site,
        }
    }

    /// Answers the remote server's questions (`elicitation/create`, form mode) through
    /// `elicitor` (M3): the toolset then declares the elicitation capability, so a server asks
    /// (an approval, data a tool needs), and each answer gets the requested schema's defaults
    /// for what it leaves out (SEP-1034). Without one the toolset declares no elicitation and
    /// declines any question.
    pub fn elicitor(mut self, elicitor: impl Elicitor + 'static) -> Self {
        self.elicitor = Some(Arc::new(elicitor));
        self
    }

    /// Makes a remote server's approval question (a question with nothing to fill in, asked
    /// in the answer to a call: `input_required`, protocol 2026-07-28) pause the local run
    /// (M3, H2): the call waits for approval here, with the server's question as its reason,
    /// and once approved runs again, the server's question then answered yes. The toolset
    /// declares the elicitation capability, so that the server asks. Every remote tool can then
    /// pause a run ([`Tool::can_pause`]). On protocol 2025-11-25 a server asks during the call
    /// instead (`elicitation/create`), and the question goes to the elicitor.
    pub fn pause_on_approval(mut self) -> Self {
        self.pause_on_approval = true;
        self
    }

    /// Namespaces the server: every local name is `PREFIX-NAME`. The prefix must follow N1.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Names the remote tool `remote` `local` (used as given: no prefix is added). Resolves a
    /// collision, or a name that cannot be mapped.
    pub fn rename(mut self, remote: impl Into<String>, local: impl Into<String>) -> Self {
        self.renames.insert(remote.into(), local.into());
        self
    }

    /// Leaves the remote tool `remote` out of the toolset.
    pub fn exclude(mut self, remote: impl Into<String>) -> Self {
        self.excluded.insert(remote.into());
        self
    }

    /// Sets the availability policy of the remote tool `remote` (A1): checked when an agent
    /// advertises its tools (A2) and before every call (A4), like a native tool's.
    pub fn available(mut self, remote: impl Into<String>, policy: impl Policy) -> Self {
        self.policies.insert(remote.into(), Arc::new(policy));
        self
    }

    /// Sets a plain function as the availability policy of the remote tool `remote`.
    pub fn available_fn<F, E>(self, remote: impl Into<String>, f: F) -> Self
    where
        F: Fn(&Context) -> Result<bool, E> + Send + Sync + 'static,
        E: Into<BoxError>,
    {
        self.available(remote, tool_core::policy::SyncPolicy(f))
    }

    /// Sets the availability policy of every remote tool that has none of its own.
    pub fn available_for_all(mut self, policy: impl Policy) -> Self {
        self.policy_for_all = Some(Arc::new(policy));
        self
    }

    /// Sets the bounds on the remote schemas (default [`SchemaLimits::default`]).
    pub fn schema_limits(mut self, limits: SchemaLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Sends `Authorization: Bearer <token>` with every HTTP request
    /// ([`McpToolsetBuilder::connect_http`] only).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Authenticates to a protected HTTP server with OAuth 2.1 as MCP says (Z4): on the
    /// server's `401` the client discovers its authorization server and gets a token by
    /// `client`'s grant, refreshes it before it expires, and asks for more scopes on a `403
    /// insufficient_scope` ([`McpToolsetBuilder::connect_http`] only; replaces
    /// [`McpToolsetBuilder::bearer_token`]).
    pub fn oauth(mut self, client: OAuthClient) -> Self {
        self.oauth = Some(client);
        self
    }

    /// Sets how the session opens (default [`Handshake::Initialize`]).
    pub fn handshake(mut self, handshake: Handshake) -> Self {
        self.handshake = handshake;
        self
    }

    /// Starts `command` as a child process and speaks MCP over its standard input and output;
    /// its standard error is inherited. The process is killed when the session ends.
    ///
    /// # Errors
    ///
    /// [`ToolsetError::Connect`] when the process cannot start or the session cannot open,
    /// [`ToolsetError::List`] when the tools cannot be listed, [`ToolsetError::Tools`] with
    /// every remote tool that cannot be offered, [`ToolsetError::InvalidPrefix`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future kills the process.
    pub async fn connect_child(
        self,
        command: tokio::process::Command,
    ) -> Result<McpToolset, ToolsetError> {
        let server = format!("{:?}", command.as_std().get_program());
        self.check_prefix()?;
        // The process's output is read through the task rewriting (M5); the process is
        // killed when the connection ends.
        let (stdout, stdin, child) =
            task_listing::child(command).map_err(|e| ToolsetError::Connect {
                server: server.clone(),
                source: Box::new(e),
            })?;
        let service =
            ToolsetClient::new(client_info(), self.elicitor.clone(), self.pause_on_approval)
                .serve_with_lifecycle((stdout, stdin), self.handshake.lifecycle())
                .await
                .map_err(|e| ToolsetError::Connect {
                    server: server.clone(),
                    source: Box::new(e),
                })?;
        self.assemble(Connection::new(server, service).with_child(child))
            .await
    }

    /// Connects to the streamable HTTP endpoint `url` (`http://…` or `https://…`, rustls),
    /// with the bearer token of [`McpToolsetBuilder::bearer_token`] if one was set.
    ///
    /// # Errors
    ///
    /// As [`McpToolsetBuilder::connect_child`]; an endpoint that answers `401` is a
    /// [`ToolsetError::Connect`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the connection.
    pub async fn connect_http(self, url: impl Into<String>) -> Result<McpToolset, ToolsetError> {
        let url = url.into();
        self.check_prefix()?;
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
        // Each event's data through the task rewriting (M5).
        let client = task_listing::TaskAware(reqwest::Client::default());
        let service = match &self.oauth {
            // Z4: every request asks the session for its token.
            Some(oauth) => {
                let client = OAuthHttp::new(client, Session::new(url.clone(), oauth.clone()));
                self.serve_http(StreamableHttpClientTransport::with_client(client, config))
                    .await
            }
            None => {
                if let Some(token) = &self.bearer_token {
                    config = config.auth_header(token.clone());
                }
                self.serve_http(StreamableHttpClientTransport::with_client(client, config))
                    .await
            }
        };
        let service = service.map_err(|e| ToolsetError::Connect {
            server: url.clone(),
            source: Box::new(e),
        })?;
        self.assemble(Connection::new(url, service)).await
    }

    /// Opens the session over an HTTP transport.
    async fn serve_http<C>(
        &self,
        transport: StreamableHttpClientTransport<C>,
    ) -> Result<
        rmcp::service::RunningService<rmcp::RoleClient, ToolsetClient>,
        rmcp::service::ClientInitializeError,
    >
    where
        C: rmcp::transport::streamable_http_client::StreamableHttpClient,
    {
        ToolsetClient::new(client_info(), self.elicitor.clone(), self.pause_on_approval)
            .serve_with_lifecycle(transport, self.handshake.lifecycle())
            .await
    }

    /// Speaks MCP over a byte stream (newline-delimited JSON-RPC, as on stdio): a pipe, a
    /// socket, or the ends of an in-process duplex.
    ///
    /// # Errors
    ///
    /// As [`McpToolsetBuilder::connect_child`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the session.
    pub async fn connect_io<R, W>(self, reader: R, writer: W) -> Result<McpToolset, ToolsetError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let server = "a byte stream".to_owned();
        self.check_prefix()?;
        let reader = task_listing::io(reader);
        let service =
            ToolsetClient::new(client_info(), self.elicitor.clone(), self.pause_on_approval)
                .serve_with_lifecycle((reader, writer), self.handshake.lifecycle())
                .await
                .map_err(|e| ToolsetError::Connect {
                    server: server.clone(),
                    source: Box::new(e),
                })?;
        self.assemble(Connection::new(server, service)).await
    }

    fn check_prefix(&self) -> Result<(), ToolsetError> {
        match &self.prefix {
            Some(prefix) => check_prefix(prefix).map_err(|source| ToolsetError::InvalidPrefix {
                prefix: prefix.clone(),
                source,
            }),
            None => Ok(()),
        }
    }

    /// Lists the server's tools and turns each into a [`Tool`].
    async fn assemble(self, connection: Connection) -> Result<McpToolset, ToolsetError> {
        let connection = Arc::new(connection.with_answering(Answering {
            elicitor: self.elicitor.clone(),
            pause_on_approval: self.pause_on_approval,
        }));
        let listed = connection
            .list_tools()
            .await
            .map_err(|source| ToolsetError::List {
                server: connection.server().to_owned(),
                source,
            })?;
        let listed: Vec<McpTool> = listed
            .into_iter()
            .filter(|t| !self.excluded.contains(t.name.as_ref()))
            .collect();
        let (names, name_problems) = NameMap::build(
            listed.iter().map(|t| t.name.as_ref()),
            self.prefix.as_deref(),
            &self.renames,
        );
        let mut problems: Vec<ToolsetProblem> = name_problems.into_iter().map(problem).collect();
        problems.extend(self.unknown_names(&listed));
        let mut tools = Vec::with_capacity(listed.len());
        for spec in &listed {
            let Some(local) = names.local(&spec.name) else {
                continue;
            };
            match self.remote_tool(spec, local, &connection) {
                Ok(tool) => tools.push(tool),
                Err(p) => problems.push(p),
            }
        }
        if !problems.is_empty() {
            return Err(ToolsetError::Tools(problems));
        }
        Ok(McpToolset {
            tools,
            names,
            connection,
        })
    }

    /// A problem for each policy, rename or exclusion naming a tool the server does not list.
    fn unknown_names(&self, listed: &[McpTool]) -> Vec<ToolsetProblem> {
        let known: HashSet<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
        let mut problems = Vec::new();
        let mut check = |remote: &String, what: &'static str| {
            if !known.contains(remote.as_str()) {
                problems.push(ToolsetProblem::UnknownTool {
                    remote: remote.clone(),
                    what,
                });
            }
        };
        for remote in self.policies.keys() {
            check(remote, "a policy");
        }
        for remote in self.renames.keys() {
            if !self.excluded.contains(remote) {
                check(remote, "a rename");
            }
        }
        problems.sort_by_key(ToString::to_string);
        problems
    }

    /// The run-time tool standing for the remote tool `spec`, named `local`.
    fn remote_tool(
        &self,
        spec: &McpTool,
        local: &str,
        connection: &Arc<Connection>,
    ) -> Result<Tool, ToolsetProblem> {
        let remote = spec.name.to_string();
        let schema = Value::Object((*spec.input_schema).clone());
        let validator =
            JsonSchemaValidator::with_limits(&schema, &self.limits).map_err(|source| {
                ToolsetProblem::Schema {
                    remote: remote.clone(),
                    source,
                }
            })?;
        let description = match spec.description.as_deref().map(str::trim) {
            Some(text) if !text.is_empty() => text.to_owned(),
            _ => format!("Calls the tool `{remote}` of an MCP server."),
        };
        // O1: a remote output schema is this tool's too, and each result is checked against it.
        let output = match &spec.output_schema {
            Some(object) => {
                let schema = Value::Object((**object).clone());
                let checker =
                    JsonSchemaValidator::with_limits(&schema, &self.limits).map_err(|source| {
                        ToolsetProblem::Schema {
                            remote: remote.clone(),
                            source,
                        }
                    })?;
                Some((OutputSchema::published(schema), Arc::new(checker)))
            }
            None => None,
        };
        let checker = output.as_ref().map(|(_, checker)| Arc::clone(checker));
        let connection = Arc::clone(connection);
        let name = remote.clone();
        let mut builder = Tool::builder(local, description)
            .site(self.site)
            .dynamic_handler(schema, validator, move |ctx: Context, args: Value| {
                let connection = Arc::clone(&connection);
                let name = name.clone();
                let checker = checker.clone();
                async move { connection.call(&ctx, &name, args, checker.as_deref()).await }
            })
            .output_schema(output.and_then(|(schema, _)| schema))
            .annotations(annotations_of(spec));
        let policy = self
            .policies
            .get(&remote)
            .or(self.policy_for_all.as_ref())
            .cloned();
        if let Some(policy) = policy {
            builder = builder.available(SharedPolicy(policy));
        }
        if self.pause_on_approval {
            // M3: the server decides when a call needs approval; here each call may pause.
            builder = builder.approval_fn(|_ctx: &Context, _args: &Value| {
                Ok::<_, std::convert::Infallible>(Approval::NotRequired)
            });
        }
        let tool = builder.build();
        match tool.declaration_error() {
            Some(source) => Err(ToolsetProblem::Declaration {
                remote,
                source: source.clone(),
            }),
            None => Ok(tool),
        }
    }
}

/// The title and hints a remote tool declares (O4), kept for whoever shows the local tool.
fn annotations_of(spec: &McpTool) -> Annotations {
    let mut hints = Annotations::default();
    hints.title = spec
        .title
        .clone()
        .or_else(|| spec.annotations.as_ref().and_then(|a| a.title.clone()));
    if let Some(remote) = &spec.annotations {
        hints.read_only = remote.read_only_hint;
        hints.destructive = remote.destructive_hint;
        hints.idempotent = remote.idempotent_hint;
        hints.open_world = remote.open_world_hint;
    }
    // Hints of an untrusted server that contradict each other are not kept (the tool is).
    if hints.contradiction().is_some() {
        hints.read_only = None;
        hints.destructive = None;
    }
    hints
}

impl fmt::Debug for McpToolsetBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpToolsetBuilder")
            .field("prefix", &self.prefix)
            .field("renames", &self.renames)
            .field("excluded", &self.excluded)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

fn problem(p: NameProblem) -> ToolsetProblem {
    match p {
        NameProblem::Unmappable { remote } => ToolsetProblem::UnmappableName { remote },
        NameProblem::InvalidRename { remote, source } => {
            ToolsetProblem::InvalidRename { remote, source }
        }
        NameProblem::Collision {
            local,
            first_remote,
            second_remote,
        } => ToolsetProblem::NameCollision {
            local,
            first_remote,
            second_remote,
        },
    }
}

/// How this client introduces itself. `initialize` names the newest protocol version that
/// has it (2025-11-25, M5): a version past it has no `initialize`, and a server of that
/// version would be right to refuse one that names it.
fn client_info() -> ClientConfig {
    // M5: a remote tool may run as a task of the Tasks extension (2026-07-28).
    let mut info = ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("tool-runtime", env!("CARGO_PKG_VERSION")),
    );
    info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
    info
}

/// How an [`McpToolset`] opens its session with a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Handshake {
    /// The `initialize` handshake, naming protocol 2025-11-25 (the newest version that has
    /// it), which servers of every protocol version to date accept.
    #[default]
    Initialize,
    /// `server/discover`, then self-contained requests (protocol 2026-07-28 and later): a
    /// server that predates discovery is an error.
    Discover,
    /// `server/discover`, falling back to `initialize` when the server reports that it
    /// predates discovery or does not answer within ten seconds (a server that starts slowly
    /// can be mistaken for an old one).
    Auto,
}

impl Handshake {
    fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Handshake::Initialize => ClientLifecycleMode::Initialize,
            Handshake::Discover => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::LATEST],
            },
            Handshake::Auto => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::LATEST],
                legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
            },
        }
    }
}

/// A policy shared by several remote tools.
struct SharedPolicy(Arc<dyn Policy>);

impl Policy for SharedPolicy {
    fn check<'a>(&'a self, ctx: &'a Context) -> BoxFuture<'a, Result<bool, BoxError>> {
        self.0.check(ctx)
    }
}
