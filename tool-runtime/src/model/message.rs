//! The conversation: messages, the tool calls a model asks for and the results it gets back,
//! and the [`Input`] of a run.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use tool_core::{CallId, CallName, Image, Resource};

use super::error::{ProtocolError, preview};

/// One message of a conversation, in the provider-neutral form every driver translates.
///
/// The agent's instructions are not a message: they travel beside the conversation in each
/// request ([`crate::ModelRequest::instructions`]), so that a transcript can be handed to a
/// new run without repeating them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions placed in the conversation itself.
    System {
        /// The instructions.
        text: String,
    },
    /// What the user said.
    User {
        /// The user's words.
        text: String,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// The text of the answer (empty when the model only called tools).
        text: String,
        /// The calls the model asked for, in its order.
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, sent back to the model.
    Tool(ToolResult),
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Message::System { text: text.into() }
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }

    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
        }
    }

    /// An assistant message with text (possibly empty) and tool calls.
    pub fn assistant_with_calls(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls,
        }
    }

    /// The text of the message: the instructions, the user's words, the answer's text, or the
    /// tool result's text.
    pub fn text(&self) -> &str {
        match self {
            Message::System { text } | Message::User { text } | Message::Assistant { text, .. } => {
                text
            }
            Message::Tool(result) => &result.text,
        }
    }

    /// The tool calls of an assistant message (empty for any other message).
    pub fn tool_calls(&self) -> &[ToolCall] {
        match self {
            Message::Assistant { tool_calls, .. } => tool_calls,
            _ => &[],
        }
    }

    /// The tool result, if this is one.
    pub fn tool_result(&self) -> Option<&ToolResult> {
        match self {
            Message::Tool(result) => Some(result),
            _ => None,
        }
    }
}

/// A tool call the model asked for.
///
/// The id and the name are shared ([`CallId`], [`CallName`]): the call's result, its record
/// and its context hold the same strings, not copies; both compare with `&str` and `String`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id the model gave; the result carries it back.
    pub id: CallId,
    /// The name of the tool, as the model wrote it (untrusted).
    pub name: CallName,
    /// The arguments, as the raw text the model sent (untrusted, possibly not JSON).
    pub arguments: String,
    /// What the provider signed this call with and wants back with it (Gemini's thought
    /// signature; Bedrock's reasoning blocks, kept on a reply's first call; V3): opaque, kept
    /// with the conversation so that a run paused, journaled or moved to another process
    /// sends it back as the model gave it. `None` for most calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl ToolCall {
    /// A call of `name` with id `id` and raw `arguments`.
    pub fn new(
        id: impl Into<CallId>,
        name: impl Into<CallName>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            signature: None,
        }
    }

    /// The same call, carrying the provider's `signature` ([`ToolCall::signature`]).
    #[must_use]
    pub fn with_signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = Some(signature.into());
        self
    }
}

/// The result of one tool call, as the model receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers (shared with the call's).
    pub call_id: CallId,
    /// The tool name the call used (some providers want it back).
    pub name: CallName,
    /// The model-facing text: the rendered result, or a failure's approved text (E1, E2).
    pub text: String,
    /// Whether the call failed (drivers pass this on where the provider has such a flag).
    pub is_error: bool,
    /// Images beside the text (O3): each driver sends them in its provider's form, or a text
    /// stand-in where the provider takes none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// Resources beside the text (M4), embedded or linked: MCP carries them as they are;
    /// providers read a text that stands for each ([`ToolResult::model_text`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
}

