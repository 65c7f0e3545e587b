//! The maintenance tools as an MCP server (the `mcp_server` example, whose whole program is
//! [`main`]): over stdio for the principal the process was started for, or over streamable
//! HTTP for the principal each request's bearer token names, with sessions or, as a replica
//! behind a load balancer, without ([`Options::stateless`]).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use tool_runtime::mcp::{HttpOptions, McpRequest, McpServer, McpServerBuilder};
use tool_runtime::{BoxError, Context};

use crate::maintenance::{LookupWindow, Principal, RestartService, Role, Windows, principal};

/// The usage line of the `mcp_server` example.
pub const USAGE: &str =
    "usage: mcp_server [--http ADDRESS [--stateless]]   (stdio without arguments)";

/// What the `mcp_server` command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Serve over streamable HTTP on this address; over stdio when `None`.
    pub http: Option<SocketAddr>,
    /// Over HTTP, serve without sessions and answer with plain JSON
    /// (`HttpOptions::stateless().json_answers()`): one replica of several behind an ordinary
    /// load balancer, with no session affinity.
    pub stateless: bool,
}

impl Options {
    /// Reads the arguments (without the program's name): none for stdio,
    /// `--http ADDRESS` for HTTP, and `--stateless` after it for a replica.
    ///
    /// # Errors
    ///
    /// Says what is wrong, with the usage line.
    pub fn parse(args: &[String]) -> Result<Self, BoxError> {
        let address = |addr: &str| -> Result<SocketAddr, BoxError> {
            addr.parse().map_err(|e| {
                format!("--http {addr:?} is not an address such as 127.0.0.1:8181: {e}").into()
            })
        };
        match args {
            [] => Ok(Self {
                http: None,
                stateless: false,
            }),
            [flag, addr] if flag == "--http" => Ok(Self {
                http: Some(address(addr)?),
                stateless: false,
            }),
            [flag, addr, stateless] if flag == "--http" && stateless == "--stateless" => Ok(Self {
                http: Some(address(addr)?),
                stateless: true,
            }),
            _ => Err(USAGE.into()),
        }
    }
}

/// The application's services, shared by every request's context.
pub fn services() -> Context {
    Context::new().with(Windows::demo())
}

/// The maintenance server's tools, resource, prompt, name and instructions; add how requests are authenticated
/// with [`McpServerBuilder::context`] and build it.
pub fn builder() -> McpServerBuilder {
    McpServer::builder()
        .name("maintenance")
        .version(env!("CARGO_PKG_VERSION"))
        .instructions("Tools to plan maintenance: look windows up, restart services.")
        .tool(LookupWindow)
        .tool(RestartService)
        // M7: the maintenance policy as a resource, and a prompt that plans with the tools.
        .resource(crate::maintenance_catalog::MaintenancePolicy)
        .prompt(crate::maintenance_catalog::PlanMaintenance)
        // One line per call on standard error, where this process's replica of a deployment
        // says what it served; E3: with what the client is not told, kept for the application.
        .on_outcome(|call| match call.outcome.error() {
            Some(error) => eprintln!(
                "mcp_server: {} (request {}) ended {}: {error:#}",
                call.tool,
                call.call_id,
                call.outcome.kind()
            ),
            None => eprintln!(
                "mcp_server: {} (request {}) ended {}",
                call.tool,
                call.call_id,
                call.outcome.kind()
            ),
        })
}

/// The principal a stdio server serves, from the process environment: `MAINTENANCE_USER`
/// (default `operator`) and `MAINTENANCE_ROLE` (`guest`, `operator` by default, or `admin`).
///
/// # Errors
///
/// Refuses a role it does not know.
pub fn principal_from_env() -> Result<Principal, BoxError> {
    let name: &'static str = std::env::var("MAINTENANCE_USER")
        .map(|name| &*Box::leak(name.into_boxed_str()))
        .unwrap_or("operator");
    let role = match std::env::var("MAINTENANCE_ROLE").as_deref() {
        Err(_) | Ok("operator") => Role::Operator,
        Ok("guest") => Role::Guest,
        Ok("admin") => Role::Admin,
        Ok(other) => {
            return Err(
                format!("MAINTENANCE_ROLE is {other:?}: use guest, operator or admin").into(),
            );
        }
    };
    Ok(principal(name, role))
}

