//! [`Serving`]: an [`AgentRun`] on an HTTP/2 endpoint for Restate, with the retry budget of
//! one step (W5, W7).
//!
//! # How the budget counts one step's failures
//!
//! Restate retries an invocation under its retry policy and, with `pause` on exhaustion, parks
//! it after the policy's attempts. Its invoker counts those attempts (and grows their backoff)
//! over one stay of the invocation in the invoker, from its start to its suspension or its
//! end; a journal entry recorded in between does not reset the count. A deployment that
//! streams (restate-sdk's own `HttpServer`) keeps an invocation there for the whole run, so
//! each crash of a run that makes progress spends the budget of the whole run.
//!
//! [`Serving`] answers each invocation in request-response mode instead: an attempt ends as
//! soon as it waits for anything the engine has not sent, and the first thing a step waits for
//! after its work is the engine's acknowledgement of its result. So each completed step ends
//! the attempt with a suspension, the engine takes the run up again at once, and the
//! invoker's count and backoff start over: the invocation retry policy's attempts are the
//! attempts of the step the run is at. A run parks only when one step fails
//! [`Serving::step_attempts`] times in a row (its model provider down, say), however often
//! its worker was restarted before.
//!
//! The alternatives do not give that. A retry policy of a `ctx.run` counts one step's
//! failures, but restate-sdk 0.13 turns an exhausted one into a terminal failure recorded in
//! the journal (a run resumed after it would read the failure again, not retry the step) and
//! cannot ask for a pause; a large invocation budget alone never parks a failing run; an
//! abort timeout bounds a silent attempt, not a count. The price of request-response mode is
//! one round trip to the engine per step and a replay of the recorded steps (results read
//! back, nothing run again) at each one.

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use hyper::server::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::graceful::GracefulShutdown;
use restate_sdk::endpoint::{Endpoint, HandleOptions, ProtocolMode, ServiceOptions};
use restate_sdk::service::IntoServiceDefinition;
use tokio::net::TcpListener;

use crate::workflow::named;
use crate::workflow::{AgentRun, WorkflowNameError};

/// The default of [`Serving::step_attempts`]: a step gets 20 attempts in a row before its run
/// is parked.
pub const DEFAULT_STEP_ATTEMPTS: u32 = 20;

/// The default wait before a step's first retry: 100 ms, doubling at each retry of the same
/// step up to [`DEFAULT_MAX_RETRY_INTERVAL`]. With [`DEFAULT_STEP_ATTEMPTS`], a step that
/// keeps failing parks its run after about two and a half minutes.
pub const DEFAULT_RETRY_INTERVAL: Duration = Duration::from_millis(100);

/// The default longest wait between two attempts of one step: 10 s.
pub const DEFAULT_MAX_RETRY_INTERVAL: Duration = Duration::from_secs(10);

/// How long a stopping worker waits for the exchanges in flight before it drops them.
const DRAIN: Duration = Duration::from_secs(10);

/// Serves an [`AgentRun`] to Restate, each step of a run with its own retry budget (W7): a run
/// that makes progress never parks, however often its worker is restarted; one whose step
/// fails [`Serving::step_attempts`] times in a row is paused, its journal kept, for an
/// operator to resume ([`crate::DurableClient::resume`], W5, W8). The module's documentation
/// says how.
///
/// ```no_run
/// # async fn doc(workflow: tool_durable::AgentRun) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:9080").await?;
/// tool_durable::Serving::new(workflow)
///     .step_attempts(5)
///     .serve(listener, std::future::pending::<()>())
///     .await;
/// # Ok(())
/// # }
/// ```
pub struct Serving {
    /// The agents served, each under its workflow name (W10).
    workflows: Vec<AgentRun>,
    attempts: u32,
    first_retry: Duration,
    max_retry: Duration,
}

impl Serving {
    /// `workflow` with the default budget: [`DEFAULT_STEP_ATTEMPTS`] attempts a step, retried
    /// after [`DEFAULT_RETRY_INTERVAL`] doubling up to [`DEFAULT_MAX_RETRY_INTERVAL`].
    pub fn new(workflow: AgentRun) -> Self {
        Self {
            workflows: vec![workflow],
            attempts: DEFAULT_STEP_ATTEMPTS,
            first_retry: DEFAULT_RETRY_INTERVAL,
            max_retry: DEFAULT_MAX_RETRY_INTERVAL,
        }
    }

