//! What a run may be asked for beyond its input (L2, L3, L5): its tool choice, its usage
//! limits and the tools it stops at.

use serde::{Deserialize, Serialize};

use crate::model::{ToolChoice, Usage};

/// How one run is steered: pass it to [`RunRequest::options`](crate::RunRequest::options), or set
/// it for every run with [`AgentBuilder::options`](crate::AgentBuilder::options).
///
/// ```
/// use tool_runtime::{RunOptions, ToolChoice, UsageLimits};
///
/// let options = RunOptions::new()
///     .tool_choice(ToolChoice::Tool("lookup-window".into()))
///     .limits(UsageLimits::new().requests(4).total_tokens(20_000))
///     .stop_at("restart-service");
/// assert_eq!(options.stops_at(), ["restart-service"]);
/// ```
///
/// A run keeps its options when it pauses (H7): a paused run holds them, sealed, and its
/// resume follows them ([`crate::RunRequest::resume_options`] may only tighten its limits).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunOptions {
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ToolChoice>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    every_turn: bool,
    limits: UsageLimits,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop_at: Vec<String>,
}

impl RunOptions {
    /// No tool choice, no limit, no stopping tool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Which tools the model may or must call (L3). `Required` and a named tool apply to the
    /// first request only, so that a run cannot loop on forced calls; see
    /// [`RunOptions::every_turn`].
    #[must_use]
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Applies the tool choice to every request of the run, not only the first (L3). With
    /// `Required` or a named tool, the run then ends only at a stopping tool (L5), a limit or
    /// `max_turns`.
    #[must_use]
    pub fn every_turn(mut self) -> Self {
        self.every_turn = true;
        self
    }

    /// The run's usage limits (L2).
    #[must_use]
    pub fn limits(mut self, limits: UsageLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Ends the run when a call of tool `name` succeeds: its result is the run's output and
    /// no further request is made (L5). May be given several times.
    #[must_use]
    pub fn stop_at(mut self, name: impl Into<String>) -> Self {
        self.stop_at.push(name.into());
        self
    }

    /// The tools the run stops at (L5).
    pub fn stops_at(&self) -> &[String] {
        &self.stop_at
    }

    /// The usage limits (L2).
    pub fn usage_limits(&self) -> &UsageLimits {
        &self.limits
    }

    /// The tool choice of the next request, if any (L3): a forced choice (`Required`, a
    /// named tool) only while it is not `spent` (the run's first request has not been sent
    /// yet), unless it applies to every turn.
    pub(crate) fn choice_for(&self, spent: bool) -> Option<&ToolChoice> {
        let choice = self.tool_choice.as_ref()?;
        (!spent || self.every_turn || !forces(choice)).then_some(choice)
    }

    /// Whether sending a request spends the tool choice (L3, H7): it forces calls and applies
    /// to the first request only.
    pub(crate) fn spends_choice(&self) -> bool {
        !self.every_turn && self.tool_choice.as_ref().is_some_and(forces)
    }

    /// The same options with `limits` tightening the run's own (H7): see
    /// [`UsageLimits::tightened`].
    pub(crate) fn tighten(&mut self, limits: &UsageLimits) {
        self.limits = self.limits.tightened(limits);
    }
}

/// Whether `choice` forces the model to call tools (L3).
fn forces(choice: &ToolChoice) -> bool {
    matches!(choice, ToolChoice::Required | ToolChoice::Tool(_))
}

/// Limits on what one run may use (L2): checked before the request or the calls that would
/// cross them, so that no request is sent that a limit forbids. A limit left `None` is not
/// checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct UsageLimits {
    /// Model requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// Input tokens, over all requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Output tokens, over all requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Input and output tokens, over all requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    /// Tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<u64>,
}

impl UsageLimits {
    /// No limit.
    pub fn new() -> Self {
        Self::default()
    }

    /// At most `n` model requests.
    #[must_use]
    pub fn requests(mut self, n: u64) -> Self {
        self.requests = Some(n);
        self
    }