impl ToolResult {
    /// The result of call `call_id` of tool `name`.
    pub fn new(
        call_id: impl Into<CallId>,
        name: impl Into<CallName>,
        text: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            name: name.into(),
            text: text.into(),
            is_error,
            images: Vec::new(),
            resources: Vec::new(),
        }
    }

    /// The same result, with `images` beside its text (O3): images, or other binary content
    /// with a media type (audio, M4).
    #[must_use]
    pub fn with_images(mut self, images: Vec<Image>) -> Self {
        self.images = images;
        self
    }

    /// The same result, with `resources` beside its text (M4).
    #[must_use]
    pub fn with_resources(mut self, resources: Vec<Resource>) -> Self {
        self.resources = resources;
        self
    }

    /// The images a provider that takes images in tool results gets as images (`image/…`).
    pub fn images_to_send(&self) -> impl Iterator<Item = &Image> {
        self.images.iter().filter(|image| image.is_image())
    }

    /// The text a provider reads (M4): the result's text, then a line that stands for each
    /// piece of content it cannot take: every image when `images_too` (a provider that takes
    /// none), any other binary content (audio), and each resource (an embedded text
    /// resource's stand-in holds its text).
    pub fn model_text(&self, images_too: bool) -> std::borrow::Cow<'_, str> {
        let others = self
            .images
            .iter()
            .filter(|image| images_too || !image.is_image())
            .map(Image::stand_in)
            .chain(self.resources.iter().map(Resource::stand_in));
        let mut text: Option<String> = None;
        for line in others {
            let text = text.get_or_insert_with(|| self.text.clone());
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&line);
        }
        match text {
            Some(text) => std::borrow::Cow::Owned(text),
            None => std::borrow::Cow::Borrowed(&self.text),
        }
    }
}

/// What a run starts from: a conversation, usually ending with what the user just said.
///
/// A `&str` or `String` is one user message. To continue a conversation, pass the transcript
/// of an earlier run ([`crate::RunOutput::transcript`]) and add the next user message:
///
/// ```
/// use tool_runtime::{Input, Message};
///
/// let earlier = vec![Message::user("Hello"), Message::assistant("Hi! How can I help?")];
/// let input = Input::from(earlier).user("When is svc-42 down next?");
/// assert_eq!(input.messages().len(), 3);
/// ```
///
/// Before any model I/O the run checks that every tool result answers a call of the
/// assistant message before it, exactly once, and that no call is left without a result;
/// otherwise it ends with kind `Protocol` ([`ProtocolError`]).
///
/// An input made from a whole [`crate::RunOutput`] (`Input::from(output)`) takes the
/// output's transcript as the run wrote it: the run checks only the messages added after
/// it, so continuing a long conversation costs what the new messages cost. (A transcript
/// whose length was changed after the run is checked whole; change one in place and pass the
/// `Vec` instead, which is always checked whole.)
#[derive(Debug, Clone, Default)]
pub struct Input {
    messages: Vec<Message>,
    /// How many leading messages a run wrote and checked: a closed conversation (every call
    /// answered) that is not checked again.
    checked: usize,
}

impl PartialEq for Input {
    fn eq(&self, other: &Self) -> bool {
        self.messages == other.messages
    }
}

impl Eq for Input {}

impl Input {
    /// An empty conversation.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same conversation, followed by a user message.
    #[must_use]
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.messages.push(Message::user(text));
        self
    }

    /// The same conversation, followed by `message`.
    #[must_use]
    pub fn message(mut self, message: Message) -> Self {
        self.messages.push(message);
        self
    }

    /// The messages.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The messages, owned.
    pub fn into_messages(self) -> Vec<Message> {
        self.messages
    }

    /// The messages, and how many leading ones a run wrote (and checked) already.
    pub(crate) fn into_parts(self) -> (Vec<Message>, usize) {
        (self.messages, self.checked)
    }
}

impl From<crate::RunOutput> for Input {
    /// The conversation of a finished run, to continue with a new user message: its
    /// messages are not checked again (see [`Input`]).
    fn from(output: crate::RunOutput) -> Self {
        let checked = output.written;
        let messages = output.transcript;
        Self {
            checked: if messages.len() == checked {
                checked
            } else {
                0
            },
            messages,
        }
    }
}

impl From<&str> for Input {
    fn from(text: &str) -> Self {
        Input::new().user(text)
    }
}

impl From<String> for Input {
    fn from(text: String) -> Self {
        Input::new().user(text)
    }
}

impl From<Message> for Input {
    fn from(message: Message) -> Self {
        Input::new().message(message)
    }
}

