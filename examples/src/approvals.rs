//! Human approval on the maintenance domain, as two commands run by two processes
//! (`examples/approvals.rs`): an admin asks to restart `svc-42`; the run pauses because a
//! restart of a production service needs a yes (H1, H2), and the paused run is written to a
//! file (H3); later, another process reads it and resumes it with the decision (H4).
//!
//! - `pause STATE.json`: runs the request, prints the calls that ran and the pending call
//!   with the predicate's reason, writes the paused run to `STATE.json`.
//! - `resume STATE.json approve|deny`: reads the paused run, checks it (an edited file is
//!   refused with the reason), resumes it with the decision, prints what the model got back
//!   and its final answer. The pause is recorded beside the file ([`FileLedger`],
//!   `STATE.json.resumed/`): the same file resumed again is refused, saying so, and its
//!   approved restart does not run twice (H9).
//!
//! The model is the offline one (it calls `lookup-window` and `restart-service` with
//! arguments from their schemas, then sums up what came back), so both commands run with no
//! provider. With `APPROVALS_STATE_KEY` set, the paused run is sealed with HMAC-SHA256 under
//! that key, and only a process with the same key resumes it.
//!
//! [`cli`] is the whole program, so that tests run it in child processes as the example
//! binary would.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tool_runtime::{
    Agent, BoxError, Context, Decisions, ErrorKind, OfflineModel, PausedRun, RunRequest,
    agent::{BoxFuture, PauseLedger, PendingKind, ResumeError, ResumeOptions},
};

use crate::maintenance::{LookupWindow, RestartLog, RestartService, Role, Windows, principal};

/// The request of the admin.
pub const REQUEST: &str = "Restart svc-42, and tell me when its next maintenance window is.";

/// The environment variable whose value, when set, seals paused runs with HMAC-SHA256.
pub const KEY_VARIABLE: &str = "APPROVALS_STATE_KEY";

/// How to run the program.
pub const USAGE: &str =
    "usage: approvals pause STATE.json | approvals resume STATE.json approve|deny";

/// Why a paused run was refused, in words that name the environment variable of the key
/// (`variable`) where the key is the cause: a state sealed with a key that the process lacks,
/// or sealed with another key than the one the variable holds.
pub fn refusal(error: &ResumeError, variable: &str) -> String {
    match error {
        ResumeError::KeyRequired => format!(
            "it is sealed with a key, and {variable} is not set: set {variable} to the key it \
             was sealed with"
        ),
        ResumeError::WrongKey => format!(
            "the state was sealed with another key than the one in {variable}: set {variable} \
             to the key it was sealed with (its content was not found altered)"
        ),
        other => other.to_string(),
    }
}

/// The record of the pauses resumed from state files, beside each file (`STATE.json.resumed/`,
/// one empty file per pause id): a second resume of one file is refused as a replay
/// ([`ResumeError::Replayed`]) instead of running its approved calls again (H9). Creating a
/// file that must not exist is atomic, so of two resumes racing exactly one goes on.
#[derive(Debug, Clone)]
pub struct FileLedger {
    dir: PathBuf,
}

impl FileLedger {
    /// The ledger of the state file at `state`: the directory `STATE.resumed` beside it.
    pub fn beside(state: &Path) -> Self {
        let mut dir = state.as_os_str().to_owned();
        dir.push(".resumed");
        Self {
            dir: PathBuf::from(dir),
        }
    }

    /// The ledger's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl PauseLedger for FileLedger {
    fn consume<'a>(
        &'a self,
        _run_id: &'a str,
        pause_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, BoxError>> {
        let consumed = (|| {
            // Pause ids are the runtime's (`pause_` and hex), never a path; refuse any other.
            if pause_id.is_empty()
                || !pause_id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(BoxError::from(format!(
                    "pause id {pause_id:?} is not a file name"
                )));
            }
            std::fs::create_dir_all(&self.dir)?;
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(self.dir.join(pause_id))
            {
                Ok(_) => Ok(true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
                Err(e) => Err(e.into()),
            }
        })();
        Box::pin(std::future::ready(consumed))
    }
}

/// What the person who decides says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Yes: the restart runs.
    Approve,
    /// No: the model is told `the call was not approved`.
    Deny,
}

/// The agent of both commands: the maintenance tools on the offline model. Each process
/// builds its own; resuming needs only the same tools.
///
/// # Errors
///
/// Fails when a tool is declared wrong (never, for these).
pub fn agent() -> Result<Agent, BoxError> {
    let model = OfflineModel::new().call_tools(["lookup-window", "restart-service"]);
    let mut builder = Agent::builder(model)
        .instructions("You help operators plan maintenance.")
        .tool(LookupWindow)
        .tool(RestartService);
    if let Ok(key) = std::env::var(KEY_VARIABLE) {
        builder = builder.state_key(key);
    }
    Ok(builder.build()?)
}

/// The context of the admin who asks, in this process: the principal, the window service and
/// a log of the restarts made here.
pub fn admin_context() -> Context {
    Context::new()
        .with(principal("ada", Role::Admin))
        .with(Windows::demo())
        .with(RestartLog::default())
}

