//! The maintenance tools as an MCP server (the `mcp_server` example): over stdio for the
//! principal the process was started for, or over streamable HTTP for the principal each
//! request's bearer token names.

use std::collections::HashMap;
use std::sync::Arc;

use tool_runtime::mcp::{McpRequest, McpServer, McpServerBuilder};
use tool_runtime::{BoxError, Context};

use crate::maintenance::{LookupWindow, Principal, RestartService, Role, Windows, principal};

/// The application's services, shared by every request's context.
pub fn services() -> Context {
    Context::new().with(Windows::demo())
}

/// The maintenance server's tools, name and instructions; add how requests are authenticated
/// with [`McpServerBuilder::context`] and build it.
pub fn builder() -> McpServerBuilder {
    McpServer::builder()
        .name("maintenance")
        .version(env!("CARGO_PKG_VERSION"))
        .instructions("Tools to plan maintenance: look windows up, restart services.")
        .tool(LookupWindow)
        .tool(RestartService)
        // E3: what the client is not told is kept for the application.
        .on_outcome(|call| {
            if let Some(error) = call.outcome.error() {
                eprintln!(
                    "mcp_server: {} (request {}) ended {}: {error:#}",
                    call.tool,
                    call.call_id,
                    call.outcome.kind()
                );
            }
        })
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