impl From<Vec<Message>> for Input {
    fn from(messages: Vec<Message>) -> Self {
        Self {
            messages,
            checked: 0,
        }
    }
}

/// The first id that a call of `calls` shares with a call before it. A short list is
/// checked without hashing; a long one with a hash set (linear, whatever the ids).
pub(crate) fn first_duplicate(calls: &[ToolCall]) -> Option<&str> {
    if calls.len() <= 16 {
        return calls.iter().enumerate().find_map(|(i, call)| {
            calls[..i]
                .iter()
                .any(|earlier| earlier.id == call.id)
                .then_some(&*call.id)
        });
    }
    let mut seen = HashSet::with_capacity(calls.len());
    calls
        .iter()
        .find(|call| !seen.insert(&*call.id))
        .map(|call| &*call.id)
}

/// Checks that every tool result answers exactly one call of the assistant message before
/// it, and that every call has its result before the next other message.
///
/// The common shapes — a message without calls, an assistant message whose results follow
/// it in its calls' order — are checked in one pass that keeps no list of ids. At the first
/// message of any other shape no call is unanswered, so the general check
/// ([`check_closed`]) takes over from there, and its verdict is the one it would give the
/// whole transcript: the same error for the same transcript.
pub(crate) fn check_transcript(messages: &[Message]) -> Result<(), ProtocolError> {
    let mut rest = messages.iter();
    loop {
        // The messages from the one read next: where the general check takes over.
        let from = rest.as_slice();
        let Some(message) = rest.next() else {
            return Ok(());
        };
        let calls = match message {
            Message::Tool(_) => return check_closed(from),
            Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
            _ => continue,
        };
        match calls {
            [] => {}
            // The most common shape: one call, its result next.
            [call] => match rest.next() {
                Some(Message::Tool(result)) if same_id(&call.id, &result.call_id) => {}
                _ => return check_closed(from),
            },
            calls => match answered_in_order(calls, rest.as_slice()) {
                Some(answered) => rest = answered.iter(),
                None => return check_closed(from),
            },
        }
    }
}

/// The messages after the results of `calls`, when the first messages of `after` are those
/// results, one each, in the calls' order, and no two calls share an id.
fn answered_in_order<'m>(calls: &[ToolCall], after: &'m [Message]) -> Option<&'m [Message]> {
    let (results, next) = after.split_at_checked(calls.len())?;
    let in_order = calls.iter().zip(results).all(|(call, message)| {
        matches!(message, Message::Tool(result) if same_id(&call.id, &result.call_id))
    });
    (in_order && first_duplicate(calls).is_none()).then_some(next)
}

/// Whether two call ids are the same: by address first (a run's own transcript shares the
/// call's id with its result), else by their bytes. An id of up to 32 bytes (most providers'
/// ids, and the ids a run makes) is compared by a few overlapping word loads, not a call of
/// `memcmp`.
#[inline]
fn same_id(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    if std::ptr::eq(a.as_ptr(), b.as_ptr()) {
        return true;
    }
    let len = a.len();
    match len {
        0 => true,
        // Three bytes cover every byte of an id of one to three.
        1..4 => a[0] == b[0] && a[len / 2] == b[len / 2] && a[len - 1] == b[len - 1],
        4..8 => {
            word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, len - 4) == word::<4>(b, len - 4)
        }
        8..16 => {
            word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, len - 8) == word::<8>(b, len - 8)
        }
        16..=32 => {
            word::<8>(a, 0) == word::<8>(b, 0)
                && word::<8>(a, 8) == word::<8>(b, 8)
                && word::<8>(a, len - 16) == word::<8>(b, len - 16)
                && word::<8>(a, len - 8) == word::<8>(b, len - 8)
        }
        _ => a == b,
    }
}

