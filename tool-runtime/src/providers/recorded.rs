//! Recorded streams of each provider through the SSE decoder and the driver's event mapper
//! (V2): every split of a stream gives the same events; errors mid-stream, streams cut short
//! and garbage are errors; unknown events are ignored.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::anthropic::events::AnthropicEvents;
use super::http::TransportError;
use super::openai::chat::ChatEvents;
use super::openai::responses::ResponsesEvents;
use super::stream::{EventMapper, Pipeline};
use crate::model::{FinishReason, ModelError, ModelEvent, Usage};

const CHAT_CALLS: &str = include_str!("../../tests/fixtures/openai_chat_parallel_calls.sse");
const CHAT_ANSWER: &str = include_str!("../../tests/fixtures/openai_chat_answer.sse");
const RESPONSES_CALLS: &str = include_str!("../../tests/fixtures/openai_responses_calls.sse");
const ANTHROPIC_CALLS: &str = include_str!("../../tests/fixtures/anthropic_tool_use.sse");
const LLAMACPP_RESPONSES_CALLS: &str =
    include_str!("../../tests/fixtures/llamacpp_responses_calls.sse");

/// Feeds `chunks` through a pipeline, as the driver's stream does: it stops at the end
/// marker or the first error.
fn replay<M: EventMapper>(mapper: M, chunks: &[&[u8]]) -> (Vec<ModelEvent>, Option<ModelError>) {
    let mut pipeline = Pipeline::new(mapper);
    let mut out = Vec::new();
    for chunk in chunks {
        match pipeline.feed(chunk, &mut out) {
            Ok(true) => return (out, None),
            Ok(false) => {}
            Err(e) => return (out, Some(e)),
        }
    }
    let end = pipeline.finish(&mut out).err();
    (out, end)
}

fn whole<M: EventMapper>(mapper: M, text: &str) -> (Vec<ModelEvent>, Option<ModelError>) {
    replay(mapper, &[text.as_bytes()])
}

/// What a reply adds up to: text, calls by index (id, name, arguments, ended), usage,
/// finish.
#[derive(Debug, Default, PartialEq)]
struct Summary {
    text: String,
    calls: BTreeMap<usize, (String, String, String, bool)>,
    usage: Usage,
    finish: Option<FinishReason>,
}

fn summary(events: &[ModelEvent]) -> Summary {
    let mut s = Summary::default();
    for event in events {
        match event {
            ModelEvent::TextDelta(t) => s.text.push_str(t),
            ModelEvent::ToolCallStart { index, id, name } => {
                s.calls
                    .insert(*index, (id.clone(), name.clone(), String::new(), false));
            }
            ModelEvent::ToolCallArguments { index, fragment } => {
                let call = s.calls.get_mut(index).expect("arguments of a started call");
                assert!(!call.3, "arguments after the end of call {index}");
                call.2.push_str(fragment);
            }
            ModelEvent::ToolCallEnd { index } => {
                s.calls.get_mut(index).expect("end of a started call").3 = true;
            }
            ModelEvent::Usage(u) => s.usage.merge(*u),
            ModelEvent::Finish(f) => s.finish = Some(f.clone()),
            ModelEvent::Response { .. }
            | ModelEvent::ToolCallSignature { .. }
            | ModelEvent::ToolsLoaded { .. } => {}
        }
    }
    s
}

fn call(id: &str, args: &str, ended: bool) -> (String, String, String, bool) {
    (id.into(), "lookup-window".into(), args.into(), ended)
}

