//! The stream of one request: open it (with retries), then read ConverseStream's frames,
//! or Converse's whole JSON answer, into [`ModelEvent`]s. Dropping the stream closes the
//! connection (P4).

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::Value;

use super::events::{self, ConverseEvents, END_MARKER};
use super::frames::{FrameDecoder, MAX_FRAME_BYTES};
use super::transport::{Opened, Transport};
use crate::model::{ModelError, ModelEvent, ModelStream};
use crate::providers::http::{TransportError, preview};
use crate::providers::stream::Unfold;

/// The event stream's media type.
pub(super) const EVENT_STREAM: &str = "application/vnd.amazon.eventstream";

struct State {
    transport: Arc<Transport>,
    body: String,
    streaming: bool,
    opened: Option<Opened>,
    decoder: FrameDecoder,
    events: ConverseEvents,
    ready: VecDeque<ModelEvent>,
    error: Option<ModelError>,
    finished: bool,
}

/// The stream of the request `body`, sent to ConverseStream (`streaming`) or Converse.
pub(super) fn answer<'a>(
    transport: Arc<Transport>,
    body: String,
    streaming: bool,
) -> ModelStream<'a> {
    let state = State {
        transport,
        body,
        streaming,
        opened: None,
        decoder: FrameDecoder::default(),
        events: ConverseEvents::default(),
        ready: VecDeque::new(),
        error: None,
        finished: false,
    };
    Box::pin(Unfold::new(state, next))
}

async fn next(mut st: State) -> Option<(Result<ModelEvent, ModelError>, State)> {
    loop {
        if let Some(event) = st.ready.pop_front() {
            return Some((Ok(event), st));
        }
        if let Some(error) = st.error.take() {
            st.finished = true;
            st.opened = None;
            return Some((Err(error), st));
        }
        if st.finished {
            return None;
        }
        let mut out = Vec::new();
        let step = step(&mut st, &mut out).await;
        st.ready.extend(out);
        match step {
            Ok(true) => {
                st.finished = true;
                st.opened = None;
            }
            Ok(false) => {}
            Err(e) => st.error = Some(e),
        }
    }
}

/// Reads what comes next; returns whether the answer is complete.
async fn step(st: &mut State, out: &mut Vec<ModelEvent>) -> Result<bool, ModelError> {
    let Some(opened) = st.opened.as_mut() else {
        let accept = if st.streaming {
            EVENT_STREAM
        } else {
            "application/json"
        };
        let mut opened = st.transport.open(&st.body, accept).await?;
        check_type(&mut opened, st.streaming).await?;
        st.events.set_request_id(opened.request_id.clone());
        if !st.streaming {
            let body = opened.read_all(MAX_FRAME_BYTES).await?;
            let answer: Value = serde_json::from_slice(&body).map_err(|_| {
                ModelError::Protocol(format!(
                    "the Converse answer is not JSON: {}",
                    preview(&String::from_utf8_lossy(&body), 300)
                ))
            })?;
            out.extend(events::from_converse(
                &answer,
                opened.request_id.as_deref(),
            )?);
            return Ok(true);
        }
        st.opened = Some(opened);
        return Ok(false);
    };
    match opened.next_chunk().await? {
        Some(chunk) => {
            let frames = st
                .decoder
                .push(&chunk)
                .map_err(|e| ModelError::Protocol(e.to_string()))?;
            for frame in frames {
                st.events.on_frame(frame, out)?;
            }
            Ok(false)
        }
        None if st.events.stopped() && !st.decoder.is_mid_frame() => Ok(true),
        None => Err(ModelError::Transport(Box::new(TransportError::Truncated {
            expected: END_MARKER,
        }))),
    }
}

/// A success whose body is not what was asked for (a proxy's HTML page) is a protocol error
/// that names the type and shows the start of the body.
async fn check_type(opened: &mut Opened, streaming: bool) -> Result<(), ModelError> {
    let found = opened.content_type();
    let expected = if streaming {
        EVENT_STREAM
    } else {
        "application/json"
    };
    if found == expected || (found.is_empty() && streaming) {
        return Ok(());
    }
    let body = opened.read_all(64 * 1024).await.unwrap_or_default();
    let body = String::from_utf8_lossy(&body);
    Err(ModelError::Protocol(format!(
        "the provider answered with content type `{found}` where `{expected}` was expected: {}",
        preview(body.trim(), 300)
    )))
}