/// The `N` bytes of `bytes` from `at`, as a number (4 or 8 bytes: one load; 0 past the end,
/// which the callers never read): the first and the last `N` bytes of an id together cover
/// every byte of it when it is at least `N` and at most `2 * N` long.
fn word<const N: usize>(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    if let (Some(part), Some(into)) = (bytes.get(at..at + N), word.get_mut(..N)) {
        into.copy_from_slice(part);
    }
    u64::from_ne_bytes(word)
}

/// [`check_transcript`] of a conversation that starts with no call unanswered, in general:
/// the ids still unanswered are kept, results may come in any order.
fn check_closed(messages: &[Message]) -> Result<(), ProtocolError> {
    // The ids of the calls still unanswered, the last call first: results usually come in
    // the calls' order, so the next one is the last id here, answered with a `pop`.
    let mut pending: Vec<&str> = Vec::new();
    for message in messages {
        if let Message::Tool(result) = message {
            let at = match pending.last() {
                Some(last) if *last == &*result.call_id => Some(pending.len() - 1),
                _ => pending.iter().position(|id| *id == &*result.call_id),
            };
            let Some(at) = at else {
                return Err(ProtocolError::UnrequestedResult {
                    call_id: preview(&result.call_id),
                });
            };
            pending.swap_remove(at);
            continue;
        }
        if let Some(id) = pending.last() {
            return Err(ProtocolError::MissingResult {
                call_id: preview(id),
            });
        }
        // `pending` is empty here: it takes this message's calls, if it has any.
        match message.tool_calls() {
            [] => {}
            [call] => pending.push(&call.id),
            calls => {
                if let Some(id) = first_duplicate(calls) {
                    return Err(ProtocolError::DuplicateCallId { id: preview(id) });
                }
                pending.extend(calls.iter().rev().map(|call| &*call.id));
            }
        }
    }
    match pending.last() {
        Some(id) => Err(ProtocolError::MissingResult {
            call_id: preview(id),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn call(id: &str) -> ToolCall {
        ToolCall::new(id, "t", "{}")
    }

    fn result(id: &str) -> Message {
        Message::Tool(ToolResult::new(id, "t", "ok", false))
    }

    #[test]
    fn a_well_formed_transcript_passes() {
        let messages = vec![
            Message::user("hi"),
            Message::assistant_with_calls("", vec![call("a"), call("b")]),
            result("b"),
            result("a"),
            Message::assistant("done"),
            Message::user("again"),
        ];
        assert_eq!(check_transcript(&messages), Ok(()));
    }

    #[test]
    fn results_nobody_asked_for_are_rejected() {
        let messages = vec![Message::user("hi"), result("ghost")];
        assert!(matches!(
            check_transcript(&messages),
            Err(ProtocolError::UnrequestedResult { call_id }) if call_id == "ghost"
        ));
        let answered_twice = vec![
            Message::assistant_with_calls("", vec![call("a")]),
            result("a"),
            result("a"),
        ];
        assert!(matches!(
            check_transcript(&answered_twice),
            Err(ProtocolError::UnrequestedResult { .. })
        ));
    }

    #[test]
    fn unanswered_and_duplicate_calls_are_rejected() {
        let unanswered = vec![Message::assistant_with_calls("", vec![call("a")])];
        assert!(matches!(
            check_transcript(&unanswered),
            Err(ProtocolError::MissingResult { .. })
        ));
        let interrupted = vec![
            Message::assistant_with_calls("", vec![call("a")]),
            Message::user("hello?"),
        ];
        assert!(matches!(
            check_transcript(&interrupted),
            Err(ProtocolError::MissingResult { .. })
        ));
        let twice = vec![Message::assistant_with_calls(
            "",
            vec![call("a"), call("a")],
        )];
        assert!(matches!(
            check_transcript(&twice),
            Err(ProtocolError::DuplicateCallId { .. })
        ));
    }

    #[test]
    fn the_common_shapes_and_the_general_check_agree() {
        let shapes = [
            vec![call("a")],
            vec![call("a"), call("b")],
            vec![call("a"), call("a")],
        ];
        let orders: [&[&str]; 6] = [&["a"], &["a", "b"], &["b", "a"], &["a", "a"], &[], &["c"]];
        for calls in &shapes {
            for order in orders {
                for tail in [None, Some(Message::user("next")), Some(result("a"))] {
                    let mut messages = vec![
                        Message::user("hi"),
                        Message::assistant_with_calls("", calls.clone()),
                    ];
                    messages.extend(order.iter().map(|id| result(id)));
                    messages.extend(tail);
                    assert_eq!(
                        check_transcript(&messages),
                        check_closed(&messages),
                        "{messages:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn ids_are_compared_whole() {
        let ids: Vec<String> = (0..=40)
            .map(|len| "call_1234567890abcdefghijklmnopqrstuvwxyz"[..len].to_owned())
            .collect();
        for a in ids.iter().map(String::as_str) {
            for b in ids.iter().map(String::as_str) {
                assert_eq!(same_id(a, b), a == b, "{a:?} {b:?}");
            }
            let mut other = a.to_owned().into_bytes();
            for at in 0..other.len() {
                other[at] ^= 1;
                let other = String::from_utf8(other.clone()).unwrap();
                assert!(!same_id(a, &other), "{a:?} {other:?}");
            }
        }
    }

    /// Ids that are often equal, of every length class `same_id` tells apart.
    fn id() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            "[ab]{1,3}",
            "h-[0-9]{1,2}",
            "call_[ab]{1,6}",
            "toolu_[ab]{10,30}",
        ]
    }

    /// A message of any role; calls and results draw their ids from `id`.
    fn message() -> impl Strategy<Value = Message> {
        prop_oneof![
            1 => Just(Message::user("u")),
            1 => Just(Message::assistant("a")),
            2 => proptest::collection::vec(id(), 0..4).prop_map(|ids| {
                Message::assistant_with_calls("", ids.iter().map(|id| call(id)).collect())
            }),
            3 => id().prop_map(|id| result(&id)),
        ]
    }

    proptest! {
        #[test]
        fn the_fast_path_agrees_with_the_general_check(
            messages in proptest::collection::vec(message(), 0..24)
        ) {
            prop_assert_eq!(check_transcript(&messages), check_closed(&messages));
        }

        #[test]
        fn ids_are_the_same_exactly_when_their_bytes_are(a in id(), b in id()) {
            prop_assert_eq!(same_id(&a, &b), a == b);
            prop_assert!(same_id(&a, &a.clone()));
        }
    }

    #[test]
    fn a_transcript_of_answered_calls_in_order_passes_whole() {
        let mut messages = Vec::new();
        for i in 0..50 {
            let id = format!("h-{i}");
            messages.push(Message::user("q"));
            messages.push(Message::assistant_with_calls("", vec![call(&id)]));
            messages.push(result(&id));
            messages.push(Message::assistant_with_calls(
                "",
                vec![call("x"), call("y")],
            ));
            messages.extend([result("x"), result("y")]);
            messages.push(Message::assistant("answer"));
        }
        assert_eq!(check_transcript(&messages), Ok(()));
        assert_eq!(check_closed(&messages), Ok(()));
        messages.pop();
        messages.pop();
        assert_eq!(check_transcript(&messages), check_closed(&messages));
        assert!(check_transcript(&messages).is_err());
    }

    #[test]
    fn duplicate_ids_are_found_in_short_and_long_lists() {
        let short: Vec<ToolCall> = ["a", "b", "a"].into_iter().map(call).collect();
        assert_eq!(first_duplicate(&short), Some("a"));
        let mut long: Vec<ToolCall> = (0..40).map(|i| call(&format!("c{i}"))).collect();
        assert_eq!(first_duplicate(&long), None);
        long.push(call("c7"));
        assert_eq!(first_duplicate(&long), Some("c7"));
    }

    #[test]
    fn messages_round_trip_through_json() {
        let messages = vec![
            Message::system("be brief"),
            Message::user("hi"),
            Message::assistant_with_calls("", vec![call("a")]),
            result("a"),
        ];
        let text = serde_json::to_string(&messages).unwrap();
        let back: Vec<Message> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, messages);
    }
}
