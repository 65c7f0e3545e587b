//! W9: a durable turn's calls run concurrently, each an invocation of its own, at most
//! `max_concurrency` in flight, with a journal a replay follows. Against a real Restate server
//! that the test provisions (pinned, under `target/peers/`), the `durable_parallel` example's
//! worker runs turns of four calls, two at a time: its ledger shows how many calls were in
//! flight in one process at once, each call's effect once, and the answer of a run without a
//! kill; then a run whose worker is killed with SIGKILL whenever a new step starts (mid-call,
//! two calls in flight) ends with the same answer and each effect once; and a call that crashes
//! its worker on every attempt is parked on its own, found and resumed from the client (W8).
//!
//! W10: the same deployment serves the agent under two more workflow names, with its calls one
//! at a time (`Sequential`) and with a typed answer (`TypedBatches`).
//!
//! B2: under a fourth name (`Orchestrated`) an agent hands the work to that agent as its
//! sub-agent; the worker is killed whenever a new step starts, the sub-agent's included, and
//! the run ends with each of the sub-agent's effects once, keyed under the call that started it.

mod support;

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use support::{RestateServer, TempDir, Worker, lines};
use tool_durable::{ClientError, DurableClient, Phase, RunEnd, RunRequest, Started};

/// The calls a turn asks for, and the most in flight at once.
const TURN_CALLS: usize = 4;
const MAX_CONCURRENCY: usize = 2;

/// How long the worker stays down after each kill.
const DOWN: Duration = Duration::from_secs(1);

/// How long one run may take, kills included.
const RUN_WITHIN: Duration = Duration::from_secs(150);

/// A server, the `durable_parallel` worker and its ledger.
struct Parallel {
    server: RestateServer,
    worker: Worker,
    ledger: TempDir,
    client: DurableClient,
}

impl Parallel {
    async fn start(env: &[(&str, &str)]) -> anyhow::Result<Self> {
        let server = RestateServer::start().await?;
        let ledger = TempDir::new("durable-parallel")?;
        let dir = ledger.path().to_str().context("a UTF-8 path")?.to_owned();
        let turn = TURN_CALLS.to_string();
        let limit = MAX_CONCURRENCY.to_string();
        let mut vars = vec![
            ("DURABLE_LEDGER", dir.as_str()),
            ("DURABLE_TURN_CALLS", turn.as_str()),
            ("DURABLE_MAX_CONCURRENCY", limit.as_str()),
        ];
        vars.extend_from_slice(env);
        let worker = Worker::start("durable_parallel", &[], &vars).await?;
        server.register(&worker.url()).await?;
        let client = DurableClient::new(server.ingress_url()).with_admin(server.admin_url());
        Ok(Self {
            server,
            worker,
            ledger,
            client,
        })
    }

    fn ledger(&self, file: &str) -> Vec<String> {
        lines(&self.ledger.path().join(file))
    }

    /// Each key whose handler started, and each model request's turn, once.
    fn started(&self) -> HashSet<String> {
        let key = |line: &String| line.split(' ').next().unwrap_or_default().to_owned();
        let requests = self.ledger("requests");
        let turns = requests
            .iter()
            .map(|l| l.rsplit_once(' ').map_or(l.as_str(), |(r, _)| r).to_owned());
        self.ledger("attempts")
            .iter()
            .map(key)
            .chain(turns)
            .collect()
    }

    /// The most calls in flight at once in one worker process, by the ledger's `flight`.
    fn most_in_flight(&self) -> usize {
        let mut flying: BTreeMap<String, usize> = BTreeMap::new();
        let mut most = 0;
        for line in self.ledger("flight") {
            let words: Vec<&str> = line.split(' ').collect();
            let [what, _, pid] = words.as_slice() else {
                continue;
            };
            let now = flying.entry((*pid).to_owned()).or_default();
            match *what {
                "begin" => *now += 1,
                _ => *now = now.saturating_sub(1),
            }
            most = most.max(*now);
        }
        most
    }