    /// At most `n` input tokens in all.
    #[must_use]
    pub fn input_tokens(mut self, n: u64) -> Self {
        self.input_tokens = Some(n);
        self
    }

    /// At most `n` output tokens in all.
    #[must_use]
    pub fn output_tokens(mut self, n: u64) -> Self {
        self.output_tokens = Some(n);
        self
    }

    /// At most `n` tokens in all.
    #[must_use]
    pub fn total_tokens(mut self, n: u64) -> Self {
        self.total_tokens = Some(n);
        self
    }

    /// At most `n` tool calls.
    #[must_use]
    pub fn tool_calls(mut self, n: u64) -> Self {
        self.tool_calls = Some(n);
        self
    }

    /// These limits, tightened by `other` (H7): each limit is the smaller of the two, and a
    /// limit that only one of them sets is kept. A limit can be tightened, never loosened.
    ///
    /// ```
    /// use tool_runtime::UsageLimits;
    ///
    /// let run = UsageLimits::new().requests(5).tool_calls(10);
    /// let resume = UsageLimits::new().requests(8).total_tokens(1_000);
    /// assert_eq!(
    ///     run.tightened(&resume),
    ///     UsageLimits::new().requests(5).tool_calls(10).total_tokens(1_000)
    /// );
    /// ```
    #[must_use]
    pub fn tightened(&self, other: &UsageLimits) -> UsageLimits {
        let min = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        UsageLimits {
            requests: min(self.requests, other.requests),
            input_tokens: min(self.input_tokens, other.input_tokens),
            output_tokens: min(self.output_tokens, other.output_tokens),
            total_tokens: min(self.total_tokens, other.total_tokens),
            tool_calls: min(self.tool_calls, other.tool_calls),
        }
    }

    /// The limit a new request would break, given the usage so far: requests already made
    /// reach their limit, or tokens used reach theirs (the next request could only add more).
    /// `nested` is what the run's sub-agents used, which counts as the run's own (B1).
    pub(crate) fn before_request(&self, usage: &[Usage], nested: &NestedUsage) -> Option<String> {
        let made = usage.len() as u64 + nested.requests;
        if let Some(limit) = self.requests.filter(|&limit| made >= limit) {
            return Some(format!("its limit of {limit} requests"));
        }
        let input: u64 =
            usage.iter().map(|u| u.input_tokens).sum::<u64>() + nested.usage.input_tokens;
        let output: u64 =
            usage.iter().map(|u| u.output_tokens).sum::<u64>() + nested.usage.output_tokens;
        let checks = [
            (self.input_tokens, input, "input tokens"),
            (self.output_tokens, output, "output tokens"),
            (self.total_tokens, input + output, "tokens"),
        ];
        checks.into_iter().find_map(|(limit, used, what)| {
            let limit = limit?;
            (used >= limit).then(|| format!("its limit of {limit} {what} ({used} used)"))
        })
    }

    /// The limit `more` calls would cross after `made`.
    pub(crate) fn before_calls(&self, made: u64, more: u64) -> Option<String> {
        let limit = self.tool_calls?;
        (made + more > limit).then(|| {
            format!("its limit of {limit} tool calls ({made} made, {more} more asked for)")
        })
    }
}

/// What the sub-agent runs of a run used, summed (B1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct NestedUsage {
    /// Their model requests.
    pub(crate) requests: u64,
    /// Their tokens read and written.
    pub(crate) usage: Usage,
    /// Their tool calls.
    pub(crate) calls: u64,
}

impl NestedUsage {
    /// Whether nothing was used.
    pub(crate) fn is_zero(&self) -> bool {
        *self == NestedUsage::default()
    }

    /// `self` and `other` together.
    pub(crate) fn add(&mut self, other: NestedUsage) {
        self.requests = self.requests.saturating_add(other.requests);
        self.usage.input_tokens = self
            .usage
            .input_tokens
            .saturating_add(other.usage.input_tokens);
        self.usage.output_tokens = self
            .usage
            .output_tokens
            .saturating_add(other.usage.output_tokens);
        self.calls = self.calls.saturating_add(other.calls);
    }
}
