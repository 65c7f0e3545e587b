//! The run loop's workload: N tools built with `Tool::builder` in a loop, each returning its
//! input at once, and a zero-latency model.
//!
//! [`ReplayModel`] answers from the request alone (no script to consume, nothing recorded), so
//! one agent can run any number of times and the measurement holds only the loop's own work.
//! `ScriptedModel` (tool-runtime's test model) is measured beside it: it records every request
//! (the transcript and the advertised tools, cloned), which is a cost of the test model, not
//! of the loop.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use futures_core::Stream;
use tool_runtime::{
    Agent, Context, FinishReason, Message, Model, ModelError, ModelEvent, ModelRequest,
    ModelStream, Schema, ScriptedModel, ScriptedTurn, Tool, ToolCall, Usage,
};

/// The input of the run-loop tools.
#[derive(Schema, Debug)]
pub struct Ping {
    /// Any number.
    #[schema(range = 0..=1_000_000)]
    pub n: u32,
}

/// The arguments every call sends.
pub const PING_ARGS: &str = r#"{"n":7}"#;

/// `count` tools named `tool-0000`, `tool-0001`, …, built with `Tool::builder` in a loop. Each
/// returns its input at once.
pub fn tools(count: usize) -> Vec<Tool> {
    (0..count)
        .map(|i| {
            Tool::builder(format!("tool-{i:04}"), "Returns its input at once.")
                .handler(|_ctx: Context, input: Ping| async move { Ok::<_, Infallible>(input.n) })
                .build()
        })
        .collect()
}

/// The calls of one turn: `k` calls spread over the first `spread` tools.
pub fn calls(k: usize, spread: usize, turn: usize) -> Vec<ToolCall> {
    (0..k)
        .map(|i| {
            ToolCall::new(
                format!("call-{turn}-{i}"),
                format!("tool-{:04}", i % spread.max(1)),
                PING_ARGS,
            )
        })
        .collect()
}

/// A zero-latency model that answers from the request: while the run has made fewer than
/// `turns` tool-calling turns since the last user message, it asks for `k` calls; then it
/// answers with text. It records nothing.
pub struct ReplayModel {
    turns: Vec<Vec<ModelEvent>>,
    answer: Vec<ModelEvent>,
}

impl ReplayModel {
    /// `turns` turns of `k` calls each, spread over the first `spread` tools.
    pub fn new(turns: usize, k: usize, spread: usize) -> Self {
        Self::with_turns((0..turns).map(|t| calls(k, spread, t)).collect())
    }

    /// One turn for each list of calls, then the answer.
    pub fn with_turns(turns: Vec<Vec<ToolCall>>) -> Self {
        Self {
            turns: turns.iter().map(|calls| events(calls)).collect(),
            answer: vec![
                ModelEvent::TextDelta("done".to_owned()),
                ModelEvent::Usage(Usage::new(10, 1)),
                ModelEvent::Finish(FinishReason::Stop),
            ],
        }
    }
}

fn events(calls: &[ToolCall]) -> Vec<ModelEvent> {
    let mut out = Vec::with_capacity(calls.len() * 3 + 2);
    for (index, call) in calls.iter().enumerate() {
        out.push(ModelEvent::ToolCallStart {
            index,
            id: call.id.to_string(),
            name: call.name.to_string(),
        });
        out.push(ModelEvent::ToolCallArguments {
            index,
            fragment: call.arguments.clone(),
        });
        out.push(ModelEvent::ToolCallEnd { index });
    }
    out.push(ModelEvent::Usage(Usage::new(10, 1)));
    out.push(ModelEvent::Finish(FinishReason::ToolCalls));
    out
}

impl Model for ReplayModel {
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let done = request
            .messages
            .iter()
            .rev()
            .take_while(|m| !matches!(m, Message::User { .. }))
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        let events = self.turns.get(done).unwrap_or(&self.answer);
        Box::pin(Replay {
            events: events.iter().cloned().collect(),
        })
    }
}

struct Replay {
    events: VecDeque<ModelEvent>,
}

impl Stream for Replay {
    type Item = Result<ModelEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, _cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.events.pop_front().map(Ok))
    }
}

/// An agent over `tools` whose model asks for `turns` turns of `k` calls.
pub fn replay_agent(tools: &[Tool], turns: usize, k: usize) -> Agent {
    Agent::builder(ReplayModel::new(turns, k, tools.len()))
        .tools(tools.iter())
        .max_concurrency(k.max(1))
        .max_turns(turns + 1)
        .build()
        .expect("the agent builds")
}

/// A fresh `ScriptedModel` agent over `tools` for one run of one turn of `k` calls.
pub fn scripted_agent(tools: &[Tool], k: usize) -> Agent {
    let mut turn = ScriptedTurn::new();
    for call in calls(k, tools.len(), 0) {
        turn = turn.call(call.id.to_string(), call.name.to_string(), call.arguments);
    }
    let model = ScriptedModel::new([turn.usage(10, 1), ScriptedTurn::reply("done")]);
    Agent::builder(model)
        .tools(tools.iter())
        .max_concurrency(k.max(1))
        .build()
        .expect("the agent builds")
}

/// A transcript of `len` earlier messages (user, assistant with a call, tool result, assistant
/// answer, …), well formed, to continue from.
pub fn history(len: usize) -> Vec<Message> {
    let mut out = Vec::with_capacity(len);
    let mut i = 0;
    while out.len() < len {
        out.push(Message::user(format!("question {i}")));
        out.push(Message::assistant_with_calls(
            "",
            vec![ToolCall::new(format!("h-{i}"), "tool-0000", PING_ARGS)],
        ));
        out.push(Message::Tool(tool_runtime::ToolResult::new(
            format!("h-{i}"),
            "tool-0000",
            "7",
            false,
        )));
        out.push(Message::assistant(format!("answer {i}")));
        i += 1;
    }
    out.truncate(len - len % 4);
    out
}

/// Runs `agent` once on `rt`, continuing `earlier` with a user message, to its answer. (Never
/// inlined, so that a profiler can count what it runs alone.)
#[inline(never)]
pub fn run_once(
    rt: &tokio::runtime::Runtime,
    agent: &Agent,
    earlier: tool_runtime::Input,
) -> tool_runtime::RunOutput {
    let ctx = Context::new();
    let input = earlier.user("go");
    let out = rt
        .block_on(agent.run(&ctx, input))
        .expect("the run answers");
    debug_assert_eq!(out.text, "done");
    out
}

/// The output of a run of `agent` that continued a hand-built [`history`] of `len` messages:
/// a conversation of `len` + 11 messages (the user's, the assistant's calls, their 8 results,
/// the answer) that a next run continues as the run wrote it (`Input::from(output)`).
pub fn earlier_output(
    rt: &tokio::runtime::Runtime,
    agent: &Agent,
    len: usize,
) -> tool_runtime::RunOutput {
    run_once(rt, agent, history(len).into())
}
