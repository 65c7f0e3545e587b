//! Reading one streamed reply into a turn: text, tool calls with their raw arguments, usage
//! and finish reason, with the protocol checked on the way.

use futures_util::StreamExt;
use std::collections::HashMap;

use tool_core::Context;

use super::cancel::unless_cancelled;
use super::event::{RunEvent, Sink};
use super::toolset::ToolSet;
use crate::model::{
    FinishReason, ModelError, ModelEvent, ModelStream, ProtocolError, ToolCall, Usage,
    first_duplicate, preview,
};

/// A complete reply (a durable run's journal records it whole, W1).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Reply {
    pub(crate) text: String,
    pub(crate) calls: Vec<ToolCall>,
    pub(crate) usage: Usage,
    pub(crate) finish: Option<FinishReason>,
    /// What the provider said of its answer (K4); absent from journals written before it.
    #[serde(default, skip_serializing_if = "Described::is_empty")]
    pub(crate) response: Described,
    /// The tools the provider's own tool search returned in this reply (Q1), as it named
    /// them; journaled with the reply (W1), so a replay loads them again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) loaded: Vec<String>,
}

/// The provider's id of a response and the model that answered, when it said.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Described {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
}

impl Described {
    fn is_empty(&self) -> bool {
        self.id.is_none() && self.model.is_none()
    }
}

/// Why a reply could not be read.
#[derive(Debug)]
pub(crate) enum ReplyError {
    /// The caller's context was cancelled (P4).
    Cancelled,
    /// The model's stream failed.
    Model(ModelError),
    /// The reply cannot be a turn.
    Protocol(ProtocolError),
    /// A durable run's journal could not give the request's result (W1).
    Journal(crate::agent::journal::JournalError),
}

/// Reads `stream` to its end, emitting text deltas as they come.
///
/// # Cancel safety
///
/// Stops at once when `ctx` is cancelled, dropping the stream (and so the model I/O).
pub(crate) async fn read_reply(
    mut stream: ModelStream<'_>,
    ctx: &Context,
    sink: &Sink,
    turn: usize,
    tools: &ToolSet,
) -> Result<Reply, ReplyError> {
    let mut assembler = Assembler::default();
    let cancelled = ctx.cancelled();
    tokio::pin!(cancelled);
    loop {
        let Some(item) = unless_cancelled(ctx, cancelled.as_mut(), stream.next()).await else {
            return Err(ReplyError::Cancelled);
        };
        match item {
            None => break,
            Some(Err(e)) => return Err(ReplyError::Model(e)),
            Some(Ok(event)) => assembler
                .push(event, sink, turn)
                .map_err(ReplyError::Protocol)?,
        }
    }
    assembler.finish(turn, tools).map_err(ReplyError::Protocol)
}

#[derive(Debug)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    signature: Option<String>,
    ended: bool,
}

#[derive(Debug, Default)]
struct Assembler {
    text: String,
    calls: Vec<PartialCall>,
    /// Where each call's index is in `calls`: `None` while every call started at the index
    /// equal to its position (as drivers number them), a map once one did not.
    positions: Option<HashMap<usize, usize>>,
    usage: Usage,
    finish: Option<FinishReason>,
    response: Described,
    loaded: Vec<String>,
}