/// `pause STATE.json`: runs the admin's request to its pause, prints it, and writes the paused
/// run to `path`.
///
/// # Errors
///
/// Fails when the run does not pause, or the file cannot be written.
pub async fn pause(path: &Path, out: &mut dyn Write) -> Result<(), BoxError> {
    let agent = agent()?;
    let ctx = admin_context();
    writeln!(out, "ada (admin) asks: {REQUEST}")?;
    let paused = match agent.run(&ctx, REQUEST).await {
        Ok(answer) => return Err(format!("the run did not pause: {}", answer.text).into()),
        Err(error) if error.kind() == ErrorKind::Paused => {
            for call in error.calls().iter().filter(|c| !c.kind().is_pending()) {
                writeln!(
                    out,
                    "  ran {} {}: [{}] {}",
                    call.id,
                    call.name,
                    call.kind(),
                    call.text()
                )?;
            }
            error.into_paused()?
        }
        Err(error) => return Err(error.into()),
    };
    writeln!(
        out,
        "The run paused: {} call(s) wait for a decision.",
        paused.pending().len()
    )?;
    for pending in paused.pending() {
        writeln!(
            out,
            "  pending {} {} {}",
            pending.id(),
            pending.tool(),
            pending.arguments()
        )?;
        if let Some(reason) = pending.reason() {
            writeln!(out, "    why: {reason}")?;
        }
    }
    writeln!(out, "Restarts so far: {}.", restarts(&ctx))?;
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, paused.to_json()?)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    writeln!(out, "Wrote the paused run to {}.", path.display())?;
    writeln!(
        out,
        "Resume it with: cargo run --example approvals -- resume {} approve (or deny)",
        path.display()
    )?;
    Ok(())
}

/// `resume STATE.json approve|deny`: reads the paused run at `path`, checks it, resumes it
/// with `choice` for every pending call, and prints what the model got back and its answer.
///
/// # Errors
///
/// Fails when the file cannot be read, is not a paused run, was altered or does not fit the
/// agent's tools ([`tool_runtime::agent::ResumeError`], with the reason), was resumed before (its
/// pause is in the [`FileLedger`] beside the file), or the run fails.
pub async fn resume(path: &Path, choice: Choice, out: &mut dyn Write) -> Result<(), BoxError> {
    let agent = agent()?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let refused = |e: ResumeError| {
        format!(
            "the paused run in {} cannot be resumed: {}",
            path.display(),
            refusal(&e, KEY_VARIABLE)
        )
    };
    let paused = PausedRun::from_json(&text).map_err(refused)?;
    agent.verify(&paused).map_err(refused)?;
    writeln!(
        out,
        "Read the paused run from {}: intact, {} pending call(s).",
        path.display(),
        paused.pending().len()
    )?;
    let decisions = decide(&paused, choice, out)?;
    let ctx = admin_context();
    // The file resumes once: a second resume is refused before anything runs (H9).
    let ledger = FileLedger::beside(path);
    let request = RunRequest::resume(paused, decisions)
        .resume_options(ResumeOptions::new().shared_ledger(Arc::new(ledger.clone())));
    let answer = match agent.execute(&ctx, request).await {
        Ok(answer) => answer,
        Err(error) => match error.resume_error() {
            Some(replayed @ ResumeError::Replayed { .. }) => {
                return Err(format!(
                    "{replayed}, and nothing ran (the resumes of {} are recorded in {}): pause \
                     the request again for a new decision",
                    path.display(),
                    ledger.dir().display()
                )
                .into());
            }
            _ => return Err(error.into()),
        },
    };
    for call in &answer.calls {
        writeln!(
            out,
            "  {} gets back [{}]: {}",
            call.id,
            call.kind(),
            call.text()
        )?;
    }
    writeln!(
        out,
        "The model answers: {}",
        answer.text.replace('\n', "\n  ")
    )?;
    writeln!(out, "Restarts in this process: {}.", restarts(&ctx))?;
    Ok(())
}

/// The decisions `choice` makes for `paused`'s pending calls (approve or deny the calls that
/// await approval, deny any other), each written to `out`.
///
/// # Errors
///
/// Writing to `out` failed.
pub fn decide(
    paused: &PausedRun,
    choice: Choice,
    out: &mut dyn Write,
) -> std::io::Result<Decisions> {
    let mut decisions = Decisions::new();
    for pending in paused.pending() {
        let verb = match (choice, pending.kind()) {
            (Choice::Approve, PendingKind::Approval) => {
                decisions = decisions.approve(pending.id());
                "approve"
            }
            _ => {
                decisions = decisions.deny(pending.id());
                "deny"
            }
        };
        writeln!(
            out,
            "  {verb} {} {} {}",
            pending.id(),
            pending.tool(),
            pending.arguments()
        )?;
    }
    Ok(decisions)
}

fn restarts(ctx: &Context) -> String {
    let entries = ctx
        .get::<RestartLog>()
        .map(RestartLog::entries)
        .unwrap_or_default();
    if entries.is_empty() {
        "none".to_owned()
    } else {
        entries.join(", ")
    }
}

/// The program: `args` without the program's name. Returns the exit code: 0 on success, 1
/// when a command failed (its reason on `err`), 2 for a usage error.
pub fn cli(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let command = match args {
        [command, path] if command == "pause" => Some((Path::new(path), None)),
        [command, path, choice] if command == "resume" => match choice.as_str() {
            "approve" => Some((Path::new(path), Some(Choice::Approve))),
            "deny" => Some((Path::new(path), Some(Choice::Deny))),
            _ => None,
        },
        _ => None,
    };
    let Some((path, choice)) = command else {
        let _ = writeln!(err, "{USAGE}");
        return 2;
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = writeln!(err, "error: cannot start the runtime: {e}");
            return 1;
        }
    };
    let result = runtime.block_on(async {
        match choice {
            None => pause(path, out).await,
            Some(choice) => resume(path, choice, out).await,
        }
    });
    match result {
        Ok(()) => 0,
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            let mut source = error.source();
            while let Some(cause) = source {
                let _ = writeln!(err, "  caused by: {cause}");
                source = cause.source();
            }
            1
        }
    }
}