/// The whole `mcp_server` program: serves the maintenance tools as `args` (the command line
/// without the program's name, [`Options::parse`]) ask, until the server stops. Over HTTP it
/// prints the URL it serves at (with the port the system chose for port 0) on standard error,
/// and a line per call it served; it reads the bearer tokens from `MAINTENANCE_TOKENS` (else
/// [`Tokens::demo`]), the `Host` names it accepts instead of loopback ones from
/// `MAINTENANCE_ALLOWED_HOSTS` (`mcp.example.com,mcp.example.com:8080`), and the key that seals
/// its approval questions from `MAINTENANCE_STATE_KEY` ([`state_key_from_env`]).
///
/// # Errors
///
/// A bad command line or environment (an empty `MAINTENANCE_STATE_KEY`, say), an address that
/// cannot be bound, a failing server.
pub async fn main(args: &[String]) -> Result<(), BoxError> {
    let options = Options::parse(args)?;
    let base = services();
    let Some(addr) = options.http else {
        let who = principal_from_env()?;
        eprintln!(
            "mcp_server: serving the maintenance tools on stdio for {} ({:?})",
            who.name, who.role
        );
        // Every request's context: the principal this process was started for, and the
        // application's services. Built by the application, never from the arguments.
        let ctx = base.with(who);
        let server = builder()
            .context(move |_request: McpRequest| {
                let ctx = ctx.clone();
                async move { Ok::<_, BoxError>(ctx) }
            })
            .build()?;
        server.serve_stdio().await?;
        return Ok(());
    };
    let tokens = match std::env::var("MAINTENANCE_TOKENS") {
        Ok(spec) => Tokens::parse(&spec)?,
        Err(_) => Tokens::demo(),
    };
    // Each request is authenticated by its own bearer token, whichever replica it reaches.
    let mut server = builder().context(move |request: McpRequest| {
        let ctx = tokens.context(&request, &base);
        async move { ctx }
    });
    // H10: replicas seal their approval questions with one key, so that any of them takes the
    // answer to a question another asked.
    let state_key = state_key_from_env();
    if let Some(key) = state_key.clone() {
        server = server.state_key(key);
    } else if options.stateless {
        eprintln!(
            "mcp_server: no MAINTENANCE_STATE_KEY: this replica seals approval questions with a \
             key of its own, and another replica will refuse their answers"
        );
    }
    let server = server.build()?;
    let mut http_options = if options.stateless {
        HttpOptions::new().stateless().json_answers()
    } else {
        HttpOptions::new()
    };
    // Behind a load balancer, clients reach the server by the balancer's name, not loopback.
    if let Ok(hosts) = std::env::var("MAINTENANCE_ALLOWED_HOSTS") {
        http_options = http_options.allowed_hosts(
            hosts
                .split(',')
                .map(str::trim)
                .filter(|h| !h.is_empty())
                .map(str::to_owned),
        );
    }
    let http = server.bind_http(addr, http_options).await?;
    eprintln!(
        "mcp_server: serving the maintenance tools at {} ({}{}bearer tokens: {})",
        http.url(),
        if options.stateless { "stateless; " } else { "" },
        if state_key.is_some() {
            "state key from MAINTENANCE_STATE_KEY; "
        } else {
            ""
        },
        if std::env::var_os("MAINTENANCE_TOKENS").is_some() {
            "from MAINTENANCE_TOKENS"
        } else {
            "guest-token, operator-token, admin-token"
        }
    );
    http.wait().await?;
    Ok(())
}

/// The key that seals the server's approval questions (H10), from `MAINTENANCE_STATE_KEY`:
/// its bytes, the same on every replica behind one balancer (at least 32 random bytes, such
/// as the output of `openssl rand -base64 32`); `None` when it is not set, and the server makes
/// a key of its own. A key that is set but empty is refused when the server is built.
pub fn state_key_from_env() -> Option<Vec<u8>> {
    std::env::var_os("MAINTENANCE_STATE_KEY").map(|key| key.into_encoded_bytes())
}

/// The principals of the HTTP server, by bearer token.
#[derive(Debug, Clone)]
pub struct Tokens {
    by_token: Arc<HashMap<String, Principal>>,
}

impl Tokens {
    /// The demo's tokens: `guest-token` (gus, a guest), `operator-token` (ada, an operator)
    /// and `admin-token` (root, an admin).
    pub fn demo() -> Self {
        Self::from_pairs([
            ("guest-token", principal("gus", Role::Guest)),
            ("operator-token", principal("ada", Role::Operator)),
            ("admin-token", principal("root", Role::Admin)),
        ])
    }

    /// Tokens from `spec`: `token=name:role` entries separated by commas
    /// (`s3cret=ada:operator,t0p=root:admin`), roles `guest`, `operator` or `admin`.
    ///
    /// # Errors
    ///
    /// Says which entry is malformed.
    pub fn parse(spec: &str) -> Result<Self, BoxError> {
        let mut pairs = Vec::new();
        for entry in spec.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (token, who) = entry
                .split_once('=')
                .ok_or_else(|| format!("{entry:?} is not `token=name:role`"))?;
            let (name, role) = who
                .split_once(':')
                .ok_or_else(|| format!("{entry:?} is not `token=name:role`"))?;
            let role = match role {
                "guest" => Role::Guest,
                "operator" => Role::Operator,
                "admin" => Role::Admin,
                other => return Err(format!("{other:?} is not guest, operator or admin").into()),
            };
            if token.is_empty() || name.is_empty() {
                return Err(format!("{entry:?} has an empty token or name").into());
            }
            let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
            pairs.push((token.to_owned(), principal(name, role)));
        }
        if pairs.is_empty() {
            return Err("no token is given".into());
        }
        Ok(Self::from_pairs(pairs))
    }

    fn from_pairs(pairs: impl IntoIterator<Item = (impl Into<String>, Principal)>) -> Self {
        Self {
            by_token: Arc::new(
                pairs
                    .into_iter()
                    .map(|(token, who)| (token.into(), who))
                    .collect(),
            ),
        }
    }

    /// Who `token` stands for.
    pub fn principal(&self, token: &str) -> Option<&Principal> {
        self.by_token.get(token)
    }

    /// The context of an HTTP request: `base` (the application's services) with the
    /// principal of its bearer token; a request without a known token is refused (`401`),
    /// before any MCP processing. The principal never comes from the client's arguments.
    ///
    /// # Errors
    ///
    /// Refuses a request without a bearer token or with one it does not know.
    pub fn context(&self, request: &McpRequest, base: &Context) -> Result<Context, BoxError> {
        let token = request.bearer_token().ok_or("no bearer token")?;
        let who = self.principal(token).ok_or("unknown bearer token")?;
        Ok(base.clone().with(who.clone()))
    }
}
