//! The catalog workload (Q2): N tools declared `deferred_loading`, whose descriptions put
//! them in groups of five, and a zero-latency model that searches for one group, then calls
//! the tools it loaded. Beside it, the same run over N tools advertised from the start with
//! no search, to compare what a call costs.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context as TaskContext, Poll};

use futures_core::Stream;
use tool_runtime::{
    Agent, Context, FinishReason, Message, Model, ModelError, ModelEvent, ModelRequest,
    ModelStream, SEARCH_TOOL, Tool, ToolCall, Usage,
};

use crate::runloop::{PING_ARGS, Ping};

/// How many tools share a group word: what one search loads.
pub const GROUP: usize = 5;

/// `count` tools named `tool-0000`, …, each in the group `g{i / GROUP}` by its description;
/// deferred when `deferred`.
pub fn tools(count: usize, deferred: bool) -> Vec<Tool> {
    (0..count)
        .map(|i| {
            let builder = Tool::builder(
                format!("tool-{i:05}"),
                format!("Returns its input at once. Group g{:05}.", i / GROUP),
            );
            let builder = if deferred {
                builder.deferred_loading()
            } else {
                builder
            };
            builder
                .handler(|_ctx: Context, input: Ping| async move { Ok::<_, Infallible>(input.n) })
                .build()
        })
        .collect()
}

/// The query of a search for group `group`: its word alone (`rare`), or with the words every
/// description shares, so that the search scores every tool (the costly case).
pub fn query(group: usize, rare: bool) -> String {
    if rare {
        format!("g{group:05}")
    } else {
        format!("returns its input at once g{group:05}")
    }
}

/// A zero-latency model replaying `turns` (each a list of calls), then answering; it keeps
/// the most tools any request advertised.
pub struct CatalogModel {
    turns: Vec<Vec<ModelEvent>>,
    answer: Vec<ModelEvent>,
    /// The most tools one request carried.
    pub most_tools: Arc<AtomicUsize>,
}

impl CatalogModel {
    /// The model of a run: a search for `group` (when `search`), then `calls` calls spread
    /// over the group's tools, then the answer.
    pub fn new(search: Option<(usize, bool)>, calls: usize) -> Self {
        let mut turns = Vec::new();
        let group = search.map_or(0, |(group, _)| group);
        if let Some((group, rare)) = search {
            let arguments = format!(r#"{{"query":"{}"}}"#, query(group, rare));
            turns.push(vec![ToolCall::new("search-1", SEARCH_TOOL, arguments)]);
        }
        if calls > 0 {
            turns.push(
                (0..calls)
                    .map(|i| {
                        let tool = format!("tool-{:05}", group * GROUP + i % GROUP);
                        ToolCall::new(format!("call-{i}"), tool, PING_ARGS)
                    })
                    .collect(),
            );
        }
        Self {
            turns: turns.iter().map(|calls| events(calls)).collect(),
            answer: vec![
                ModelEvent::TextDelta("done".to_owned()),
                ModelEvent::Usage(Usage::new(10, 1)),
                ModelEvent::Finish(FinishReason::Stop),
            ],
            most_tools: Arc::default(),
        }
    }
}

fn events(calls: &[ToolCall]) -> Vec<ModelEvent> {
    let mut out = Vec::new();
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

impl Model for CatalogModel {
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        self.most_tools
            .fetch_max(request.tools.len(), Ordering::Relaxed);
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

/// An agent over `tools` with `model`, and the model's count of the most tools a request
/// carried.
pub fn agent(tools: &[Tool], model: CatalogModel) -> (Agent, Arc<AtomicUsize>) {
    let most = Arc::clone(&model.most_tools);
    let agent = Agent::builder(model)
        .tools(tools.iter())
        .max_concurrency(8)
        .build()
        .expect("the agent builds");
    (agent, most)
}