/// Splits `text` at `cuts` (positions taken modulo its length).
fn split(text: &[u8], cuts: Vec<usize>) -> Vec<&[u8]> {
    let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (text.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::new();
    let mut at = 0;
    for c in cuts {
        chunks.push(&text[at..c]);
        at = c;
    }
    chunks.push(&text[at..]);
    chunks
}

#[test]
fn v2_chat_interleaved_parallel_calls_are_assembled_by_index() {
    let (events, error) = whole(ChatEvents::default(), CHAT_CALLS);
    assert!(error.is_none(), "{error:?}");
    let s = summary(&events);
    assert_eq!(s.text, "Ich prüfe beide Fenster — 日本.");
    assert_eq!(s.calls.len(), 2);
    assert_eq!(
        s.calls[&0],
        call("call_Wx1", r#"{"service_id":"svc-42","days":3}"#, false)
    );
    assert_eq!(
        s.calls[&1],
        call("call_Yz2", r#"{"service_id":"svc-7"}"#, false)
    );
    assert_eq!(s.usage, Usage::new(182, 41));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
    let (events, error) = whole(ChatEvents::default(), CHAT_ANSWER);
    assert!(error.is_none());
    let s = summary(&events);
    assert_eq!(s.text, "svc-42 is down on Tuesday, 02:00–04:00 UTC.");
    assert_eq!(
        (s.usage, s.finish),
        (Usage::new(250, 17), Some(FinishReason::Stop))
    );
}

#[test]
fn v2_responses_calls_text_and_usage() {
    let (events, error) = whole(ResponsesEvents::default(), RESPONSES_CALLS);
    assert!(error.is_none(), "{error:?}");
    let s = summary(&events);
    assert_eq!(s.text, "Ich prüfe beide Fenster.");
    assert_eq!(
        s.calls[&2],
        call("call_A1", r#"{"service_id":"svc-42"}"#, true)
    );
    // The second call's arguments came only with `.done`: they are still passed on.
    assert_eq!(
        s.calls[&3],
        call("call_B2", r#"{"service_id":"svc-7"}"#, true)
    );
    assert_eq!(s.usage, Usage::new(210, 64));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn v2_anthropic_tool_use_blocks_ping_and_unknown_events() {
    let (events, error) = whole(AnthropicEvents::default(), ANTHROPIC_CALLS);
    assert!(error.is_none(), "{error:?}");
    let s = summary(&events);
    assert_eq!(s.text, "Ich prüfe beide Fenster — 日本.");
    assert_eq!(
        s.calls[&1],
        call("toolu_01A", r#"{"service_id": "svc-42", "days": 3}"#, true)
    );
    // A tool_use whose input came whole in content_block_start, with no delta (R5: passed on
    // as the provider sent it).
    assert_eq!(
        s.calls[&2],
        call("toolu_01B", r#"{"service_id":"svc-7"}"#, true)
    );
    assert_eq!(
        s.usage,
        Usage::new(512, 97),
        "cached input tokens count as input"
    );
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

proptest! {
    /// V2: every split of a recorded stream, at any byte, gives the same events.
    #[test]
    fn v2_every_split_of_a_recorded_stream_gives_the_same_events(
        cuts in proptest::collection::vec(0usize..5000, 0..24)
    ) {
        let chat = split(CHAT_CALLS.as_bytes(), cuts.clone());
        prop_assert_eq!(replay(ChatEvents::default(), &chat).0, whole(ChatEvents::default(), CHAT_CALLS).0);
        let responses = split(RESPONSES_CALLS.as_bytes(), cuts.clone());
        prop_assert_eq!(
            replay(ResponsesEvents::default(), &responses).0,
            whole(ResponsesEvents::default(), RESPONSES_CALLS).0
        );
        let llamacpp = split(LLAMACPP_RESPONSES_CALLS.as_bytes(), cuts.clone());
        prop_assert_eq!(
            replay(ResponsesEvents::default(), &llamacpp).0,
            whole(ResponsesEvents::default(), LLAMACPP_RESPONSES_CALLS).0
        );
        let anthropic = split(ANTHROPIC_CALLS.as_bytes(), cuts);
        prop_assert_eq!(
            replay(AnthropicEvents::default(), &anthropic).0,
            whole(AnthropicEvents::default(), ANTHROPIC_CALLS).0
        );
    }
}

fn api_error(error: Option<ModelError>) -> crate::model::ApiError {
    match error {
        Some(ModelError::Api(e)) => e,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[test]
fn v2_an_error_event_mid_stream_is_an_error_with_the_providers_words() {
    let chat = format!(
        "{}data: {{\"error\":{{\"message\":\"The server had an error\",\"type\":\"server_error\",\"param\":null,\"code\":null}}}}\n\n",
        &CHAT_CALLS[..CHAT_CALLS.find("data: {\"id\":\"chatcmpl-C7q2xVb9\",\"object\":\"chat.completion.chunk\",\"created\":1764500000,\"model\":\"gpt-5-mini-2025-08-07\",\"service_tier\":\"default\",\"system_fingerprint\":null,\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\"").unwrap_or(0)]
    );
    let (events, error) = whole(ChatEvents::default(), &chat);
    assert!(!events.is_empty(), "the deltas before the error are kept");
    let e = api_error(error);
    assert_eq!(
        (e.status, e.message.as_str()),
        (None, "The server had an error")
    );
    assert_eq!(e.error_type.as_deref(), Some("server_error"));

    let anthropic = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let e = api_error(whole(AnthropicEvents::default(), anthropic).1);
    assert_eq!(
        (e.error_type.as_deref(), e.message.as_str()),
        (Some("overloaded_error"), "Overloaded")
    );

    let responses = "event: error\ndata: {\"type\":\"error\",\"sequence_number\":1,\"code\":\"server_error\",\"message\":\"An error occurred\",\"param\":null}\n\n";
    let e = api_error(whole(ResponsesEvents::default(), responses).1);
    assert_eq!(
        (e.code.as_deref(), e.message.as_str()),
        (Some("server_error"), "An error occurred")
    );
    let failed = "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"rate_limit_exceeded\",\"message\":\"Slow down\"}}}\n\n";
    let e = api_error(whole(ResponsesEvents::default(), failed).1);
    assert_eq!(e.code.as_deref(), Some("rate_limit_exceeded"));
}

fn truncated(error: Option<ModelError>) -> &'static str {
    match error {
        Some(ModelError::Transport(source)) => match source.downcast_ref::<TransportError>() {
            Some(TransportError::Truncated { expected }) => expected,
            other => panic!("expected a truncated stream, got {other:?}"),
        },
        other => panic!("expected a truncated stream, got {other:?}"),
    }
}

#[test]
fn v2_a_stream_cut_before_its_end_marker_is_an_error_not_a_partial_answer() {
    let chat = CHAT_CALLS.trim_end().trim_end_matches("data: [DONE]");
    assert_eq!(truncated(whole(ChatEvents::default(), chat).1), "[DONE]");
    let cut = ANTHROPIC_CALLS.rfind("event: message_stop").unwrap_or(0);
    assert_eq!(
        truncated(whole(AnthropicEvents::default(), &ANTHROPIC_CALLS[..cut]).1),
        "message_stop"
    );
    let cut = RESPONSES_CALLS
        .rfind("event: response.completed")
        .unwrap_or(0);
    assert_eq!(
        truncated(whole(ResponsesEvents::default(), &RESPONSES_CALLS[..cut]).1),
        "response.completed"
    );
    // Cut in the middle of an event's line: still an error.
    assert_eq!(
        truncated(whole(ChatEvents::default(), &CHAT_CALLS[..CHAT_CALLS.len() / 2]).1),
        "[DONE]"
    );
}

#[test]
fn v2_garbage_is_a_protocol_error_not_a_panic() {
    for text in ["data: <html>502</html>\n\n", "data: {\"choices\": [\n\n"] {
        assert!(matches!(
            whole(ChatEvents::default(), text).1,
            Some(ModelError::Protocol(_))
        ));
        assert!(matches!(
            whole(AnthropicEvents::default(), text).1,
            Some(ModelError::Protocol(_))
        ));
        assert!(matches!(
            whole(ResponsesEvents::default(), text).1,
            Some(ModelError::Protocol(_))
        ));
    }
    // Well-formed JSON of the wrong shape is ignored, then the missing end is the error.
    let odd = "data: {\"choices\": 7, \"usage\": \"many\"}\n\ndata: [1,2]\n\n";
    assert!(matches!(
        whole(ChatEvents::default(), odd).1,
        Some(ModelError::Transport(_))
    ));
}

#[test]
fn v2_servers_that_omit_the_call_index_still_give_separate_calls() {
    // Ollama-style: each call whole in one chunk, without `index`.
    let text = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"call_a\",\"function\":{\"name\":\"t\",\"arguments\":\"{\\\"x\\\":1}\"}}]}}]}\n\n\
                data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"call_b\",\"function\":{\"name\":\"t\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n\
                data: [DONE]\n\n";
    let (events, error) = whole(ChatEvents::default(), text);
    assert!(error.is_none());
    let s = summary(&events);
    assert_eq!(s.calls.len(), 2);
    assert_eq!(s.calls[&0].2, r#"{"x":1}"#);
    assert_eq!(s.calls[&1].0, "call_b");
}

// V2: llama.cpp's server gives a Responses function call no `output_index` (nor an
// item `id`), and names it in its argument deltas by `item_id` = its `call_id`.
#[test]
fn v2_responses_calls_without_output_index_are_placed_by_item_id() {
    let (events, error) = whole(ResponsesEvents::default(), LLAMACPP_RESPONSES_CALLS);
    assert!(error.is_none(), "{error:?}");
    let s = summary(&events);
    assert_eq!(s.text, "Ich prüfe beide Fenster.");
    assert_eq!(
        s.calls[&0],
        call("fc_Hc3VxQ9pL2", r#"{"service_id":"svc-42","days":3}"#, true)
    );
    assert_eq!(
        s.calls[&1],
        call("fc_Wn8sYd1Rb5", r#"{"service_id":"svc-7"}"#, true)
    );
    assert_eq!(s.usage, Usage::new(412, 57));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

// V2: an argument delta that no started call claims is an error: dropping it would
// change the call's arguments without a word.
#[test]
fn v2_a_responses_argument_delta_of_no_started_call_is_an_error() {
    let added = "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"item\":{\"type\":\"function_call\",\"call_id\":\"fc_a\",\"name\":\"t\",\"arguments\":\"\"}}\n\n";
    let stray = "event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_b\",\"delta\":\"{}\"}\n\n";
    let (_, error) = whole(ResponsesEvents::default(), &format!("{added}{stray}"));
    match error {
        Some(ModelError::Protocol(text)) => assert!(text.contains("fc_b"), "{text}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
}
