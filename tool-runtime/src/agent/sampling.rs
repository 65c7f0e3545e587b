//! A handler's sampling requests and roots in an agent run (M8), answered as its questions are
//! (M3): by the application's [`Sampler`] ([`AgentBuilder::sampler`]) or the run's own model
//! ([`AgentBuilder::sample_with_own_model`]), and the application's roots
//! ([`AgentBuilder::roots`]). A run whose context names a sampler or roots of its own uses
//! those.

use std::sync::Arc;

use futures_util::StreamExt;
use tool_core::Context;
use tool_core::roots::RootsSource;
use tool_core::sampling::{
    MAX_ANSWER_BYTES, SampleError, SampleFuture, Sampler, SamplingAnswer, SamplingRequest,
    SamplingRole,
};

use super::builder::AgentBuilder;
use super::shared::Shared;
use crate::model::{Message, ModelEvent, ModelRequest};

/// Who answers an agent's handlers' sampling requests and roots requests.
#[derive(Clone, Default)]
pub(crate) struct Answerers {
    sampling: Option<Sampling>,
    roots: Option<Arc<dyn RootsSource>>,
}

/// Who answers sampling requests.
#[derive(Clone)]
enum Sampling {
    /// The application's sampler.
    Handler(Arc<dyn Sampler>),
    /// The run's own model.
    OwnModel,
}

impl AgentBuilder {
    /// Answers the sampling requests the agent's handlers make
    /// ([`tool_core::Context::sample`], M8): `sampler` gets each request and answers for the
    /// client's model. Without a sampler (or [`AgentBuilder::sample_with_own_model`]), a
    /// handler's `sample` fails with [`SampleError::Unsupported`].
    pub fn sampler(mut self, sampler: impl Sampler + 'static) -> Self {
        self.answerers.sampling = Some(Sampling::Handler(Arc::new(sampler)));
        self
    }

    /// Answers the sampling requests the agent's handlers make with the run's own model (M8):
    /// the request's messages and system prompt, no tools; its text is the answer. The
    /// request is not counted in the run's usage limits.
    pub fn sample_with_own_model(mut self) -> Self {
        self.answerers.sampling = Some(Sampling::OwnModel);
        self
    }

    /// The roots the agent's handlers read ([`tool_core::Context::roots`], M8): a fixed list
    /// (`Vec<Root>`) or any [`RootsSource`]. Without roots, a handler's `roots` fails with
    /// [`tool_core::RootsError::Unsupported`].
    pub fn roots(mut self, roots: impl RootsSource + 'static) -> Self {
        self.answerers.roots = Some(Arc::new(roots));
        self
    }
}

/// `ctx` with the agent's sampler and roots, where it names none of its own.
pub(crate) fn with_answerers(ctx: Context, shared: &Arc<Shared>) -> Context {
    let answerers = &shared.answerers;
    let ctx = match &answerers.sampling {
        Some(_) if ctx.can_sample() => ctx,
        Some(Sampling::Handler(sampler)) => ctx.with_sampler(Arc::clone(sampler)),
        Some(Sampling::OwnModel) => ctx.with_sampler(Arc::new(OwnModel {
            shared: Arc::clone(shared),
        })),
        None => ctx,
    };
    match &answerers.roots {
        Some(roots) if !ctx.has_roots() => ctx.with_roots_source(Arc::clone(roots)),
        _ => ctx,
    }
}

/// The run's own model, answering a sampling request.
struct OwnModel {
    shared: Arc<Shared>,
}

impl Sampler for OwnModel {
    fn sample<'a>(
        &'a self,
        _key: Option<&'a str>,
        request: &'a SamplingRequest,
    ) -> SampleFuture<'a> {
        Box::pin(async move {
            let messages: Vec<Message> = (request.messages.iter())
                .map(|message| match message.role {
                    SamplingRole::User => Message::user(&message.text),
                    SamplingRole::Assistant => Message::assistant(&message.text),
                })
                .collect();
            let model = &self.shared.model;
            let mut stream = model.stream(ModelRequest {
                instructions: request.system_prompt.as_deref(),
                messages: &messages,
                tools: &[],
                tool_choice: None,
                answer: None,
            });
            let mut text = String::new();
            while let Some(event) = stream.next().await {
                match event.map_err(|e| SampleError::Failed(format!("{e:#}")))? {
                    ModelEvent::TextDelta(delta) => text.push_str(&delta),
                    ModelEvent::ToolCallStart { .. } => {
                        return Err(SampleError::Invalid(
                            "the model called a tool, and none was offered".into(),
                        ));
                    }
                    _ => {}
                }
                if text.len() > MAX_ANSWER_BYTES {
                    return Err(SampleError::TooLarge {
                        limit: MAX_ANSWER_BYTES,
                    });
                }
            }
            Ok(SamplingAnswer {
                text,
                model: model.model_name().to_owned(),
                stop_reason: None,
            })
        })
    }
}
