//! A tiny Restate worker for the smoke test of the tests' Restate support
//! (`tests/restate_peer.rs`): the workflow `Echo`.
//!
//! Its `run` handler appends one line to the file named by `EFFECTS_FILE` inside a journaled
//! step (`ctx.run`), so the file is a ledger of how often the step really ran; then it makes an
//! awakeable, keeps its id in the workflow's state under `awakeable`, and returns the value the
//! awakeable is resolved with. The shared handler `awakeable` returns that id (empty until
//! `run` has made it).
//!
//! It serves HTTP/2 cleartext (restate-sdk's `HttpServer`) on `127.0.0.1:$PORT`.
//!
//! ```text
//! PORT=9080 EFFECTS_FILE=/tmp/effects cargo run -p tool-durable --example restate_echo
//! ```

use std::io::Write;
use std::net::SocketAddr;

use restate_sdk::prelude::*;

/// The workflow: one journaled step, then an awakeable.
struct Echo;

#[restate_sdk::workflow(client_visibility = "pub(crate)")]
impl Echo {
    /// Appends `run <key>` to the ledger once, then waits for the awakeable's value.
    #[handler]
    async fn run(&self, ctx: WorkflowContext<'_>) -> Result<String, HandlerError> {
        let line = format!("run {}", ctx.key());
        ctx.run(move || append_effect(line)).name("effect").await?;
        let (id, value) = ctx.awakeable::<String>();
        ctx.set("awakeable", id);
        Ok(value.await?)
    }

    /// The id of the awakeable `run` waits on, or "" before `run` has made it.
    #[handler]
    async fn awakeable(&self, ctx: SharedWorkflowContext<'_>) -> Result<String, HandlerError> {
        Ok(ctx.get::<String>("awakeable").await?.unwrap_or_default())
    }
}

/// The side effect: one line appended to `$EFFECTS_FILE`.
async fn append_effect(line: String) -> Result<(), HandlerError> {
    let path = std::env::var("EFFECTS_FILE")
        .map_err(|_| std::io::Error::other("EFFECTS_FILE is not set"))?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(file, "{line}")?;
    file.sync_all()?;
    Ok(())
}

#[tokio::main]
async fn main() {
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|port| port.parse().ok())
        .unwrap_or(9080);
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    HttpServer::new(Endpoint::builder().bind(Echo).build())
        .listen_and_serve(addr)
        .await;
}
