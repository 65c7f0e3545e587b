//! Paused runs kept in PostgreSQL (H8, H9), as the `paused_store` example's commands
//! (`examples/paused_store.rs`): the approvals flow of [`crate::approvals`], with the paused run
//! saved in a `jsonb` column instead of a file, and its pause consumed in the same database
//! when it is resumed.
//!
//! - [`PgStore`] holds a connection: [`PgStore::migrate`] creates its two tables,
//!   [`PgStore::save`] stores a paused run in `paused_runs.state` (`jsonb`),
//!   [`PgStore::load`] reads it back from there, and [`PgStore::pending`] lists the stored
//!   pauses not resumed yet. It is a [`PauseLedger`]: a resume consumes its pause id with an
//!   `INSERT … ON CONFLICT DO NOTHING` into `consumed_pauses`, which PostgreSQL makes atomic
//!   across processes, so a state resumed once is refused the second time
//!   ([`tool_runtime::agent::ResumeError::Replayed`]) and its approved calls never run twice (H9).
//! - `jsonb` keeps a JSON value's meaning, not its text: PostgreSQL reorders the keys of each
//!   object, respaces it and spells strings and numbers its own way. The seal covers the
//!   meaning, so a state read back from the column still resumes, and one whose meaning was
//!   changed in the database (an argument set with `jsonb_set`) is refused as altered (H8).
//! - [`cli`] is the whole program: `pause`, `resume PAUSE_ID approve|deny`, `list` and
//!   `stop`, against the database named by `DATABASE_URL`, or, when it is not set, against a
//!   server of the example's own ([`crate::local_postgres`]: a throwaway cluster in a
//!   temporary directory, started by the first command and removed by `stop`); with
//!   `PAUSED_STORE_STATE_KEY` set, the paused runs are sealed with HMAC-SHA256 under that key.
//!
//! The connection has no TLS ([`NoTls`]): the example talks to a server on the same machine.

use std::io::Write;
use std::sync::Arc;

use serde_json::Value;
use tokio_postgres::{Client, NoTls};
use tool_runtime::RunRequest;
use tool_runtime::{
    Agent, BoxError, ErrorKind, OfflineModel, PausedRun, RunError, RunOutput,
    agent::{BoxFuture, PauseLedger, ResumeOptions},
};

use crate::approvals::{Choice, REQUEST, admin_context, decide, refusal};
use crate::local_postgres::LocalServer;
use crate::maintenance::{LookupWindow, RestartLog, RestartService};

/// The environment variable that holds the PostgreSQL connection string, such as
/// `postgresql://postgres@127.0.0.1:5432/postgres`.
pub const DATABASE_VARIABLE: &str = "DATABASE_URL";

/// The environment variable whose value, when set, seals paused runs with HMAC-SHA256
/// ([`tool_runtime::AgentBuilder::state_key`]); every process that resumes them needs it.
pub const KEY_VARIABLE: &str = "PAUSED_STORE_STATE_KEY";

/// How to run the program.
pub const USAGE: &str = "usage: paused_store pause | paused_store resume PAUSE_ID approve|deny \
                         | paused_store list | paused_store stop (the database is DATABASE_URL, \
                         else a server of the example's own, which `stop` removes)";

/// The key of the advisory lock that serializes [`PgStore::migrate`] between processes: two
/// `CREATE TABLE IF NOT EXISTS` of one table racing can both try to create it.
const MIGRATION_LOCK: i64 = 0x7061_7573_6564; // "paused"

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The connection string is not text (not Unicode).
    #[error(
        "set {DATABASE_VARIABLE} to a PostgreSQL connection string, such as \
         postgresql://postgres@127.0.0.1:5432/postgres"
    )]
    NoDatabase,
    /// The server could not be reached, or refused the connection.
    #[error("cannot connect to PostgreSQL at {server} (from {DATABASE_VARIABLE})")]
    Connect {
        /// The server tried, as `user@host:port/database`: never the password.
        server: String,
        /// The client's error.
        #[source]
        source: tokio_postgres::Error,
    },
    /// A statement failed, or the server's answer was not of the expected type.
    #[error("PostgreSQL could not {action}")]
    Database {
        /// What the store was doing.
        action: &'static str,
        /// The server's or the client's error.
        #[source]
        source: tokio_postgres::Error,
    },
    /// The paused run could not be serialized (never, in practice: every key is a string).
    #[error("the paused run cannot be serialized")]
    Serialize(#[source] serde_json::Error),
    /// A paused run with this pause id is stored already: a pause id is unique (H9), so this
    /// paused run was saved before.
    #[error("pause `{pause_id}` is stored already")]
    Duplicate {
        /// The pause's id.
        pause_id: String,
    },
    /// No paused run with this pause id is stored.
    #[error("no paused run is stored under pause `{pause_id}`")]
    NotFound {
        /// The pause id asked for.
        pause_id: String,
    },
    /// The stored state is not a paused run (not of its shape).
    #[error("the state stored under pause `{pause_id}` is not a paused run")]
    Malformed {
        /// The pause id it is stored under.
        pause_id: String,
        /// What the reader found wrong.
        #[source]
        source: serde_json::Error,
    },
    /// The stored state names another pause than the row it is stored in: it was moved or
    /// edited in the database.
    #[error("the state stored under pause `{pause_id}` is the state of pause `{named}`")]
    Mismatch {
        /// The pause id it is stored under.
        pause_id: String,
        /// The pause id the state names.
        named: String,
    },
}

