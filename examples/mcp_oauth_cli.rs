//! An agent's command line connecting to a protected MCP server (Z4): the first run takes its
//! user through the authorization server in a browser, later runs use the token it saved.
//!
//! ```text
//! cargo run --example mcp_oauth_cli -- https://tickets.example/mcp whoami \
//!     --store ~/.config/tickets-token.json
//! ```
//!
//! The program finds the server's authorization server from the server's `401` (Protected
//! Resource Metadata, then the authorization server's metadata), registers itself there with
//! a loopback redirect URI (`http://127.0.0.1:PORT/callback`, a free port; or uses the client
//! of `--client-id`), prints the authorization URL and opens it in a browser when there is
//! one (`--no-browser`: print only). Once the user has signed in and consented, the
//! authorization server sends the browser back to the loopback listener; the redirect's
//! `state` and its `iss` (RFC 9207) are checked, the code is exchanged for a token (PKCE
//! S256, the server named as the `resource`), and the tool is called with the arguments given
//! (a JSON object, `{}` by default):
//!
//! ```text
//! Open this URL to authorize: https://auth.example/authorize?response_type=code&…
//! tools: whoami, close-ticket
//! whoami: you are alice
//! ```
//!
//! With `--store FILE` the tokens are kept in that file (created readable by its owner only,
//! replaced whole on each save), and the next run, another process, uses them, refreshing
//! them when they are about to expire, without asking the user again. `--scope` (repeated)
//! names the scopes to ask for; a tool needing more is answered `403`, and the user is asked
//! again for the larger set (step-up).
//!
//! `examples/tests/mcp_oauth_cli.rs` runs this program against a real authorization server
//! (`oidc-provider`) and the project's own protected server.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The program lives in the library (`tool_examples::mcp_oauth::main`), so that the tests
    // run it as it is, as separate processes.
    tool_examples::exit_with(tool_examples::mcp_oauth::main(&args).await)
}
