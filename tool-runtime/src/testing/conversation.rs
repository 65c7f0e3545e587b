//! [`ConversationModel`]: a scripted model whose reply is chosen by the conversation's turn,
//! not by how many requests it was sent, for tests of runs that restart (W10).

use std::sync::{Arc, Mutex, PoisonError};

use super::reply_events;
use crate::model::{Message, Model, ModelError, ModelRequest, ModelStream, ToolCall, Usage};

/// A model that answers each request with the turn of its script that the conversation is at:
/// the first turn to a conversation with no reply yet, the third to one that holds two of the
/// model's replies. A worker that restarts mid-run, and replays the requests its journal holds
/// without sending them, gets the turn its conversation needs, as it would from a provider; a
/// [`crate::ScriptedModel`] would hand out its next turn instead.
///
/// It owns its script, so the streams it returns borrow nothing but the model: it needs no
/// `'static` leak to serve an agent. Clones share the record of the turns served
/// ([`ConversationModel::served`]). A conversation past the script fails with
/// [`ModelError::ScriptExhausted`].
///
/// ```
/// use tool_runtime::{ConversationModel, ConversationTurn};
///
/// let model = ConversationModel::new([
///     ConversationTurn::new().call("c1", "restart", r#"{"service_id":"svc-7"}"#),
///     ConversationTurn::reply("Restarted."),
/// ]);
/// assert_eq!(model.turns(), 2);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ConversationModel {
    turns: Arc<[ConversationTurn]>,
    served: Arc<Mutex<Vec<usize>>>,
}

/// One turn of a [`ConversationModel`]'s script: a text, calls and usage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConversationTurn {
    text: String,
    calls: Vec<ToolCall>,
    usage: Option<Usage>,
}

impl ConversationTurn {
    /// An empty turn (an empty final answer, unless calls are added).
    pub fn new() -> Self {
        Self::default()
    }

    /// A final answer with this text.
    pub fn reply(text: impl Into<String>) -> Self {
        Self::new().text(text)
    }

    /// The turn's text.
    #[must_use]
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.text = text.into();
        self
    }

    /// A call of `tool` with id `id` and the raw `arguments` (sent as they are, malformed
    /// ones included).
    #[must_use]
    pub fn call(mut self, id: &str, tool: &str, arguments: impl Into<String>) -> Self {
        self.calls.push(ToolCall::new(id, tool, arguments));
        self
    }

    /// The turn's usage.
    #[must_use]
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Some(Usage::new(input_tokens, output_tokens));
        self
    }
}

impl ConversationModel {
    /// A model that answers turn `n` of a conversation with `turns[n]`.
    pub fn new(turns: impl IntoIterator<Item = ConversationTurn>) -> Self {
        Self {
            turns: turns.into_iter().collect(),
            served: Arc::default(),
        }
    }

    /// How many turns the script has.
    pub fn turns(&self) -> usize {
        self.turns.len()
    }

    /// The turn (from 1) of each request it answered, in order, by every clone.
    pub fn served(&self) -> Vec<usize> {
        self.served
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The turn (from 1) a conversation is at: one more than the model's replies it holds.
fn turn_of(messages: &[Message]) -> usize {
    1 + messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant { .. }))
        .count()
}

impl Model for ConversationModel {
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let turn = turn_of(request.messages);
        self.served
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(turn);
        let items: Vec<_> = match self.turns.get(turn - 1) {
            Some(reply) => reply_events(&reply.text, &reply.calls, reply.usage)
                .into_iter()
                .map(Ok)
                .collect(),
            None => vec![Err(ModelError::ScriptExhausted {
                request: turn,
                scripted: self.turns.len(),
            })],
        };
        Box::pin(futures_util::stream::iter(items))
    }

    /// `scripted`, for telemetry (K2): no provider serves it.
    fn provider_name(&self) -> &str {
        "scripted"
    }

    /// `conversation`, for telemetry (K2).
    fn model_name(&self) -> &str {
        "conversation"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModelEvent;

    fn script() -> ConversationModel {
        ConversationModel::new([
            ConversationTurn::new()
                .call("c1", "restart", r#"{"service_id":"svc-7"}"#)
                .usage(10, 2),
            ConversationTurn::reply("Restarted svc-7.").usage(12, 3),
        ])
    }

    async fn events(
        model: &ConversationModel,
        messages: &[Message],
    ) -> Vec<Result<ModelEvent, ModelError>> {
        futures_util::StreamExt::collect(model.stream(ModelRequest::new(messages, &[]))).await
    }

    /// W10: two models of one script (two worker processes) answer by the conversation's
    /// turn, however many requests each was sent: a fresh one asked a run's second request
    /// answers the script's second turn, and one asked the first request again answers the
    /// first turn again.
    #[tokio::test]
    async fn w10_a_reply_follows_the_conversation_not_a_counter() {
        let first = script();
        let start = [Message::user("Restart svc-7.")];
        let calls = events(&first, &start).await;
        assert!(
            calls.iter().any(
                |e| matches!(e, Ok(ModelEvent::ToolCallStart { name, .. }) if name == "restart")
            ),
            "{calls:?}"
        );
        let again = events(&first, &start).await;
        assert_eq!(
            format!("{again:?}"),
            format!("{calls:?}"),
            "the same turn again"
        );
        assert_eq!(first.served(), [1, 1]);

        let second = script();
        let later = [
            Message::user("Restart svc-7."),
            Message::assistant(""),
            Message::user("svc-7 restarting"),
        ];
        let reply = events(&second, &later).await;
        assert!(
            reply.iter().any(
                |e| matches!(e, Ok(ModelEvent::TextDelta(text)) if text.contains("Restarted"))
            ),
            "{reply:?}"
        );
        assert!(
            reply
                .iter()
                .any(|e| matches!(e, Ok(ModelEvent::Usage(u)) if *u == Usage::new(12, 3))),
            "{reply:?}"
        );
        assert_eq!(second.served(), [2]);
    }

    /// A conversation past the script fails with a clear error, never a panic.
    #[tokio::test]
    async fn a_conversation_past_the_script_is_refused() {
        let model = ConversationModel::new([]);
        let got = events(&model, &[Message::user("hi")]).await;
        assert!(
            matches!(
                got.as_slice(),
                [Err(ModelError::ScriptExhausted {
                    request: 1,
                    scripted: 0
                })]
            ),
            "{got:?}"
        );
    }
}