impl Assembler {
    fn push(&mut self, event: ModelEvent, sink: &Sink, turn: usize) -> Result<(), ProtocolError> {
        match event {
            ModelEvent::TextDelta(text) => {
                self.text.push_str(&text);
                sink.emit(|| RunEvent::TextDelta { turn, text });
            }
            ModelEvent::ToolCallStart { index, id, name } => {
                let at = self.calls.len();
                match &mut self.positions {
                    None if index == at => {}
                    None if index < at => return Err(ProtocolError::CallStartedTwice { index }),
                    None => {
                        let mut positions: HashMap<usize, usize> =
                            (0..at).map(|i| (i, i)).collect();
                        positions.insert(index, at);
                        self.positions = Some(positions);
                    }
                    Some(positions) => {
                        if positions.insert(index, at).is_some() {
                            return Err(ProtocolError::CallStartedTwice { index });
                        }
                    }
                }
                self.calls.push(PartialCall {
                    id,
                    name,
                    arguments: String::new(),
                    signature: None,
                    ended: false,
                });
            }
            ModelEvent::ToolCallArguments { index, fragment } => {
                let call = self.call(index)?;
                if call.ended {
                    return Err(ProtocolError::CallAlreadyEnded { index });
                }
                if call.arguments.is_empty() {
                    // The first fragment (often the whole arguments) is kept as it came.
                    call.arguments = fragment;
                } else {
                    call.arguments.push_str(&fragment);
                }
            }
            ModelEvent::ToolCallSignature { index, signature } => {
                self.call(index)?.signature = Some(signature);
            }
            ModelEvent::ToolCallEnd { index } => self.call(index)?.ended = true,
            ModelEvent::Usage(usage) => self.usage.merge(usage),
            ModelEvent::Finish(reason) => self.finish = Some(reason),
            ModelEvent::ToolsLoaded { names } => self.loaded.extend(names),
            ModelEvent::Response { id, model } => {
                let known = |text: String| (!text.is_empty()).then_some(text);
                if let Some(id) = known(id) {
                    self.response.id = Some(id);
                }
                if let Some(model) = known(model) {
                    self.response.model = Some(model);
                }
            }
        }
        Ok(())
    }

    fn call(&mut self, index: usize) -> Result<&mut PartialCall, ProtocolError> {
        let at = match &self.positions {
            None => Some(index),
            Some(positions) => positions.get(&index).copied(),
        };
        at.and_then(|at| self.calls.get_mut(at))
            .ok_or(ProtocolError::UnknownCallIndex { index })
    }

