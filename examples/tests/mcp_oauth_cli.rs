//! Z4 end to end from a command line: the `mcp_oauth_cli` example (`tool_examples::mcp_oauth::
//! main`, all that `examples/mcp_oauth_cli.rs` does) run as separate processes against a real
//! authorization server (npm `oidc-provider`, the one `tool-runtime/tests/support/oidc`
//! provisions) and the project's own protected server.
//!
//! This test plays the user's browser: it reads the authorization URL the program prints,
//! follows it through the provider's login and consent (`support/user_agent.rs`), and
//! delivers the redirect to the program's loopback listener. The first run registers the
//! program with its loopback redirect URI and saves the token in a file (mode 0600); the
//! second run, a new process, calls the tool with the saved token and prints no URL. A request
//! to the listener with another `state` is turned away, and a redirect naming another issuer
//! (RFC 9207) ends the authorization. No token text appears in what the programs print.
#![cfg(feature = "mcp")]

#[path = "../../tool-runtime/tests/support/oidc/mod.rs"]
mod oidc;
#[path = "../../tool-runtime/tests/support/user_agent.rs"]
mod user_agent;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use oidc::OidcProvider;
use reqwest::Url;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};
use tokio::process::{Child, ChildStdout, Command};
use tool_examples::mcp_oauth::FileStore;
use tool_runtime::mcp::auth::{Authorization, Claims};
use tool_runtime::mcp::oauth::CredentialStore as _;
use tool_runtime::mcp::{HttpOptions, HttpServer, McpServer};
use tool_runtime::{IntoTool, tool};

/// The arguments of the example's program, for a child, separated by this character.
const ARGS_VARIABLE: &str = "MCP_OAUTH_CLI_ARGS";
const SEPARATOR: char = '\u{1f}';

/// The line the program prints before waiting for the user.
const PROMPT: &str = "Open this URL to authorize: ";

/// `oidc-provider`'s pre-registered client redirects there; the program registers its own.
const UNUSED_REDIRECT: &str = "http://127.0.0.1:8765/callback";

/// In a child (when `MCP_OAUTH_CLI_ARGS` is set): runs the example's program with those
/// arguments and exits with its code. Otherwise it does nothing.
#[test]
fn child_runs_the_example_program() {
    let Ok(args) = std::env::var(ARGS_VARIABLE) else {
        return;
    };
    let args: Vec<String> = args.split(SEPARATOR).map(str::to_owned).collect();
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let code = tool_examples::exit_with(runtime.block_on(tool_examples::mcp_oauth::main(&args)));
    std::process::exit(if code == std::process::ExitCode::SUCCESS {
        0
    } else {
        1
    });
}

/// Says whom the token was issued for.
#[tool]
async fn whoami(claims: &Claims) -> String {
    format!("you are {}", claims.subject.as_deref().unwrap_or("nobody"))
}

/// The protected server on a free loopback port, its tokens issued by `oidc-provider`.
struct Fixture {
    provider: OidcProvider,
    server: HttpServer,
    dir: PathBuf,
}

