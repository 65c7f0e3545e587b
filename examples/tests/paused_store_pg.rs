//! Paused runs kept in a real PostgreSQL (the `paused_store` example, H8 and H9). Each test
//! starts a server of its own (`postgres_server`: a fresh cluster on a free loopback port,
//! stopped and removed when the test ends).
//!
//! - H9, across processes: a run paused by one process is resumed by another, once; a third
//!   resume of the same pause is refused as a replay and its approved restart does not run
//!   again; two resumes started at once run it exactly once between them. The processes run
//!   the example's program (`tool_examples::paused_store::cli`, all that
//!   `examples/paused_store.rs` does): this test binary starts itself again once per command,
//!   as `approvals_processes.rs` does.
//! - Without `DATABASE_URL`, the example's commands start a server of the example's own in the
//!   temporary directory, use it, and `stop` removes it; a connection error names the server
//!   tried and the variable it came from, never the password.
//! - H8: the state PostgreSQL gives back from its `jsonb` column (keys reordered, respaced)
//!   verifies and resumes, sealed with a key or without; a state whose argument was changed
//!   in the database (`jsonb_set`) is refused as altered, and nothing runs.

mod postgres_server;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tool_examples::approvals::{Choice, admin_context};
use tool_examples::maintenance::RestartLog;
use tool_examples::paused_store::{
    DATABASE_VARIABLE, KEY_VARIABLE, PgStore, agent, cli, pause, resume,
};
use tool_runtime::RunRequest;
use tool_runtime::{Decisions, ErrorKind, PausedRun, ResumeError, ResumeOptions};

use postgres_server::Postgres;

/// The arguments of the example's program, for a child, separated by this character.
const ARGS_VARIABLE: &str = "PAUSED_STORE_EXAMPLE_ARGS";
const SEPARATOR: char = '\u{1f}';
/// For a child that races another: a file it waits for before it runs the program (it writes
/// `GO.ready-PID` first, so the test knows it is waiting).
const GO_VARIABLE: &str = "PAUSED_STORE_EXAMPLE_GO";

/// What the resume of an approved restart of `svc-42` prints, once per restart it made.
const RESTARTED: &str = "Restarts in this process: svc-42.";

/// In a child (when `PAUSED_STORE_EXAMPLE_ARGS` is set): runs the example's program with
/// those arguments and exits with its code. Otherwise it does nothing.
#[test]
fn child_runs_the_example_program() {
    let Ok(args) = std::env::var(ARGS_VARIABLE) else {
        return;
    };
    if let Some(go) = std::env::var_os(GO_VARIABLE).map(PathBuf::from) {
        let ready = PathBuf::from(format!("{}.ready-{}", go.display(), std::process::id()));
        std::fs::write(ready, "").expect("the child says it is ready");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !go.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let args: Vec<String> = args.split(SEPARATOR).map(str::to_owned).collect();
    let code = cli(&args, &mut std::io::stdout(), &mut std::io::stderr());
    std::process::exit(i32::from(code));
}

/// What a child printed, and how it exited.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The approved restarts the child made: one per resume that ran it.
    fn restarts(&self) -> usize {
        self.stdout.matches(RESTARTED).count()
    }
}

/// The example's program in a new process, against `server`, with `key` (if any) as the
/// sealing key; it waits for `go` first when there is one.
fn spawn_example(server: &Postgres, args: &[&str], go: Option<&Path>) -> Child {
    let mut command = Command::new(std::env::current_exe().expect("the test binary"));
    command
        .args(["child_runs_the_example_program", "--exact", "--nocapture"])
        .env(ARGS_VARIABLE, args.join(&SEPARATOR.to_string()))
        .env(DATABASE_VARIABLE, server.url())
        .env_remove(KEY_VARIABLE)
        .env_remove(GO_VARIABLE)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(go) = go {
        command.env(GO_VARIABLE, go);
    }
    command.spawn().expect("the child starts")
}