    /// The same deployment, serving `workflow` too, under its own name ([`AgentRun::named`],
    /// W10): several agents on one endpoint, each its own workflow, with the same budget.
    ///
    /// # Errors
    ///
    /// [`WorkflowNameError::Duplicate`] when an agent of the deployment has that name already.
    pub fn with(mut self, workflow: AgentRun) -> Result<Self, WorkflowNameError> {
        if self.workflows.iter().any(|w| w.name() == workflow.name()) {
            return Err(WorkflowNameError::Duplicate(workflow.name().to_owned()));
        }
        self.workflows.push(workflow);
        Ok(self)
    }

    /// The attempts one step gets in a row, its first included, before its run is parked (at
    /// least 1). A worker that dies counts as a failed attempt of the step it was at, and so
    /// does each attempt the engine makes while no worker answers.
    #[must_use]
    pub fn step_attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts.max(1);
        self
    }

    /// The wait before a step's first retry, doubled at each further retry of the same step
    /// up to `max`.
    #[must_use]
    pub fn retry_intervals(mut self, first: Duration, max: Duration) -> Self {
        self.first_retry = first;
        self.max_retry = max.max(first);
        self
    }

    /// The Restate endpoint of the workflows, each with the retry policy set.
    fn endpoint(self) -> Endpoint {
        let options = ServiceOptions::new()
            .retry_policy_max_attempts(u64::from(self.attempts))
            .retry_policy_initial_interval(self.first_retry)
            .retry_policy_exponentiation_factor(2.0)
            .retry_policy_max_interval(self.max_retry)
            .retry_policy_pause_on_max_attempts();
        let mut endpoint = Endpoint::builder();
        // The runs' text (W10), when an agent posts it.
        if self.workflows.iter().any(AgentRun::posts_text) {
            endpoint = endpoint.bind(crate::AgentRunText.into_service_definition());
        }
        for workflow in self.workflows {
            // The macro's own binding under its own name; another name is bound by hand.
            let definition = if workflow.name() == crate::WORKFLOW {
                workflow.into_service_definition()
            } else {
                named::definition(workflow)
            };
            endpoint = endpoint.bind(definition.options(options.clone()));
        }
        endpoint.build()
    }

    /// Serves on `listener` (HTTP/2 cleartext, as the Restate server calls a deployment) until
    /// `shutdown` completes, then waits up to ten seconds for the exchanges in flight. Register
    /// the listener's address with the server ([`crate::register`]) before starting runs.
    pub async fn serve(self, listener: TcpListener, shutdown: impl Future) {
        let endpoint = self.endpoint();
        let graceful = GracefulShutdown::new();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let endpoint = endpoint.clone();
                        let service = hyper::service::service_fn(move |request| {
                            // Request-response: see the module's documentation (W7).
                            let options = HandleOptions {
                                protocol_mode: ProtocolMode::RequestResponse,
                            };
                            let response = endpoint.handle_with_options(request, options);
                            std::future::ready(Ok::<_, Infallible>(response))
                        });
                        let connection = http2::Builder::new(TokioExecutor::new())
                            .serve_connection(TokioIo::new(stream), service);
                        let connection = graceful.watch(connection);
                        tokio::spawn(async move {
                            if let Err(e) = connection.await {
                                tracing::debug!(error = %e, "a connection from Restate ended with an error");
                            }
                        });
                    }
                    // Out of file descriptors, say: the next accept may work.
                    Err(e) => {
                        tracing::warn!(error = %e, "a connection could not be accepted");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                _ = &mut shutdown => break,
            }
        }
        if tokio::time::timeout(DRAIN, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!("exchanges still in flight were dropped at shutdown");
        }
    }
}

/// Serves `workflow` on `listener` with the default budget ([`Serving::new`]) until
/// `shutdown` completes.
pub async fn serve(workflow: AgentRun, listener: TcpListener, shutdown: impl Future) {
    Serving::new(workflow).serve(listener, shutdown).await;
}
