//! [`Loopback`]: the user's step of the authorization-code flow for a command-line program
//! (RFC 8252's loopback redirect): it prints the authorization URL, opens a browser when
//! there is one, and waits on `127.0.0.1` for the authorization server to send the browser
//! back.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tool_runtime::BoxError;
use tool_runtime::mcp::oauth::Browser;
use tool_runtime::policy::BoxFuture;

/// The path of the redirect URI on the loopback listener.
const CALLBACK: &str = "/callback";

/// The most a browser's request head may take (the redirect's query included).
const MAX_HEAD: usize = 16 * 1024;

/// How long one connection may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// A listener on a free loopback port, the redirect URI `http://127.0.0.1:PORT/callback`.
///
/// Its [`Browser::authorize`] prints the authorization URL on standard output (and opens it
/// in a browser unless told not to, see [`Loopback::open_browser`]), then answers requests
/// until one comes to the callback path with the `state` of that URL: requests elsewhere, or
/// with another `state`, are answered with an error page and the wait goes on. The redirect
/// it returns is checked again by the OAuth client (its `state`, and its `iss` against the
/// authorization server's issuer, RFC 9207).
#[derive(Clone)]
pub struct Loopback {
    listener: Arc<TcpListener>,
    redirect_uri: String,
    open_browser: bool,
    wait: Duration,
}

impl Loopback {
    /// Listens on a free port of `127.0.0.1`.
    ///
    /// # Errors
    ///
    /// When no loopback port can be bound.
    pub async fn bind() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        Ok(Self {
            listener: Arc::new(listener),
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK}"),
            open_browser: true,
            wait: Duration::from_secs(300),
        })
    }

    /// The redirect URI to register (dynamic registration does it with this one).
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Whether to open the authorization URL in a browser (default: yes, when one is there).
    #[must_use]
    pub fn open_browser(mut self, open: bool) -> Self {
        self.open_browser = open;
        self
    }

    /// How long to wait for the user (default 5 minutes).
    #[must_use]
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// The full URL of the first request to the callback path with `state`.
    async fn redirect(&self, state: &str) -> Result<String, BoxError> {
        loop {
            let (mut stream, _) = self.listener.accept().await?;
            let Ok(Ok(target)) =
                tokio::time::timeout(READ_TIMEOUT, request_target(&mut stream)).await
            else {
                continue;
            };
            let Ok(url) = Url::parse(&self.redirect_uri).and_then(|base| base.join(&target)) else {
                continue;
            };
            let ours = url.path() == CALLBACK && query(&url, "state").as_deref() == Some(state);
            if !ours {
                let _ = respond(
                    &mut stream,
                    "404 Not Found",
                    "Not the authorization you started.",
                )
                .await;
                continue;
            }
            let page = if query(&url, "error").is_some() {
                "The authorization was not granted. You can close this tab."
            } else {
                "Authorized. You can close this tab and go back to the terminal."
            };
            let _ = respond(&mut stream, "200 OK", page).await;
            return Ok(url.to_string());
        }
    }
}

impl Browser for Loopback {
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> BoxFuture<'a, Result<String, BoxError>> {
        Box::pin(async move {
            let state = Url::parse(authorization_url)
                .ok()
                .and_then(|url| query(&url, "state"))
                .ok_or("the authorization URL has no state")?;
            println!("Open this URL to authorize: {authorization_url}");
            if self.open_browser {
                open_in_browser(authorization_url);
            }
            tokio::time::timeout(self.wait, self.redirect(&state))
                .await
                .map_err(|_| format!("no authorization within {} s", self.wait.as_secs()))?
        })
    }
}

/// The value of the query parameter `name` of `url`.
fn query(url: &Url, name: &str) -> Option<String> {
    (url.query_pairs())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// Reads a request head (at most [`MAX_HEAD`] bytes) and returns its target
/// (`/callback?code=…`).
async fn request_target(stream: &mut TcpStream) -> Result<String, BoxError> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buffer).await?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return Err("no complete request head".into());
        }
        head.extend_from_slice(&buffer[..n]);
    }
    let line = head.split(|b| *b == b'\r').next().unwrap_or_default();
    let line = std::str::from_utf8(line)?;
    match line.split(' ').collect::<Vec<_>>()[..] {
        ["GET", target, _] if target.starts_with('/') => Ok(target.to_owned()),
        _ => Err("not a GET request".into()),
    }
}

/// Answers with a small page and closes the connection.
async fn respond(stream: &mut TcpStream, status: &str, text: &str) -> std::io::Result<()> {
    let body = format!("<!doctype html><title>Authorization</title><p>{text}</p>\n");
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\n\
         content-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// Opens `url` with the desktop's opener (`open` on macOS, `xdg-open` under a Linux desktop),
/// when there is one; without one the printed URL is the way.
fn open_in_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        "xdg-open"
    } else {
        return;
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = spawned {
        // Reaped aside: whether it found a browser changes nothing here.
        std::thread::spawn(move || child.wait());
    }
}