    /// The reply, its calls in the order they started. An empty id is replaced by
    /// `call-{turn}-{n}`; two calls with one id are a protocol error. A call's name shares
    /// the string of the tool it names in `tools`, when it names one.
    fn finish(self, turn: usize, tools: &ToolSet) -> Result<Reply, ProtocolError> {
        let calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(n, call)| ToolCall {
                id: if call.id.is_empty() {
                    format!("call-{turn}-{}", n + 1).into()
                } else {
                    call.id.into()
                },
                name: tools.name(call.name),
                arguments: call.arguments,
                signature: call.signature,
            })
            .collect();
        if let Some(id) = first_duplicate(&calls) {
            return Err(ProtocolError::DuplicateCallId { id: preview(id) });
        }
        Ok(Reply {
            text: self.text,
            calls,
            usage: self.usage,
            finish: self.finish,
            response: self.response,
            loaded: self.loaded,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assemble(events: Vec<ModelEvent>) -> Result<Reply, ProtocolError> {
        assemble_for(&tools(&[]), events)
    }

    fn assemble_for(tools: &ToolSet, events: Vec<ModelEvent>) -> Result<Reply, ProtocolError> {
        let mut a = Assembler::default();
        for e in events {
            a.push(e, &Sink::none(), 1)?;
        }
        a.finish(1, tools)
    }

    /// A set of tools named `names`.
    fn tools(names: &[&str]) -> ToolSet {
        let mut builder =
            super::super::toolset::ToolSetBuilder::new(tool_core::hook::Transport::Agent);
        for name in names {
            builder.tool(
                tool_core::Tool::builder(*name, "a tool")
                    .handler(|_ctx, _args: serde_json::Value| async {
                        Ok::<_, tool_core::BoxError>("ok")
                    })
                    .build(),
            );
        }
        // The names are all this test needs: a set is indexed by name whatever else a tool's
        // declaration says (here, a schema that is not an object).
        builder.check(&mut Vec::new()).0
    }

    #[test]
    fn a_call_of_a_known_tool_shares_the_sets_name() {
        let set = tools(&["t"]);
        let reply = assemble_for(
            &set,
            vec![
                start(0, "a"),
                ModelEvent::ToolCallStart {
                    index: 1,
                    id: "b".into(),
                    name: "unknown".into(),
                },
            ],
        )
        .unwrap();
        let (known, _) = set.by_name.get_key_value("t").unwrap();
        assert!(std::sync::Arc::ptr_eq(
            reply.calls[0].name.as_arc(),
            known.as_arc()
        ));
        assert_eq!(reply.calls[1].name, "unknown");
    }

    fn start(index: usize, id: &str) -> ModelEvent {
        ModelEvent::ToolCallStart {
            index,
            id: id.into(),
            name: "t".into(),
        }
    }

    fn args(index: usize, fragment: &str) -> ModelEvent {
        ModelEvent::ToolCallArguments {
            index,
            fragment: fragment.into(),
        }
    }

    #[test]
    fn interleaved_fragments_are_joined_per_call_in_start_order() {
        let reply = assemble(vec![
            ModelEvent::TextDelta("Let me ".into()),
            start(3, "b"),
            start(1, "a"),
            args(1, "{\"x\":"),
            args(3, "{}"),
            args(1, "1}"),
            ModelEvent::TextDelta("look.".into()),
            ModelEvent::Usage(Usage::new(10, 0)),
            ModelEvent::Usage(Usage::new(0, 5)),
            ModelEvent::Finish(FinishReason::ToolCalls),
        ])
        .unwrap();
        assert_eq!(reply.text, "Let me look.");
        let ids: Vec<_> = reply.calls.iter().map(|c| &*c.id).collect();
        assert_eq!(ids, ["b", "a"]);
        assert_eq!(reply.calls[1].arguments, "{\"x\":1}");
        assert_eq!(reply.usage, Usage::new(10, 5));
        assert_eq!(reply.finish, Some(FinishReason::ToolCalls));
    }

    /// However the arguments come split into fragments (empty ones included), the call's
    /// arguments are their concatenation: the first fragment kept as it came, the others
    /// appended, give what appending every fragment gives.
    #[test]
    fn every_split_of_the_arguments_joins_to_the_whole() {
        let whole = "{\"a\":[1,2]}";
        // Each bit of `cuts` says whether the text is cut before that character; a cut at 0
        // makes an empty first fragment.
        for cuts in 0u32..(1 << whole.len()) {
            let mut fragments = Vec::new();
            let mut from = 0;
            for at in 0..whole.len() {
                if cuts & (1 << at) != 0 {
                    fragments.push(&whole[from..at]);
                    from = at;
                }
            }
            fragments.push(&whole[from..]);
            let mut events = vec![start(0, "a")];
            events.extend(fragments.iter().map(|f| args(0, f)));
            let reply = assemble(events).unwrap();
            assert_eq!(
                reply.calls[0].arguments,
                fragments.concat(),
                "{fragments:?}"
            );
            assert_eq!(reply.calls[0].arguments, whole);
        }
    }

    #[test]
    fn protocol_breaches_are_errors() {
        assert_eq!(
            assemble(vec![args(0, "{}")]).unwrap_err(),
            ProtocolError::UnknownCallIndex { index: 0 }
        );
        assert_eq!(
            assemble(vec![start(0, "a"), start(0, "b")]).unwrap_err(),
            ProtocolError::CallStartedTwice { index: 0 }
        );
        assert_eq!(
            assemble(vec![
                start(0, "a"),
                ModelEvent::ToolCallEnd { index: 0 },
                args(0, "{}")
            ])
            .unwrap_err(),
            ProtocolError::CallAlreadyEnded { index: 0 }
        );
        assert_eq!(
            assemble(vec![start(0, "same"), start(1, "same")]).unwrap_err(),
            ProtocolError::DuplicateCallId { id: "same".into() }
        );
    }

    #[test]
    fn empty_ids_are_replaced() {
        let reply = assemble(vec![start(0, ""), start(1, "")]).unwrap();
        let ids: Vec<_> = reply.calls.iter().map(|c| &*c.id).collect();
        assert_eq!(ids, ["call-1-1", "call-1-2"]);
    }
}