fn finish(child: Child) -> Run {
    let output = child.wait_with_output().expect("the child ends");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn example(server: &Postgres, args: &[&str]) -> Run {
    finish(spawn_example(server, args, None))
}

/// Pauses the admin's request in a child; returns the pause id it printed.
fn pause_in_a_process(server: &Postgres) -> String {
    let paused = example(server, &["pause"]);
    assert_eq!(paused.code, Some(0), "{paused:?}\n{}", server.log());
    assert!(
        paused
            .stdout
            .contains("pending offline-1-2 restart-service {\"service_id\":\"svc-42\"}"),
        "{}",
        paused.stdout
    );
    assert!(
        paused.stdout.contains("Restarts so far: none."),
        "{}",
        paused.stdout
    );
    paused
        .stdout
        .lines()
        .find_map(|line| line.strip_prefix("Saved pause "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the pause id is printed")
        .to_owned()
}

/// Asserts that `run` was refused as a replay of `pause_id`, and ran nothing.
fn assert_refused_as_replay(run: &Run, pause_id: &str) {
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr.contains(&format!("pause `{pause_id}` of run `"))
            && run.stderr.contains("was resumed before"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("gets back"), "{run:?}");
    assert!(
        run.stdout.contains("Restarts in this process: none."),
        "{run:?}"
    );
}

/// How many times `pause_id` was consumed.
async fn consumed(store: &PgStore, pause_id: &str) -> i64 {
    store
        .client()
        .query_one(
            "SELECT count(*) FROM consumed_pauses WHERE pause_id = $1",
            &[&pause_id],
        )
        .await
        .expect("the ledger is read")
        .get(0)
}

async fn connect(server: &Postgres) -> Arc<PgStore> {
    let store = PgStore::connect(&server.url())
        .await
        .expect("the test connects");
    store.migrate().await.expect("the tables are there");
    Arc::new(store)
}

#[tokio::test(flavor = "current_thread")]
async fn h9_a_paused_run_resumes_once_across_processes() {
    let server = Postgres::start("once");
    let pause_id = pause_in_a_process(&server);
    let listed = example(&server, &["list"]);
    assert!(
        listed.stdout.contains("1 pause(s) wait for a decision.")
            && listed
                .stdout
                .contains(&format!("pause {pause_id} of run run_")),
        "{listed:?}"
    );

    // Another process loads it from PostgreSQL and resumes it: the restart runs, once.
    let first = example(&server, &["resume", &pause_id, "approve"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert!(
        first.stdout.contains(
            "offline-1-2 gets back [success]: {\"service_id\":\"svc-42\",\"state\":\"restarting\"}"
        ),
        "{first:?}"
    );
    assert_eq!(first.restarts(), 1, "{first:?}");

    // H9: the same state again, in a third process, with either decision: refused as a
    // replay before anything runs.
    let again = example(&server, &["resume", &pause_id, "approve"]);
    assert_refused_as_replay(&again, &pause_id);
    let denied = example(&server, &["resume", &pause_id, "deny"]);
    assert_refused_as_replay(&denied, &pause_id);
    assert_eq!(first.restarts() + again.restarts() + denied.restarts(), 1);

    let store = connect(&server).await;
    assert_eq!(consumed(&store, &pause_id).await, 1);
    assert!(store.pending().await.expect("the pauses").is_empty());
    let listed = example(&server, &["list"]);
    assert!(
        listed.stdout.contains("0 pause(s) wait for a decision."),
        "{listed:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn h9_two_resumes_racing_run_the_approved_call_once() {
    let server = Postgres::start("race");
    let pause_id = pause_in_a_process(&server);
    let go = std::env::temp_dir().join(format!("paused-store-race-{}", std::process::id()));
    let _ = std::fs::remove_file(&go);
    let children: Vec<Child> = (0..2)
        .map(|_| spawn_example(&server, &["resume", &pause_id, "approve"], Some(&go)))
        .collect();
    // Both are started and waiting: let them go at once.
    let ready = |child: &Child| PathBuf::from(format!("{}.ready-{}", go.display(), child.id()));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !children.iter().all(|child| ready(child).exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::fs::write(&go, "").expect("the go file");
    let ready_files: Vec<PathBuf> = children.iter().map(ready).collect();
    let runs: Vec<Run> = children.into_iter().map(finish).collect();
    let _ = std::fs::remove_file(&go);
    for file in ready_files {
        let _ = std::fs::remove_file(file);
    }

    // Exactly one ran the restart; the other was refused as a replay.
    let (ran, refused): (Vec<&Run>, Vec<&Run>) = runs.iter().partition(|run| run.code == Some(0));
    assert_eq!(ran.len(), 1, "{runs:?}");
    assert_eq!(ran[0].restarts(), 1, "{runs:?}");
    assert_refused_as_replay(refused[0], &pause_id);
    let store = connect(&server).await;
    assert_eq!(consumed(&store, &pause_id).await, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn h8_a_state_read_back_from_jsonb_resumes_unkeyed() {
    state_read_back_from_jsonb_resumes_and_an_altered_one_is_refused(None).await;
}

#[tokio::test(flavor = "current_thread")]
async fn h8_a_state_read_back_from_jsonb_resumes_keyed() {
    state_read_back_from_jsonb_resumes_and_an_altered_one_is_refused(Some(
        b"a key every process of the deployment holds",
    ))
    .await;
}

/// H8 with the state sealed under `key` (or without one).
async fn state_read_back_from_jsonb_resumes_and_an_altered_one_is_refused(key: Option<&[u8]>) {
    let server = Postgres::start(if key.is_some() { "keyed" } else { "unkeyed" });
    let store = connect(&server).await;
    let agent = agent(key).expect("the agent");

    // The state as PostgreSQL gives it back: the same meaning, another text.
    let paused = pause(&store, &agent, &mut Vec::new())
        .await
        .expect("the run pauses and is saved");
    let stored: String = store
        .client()
        .query_one(
            "SELECT state::text FROM paused_runs WHERE pause_id = $1",
            &[&paused.pause_id()],
        )
        .await
        .expect("the stored state")
        .get(0);
    let pretty = paused.to_json().expect("the state as JSON");
    let compact = serde_json::to_string(&paused).expect("the state as JSON");
    assert_ne!(stored, pretty);
    assert_ne!(stored, compact);
    let position = |text: &str, key: &str| text.find(key).expect("the key is there");
    assert!(
        position(&pretty, "\"format\"") < position(&pretty, "\"run\"")
            && position(&stored, "\"run\"") < position(&stored, "\"format\""),
        "PostgreSQL reorders the keys:\n{stored}"
    );
    assert_eq!(
        serde_json::from_str::<Value>(&stored).expect("JSON"),
        serde_json::to_value(&paused).expect("JSON"),
        "the same meaning"
    );

    // It verifies: read from the database's text, and as the store loads it.
    let from_text = PausedRun::from_json(&stored).expect("a paused run");
    assert_eq!(agent.verify(&from_text), Ok(()));
    let loaded = store.load(paused.pause_id()).await.expect("it loads");
    assert_eq!(agent.verify(&loaded), Ok(()));
    assert_eq!(loaded, paused);
    // And it resumes, the store as its ledger: the approved restart runs.
    let mut out = Vec::new();
    let answer = resume(&store, &agent, paused.pause_id(), Choice::Approve, &mut out)
        .await
        .unwrap_or_else(|e| panic!("H8: the state read back from jsonb resumes: {e}"));
    assert!(answer.text.contains("svc-42"), "{}", answer.text);
    let printed = String::from_utf8_lossy(&out);
    assert!(printed.contains(RESTARTED), "{printed}");

    // Another pause, another id (H9); its argument changed inside the database.
    let second = pause(&store, &agent, &mut Vec::new())
        .await
        .expect("the run pauses and is saved");
    assert_ne!(second.pause_id(), paused.pause_id());
    let updated = store
        .client()
        .execute(
            "UPDATE paused_runs
             SET state = jsonb_set(state, '{run,pending,0,arguments,service_id}', '\"svc-billing\"')
             WHERE pause_id = $1",
            &[&second.pause_id()],
        )
        .await
        .expect("the state is altered");
    assert_eq!(updated, 1);
    let altered = store.load(second.pause_id()).await.expect("it loads");
    assert_eq!(
        altered.pending()[0].arguments()["service_id"],
        "svc-billing",
        "the change reached the stored state"
    );
    assert_eq!(agent.verify(&altered), Err(ResumeError::Altered));
    let ctx = admin_context();
    let ledger: Arc<dyn tool_runtime::PauseLedger> = store.clone();
    let refused = agent
        .execute(
            &ctx,
            RunRequest::resume(altered, Decisions::new().approve("offline-1-2"))
                .resume_options(ResumeOptions::new().shared_ledger(Arc::clone(&ledger))),
        )
        .await
        .expect_err("H8: a change of meaning is refused");
    assert_eq!(refused.kind(), ErrorKind::Resume);
    assert_eq!(refused.resume_error(), Some(&ResumeError::Altered));
    let log = ctx.get::<RestartLog>().expect("the log").entries();
    assert!(log.is_empty(), "nothing ran: {log:?}");
    // The refusal spent nothing: the state put back as it was saved resumes.
    assert_eq!(consumed(&store, second.pause_id()).await, 0);
    let original = serde_json::to_value(&second).expect("JSON");
    store
        .client()
        .execute(
            "UPDATE paused_runs SET state = $1 WHERE pause_id = $2",
            &[&original, &second.pause_id()],
        )
        .await
        .expect("the state is put back");
    let mut out = Vec::new();
    resume(&store, &agent, second.pause_id(), Choice::Approve, &mut out)
        .await
        .unwrap_or_else(|e| panic!("the state put back resumes: {e}"));
    assert!(String::from_utf8_lossy(&out).contains(RESTARTED));
}

#[test]
fn without_postgresql_the_tests_say_what_to_install() {
    // Nothing on the PATH, no Debian directory, and no way to install: the message says what
    // to install (the same path a machine without PostgreSQL takes when not run as root).
    let missing = postgres_server::provision(
        None,
        std::ffi::OsStr::new(""),
        Path::new("/nonexistent/postgresql"),
        false,
    );
    let message = missing.expect_err("nothing is found");
    assert_eq!(message, postgres_server::MISSING);
    assert!(message.contains("apt-get install postgresql"), "{message}");
    let wrong = postgres_server::provision(
        Some("/nonexistent/bin".into()),
        std::ffi::OsStr::new(""),
        Path::new("/nonexistent/postgresql"),
        false,
    );
    assert!(wrong.expect_err("PG_BIN is wrong").contains("PG_BIN"));
}

/// The example's program in a new process with no `DATABASE_URL`: it uses a server of its
/// own, in `tmp` (its temporary directory), made with the programs in `bin`.
fn example_on_its_own(tmp: &Path, bin: &Path, args: &[&str]) -> Run {
    let mut command = Command::new(std::env::current_exe().expect("the test binary"));
    command
        .args(["child_runs_the_example_program", "--exact", "--nocapture"])
        .env(ARGS_VARIABLE, args.join(&SEPARATOR.to_string()))
        .env_remove(DATABASE_VARIABLE)
        .env_remove(KEY_VARIABLE)
        .env_remove(GO_VARIABLE)
        .env("TMPDIR", tmp)
        .env("PG_BIN", bin)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    finish(command.spawn().expect("the child starts"))
}

/// Stops the example's own server and removes the test's temporary directory, also when the
/// test fails.
struct OwnServer {
    tmp: PathBuf,
    bin: PathBuf,
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = example_on_its_own(&self.tmp, &self.bin, &["stop"]);
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

#[test]
fn without_database_url_the_example_starts_a_server_of_its_own() {
    // The commands of the example's documentation, as a user types them with no DATABASE_URL:
    // the first starts a throwaway cluster in the temporary directory (as the `postgres` user
    // when run as root), the next ones use it, and `stop` removes it.
    let bin = postgres_server::binaries();
    let tmp = std::env::temp_dir().join(format!("paused-store-own-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("a temporary directory");
    // The server's user (when run as root) must reach the cluster's directory inside it.
    std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("the directory is opened to the server's user");
    let guard = OwnServer { tmp, bin };
    let run = |args: &[&str]| example_on_its_own(&guard.tmp, &guard.bin, args);
    let cluster = guard.tmp.join(tool_examples::local_postgres::DIR_NAME);

    let paused = run(&["pause"]);
    assert_eq!(paused.code, Some(0), "{paused:?}");
    assert!(
        paused.stderr.contains(
            "DATABASE_URL is not set: started this example's own PostgreSQL at \
             postgresql://postgres@127.0.0.1:"
        ) && paused.stderr.contains("-- stop` removes it"),
        "{paused:?}"
    );
    assert!(cluster.join("data").is_dir(), "the cluster is in TMPDIR");
    let pause_id = paused
        .stdout
        .lines()
        .find_map(|line| line.strip_prefix("Saved pause "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the pause id is printed")
        .to_owned();

    let listed = run(&["list"]);
    assert_eq!(listed.code, Some(0), "{listed:?}");
    assert!(
        listed
            .stderr
            .contains("using this example's own PostgreSQL"),
        "{listed:?}"
    );
    assert!(
        listed.stdout.contains("1 pause(s) wait for a decision."),
        "{listed:?}"
    );
    let first = run(&["resume", &pause_id, "approve"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(first.restarts(), 1, "{first:?}");
    let again = run(&["resume", &pause_id, "approve"]);
    assert_refused_as_replay(&again, &pause_id);

    let stopped = run(&["stop"]);
    assert_eq!(stopped.code, Some(0), "{stopped:?}");
    assert!(
        stopped.stdout.contains("Stopped this example's PostgreSQL"),
        "{stopped:?}"
    );
    assert!(!cluster.exists(), "stop removes the cluster");
}

#[test]
fn a_connection_error_names_the_server_tried() {
    // Nothing listens on port 1: the error names the server and the variable it came from.
    let child = {
        let mut command = Command::new(std::env::current_exe().expect("the test binary"));
        command
            .args(["child_runs_the_example_program", "--exact", "--nocapture"])
            .env(ARGS_VARIABLE, "list")
            .env(
                DATABASE_VARIABLE,
                "postgresql://ada:s3cret@127.0.0.1:1/ops?connect_timeout=5",
            )
            .env_remove(KEY_VARIABLE)
            .env_remove(GO_VARIABLE)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command.spawn().expect("the child starts")
    };
    let run = finish(child);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr.contains(
            "error: cannot connect to PostgreSQL at ada@127.0.0.1:1/ops (from DATABASE_URL)"
        ),
        "{run:?}"
    );
    assert!(!run.stderr.contains("s3cret"), "{run:?}");
}
