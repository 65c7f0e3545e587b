//! The durable example's worker, a Restate server and a client, as the tests of durable runs
//! use them: [`Durable`] starts them, reads the worker's ledger and the engine's journal, and
//! approves waiting calls; [`eventually`] polls for a condition.

use std::future::Future;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use tool_durable::{DecisionBody, DurableClient, Phase, RunEnd, RunRequest, RunStatus, Started};

use super::{RestateServer, TempDir, Worker, lines};

/// How long a test waits for a run to reach a point.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The answer of the example's run, with or without a crash.
pub const ANSWER: &str = r#"Done. restart: {"service_id":"svc-7","state":"restarting"}; restart: {"service_id":"svc-42","state":"restarting"}"#;

/// A server, the example's worker and its ledger.
pub struct Durable {
    pub server: RestateServer,
    pub worker: Worker,
    pub ledger: TempDir,
    pub client: DurableClient,
}

impl Durable {
    /// A server and a worker with `env` (delays), registered.
    pub async fn start(env: &[(&str, &str)]) -> anyhow::Result<Self> {
        let server = RestateServer::start().await?;
        let ledger = TempDir::new("durable-ledger")?;
        let dir = ledger.path().to_str().context("a UTF-8 path")?.to_owned();
        // The worker posts the runs' text to the ingress (W10).
        let ingress = server.ingress_url();
        let mut vars = vec![
            ("DURABLE_LEDGER", dir.as_str()),
            ("RESTATE_INGRESS", ingress.as_str()),
        ];
        vars.extend_from_slice(env);
        let worker = Worker::start("durable", &["worker"], &vars).await?;
        server.register(&worker.url()).await?;
        let client = DurableClient::new(server.ingress_url()).with_admin(server.admin_url());
        Ok(Self {
            server,
            worker,
            ledger,
            client,
        })
    }

    /// Starts the run `run_id` of the example's request, as the admin `ada`.
    pub async fn start_run(&self, run_id: &str) -> anyhow::Result<()> {
        let request = RunRequest::new("Restart svc-7 and svc-42.")
            .with_context(serde_json::json!({"principal": "ada"}));
        ensure!(self.client.start(run_id, &request).await? == Started::Now);
        Ok(())
    }

    /// Each handler start, as `key service` (without the worker's pid).
    pub fn attempts(&self) -> Vec<String> {
        self.ledger_lines("attempts")
    }

    /// Each model request the worker's model was asked, as `request N` (N its turn, without
    /// the worker's pid).
    pub fn requests(&self) -> Vec<String> {
        self.ledger_lines("requests")
    }

    /// The lines of the ledger's `file`, each without its last word (the worker's pid).
    fn ledger_lines(&self, file: &str) -> Vec<String> {
        lines(&self.ledger.path().join(file))
            .iter()
            .map(|line| {
                line.rsplit_once(' ')
                    .map_or(line.as_str(), |(key, _)| key)
                    .to_owned()
            })
            .collect()
    }

    /// Each effect that happened, as `key service`.
    pub fn effects(&self) -> Vec<String> {
        lines(&self.ledger.path().join("effects"))
    }

    /// The steps of `run_id` that Restate's journal holds as done, by name, in order.
    pub async fn recorded(&self, run_id: &str) -> anyhow::Result<Vec<String>> {
        let rows = self
            .server
            .query(&format!(
                "SELECT j.index, j.entry_type, j.name FROM sys_journal j \
                 JOIN sys_invocation i ON j.id = i.id \
                 WHERE i.target_service_key = '{run_id}' AND i.target_handler_name = 'run' \
                 ORDER BY j.index"
            ))
            .await?;
        let mut last_run = None;
        let mut done = Vec::new();
        for row in rows {
            match row["entry_type"].as_str() {
                Some("Command: Run") => last_run = row["name"].as_str().map(str::to_owned),
                Some("Notification: Run") => done.extend(last_run.take()),
                _ => {}
            }
        }
        Ok(done)
    }

    /// Waits until the run waits for a decision, and answers its status.
    pub async fn waiting(&self, run_id: &str) -> anyhow::Result<RunStatus> {
        let last = std::sync::Mutex::new(String::new());
        let found = eventually("the run waits for approval", || async {
            let status = self.client.status(run_id).await;
            let seen = format!("{status:?}");
            *last.lock().unwrap_or_else(|p| p.into_inner()) = seen;
            let status = status.ok()?;
            (status.phase == Phase::Waiting).then_some(status)
        })
        .await;
        found.with_context(|| {
            let last = last.lock().unwrap_or_else(|p| p.into_inner()).clone();
            format!(
                "the last status read: {last}\nthe worker's log:\n{}",
                self.worker.log()
            )
        })
    }

    /// Approves every waiting call of the run, and answers its end.
    pub async fn approve_and_end(&self, run_id: &str) -> anyhow::Result<RunEnd> {
        let status = self.waiting(run_id).await?;
        self.approve(&status).await?;
        Ok(self.client.output(run_id).await?)
    }

    /// Approves the calls `status` lists as waiting: one call to Restate's ingress each, which
    /// needs no worker.
    pub async fn approve(&self, status: &RunStatus) -> anyhow::Result<()> {
        for call in &status.pending {
            self.client
                .resolve(&call.awakeable_id, &DecisionBody::Approve)
                .await?;
        }
        Ok(())
    }

    /// The checks every run of these tests ends with: the answer of a run without a crash,
    /// and each call's effect once in the ledger, keyed by the call's idempotency key.
    pub fn check_end(&self, run_id: &str, end: &RunEnd) -> anyhow::Result<()> {
        let RunEnd::Answer { text, usage, .. } = end else {
            bail!("the run ended without an answer: {end:?}");
        };
        ensure!(text == ANSWER, "the answer: {text}");
        ensure!(
            (usage.input_tokens, usage.output_tokens) == (200, 40),
            "usage across restarts (L2, W5): {usage:?}"
        );
        let effects = self.effects();
        ensure!(
            effects
                == [
                    format!("{run_id}/1.0/c1 svc-7"),
                    format!("{run_id}/1.1/c2 svc-42")
                ],
            "each effect once: {effects:?}; attempts: {:?}",
            self.attempts()
        );
        Ok(())
    }
}

/// Polls `check` until it answers something, or fails after [`PATIENCE`].
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(found) = check().await {
            return Ok(found);
        }
        if Instant::now() > deadline {
            bail!("{what}: not within {PATIENCE:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