impl Fixture {
    async fn start(name: &str) -> Self {
        let addr: SocketAddr = (tokio::net::TcpListener::bind("127.0.0.1:0").await)
            .and_then(|listener| listener.local_addr())
            .expect("a loopback port is free");
        let resource = format!("http://{addr}/mcp");
        let provider = OidcProvider::start_code(&resource, UNUSED_REDIRECT, 600)
            .await
            .unwrap_or_else(|e| panic!("the authorization server cannot start: {e}"));
        let auth = Authorization::jwt(&resource, &provider.issuer)
            .expect("URLs")
            .scopes_supported(["tickets:read"]);
        let server = McpServer::builder()
            .tool(Whoami.into_tool())
            .build()
            .expect("declared right");
        let options = HttpOptions::new().authorization(auth);
        let server = server.bind_http(addr, options).await.expect("serves");
        let dir = std::env::temp_dir().join(format!("mcp-oauth-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        Self {
            provider,
            server,
            dir,
        }
    }

    /// Starts the program with `args` after the server's URL.
    fn run(&self, args: &[&str]) -> Program {
        let mut all = vec![self.server.url().to_owned()];
        all.extend(args.iter().map(|a| (*a).to_owned()));
        let mut child = Command::new(std::env::current_exe().expect("the test binary"))
            .args(["child_runs_the_example_program", "--exact", "--nocapture"])
            .env(ARGS_VARIABLE, all.join(&SEPARATOR.to_string()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the child starts");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        Program {
            child,
            stdout,
            printed: String::new(),
        }
    }
}

/// A running program and what it printed so far.
struct Program {
    child: Child,
    stdout: BufReader<ChildStdout>,
    printed: String,
}

impl Program {
    /// The authorization URL, once printed; `None` if the program ended without one.
    async fn authorization_url(&mut self) -> Option<String> {
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line);
            let n = tokio::time::timeout(Duration::from_secs(60), read)
                .await
                .expect("the program prints within a minute")
                .expect("reads stdout");
            if n == 0 {
                return None;
            }
            self.printed.push_str(&line);
            if let Some(url) = line.trim().strip_prefix(PROMPT) {
                return Some(url.to_owned());
            }
        }
    }

    /// Waits for the end: whether it succeeded, and all it printed (stdout, then stderr).
    async fn finish(mut self) -> (bool, String) {
        let mut rest = String::new();
        let _ = self.stdout.read_to_string(&mut rest).await;
        self.printed.push_str(&rest);
        let mut stderr = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = err.read_to_string(&mut stderr).await;
        }
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .expect("the program ends within a minute")
            .expect("waits");
        (status.success(), format!("{}{stderr}", self.printed))
    }
}

