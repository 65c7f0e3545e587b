//! What a run shares with the sub-agent runs its calls start (B1, B2): the limits they may
//! still spend, what they used, the runs that paused, and the paused runs to resume. A run
//! that holds sub-agents puts its [`Nest`] in its context; the call of a sub-agent hands it
//! down as the sub-agent run's parent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tool_core::CallId;

use crate::agent::event::Sink;
use crate::agent::options::{NestedUsage, UsageLimits};
use crate::agent::pause::{Decisions, PausedRun};
use crate::agent::state::RunState;
use crate::model::Usage;

/// The context value through which runs and their sub-agent runs meet.
#[derive(Clone, Default)]
pub(crate) struct Nesting {
    /// The nest of the run whose calls see this context: a sub-agent tool's call finds its
    /// run's here.
    pub(crate) own: Option<Arc<Nest>>,
    /// The nest of the run that started this run, which it reports its usage to.
    pub(crate) parent: Option<Arc<Nest>>,
}

/// One run's side of its sub-agent runs.
#[derive(Default)]
pub(crate) struct Nest {
    inner: Mutex<Inner>,
    /// The run's events, which its sub-agent runs' events join (B1).
    sink: Sink,
}

#[derive(Default)]
struct Inner {
    /// What the run may still spend when its current calls started.
    remaining: UsageLimits,
    /// What its sub-agent runs used since it last looked.
    used: NestedUsage,
    /// What they used since the current calls started (it bounds the next sub-agent run).
    used_in_batch: NestedUsage,
    /// The paused runs of sub-agents, by the call that started each (B2).
    paused: HashMap<String, PausedRun>,
    /// The paused runs to resume, with their decisions, by the call that resumes each (B2).
    resumes: HashMap<String, (PausedRun, Decisions)>,
}

impl Nest {
    /// The nest of a run whose events go to `sink`.
    pub(crate) fn new(sink: Sink) -> Self {
        Self {
            inner: Mutex::default(),
            sink,
        }
    }

    /// The events of the sub-agent run that call `call_id` started: the run's own, under
    /// that call (B1).
    pub(crate) fn sink_for(&self, call_id: CallId) -> Sink {
        Sink::under(&self.sink, call_id)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while the lock was held leaves plain counters: they are still usable.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The run's calls start: its sub-agents may spend what `state`'s limits leave.
    pub(crate) fn start_batch(&self, state: &RunState) {
        let mut inner = self.lock();
        inner.remaining = remaining(state);
        inner.used_in_batch = NestedUsage::default();
    }

    /// What a sub-agent run started now may spend: what the run may, less what its other
    /// sub-agents spent since its calls started.
    pub(crate) fn remaining(&self) -> UsageLimits {
        let inner = self.lock();
        less(&inner.remaining, &inner.used_in_batch)
    }

    /// A sub-agent run used `used`.
    pub(crate) fn report(&self, used: NestedUsage) {
        let mut inner = self.lock();
        inner.used.add(used);
        inner.used_in_batch.add(used);
    }

    /// What the sub-agent runs used since the last look.
    pub(crate) fn take_used(&self) -> NestedUsage {
        std::mem::take(&mut self.lock().used)
    }

    /// The sub-agent run of call `call_id` paused as `paused`.
    pub(crate) fn paused(&self, call_id: &str, paused: PausedRun) {
        self.lock().paused.insert(call_id.to_owned(), paused);
    }

    /// The sub-agent runs that paused, by call.
    pub(crate) fn take_paused(&self) -> HashMap<String, PausedRun> {
        std::mem::take(&mut self.lock().paused)
    }

    /// Call `call_id` resumes `paused` with `decisions`.
    pub(crate) fn resume(&self, call_id: &str, paused: PausedRun, decisions: Decisions) {
        self.lock()
            .resumes
            .insert(call_id.to_owned(), (paused, decisions));
    }

    /// The paused run call `call_id` resumes, if it resumes one.
    pub(crate) fn take_resume(&self, call_id: &str) -> Option<(PausedRun, Decisions)> {
        self.lock().resumes.remove(call_id)
    }

    /// Forgets the resumes no call took (their calls did not run).
    pub(crate) fn clear_resumes(&self) {
        self.lock().resumes.clear();
    }
}

/// One request's usage, as a sub-agent run reports it.
pub(crate) fn request_used(usage: Usage) -> NestedUsage {
    NestedUsage {
        requests: 1,
        usage,
        calls: 0,
    }
}

/// What `state`'s limits leave to spend, each limit less what the run used (its own and its
/// sub-agents'); no limit stays none.
pub(crate) fn remaining(state: &RunState) -> UsageLimits {
    less(state.options.usage_limits(), &state.used())
}

/// `limits` less `used`, saturating at zero.
fn less(limits: &UsageLimits, used: &NestedUsage) -> UsageLimits {
    let left = |limit: Option<u64>, used: u64| limit.map(|limit| limit.saturating_sub(used));
    let mut out = UsageLimits::new();
    out.requests = left(limits.requests, used.requests);
    out.input_tokens = left(limits.input_tokens, used.usage.input_tokens);
    out.output_tokens = left(limits.output_tokens, used.usage.output_tokens);
    out.total_tokens = left(limits.total_tokens, used.usage.total());
    out.tool_calls = left(limits.tool_calls, used.calls);
    out
}

/// `limits` moved on by `used`: the limits of a run that used `used` already and may spend
/// `limits` more.
pub(crate) fn beyond(limits: &UsageLimits, used: &NestedUsage) -> UsageLimits {
    let more = |limit: Option<u64>, used: u64| limit.map(|limit| limit.saturating_add(used));
    let mut out = UsageLimits::new();
    out.requests = more(limits.requests, used.requests);
    out.input_tokens = more(limits.input_tokens, used.usage.input_tokens);
    out.output_tokens = more(limits.output_tokens, used.usage.output_tokens);
    out.total_tokens = more(limits.total_tokens, used.usage.total());
    out.tool_calls = more(limits.tool_calls, used.calls);
    out
}
