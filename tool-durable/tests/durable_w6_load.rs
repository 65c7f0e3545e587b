//! W6 under load: two worker processes serve one deployment behind HAProxy (Restate sends
//! each invocation to the deployment's URL), 100 runs start at once, and one worker is killed
//! with SIGKILL midway. Every run finishes with its answer, and no restart happens twice.

#[path = "../../examples/tests/haproxy/mod.rs"]
mod haproxy;
mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use support::{RestateServer, TempDir, Worker, free_ports, lines};
use tokio::task::JoinSet;
use tool_durable::{DurableClient, RunEnd, RunRequest};

/// How many runs start at once.
const RUNS: usize = 100;

/// HAProxy in TCP mode, round robin over the workers, each health-checked every 200 ms (a
/// killed worker is out within a check).
fn balancer(dir: &Path, port: u16, workers: &[u16]) -> anyhow::Result<Child> {
    let mut config = format!(
        "global\n    maxconn 4096\ndefaults\n    mode tcp\n    timeout connect 2s\n    \
         timeout client 5m\n    timeout server 5m\nfrontend workers\n    bind 127.0.0.1:{port}\n    \
         default_backend workers\nbackend workers\n    balance roundrobin\n"
    );
    for (index, worker) in workers.iter().enumerate() {
        config.push_str(&format!(
            "    server w{index} 127.0.0.1:{worker} check inter 200ms fall 1 rise 1\n"
        ));
    }
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, config)?;
    let log = std::fs::File::create(dir.join("haproxy.log"))?;
    Command::new(haproxy::haproxy())
        .arg("-f")
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .context("HAProxy starts")
}

/// HAProxy in front of `workers`, once it listens: on a port chosen free, and chosen again
/// when another process took it before HAProxy bound it.
async fn listening_balancer(dir: &Path, workers: &[u16]) -> anyhow::Result<(Killed, u16)> {
    for _ in 0..5 {
        let port = free_ports(1)?[0];
        let mut proxy = Killed(balancer(dir, port, workers)?);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return Ok((proxy, port));
            }
            // Exited: its port was taken (or its configuration refused); try another port.
            if proxy.0.try_wait()?.is_some() || Instant::now() > deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let log = std::fs::read_to_string(dir.join("haproxy.log")).unwrap_or_default();
    bail!("HAProxy did not listen; its log:\n{log}")
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w6_two_workers_behind_a_balancer_one_killed_every_run_ends_no_effect_twice()
-> anyhow::Result<()> {
    let server = RestateServer::start().await?;
    let ledger = TempDir::new("durable-load-ledger")?;
    let dir = ledger.path().to_str().context("a UTF-8 path")?.to_owned();
    let env = [
        ("DURABLE_LEDGER", dir.as_str()),
        ("DURABLE_MODEL_DELAY_MS", "50"),
    ];
    let mut workers = [
        Worker::start("durable", &["worker"], &env).await?,
        Worker::start("durable", &["worker"], &env).await?,
    ];
    let (_balancer, port) =
        listening_balancer(ledger.path(), &[workers[0].port(), workers[1].port()]).await?;
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.register(&url).await.is_err() {
        if Instant::now() > deadline {
            bail!("the deployment behind HAProxy could not be registered");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let client = DurableClient::new(server.ingress_url());
    let mut started = JoinSet::new();
    for i in 0..RUNS {
        let client = client.clone();
        started.spawn(async move {
            // A service that needs no approval: each run restarts one and answers.
            let request = RunRequest::new(format!("Restart svc-l{i}."))
                .with_context(serde_json::json!({"principal": "ada"}));
            client.start(&format!("load-{i}"), &request).await.map(drop)
        });
    }
    while let Some(done) = started.join_next().await {
        done??;
    }
    // Midway: kill the worker that ran the most calls, once some runs have had their effect.
    let effects = ledger.path().join("effects");
    let attempts = ledger.path().join("attempts");
    let deadline = Instant::now() + Duration::from_secs(60);
    while lines(&effects).len() < RUNS / 5 {
        if Instant::now() > deadline {
            bail!("the runs made no progress: {:?}", lines(&effects));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let ran_by = |worker: &Worker| {
        let pid = worker.pid().map(|pid| pid.to_string()).unwrap_or_default();
        lines(&attempts)
            .iter()
            .filter(|line| line.rsplit(' ').next() == Some(pid.as_str()))
            .count()
    };
    let busiest = usize::from(ran_by(&workers[1]) > ran_by(&workers[0]));
    let killed_ran = ran_by(&workers[busiest]);
    workers[busiest].kill_hard()?;
    let at_kill = lines(&effects).len();

    let mut ended = JoinSet::new();
    for i in 0..RUNS {
        let client = client.clone();
        ended.spawn(async move { (i, client.output(&format!("load-{i}")).await) });
    }
    while let Some(done) = ended.join_next().await {
        let (i, end) = done?;
        let end = end.with_context(|| format!("run load-{i}"))?;
        let RunEnd::Answer { text, .. } = &end else {
            bail!("run load-{i} ended without an answer: {end:?}");
        };
        ensure!(text.contains(&format!("svc-l{i}")), "run load-{i}: {text}");
    }
    let mut effects = lines(&effects);
    effects.sort();
    let mut expected: Vec<String> = (0..RUNS)
        .map(|i| format!("load-{i}/1.0/c1 svc-l{i}"))
        .collect();
    expected.sort();
    let extra: Vec<&String> = effects.iter().filter(|e| !expected.contains(e)).collect();
    let missing: Vec<&String> = expected.iter().filter(|e| !effects.contains(e)).collect();
    let mut twice = effects.clone();
    twice.dedup();
    ensure!(
        effects == expected,
        "each run's restart once ({} effects, {at_kill} when the worker was killed): \
         not expected {extra:?}, missing {missing:?}, {} twice",
        effects.len(),
        effects.len() - twice.len()
    );
    eprintln!(
        "{RUNS} runs ended; {at_kill} had their effect when a worker that had run {killed_ran} \
         calls was killed; {} calls ran in all",
        lines(&attempts).len()
    );
    ensure!(killed_ran > 0, "the killed worker had served runs");
    Ok(())
}