/// One query parameter of `url`.
fn param(url: &str, name: &str) -> Option<String> {
    let url = Url::parse(url).ok()?;
    (url.query_pairs())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The user's browser: through the provider's pages to the program's redirect URI (named in
/// the authorization URL); the redirect URL the provider sent it to.
async fn sign_in(authorization_url: &str) -> String {
    let redirect_uri = param(authorization_url, "redirect_uri").expect("a redirect URI");
    user_agent::follow(authorization_url, &redirect_uri)
        .await
        .unwrap_or_else(|e| panic!("the user's step failed: {e}"))
}

/// Delivers `url` to the program's listener, as the browser would: the status and the page.
async fn deliver(url: &str) -> (u16, String) {
    let response = reqwest::get(url).await.expect("the listener answers");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// The access and refresh tokens in the file at `path`.
async fn saved_tokens(path: &Path) -> Vec<String> {
    let stored = (FileStore::new(path).load().await)
        .expect("loads")
        .expect("a token is stored");
    let json = serde_json::to_value(&stored).expect("serializes");
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| json["token_response"][k].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z4_the_cli_authorizes_in_the_browser_then_reuses_its_saved_token() {
    let fixture = Fixture::start("reuse").await;
    let store = fixture.dir.join("token.json");
    let store_arg = store.to_str().expect("a UTF-8 path");
    let mut first = fixture.run(&["whoami", "--store", store_arg, "--no-browser"]);
    let url =
        (first.authorization_url().await).expect("the first run prints the authorization URL");
    assert!(url.starts_with(&fixture.provider.issuer), "{url}");
    assert_eq!(
        param(&url, "code_challenge_method").as_deref(),
        Some("S256")
    );
    assert_eq!(
        param(&url, "resource").as_deref(),
        Some(fixture.server.url().as_str())
    );
    let redirect_uri = param(&url, "redirect_uri").expect("a redirect URI");
    let loopback = Url::parse(&redirect_uri).expect("a URL");
    assert_eq!(loopback.host_str(), Some("127.0.0.1"));
    assert_ne!(loopback.port(), Some(8765), "a port of its own");
    let client_id = param(&url, "client_id").unwrap_or_default();
    assert!(
        !client_id.is_empty() && client_id != "app",
        "registered: {client_id}"
    );

    // Another local program calling the listener with another state is turned away.
    let (status, _) = deliver(&format!("{redirect_uri}?code=forged&state=forged")).await;
    assert_eq!(status, 404);
    let back = sign_in(&url).await;
    let (status, page) = deliver(&back).await;
    assert_eq!((status, page.contains("Authorized")), (200, true), "{page}");
    let (ok, printed) = first.finish().await;
    assert!(ok, "{printed}");
    assert!(printed.contains("whoami: you are alice"), "{printed}");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&store)
            .expect("saved")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "readable by its owner only");
    }
    let tokens = saved_tokens(&store).await;
    assert!(!tokens.is_empty());
    let leftovers: Vec<_> = std::fs::read_dir(&fixture.dir)
        .expect("lists")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "nothing left beside the file: {leftovers:?}"
    );

    // A new process: the saved token, no authorization URL.
    let mut second = fixture.run(&["whoami", "--store", store_arg, "--no-browser"]);
    if let Some(url) = second.authorization_url().await {
        panic!("the second run asked the user again: {url}");
    }
    let (ok, printed_again) = second.finish().await;
    assert!(ok, "{printed_again}");
    assert!(
        printed_again.contains("whoami: you are alice"),
        "{printed_again}"
    );
    assert_eq!(
        saved_tokens(&store).await,
        tokens,
        "the same token, not a new one"
    );
    for token in &tokens {
        assert!(!printed.contains(token.as_str()) && !printed_again.contains(token.as_str()));
    }
    fixture.server.shutdown().await.expect("stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z4_the_cli_refuses_a_redirect_from_another_issuer() {
    let fixture = Fixture::start("mixup").await;
    let mut program = fixture.run(&["whoami", "--no-browser"]);
    let url = (program.authorization_url().await).expect("the authorization URL");
    let back = sign_in(&url).await;
    assert!(
        param(&back, "iss").is_some(),
        "the provider names itself: {back}"
    );
    // A mix-up (RFC 9207): the redirect says another authorization server issued the code.
    let mut forged = Url::parse(&back).expect("a URL");
    let pairs: Vec<(String, String)> = (forged.query_pairs())
        .map(|(k, v)| {
            let v = if k == "iss" {
                "http://127.0.0.1:1".into()
            } else {
                v
            };
            (k.into_owned(), v.into_owned())
        })
        .collect();
    forged.query_pairs_mut().clear().extend_pairs(pairs);
    let (status, _) = deliver(forged.as_str()).await;
    assert_eq!(
        status, 200,
        "the listener hands it over; the client checks it"
    );
    let (ok, printed) = program.finish().await;
    assert!(!ok, "{printed}");
    assert!(printed.contains("issuer mismatch"), "{printed}");
    assert!(!printed.contains("you are alice"), "{printed}");
    fixture.server.shutdown().await.expect("stops");
}

#[tokio::test]
async fn z4_a_token_file_others_can_read_is_refused_without_naming_the_token() {
    let dir = std::env::temp_dir().join(format!("mcp-oauth-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("token.json");
    let secret = "eyJhbGciOiJFUzI1NiJ9.secret-access-token-text.signature";
    let json = serde_json::json!({
        "client_id": "cli",
        "token_response": {"access_token": secret, "token_type": "Bearer"},
    });
    let stored = serde_json::from_value(json).expect("stored credentials");
    let store = FileStore::new(&path);
    store.save(stored).await.expect("saves");
    assert!(store.load().await.expect("loads").is_some());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let error = store.load().await.expect_err("others can read it");
        let text = error.to_string();
        assert!(text.contains("chmod 600"), "{text}");
        assert!(!text.contains("secret-access-token-text"), "{text}");
    }
    std::fs::write(&path, format!("{{\"client_id\": \"{secret}")).expect("writes");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    let error = store.load().await.expect_err("half a file");
    assert!(
        !error.to_string().contains("secret-access-token-text"),
        "{error}"
    );
    store.clear().await.expect("clears");
    assert!(store.load().await.expect("loads").is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
