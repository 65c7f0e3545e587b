//! The stream a driver returns: open the request (with retries), then decode the body's
//! server-sent events and map each to [`ModelEvent`]s, until the provider's end marker.
//!
//! The stream owns the HTTP response: dropping it closes the connection (P4).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::Stream;

use super::http::{Endpoint, Opened, TransportError};
use super::sse::{SseDecoder, SseEvent};
use crate::model::{ModelError, ModelEvent, ModelStream};

/// What a mapper says after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// More events are expected.
    Continue,
    /// The provider's end marker: the reply is complete.
    Done,
}

/// Turns one provider's events into [`ModelEvent`]s.
pub(crate) trait EventMapper: Send + 'static {
    /// Maps one event, pushing what it means onto `out`.
    ///
    /// # Errors
    ///
    /// Returns the provider's error event, or a protocol error for an event that cannot be
    /// read.
    fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<Flow, ModelError>;

    /// The end marker this provider sends, for the error when the stream ends without it.
    fn end_marker(&self) -> &'static str;

    /// Records the response's request id, for errors reported in the stream.
    fn set_request_id(&mut self, request_id: Option<String>);
}

/// Decodes chunks of a body through `mapper`.
#[derive(Debug)]
pub(crate) struct Pipeline<M> {
    decoder: SseDecoder,
    mapper: M,
    done: bool,
}

impl<M: EventMapper> Pipeline<M> {
    pub(crate) fn new(mapper: M) -> Self {
        Self {
            decoder: SseDecoder::new(),
            mapper,
            done: false,
        }
    }

    /// Feeds a chunk; returns whether the end marker was reached.
    ///
    /// # Errors
    ///
    /// Returns the first error of the chunk's events; events before it are in `out`.
    pub(crate) fn feed(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<ModelEvent>,
    ) -> Result<bool, ModelError> {
        if self.done {
            return Ok(true);
        }
        let events = self
            .decoder
            .push(chunk)
            .map_err(|e| ModelError::Protocol(e.to_string()))?;
        for event in events {
            if self.mapper.on_event(event, out)? == Flow::Done {
                self.done = true;
                break;
            }
        }
        Ok(self.done)
    }

    /// Ends the body: the reply is complete only if the end marker came.
    ///
    /// # Errors
    ///
    /// Returns [`TransportError::Truncated`] (as [`ModelError::Transport`]) when the stream
    /// ended before the end marker.
    pub(crate) fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        if !self.done
            && let Some(event) = self.decoder.finish()
        {
            self.done = self.mapper.on_event(event, out)? == Flow::Done;
        }
        if self.done {
            Ok(())
        } else {
            Err(ModelError::Transport(Box::new(TransportError::Truncated {
                expected: self.mapper.end_marker(),
            })))
        }
    }

    pub(crate) fn mapper_mut(&mut self) -> &mut M {
        &mut self.mapper
    }
}

/// The state of a driver's stream.
struct State<M> {
    endpoint: Arc<Endpoint>,
    body: Option<String>,
    response: Option<Opened>,
    pipeline: Pipeline<M>,
    ready: VecDeque<ModelEvent>,
    error: Option<ModelError>,
    finished: bool,
}

/// The stream of one request: `body` is sent to `endpoint` (or, if it could not be made,
/// its error is the only item), and the answer read through `mapper`. An error is the
/// stream's last item.
pub(crate) fn model_stream<'a, M: EventMapper>(
    endpoint: Arc<Endpoint>,
    body: Result<String, ModelError>,
    mapper: M,
) -> ModelStream<'a> {
    let (body, error) = match body {
        Ok(body) => (Some(body), None),
        Err(e) => (None, Some(e)),
    };
    let state = State {
        endpoint,
        body,
        response: None,
        pipeline: Pipeline::new(mapper),
        ready: VecDeque::new(),
        error,
        finished: false,
    };
    Box::pin(Unfold::new(state, next::<M>))
}

/// One step of the stream: the next event, after reading as much of the body as it takes.
async fn next<M: EventMapper>(
    mut st: State<M>,
) -> Option<(Result<ModelEvent, ModelError>, State<M>)> {
    loop {
        if let Some(event) = st.ready.pop_front() {
            return Some((Ok(event), st));
        }
        if let Some(error) = st.error.take() {
            st.finished = true;
            return Some((Err(error), st));
        }
        if st.finished {
            return None;
        }
        let mut out = Vec::new();
        let step = match st.response.as_mut() {
            None => {
                let body = st.body.take().unwrap_or_default();
                match st.endpoint.open(body).await {
                    Ok(mut opened) => {
                        st.pipeline
                            .mapper_mut()
                            .set_request_id(opened.request_id().map(str::to_owned));
                        let first = opened.take_first();
                        st.response = Some(opened);
                        match first {
                            Some(chunk) => st.pipeline.feed(&chunk, &mut out),
                            None => st.pipeline.finish(&mut out).map(|()| true),
                        }
                    }
                    Err(e) => Err(e),
                }
            }
            Some(opened) => {
                let pipeline = &mut st.pipeline;
                match opened
                    .next_chunk(|chunk| pipeline.feed(chunk, &mut out))
                    .await
                {
                    Ok(Some(fed)) => fed,
                    Ok(None) => pipeline.finish(&mut out).map(|()| true),
                    Err(e) => Err(e),
                }
            }
        };
        st.ready.extend(out);
        match step {
            Ok(false) => {}
            Ok(true) => {
                // The reply is complete: close the connection now.
                st.finished = true;
                st.response = None;
            }
            Err(e) => {
                st.error = Some(st.endpoint.scrub_error(e));
                st.response = None;
            }
        }
    }
}

/// A stream made of a state and a step function (like `futures::stream::unfold`): each
/// item is computed by an owned future, dropped with the stream.
pub(crate) struct Unfold<S, F, Fut> {
    state: Option<S>,
    step: F,
    pending: Option<Pin<Box<Fut>>>,
}

impl<S, F, Fut> Unfold<S, F, Fut> {
    pub(crate) fn new(state: S, step: F) -> Self {
        Self {
            state: Some(state),
            step,
            pending: None,
        }
    }
}

// No field is ever pinned in place: the future is boxed.
impl<S, F, Fut> Unpin for Unfold<S, F, Fut> {}

impl<S, T, F, Fut> Stream for Unfold<S, F, Fut>
where
    F: FnMut(S) -> Fut,
    Fut: Future<Output = Option<(T, S)>>,
{
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let this = self.get_mut();
        if this.pending.is_none() {
            let Some(state) = this.state.take() else {
                return Poll::Ready(None);
            };
            this.pending = Some(Box::pin((this.step)(state)));
        }
        let Some(pending) = this.pending.as_mut() else {
            return Poll::Ready(None);
        };
        match pending.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(step) => {
                this.pending = None;
                Poll::Ready(step.map(|(item, state)| {
                    this.state = Some(state);
                    item
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;

    #[tokio::test]
    async fn unfold_yields_until_the_step_says_none() {
        let mut stream = Unfold::new(0u32, |n| async move { (n < 3).then_some((n, n + 1)) });
        let mut seen = Vec::new();
        while let Some(n) = poll_fn(|cx| Pin::new(&mut stream).poll_next(cx)).await {
            seen.push(n);
        }
        assert_eq!(seen, [0, 1, 2]);
        assert!(
            poll_fn(|cx| Pin::new(&mut stream).poll_next(cx))
                .await
                .is_none()
        );
    }
}