    /// Waits for the run `run_id` of `workflow` to end, killing the worker with SIGKILL
    /// 150 ms after each new step starts (mid-call when a handler takes longer) and starting
    /// it again a second later: the run's output, and how many kills it took. Fails when the
    /// run parks (W7) or takes longer than [`RUN_WITHIN`] from `started`.
    async fn killed_run(
        &mut self,
        workflow: &str,
        run_id: &str,
        started: Instant,
    ) -> anyhow::Result<((u16, serde_json::Value), usize)> {
        let mut seen = self.started().len();
        let mut kills = 0;
        loop {
            if let Some(output) = self.server.workflow_output(workflow, run_id).await? {
                return Ok((output, kills));
            }
            if self.parked(run_id).await? {
                bail!("W7: the run or a call was parked after {kills} kills, making progress");
            }
            if started.elapsed() > RUN_WITHIN {
                bail!(
                    "the run did not end within {RUN_WITHIN:?} ({kills} kills); the worker's \
                     log:\n{}",
                    support::tail(&self.worker.log(), 40)
                );
            }
            let now = self.started().len();
            if now > seen {
                seen = now;
                tokio::time::sleep(Duration::from_millis(150)).await;
                self.worker.kill_hard()?;
                kills += 1;
                tokio::time::sleep(DOWN).await;
                self.worker.restart().await?;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Whether Restate parked the run or one of its calls.
    async fn parked(&self, run_id: &str) -> anyhow::Result<bool> {
        let rows = self
            .server
            .query(&format!(
                "SELECT status FROM sys_invocation WHERE target_service_key = '{run_id}'"
            ))
            .await?;
        Ok(rows.iter().any(|row| row["status"] == "paused"))
    }

    /// The call ids of the run's call commands, in its journal's order.
    async fn started_calls(&self, run_id: &str) -> anyhow::Result<Vec<String>> {
        let rows = self
            .server
            .query(&format!(
                "SELECT j.index, j.entry_json FROM sys_journal j \
                 JOIN sys_invocation i ON j.id = i.id \
                 WHERE i.target_service_key = '{run_id}' AND i.target_handler_name = 'run' \
                 AND j.entry_type = 'Command: Call' ORDER BY j.index"
            ))
            .await?;
        let mut ids = Vec::new();
        for row in rows {
            let json = row["entry_json"].as_str().unwrap_or_default();
            let entry: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
            let text = texts(&entry).join(" ");
            let id = text
                .split(r#""id":""#)
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .with_context(|| format!("a call command names its call: {json}"))?;
            ids.push(id.to_owned());
        }
        Ok(ids)
    }
}

/// The texts in `value`: its strings, and its arrays of bytes read as UTF-8.
fn texts(value: &serde_json::Value) -> Vec<String> {
    match value {
        serde_json::Value::String(s) => vec![s.clone()],
        serde_json::Value::Array(items) if items.iter().all(serde_json::Value::is_u64) => {
            let bytes: Vec<u8> = items
                .iter()
                .filter_map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                .collect();
            vec![String::from_utf8_lossy(&bytes).into_owned()]
        }
        serde_json::Value::Array(items) => items.iter().flat_map(texts).collect(),
        serde_json::Value::Object(fields) => fields.values().flat_map(texts).collect(),
        _ => Vec::new(),
    }
}

fn items(count: usize) -> Vec<String> {
    (1..=count).map(|i| format!("item-{i}")).collect()
}

fn request(count: usize) -> RunRequest {
    RunRequest::new(format!("Process {}.", items(count).join(" ")))
}

/// The answer of a run of `count` items, as a run without a kill gives it.
fn answer(count: usize) -> String {
    let results: Vec<String> = items(count)
        .iter()
        .map(|item| format!(r#"process: {{"item":"{item}","state":"processed"}}"#))
        .collect();
    format!("Done. {}", results.join("; "))
}

/// The checks of a run's end: the answer of a run without a kill, the usage of every request,
/// and each call's effect once, keyed by its call.
fn check_end(parallel: &Parallel, run_id: &str, count: usize, end: &RunEnd) -> anyhow::Result<()> {
    let RunEnd::Answer { text, usage, .. } = end else {
        bail!("the run ended without an answer: {end:?}");
    };
    ensure!(*text == answer(count), "the answer: {text}");
    let requests = u64::try_from(count.div_ceil(TURN_CALLS) + 1)?;
    ensure!(
        (usage.input_tokens, usage.output_tokens) == (100 * requests, 20 * requests),
        "usage across restarts: {usage:?}"
    );
    let mut effects: Vec<String> = parallel
        .ledger("effects")
        .into_iter()
        .filter(|e| e.starts_with(&format!("{run_id}/")))
        .collect();
    effects.sort();
    let mut expected: Vec<String> = (0..count)
        .map(|i| {
            let (turn, position) = (i / TURN_CALLS + 1, i % TURN_CALLS);
            format!("{run_id}/{turn}.{position}/c{} item-{}", i + 1, i + 1)
        })
        .collect();
    expected.sort();
    ensure!(effects == expected, "each effect once: {effects:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w9_a_turns_calls_run_concurrently_within_max_concurrency() -> anyhow::Result<()> {
    let parallel = Parallel::start(&[("DURABLE_TOOL_DELAY_MS", "300")]).await?;
    let started = Instant::now();
    ensure!(parallel.client.start("run-par", &request(8)).await? == Started::Now);
    let end = parallel.client.output("run-par").await?;
    let took = started.elapsed();
    check_end(&parallel, "run-par", 8, &end)?;
    // R2 and W9: two calls in flight at once, never more.
    let most = parallel.most_in_flight();
    ensure!(most == MAX_CONCURRENCY, "calls in flight at once: {most}");
    // Eight calls of 300 ms, two at a time: well under the 2.4 s they take one at a time.
    ensure!(
        parallel.ledger("attempts").len() == 8,
        "{:?}",
        parallel.ledger("attempts")
    );
    // The journal starts the calls in the model's order.
    let calls = parallel.started_calls("run-par").await?;
    let order: Vec<String> = (1..=8).map(|i| format!("c{i}")).collect();
    ensure!(
        calls == order,
        "the calls' commands in the journal: {calls:?}"
    );
    eprintln!("W9 run-par: 8 calls, at most {most} in flight, finished in {took:.1?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w9_a_worker_killed_mid_turn_runs_each_effect_once() -> anyhow::Result<()> {
    const ITEMS: usize = 12;
    let mut parallel = Parallel::start(&[("DURABLE_TOOL_DELAY_MS", "400")]).await?;
    let run_id = "run-par-kill";
    let started = Instant::now();
    ensure!(parallel.client.start(run_id, &request(ITEMS)).await? == Started::Now);
    // Mid-call: the handler takes 400 ms, its sibling is in flight too.
    let (output, kills) = parallel.killed_run("AgentRun", run_id, started).await?;
    let took = started.elapsed();
    let (status, body) = output;
    ensure!(status == 200, "the run's output: {status} {body}");
    let end: RunEnd = serde_json::from_value(body)?;
    check_end(&parallel, run_id, ITEMS, &end)?;
    let most = parallel.most_in_flight();
    ensure!(most <= MAX_CONCURRENCY, "calls in flight at once: {most}");
    // Replayed at every restart, the journal still starts each call once, in the model's order.
    let calls = parallel.started_calls(run_id).await?;
    let order: Vec<String> = (1..=ITEMS).map(|i| format!("c{i}")).collect();
    ensure!(
        calls == order,
        "the calls' commands in the journal: {calls:?}"
    );
    let starts = parallel.ledger("attempts").len();
    eprintln!(
        "W9 {run_id}: {kills} kills, {starts} handler starts for {ITEMS} effects ({:.2} a call), \
         at most {most} calls in flight, finished in {took:.1?} with no operator action",
        starts as f64 / ITEMS as f64
    );
    ensure!(kills >= 10, "at least 10 kills in the run: {kills}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w7_w8_w9_a_call_that_keeps_crashing_parks_and_resumes_with_its_run() -> anyhow::Result<()>
{
    let mut parallel = Parallel::start(&[
        ("DURABLE_TOOL_DELAY_MS", "200"),
        ("DURABLE_STEP_ATTEMPTS", "3"),
    ])
    .await?;
    let crash = parallel.ledger.path().join("crash");
    std::fs::write(&crash, "item-3 crashes its worker")?;
    let run_id = "run-par-park";
    ensure!(parallel.client.start(run_id, &request(4)).await? == Started::Now);
    // Each crash is a failed attempt of the call (and of its sibling in flight): the worker
    // is started again at once, until the engine parks the call after its three attempts.
    let started = Instant::now();
    let seen = loop {
        if !parallel.worker.is_running() {
            parallel.worker.restart().await?;
        }
        let seen = parallel.client.inspect(run_id).await?;
        if seen.invocation.as_deref() == Some("paused") {
            break seen;
        }
        if started.elapsed() > RUN_WITHIN {
            bail!("the crashing call was not parked: {seen:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let crashed = parallel
        .ledger("attempts")
        .iter()
        .filter(|a| a.contains(" item-3 "))
        .count();
    ensure!(
        crashed == 3,
        "W7: the call's budget, three attempts: {crashed}"
    );
    ensure!(seen.last_failure.is_some(), "why it is parked: {seen:?}");
    ensure!(
        !parallel
            .ledger("effects")
            .iter()
            .any(|e| e.ends_with(" item-3"))
    );
    // The cause is gone; an operator resumes the run, which resumes its parked calls.
    std::fs::remove_file(&crash)?;
    if !parallel.worker.is_running() {
        parallel.worker.restart().await?;
    }
    ensure!(Some(parallel.client.resume(run_id).await?) == seen.invocation_id);
    let end = parallel.client.output(run_id).await?;
    check_end(&parallel, run_id, 4, &end)?;
    let again = parallel.client.resume(run_id).await;
    ensure!(
        matches!(again, Err(ClientError::NotParked { .. })),
        "{again:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w10_one_deployment_serves_several_agents_and_typed_answers() -> anyhow::Result<()> {
    let parallel = Parallel::start(&[("DURABLE_TOOL_DELAY_MS", "100")]).await?;
    // `Sequential`: the same agent under its own name, its calls one at a time.
    let sequential = parallel.client.clone().for_workflow("Sequential")?;
    ensure!(sequential.start("run-seq", &request(6)).await? == Started::Now);
    let end = sequential.output("run-seq").await?;
    check_end(&parallel, "run-seq", 6, &end)?;
    let most = parallel.most_in_flight();
    ensure!(most == 1, "one call at a time: {most}");
    // Its state and invocation are the named workflow's, read from the engine (W8).
    let status = sequential.status("run-seq").await?;
    ensure!(status.phase == Phase::Ended, "{status:?}");
    let seen = sequential.inspect("run-seq").await?;
    ensure!(seen.invocation.as_deref() == Some("completed"), "{seen:?}");
    // The default workflow holds no run of that id: the names are two workflows.
    let other = parallel.client.status("run-seq").await?;
    ensure!(other.phase == Phase::NotStarted, "{other:?}");
    // `TypedBatches`: the run ends with the typed answer's JSON, its calls concurrent.
    let typed = parallel.client.clone().for_workflow("TypedBatches")?;
    ensure!(typed.start("run-typed", &request(4)).await? == Started::Now);
    let end = typed.output("run-typed").await?;
    let summary: serde_json::Value = end.answer_as().context("a typed answer")?;
    ensure!(
        summary == serde_json::json!({"processed": 4, "items": items(4)}),
        "{summary}"
    );
    ensure!(parallel.most_in_flight() == MAX_CONCURRENCY);
    // A name Restate does not take is refused when it is given.
    let refused = tool_durable::AgentRun::new(
        tool_runtime::Agent::builder(tool_runtime::ConversationModel::new([])).build()?,
    )
    .named("9 lives");
    ensure!(refused.is_err());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b2_w7_a_nested_run_killed_mid_child_ends_with_each_effect_once() -> anyhow::Result<()> {
    const ITEMS: usize = 6;
    let mut parallel = Parallel::start(&[("DURABLE_TOOL_DELAY_MS", "400")]).await?;
    let orchestrated = parallel.client.clone().for_workflow("Orchestrated")?;
    let run_id = "run-nested-kill";
    let started = Instant::now();
    ensure!(orchestrated.start(run_id, &request(ITEMS)).await? == Started::Now);
    let (output, kills) = parallel.killed_run("Orchestrated", run_id, started).await?;
    let took = started.elapsed();
    let (status, body) = output;
    ensure!(status == 200, "the run's output: {status} {body}");
    let end: RunEnd = serde_json::from_value(body)?;
    let RunEnd::Answer { text, usage, .. } = &end else {
        bail!("the run ended without an answer: {end:?}");
    };
    ensure!(
        *text == format!("Delegated. {}", answer(ITEMS)),
        "the answer: {text}"
    );
    // The run's usage is its own requests' (its output's, as in a run without a journal).
    ensure!(
        (usage.input_tokens, usage.output_tokens) == (20, 4),
        "usage across restarts: {usage:?}"
    );
    // Each effect once, keyed under the call `d1` that started the sub-agent's run (W2: its
    // run id `run-nested-kill/d1`, encoded in the key).
    let mut effects: Vec<String> = parallel
        .ledger("effects")
        .into_iter()
        .filter(|e| e.starts_with(&format!("{run_id}%2F")))
        .collect();
    effects.sort();
    let mut expected: Vec<String> = (0..ITEMS)
        .map(|i| {
            let (turn, position) = (i / TURN_CALLS + 1, i % TURN_CALLS);
            format!("{run_id}%2Fd1/{turn}.{position}/c{} item-{}", i + 1, i + 1)
        })
        .collect();
    expected.sort();
    ensure!(
        effects == expected,
        "each effect once: {:?}",
        parallel.ledger("effects")
    );
    let starts = parallel.ledger("attempts").len();
    eprintln!(
        "B2 {run_id}: {kills} kills, {starts} handler starts for {ITEMS} effects ({:.2} a call), \
         finished in {took:.1?} with no operator action",
        starts as f64 / ITEMS as f64
    );
    ensure!(kills >= 6, "at least 6 kills in the run: {kills}");
    Ok(())
}