/// A stored pause not resumed yet, as [`PgStore::pending`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPause {
    /// The pause's id (H9).
    pub pause_id: String,
    /// The id of the run it paused (H9): the same in every pause of one run.
    pub run_id: String,
    /// When it was saved, in UTC (`YYYY-MM-DDTHH:MM:SSZ`).
    pub saved_at: String,
}

/// Paused runs and consumed pauses in PostgreSQL, over one connection.
///
/// It is the [`PauseLedger`] of the resumes it loads for: share it (`Arc<PgStore>`) and give
/// it to [`ResumeOptions::shared_ledger`] (or to [`tool_runtime::AgentBuilder::ledger`]).
pub struct PgStore {
    client: Client,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("closed", &self.client.is_closed())
            .finish()
    }
}

impl PgStore {
    /// A store over `client`, whose connection its owner drives.
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// Connects to the database at `url` (a connection string: `postgresql://…` or
    /// `host=… user=…`), without TLS, and drives the connection on a task of the current
    /// Tokio runtime until the store is dropped.
    ///
    /// The connection task's own error is not reported: once the connection is lost, the
    /// store's next statement fails with it (`connection closed`).
    ///
    /// # Errors
    ///
    /// [`StoreError::Connect`] when the server cannot be reached or refuses the connection.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let (client, connection) = tokio_postgres::connect(url, NoTls)
            .await
            .map_err(|source| StoreError::Connect {
                server: server_of(url),
                source,
            })?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(Self::new(client))
    }

    /// The client, for statements of the application's own.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Creates the store's tables if they are missing: `paused_runs` (each paused run's state
    /// as `jsonb`, by pause id, with its run id) and `consumed_pauses` (the pause ids resumed,
    /// H9). Processes that migrate at once wait for each other (an advisory lock).
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] when a statement fails.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        // One simple query of several statements runs as one transaction, which holds the
        // advisory lock until it ends.
        let migration = format!(
            "SELECT pg_advisory_xact_lock({MIGRATION_LOCK});
             CREATE TABLE IF NOT EXISTS paused_runs (
                 pause_id text PRIMARY KEY,
                 run_id text NOT NULL,
                 state jsonb NOT NULL,
                 created_at timestamptz NOT NULL DEFAULT now()
             );
             CREATE INDEX IF NOT EXISTS paused_runs_run_id ON paused_runs (run_id);
             CREATE TABLE IF NOT EXISTS consumed_pauses (
                 pause_id text PRIMARY KEY,
                 run_id text NOT NULL,
                 consumed_at timestamptz NOT NULL DEFAULT now()
             );"
        );
        self.client
            .batch_execute(&migration)
            .await
            .map_err(database("create the store's tables"))
    }

    /// Saves `paused` under its pause id: its JSON (serde's, as [`PausedRun::to_json`] writes
    /// it) in the `jsonb` column `state`, which keeps its meaning, not its text (H8).
    ///
    /// # Errors
    ///
    /// [`StoreError::Duplicate`] when its pause id is stored already, [`StoreError::Database`]
    /// when the insert fails.
    pub async fn save(&self, paused: &PausedRun) -> Result<(), StoreError> {
        let state = serde_json::to_value(paused).map_err(StoreError::Serialize)?;
        let inserted = self
            .client
            .execute(
                "INSERT INTO paused_runs (pause_id, run_id, state) VALUES ($1, $2, $3)
                 ON CONFLICT (pause_id) DO NOTHING",
                &[&paused.pause_id(), &paused.run_id(), &state],
            )
            .await
            .map_err(database("save the paused run"))?;
        if inserted == 0 {
            return Err(StoreError::Duplicate {
                pause_id: paused.pause_id().to_owned(),
            });
        }
        Ok(())
    }

    /// Loads the paused run stored under `pause_id`, from the `jsonb` column as PostgreSQL
    /// gives it back (its keys reordered, its text respaced, H8). Whether it is intact is
    /// checked when it is resumed ([`Agent::verify`]); whether it was resumed before, by the
    /// ledger at that resume (H9).
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`] when no paused run is stored under `pause_id`,
    /// [`StoreError::Malformed`] when the stored state is not a paused run,
    /// [`StoreError::Mismatch`] when it names another pause, [`StoreError::Database`] when
    /// the query fails.
    pub async fn load(&self, pause_id: &str) -> Result<PausedRun, StoreError> {
        let row = self
            .client
            .query_opt(
                "SELECT state FROM paused_runs WHERE pause_id = $1",
                &[&pause_id],
            )
            .await
            .map_err(database("load the paused run"))?
            .ok_or_else(|| StoreError::NotFound {
                pause_id: pause_id.to_owned(),
            })?;
        let state: Value = row
            .try_get("state")
            .map_err(database("read the stored state"))?;
        let paused: PausedRun =
            serde_json::from_value(state).map_err(|source| StoreError::Malformed {
                pause_id: pause_id.to_owned(),
                source,
            })?;
        if paused.pause_id() != pause_id {
            return Err(StoreError::Mismatch {
                pause_id: pause_id.to_owned(),
                named: paused.pause_id().to_owned(),
            });
        }
        Ok(paused)
    }

    /// The stored pauses not consumed yet, oldest first.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] when the query fails.
    pub async fn pending(&self) -> Result<Vec<StoredPause>, StoreError> {
        let rows = self
            .client
            .query(
                "SELECT p.pause_id, p.run_id,
                        to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')
                            AS saved_at
                 FROM paused_runs p
                 WHERE NOT EXISTS (SELECT 1 FROM consumed_pauses c WHERE c.pause_id = p.pause_id)
                 ORDER BY p.created_at, p.pause_id",
                &[],
            )
            .await
            .map_err(database("list the stored pauses"))?;
        rows.iter()
            .map(|row| {
                Ok(StoredPause {
                    pause_id: row.try_get("pause_id")?,
                    run_id: row.try_get("run_id")?,
                    saved_at: row.try_get("saved_at")?,
                })
            })
            .collect::<Result<_, tokio_postgres::Error>>()
            .map_err(database("read the stored pauses"))
    }
}

/// Consumes a pause with one `INSERT … ON CONFLICT (pause_id) DO NOTHING` into
/// `consumed_pauses`: of two resumes racing, in any processes, PostgreSQL's unique key lets
/// exactly one insert the row, and only it sees one row inserted (H9).
impl PauseLedger for PgStore {
    fn consume<'a>(
        &'a self,
        run_id: &'a str,
        pause_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, BoxError>> {
        Box::pin(async move {
            let inserted = self
                .client
                .execute(
                    "INSERT INTO consumed_pauses (pause_id, run_id) VALUES ($1, $2)
                     ON CONFLICT (pause_id) DO NOTHING",
                    &[&pause_id, &run_id],
                )
                .await
                // The runtime keeps the text of a ledger's error (`ResumeError::Ledger`), not
                // the error: keep its causes in the text.
                .map_err(|source| with_causes(&database("record the resumed pause")(source)))?;
            Ok(inserted == 1)
        })
    }
}

/// `error`'s text followed by its causes', each after a colon.
fn with_causes(error: &dyn std::error::Error) -> BoxError {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.into()
}

/// The [`StoreError::Database`] of a statement that failed while the store did `action`.
fn database(action: &'static str) -> impl Fn(tokio_postgres::Error) -> StoreError {
    move |source| StoreError::Database { action, source }
}

/// The agent of the commands: the approvals example's (the maintenance tools on the offline
/// model), sealing paused runs under `key` when there is one.
///
/// # Errors
///
/// Fails when a tool is declared wrong (never, for these).
pub fn agent(key: Option<&[u8]>) -> Result<Agent, BoxError> {
    let model = OfflineModel::new().call_tools(["lookup-window", "restart-service"]);
    let mut builder = Agent::builder(model)
        .instructions("You help operators plan maintenance.")
        .tool(LookupWindow)
        .tool(RestartService);
    if let Some(key) = key {
        builder = builder.state_key(key);
    }
    Ok(builder.build()?)
}

/// `pause`: runs the admin's request ([`REQUEST`]) to its pause, saves the paused run in
/// `store`, and prints its pause id and pending calls. Returns the paused run.
///
/// # Errors
///
/// Fails when the run does not pause, or the store fails.
pub async fn pause(
    store: &PgStore,
    agent: &Agent,
    out: &mut dyn Write,
) -> Result<PausedRun, BoxError> {
    let ctx = admin_context();
    writeln!(out, "ada (admin) asks: {REQUEST}")?;
    let paused = match agent.run(&ctx, REQUEST).await {
        Ok(answer) => return Err(format!("the run did not pause: {}", answer.text).into()),
        Err(error) if error.kind() == ErrorKind::Paused => error.into_paused()?,
        Err(error) => return Err(error.into()),
    };
    store.save(&paused).await?;
    writeln!(
        out,
        "Saved pause {} of run {} in PostgreSQL: {} call(s) wait for a decision.",
        paused.pause_id(),
        paused.run_id(),
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
    writeln!(
        out,
        "Restarts so far: {}.",
        restarts(ctx.get::<RestartLog>())
    )?;
    writeln!(
        out,
        "Resume it with: cargo run --example paused_store -- resume {} approve (or deny)",
        paused.pause_id()
    )?;
    Ok(paused)
}

/// `resume PAUSE_ID approve|deny`: loads the paused run stored under `pause_id`, checks it,
/// and resumes it with `choice` for every pending call and `store` as the ledger (H9); prints
/// what the model got back and its answer, then the restarts this process made (`none` when
/// the resume was refused: nothing ran).
///
/// # Errors
///
/// Fails when the store fails, the stored state is refused (altered, or sealed under another
/// key: [`tool_runtime::agent::ResumeError`] with the reason), the pause was resumed before
/// ([`tool_runtime::agent::ResumeError::Replayed`]), or the run fails.
pub async fn resume(
    store: &Arc<PgStore>,
    agent: &Agent,
    pause_id: &str,
    choice: Choice,
    out: &mut dyn Write,
) -> Result<RunOutput, BoxError> {
    let paused = store.load(pause_id).await?;
    agent.verify(&paused).map_err(|e| {
        format!(
            "the paused run stored under pause `{pause_id}` cannot be resumed: {}",
            refusal(&e, KEY_VARIABLE)
        )
    })?;
    writeln!(
        out,
        "Loaded pause {} of run {} from PostgreSQL: intact, {} pending call(s).",
        paused.pause_id(),
        paused.run_id(),
        paused.pending().len()
    )?;
    let decisions = decide(&paused, choice, out)?;
    let ctx = admin_context();
    let ledger: Arc<dyn PauseLedger> = Arc::clone(store) as Arc<dyn PauseLedger>;
    let resumed = agent
        .execute(
            &ctx,
            RunRequest::resume(paused, decisions)
                .resume_options(ResumeOptions::new().shared_ledger(ledger)),
        )
        .await;
    if let Ok(answer) = &resumed {
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
    }
    writeln!(
        out,
        "Restarts in this process: {}.",
        restarts(ctx.get::<RestartLog>())
    )?;
    resumed.map_err(|e: RunError| e.into())
}

/// `list`: prints the stored pauses not resumed yet.
///
/// # Errors
///
/// Fails when the store fails.
pub async fn list(store: &PgStore, out: &mut dyn Write) -> Result<(), BoxError> {
    let pending = store.pending().await?;
    writeln!(out, "{} pause(s) wait for a decision.", pending.len())?;
    for pause in pending {
        writeln!(
            out,
            "  pause {} of run {}, saved {}",
            pause.pause_id, pause.run_id, pause.saved_at
        )?;
    }
    Ok(())
}

/// The services restarted in this process, as the commands print them (`none` when none).
fn restarts(log: Option<&RestartLog>) -> String {
    let entries = log.map(RestartLog::entries).unwrap_or_default();
    if entries.is_empty() {
        "none".to_owned()
    } else {
        entries.join(", ")
    }
}

/// A command of the program.
enum Command {
    /// `pause`.
    Pause,
    /// `resume PAUSE_ID approve|deny`.
    Resume(String, Choice),
    /// `list`.
    List,
    /// `stop`: stops the example's own server and removes it.
    Stop,
}

/// The program: `args` without the program's name; the database is `DATABASE_URL`, the key
/// `PAUSED_STORE_STATE_KEY` when it is set. Returns the exit code: 0 on success, 1 when a
/// command failed (its reason on `err`: a replayed pause says it was resumed before), 2 for a
/// usage error.
pub fn cli(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let command = match args {
        [command] if command == "pause" => Some(Command::Pause),
        [command] if command == "list" => Some(Command::List),
        [command] if command == "stop" => Some(Command::Stop),
        [command, pause_id, choice] if command == "resume" => match choice.as_str() {
            "approve" => Some(Command::Resume(pause_id.clone(), Choice::Approve)),
            "deny" => Some(Command::Resume(pause_id.clone(), Choice::Deny)),
            _ => None,
        },
        _ => None,
    };
    let Some(command) = command else {
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
    let result = runtime.block_on(run(command, out, err));
    match result {
        Ok(()) => 0,
        Err(error) => {
            // A run's error already writes its causes: each is shown once.
            let mut shown = error.to_string();
            let _ = writeln!(err, "error: {shown}");
            let mut source = error.source();
            while let Some(cause) = source {
                let text = cause.to_string();
                if !shown.contains(&text) {
                    let _ = writeln!(err, "  caused by: {text}");
                    shown.push_str(&text);
                }
                source = cause.source();
            }
            1
        }
    }
}

/// Runs `command` against the database of `DATABASE_URL` (else the example's own server,
/// started if need be, which `err` is told of), migrated first.
async fn run(command: Command, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), BoxError> {
    if let Command::Stop = command {
        let dir = LocalServer::directory();
        if LocalServer::stop()? {
            writeln!(
                out,
                "Stopped this example's PostgreSQL and removed {}.",
                dir.display()
            )?;
        } else {
            writeln!(
                out,
                "This example's PostgreSQL is not there ({}).",
                dir.display()
            )?;
        }
        return Ok(());
    }
    let url = match std::env::var(DATABASE_VARIABLE) {
        Ok(url) => url,
        Err(std::env::VarError::NotUnicode(_)) => return Err(StoreError::NoDatabase.into()),
        Err(std::env::VarError::NotPresent) => {
            let (server, made) = LocalServer::start()?;
            let url = server.url()?;
            let verb = if made { "started" } else { "using" };
            writeln!(
                err,
                "{DATABASE_VARIABLE} is not set: {verb} this example's own PostgreSQL at {url} \
                 (in {}; `cargo run --example paused_store -- stop` removes it)",
                server.dir().display()
            )?;
            url
        }
    };
    let key = std::env::var(KEY_VARIABLE).ok();
    let store = Arc::new(PgStore::connect(&url).await?);
    store.migrate().await?;
    let agent = agent(key.as_deref().map(str::as_bytes))?;
    match command {
        Command::Pause => pause(&store, &agent, out).await.map(drop),
        Command::Resume(pause_id, choice) => resume(&store, &agent, &pause_id, choice, out)
            .await
            .map(drop),
        Command::List => list(&store, out).await,
        Command::Stop => Ok(()),
    }
}

/// The server a connection string names, as `user@host:port/database`, for an error message:
/// the password is left out. A string that does not parse is shown as such.
fn server_of(url: &str) -> String {
    let Ok(config) = url.parse::<tokio_postgres::Config>() else {
        return "a connection string that does not parse".to_owned();
    };
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("(the login user)");
    let database = config.get_dbname().unwrap_or(user);
    format!("{user}@{host}:{port}/{database}")
}

#[cfg(test)]
mod tests {
    use super::server_of;

    #[test]
    fn a_connection_error_names_the_server_and_never_the_password() {
        let shown = server_of("postgresql://ada:s3cret@db.internal:6543/ops");
        assert_eq!(shown, "ada@db.internal:6543/ops");
        assert!(!server_of("host=127.0.0.1 user=postgres password=s3cret").contains("s3cret"));
        assert_eq!(
            server_of("postgresql://postgres@127.0.0.1/postgres"),
            "postgres@127.0.0.1:5432/postgres"
        );
    }
}
