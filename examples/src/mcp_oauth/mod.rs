//! An agent's command line connecting to a protected MCP server (the `mcp_oauth_cli`
//! example, whose whole program is [`main`]): the authorization-code flow with PKCE through
//! the user's browser and a loopback redirect ([`Loopback`]), tokens kept in a file for the
//! next run ([`FileStore`]), then one call of a tool of the server.

mod file_store;
mod loopback;

use std::path::PathBuf;

use tool_runtime::mcp::McpToolset;
use tool_runtime::mcp::oauth::OAuthClient;
use tool_runtime::{BoxError, Context, OutcomeKind};

pub use file_store::FileStore;
pub use loopback::Loopback;

/// The usage line of the `mcp_oauth_cli` example.
pub const USAGE: &str = "usage: mcp_oauth_cli SERVER_URL TOOL [JSON_ARGUMENTS] \
     [--store FILE] [--scope SCOPE]... [--client-id ID] [--no-browser]";

/// What the `mcp_oauth_cli` command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The MCP server's URL (its canonical resource URI).
    pub server: String,
    /// The tool to call, by the server's name for it.
    pub tool: String,
    /// The call's arguments, a JSON object (`{}` when not given).
    pub arguments: String,
    /// Where tokens are kept between runs (`--store`); in memory for this run without it.
    pub store: Option<PathBuf>,
    /// The scopes to ask for (`--scope`, repeated); without any, those the server names.
    pub scopes: Vec<String>,
    /// A client registered beforehand (`--client-id`); without it the client registers
    /// itself with its loopback redirect URI (dynamic registration).
    pub client_id: Option<String>,
    /// Print the authorization URL only, never open a browser (`--no-browser`).
    pub no_browser: bool,
}

impl Options {
    /// Reads the arguments (without the program's name).
    ///
    /// # Errors
    ///
    /// Says what is wrong, with the usage line.
    pub fn parse(args: &[String]) -> Result<Self, BoxError> {
        let mut positional = Vec::new();
        let (mut store, mut scopes, mut client_id, mut no_browser) =
            (None, Vec::new(), None, false);
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = || {
                args.next()
                    .cloned()
                    .ok_or_else(|| format!("{arg} needs a value; {USAGE}"))
            };
            match arg.as_str() {
                "--store" => store = Some(PathBuf::from(value()?)),
                "--scope" => scopes.push(value()?),
                "--client-id" => client_id = Some(value()?),
                "--no-browser" => no_browser = true,
                flag if flag.starts_with("--") => {
                    return Err(format!("unknown option {flag}; {USAGE}").into());
                }
                _ => positional.push(arg.clone()),
            }
        }
        let (server, tool, arguments) = match &positional[..] {
            [server, tool] => (server, tool, "{}".to_owned()),
            [server, tool, arguments] => (server, tool, arguments.clone()),
            _ => return Err(USAGE.into()),
        };
        Ok(Self {
            server: server.clone(),
            tool: tool.clone(),
            arguments,
            store,
            scopes,
            client_id,
            no_browser,
        })
    }
}

/// The example's program: connects to the server (authorizing through the user's browser
/// when no stored token is accepted), lists its tools and calls one, printing the answer.
///
/// # Errors
///
/// Bad arguments, a failed authorization or connection (the reason in words, never a
/// token), a tool the server does not offer, or a call that did not succeed.
pub async fn main(args: &[String]) -> Result<(), BoxError> {
    let options = Options::parse(args)?;
    let browser = Loopback::bind().await?.open_browser(!options.no_browser);
    let mut oauth = OAuthClient::authorization_code(browser.redirect_uri().to_owned(), browser)
        .client_name("mcp_oauth_cli")
        .scopes(options.scopes.clone());
    if let Some(id) = &options.client_id {
        oauth = oauth.client_id(id.clone());
    }
    if let Some(path) = &options.store {
        oauth = oauth.store(FileStore::new(path));
    }
    let toolset = McpToolset::builder()
        .oauth(oauth)
        .connect_http(&options.server)
        .await?;
    let names: Vec<&str> = toolset.names().map(|(_, remote)| remote).collect();
    println!("tools: {}", names.join(", "));
    let called = async {
        let local = (toolset.local_name(&options.tool)).ok_or_else(|| {
            format!(
                "{} offers no tool {:?} to this token",
                options.server, options.tool
            )
        })?;
        let tool = (toolset.tools().iter().find(|t| t.name() == local))
            .ok_or_else(|| format!("no tool {local}"))?;
        let outcome = tool
            .invoke(&Context::new(), options.arguments.as_bytes())
            .await;
        println!("{}: {}", options.tool, outcome.text());
        if outcome.kind() == OutcomeKind::Success {
            Ok(())
        } else {
            Err(BoxError::from(format!(
                "the call ended {:?}",
                outcome.kind()
            )))
        }
    }
    .await;
    toolset.close().await;
    called
}
