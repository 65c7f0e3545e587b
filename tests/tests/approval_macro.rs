//! `#[tool(approval = …)]` (H1): the generated tool asks its predicate, async or plain, with
//! the validated input (defaults filled in), after validation; `approval = always` asks for
//! every valid call; the handler runs only once approved.

use std::sync::Mutex;

use tool_runtime::approval::Approval;
use tool_runtime::{BoxError, Context, IntoTool, Limits, OutcomeKind, Schema, tool};

/// Which service to restart.
#[derive(Schema)]
pub struct RestartInput {
    /// The service.
    #[schema(pattern = "^[a-z0-9-]+$")]
    pub service_id: String,
    /// Seconds to wait before restarting.
    #[schema(default = 30)]
    pub grace: u32,
}

/// What the predicate saw, and which restarts ran.
static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn log(line: String) {
    SEEN.lock().expect("not poisoned").push(line);
}

/// Restart a service now.
#[tool(name = "h1-restart", approval = restart_needs_ok)]
pub async fn restart(_ctx: Context, input: RestartInput) -> Result<String, BoxError> {
    log(format!("ran {}", input.service_id));
    Ok(format!("{} restarted", input.service_id))
}

async fn restart_needs_ok(_ctx: &Context, input: &RestartInput) -> Result<Approval, BoxError> {
    log(format!("asked {} {}", input.service_id, input.grace));
    Ok(if input.service_id.starts_with("prod-") {
        Approval::required(format!("{} serves production traffic", input.service_id))
    } else {
        Approval::NotRequired
    })
}

/// Wipe a disk.
#[tool(name = "h1-wipe", approval = always)]
pub fn wipe(#[schema(describe = "The disk.", min_len = 1)] disk: String) -> String {
    log(format!("wiped {disk}"));
    disk
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(f)
}

#[test]
fn h1_generated_tools_ask_their_predicate_with_validated_input() {
    let restart = H1Restart.into_tool();
    let wipe = H1Wipe.into_tool();
    let ctx = Context::new();
    let out = block_on(restart.invoke(&ctx, br#"{"service_id": "prod-db"}"#));
    assert_eq!(out.kind(), OutcomeKind::AwaitingApproval);
    assert_eq!(
        out.approval_reason(),
        Some("prod-db serves production traffic")
    );
    let out = block_on(restart.invoke(&ctx, br#"{"service_id": "dev-db", "grace": 5}"#));
    assert_eq!(
        (out.kind(), out.text()),
        (OutcomeKind::Success, "dev-db restarted")
    );
    // Invalid: answered with violations, never asked.
    let out = block_on(restart.invoke(&ctx, br#"{"service_id": "PROD DB"}"#));
    assert_eq!(out.kind(), OutcomeKind::InvalidArguments);
    let out = block_on(wipe.invoke(&ctx, br#"{"disk": "sda"}"#));
    assert_eq!(out.kind(), OutcomeKind::AwaitingApproval);
    let out = block_on(wipe.invoke(&ctx, br#"{"disk": ""}"#));
    assert_eq!(out.kind(), OutcomeKind::InvalidArguments);
    // Approved: runs, without asking again.
    let limits = Limits::default();
    let out = block_on(restart.invoke_approved(&ctx, br#"{"service_id": "prod-db"}"#, &limits));
    assert_eq!(out.text(), "prod-db restarted");
    let out = block_on(wipe.invoke_approved(&ctx, br#"{"disk": "sda"}"#, &limits));
    assert_eq!(out.text(), "sda");
    assert_eq!(
        *SEEN.lock().expect("not poisoned"),
        [
            "asked prod-db 30",
            "asked dev-db 5",
            "ran dev-db",
            "ran prod-db",
            "wiped sda"
        ]
    );
}
