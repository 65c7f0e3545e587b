//! One question of a handler to its MCP client (elicitation, sampling, roots: M3, M8), asked
//! through a carrier: a call's input rounds on 2026-07-28 (`rounds`), a task of the Tasks
//! extension (`tasks::input`), or the one then the other as a call becomes a task
//! (`tasks::later`). A carrier says how it asks one question ([`Carrier`]); what each kind of
//! question is on the wire, and what the handler is told of its answer, is written once here
//! ([`Through`]).
// Sampling and roots are deprecated by SEP-2577 in rmcp's types; 2026-07-28 still has them.
#![allow(deprecated)]

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{
    CreateMessageRequest, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, ListRootsRequest,
};
use serde_json::Value;
use tool_core::Context;
use tool_core::elicit::{ElicitAnswer, ElicitError, ElicitFuture, Elicitor};
use tool_core::roots::{RootsError, RootsFuture, RootsSource};
use tool_core::sampling::{SampleError, SampleFuture, Sampler, SamplingRequest};

use super::{roots, sampling};

/// The client's capabilities a handler's questions need (M8): a question of a kind the client
/// did not declare is refused to the handler, never sent.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Declared {
    /// `elicitation` (form questions).
    pub(crate) elicitation: bool,
    /// `sampling`.
    pub(crate) sampling: bool,
    /// `roots`.
    pub(crate) roots: bool,
}

impl Declared {
    /// Whether any question can be asked.
    pub(crate) fn any(self) -> bool {
        self.elicitation || self.sampling || self.roots
    }
}

/// One question a handler asks its client.
#[derive(Clone, Copy)]
pub(crate) enum Question<'a> {
    /// A form for its user (`elicitation/create`).
    Elicit {
        /// What the user is asked.
        message: &'a str,
        /// The form's schema.
        schema: &'a Value,
    },
    /// A request to its model (`sampling/createMessage`).
    Sample(&'a SamplingRequest),
    /// Its roots (`roots/list`).
    Roots,
}

impl Question<'_> {
    /// Whether a client that declared `declared` answers questions of this kind.
    fn declared_by(self, declared: Declared) -> bool {
        match self {
            Question::Elicit { .. } => declared.elicitation,
            Question::Sample(_) => declared.sampling,
            Question::Roots => declared.roots,
        }
    }

    /// The request the client is sent; why it cannot be, for a form MCP cannot carry.
    pub(crate) fn request(self) -> Result<InputRequest, String> {
        match self {
            Question::Elicit { message, schema } => elicitation_request(message, schema),
            Question::Sample(request) => Ok(InputRequest::CreateMessage(
                CreateMessageRequest::new(sampling::params_of(request)),
            )),
            Question::Roots => Ok(InputRequest::ListRoots(ListRootsRequest::default())),
        }
    }
}

/// Why a question got no answer.
pub(crate) enum NoAnswer {
    /// Nobody can answer it here: the call went on as a task, whose questions are asked
    /// there.
    Unsupported,
    /// The call or the task ended first: the handler is told it was cancelled.
    Ended,
    /// Another question had this key.
    KeyTaken {
        /// The key.
        key: String,
        /// Whose question had it.
        reason: &'static str,
    },
    /// It cannot be asked: too many questions, or one MCP cannot carry.
    Failed(String),
}

/// What carries a handler's questions to its client.
pub(crate) trait Carrier: Send + Sync + 'static {
    /// What the client declared it answers: a question of another kind is never carried.
    fn declared(&self) -> Declared;

    /// Asks `question` under `key` (else the carrier's `question-N`) and waits for the
    /// client's answer.
    fn carry(
        &self,
        key: Option<&str>,
        question: Question<'_>,
    ) -> impl Future<Output = Result<Value, NoAnswer>> + Send;
}

/// The elicitor, sampler and roots source of a handler's context, asking through a carrier.
pub(crate) struct Through<C>(pub(crate) Arc<C>);

impl<C: Carrier> Through<C> {
    /// The client's answer to `question`, or why there is none; `Unsupported` for a kind the
    /// client did not declare.
    async fn asked(&self, key: Option<&str>, question: Question<'_>) -> Result<Value, NoAnswer> {
        if !question.declared_by(self.0.declared()) {
            return Err(NoAnswer::Unsupported);
        }
        self.0.carry(key, question).await
    }

    async fn elicit_as(
        &self,
        key: Option<&str>,
        message: &str,
        schema: &Value,
    ) -> Result<ElicitAnswer, ElicitError> {
        match self.asked(key, Question::Elicit { message, schema }).await {
            Ok(answer) => Ok(answer_of(&answer)),
            Err(NoAnswer::Ended) => Ok(ElicitAnswer::Cancel),
            Err(NoAnswer::Unsupported) => Err(ElicitError::Unsupported),
            Err(NoAnswer::KeyTaken { key, reason }) => Err(ElicitError::Key { key, reason }),
            Err(NoAnswer::Failed(reason)) => Err(ElicitError::Failed(reason)),
        }
    }
}

impl<C: Carrier> Elicitor for Through<C> {
    fn elicit<'a>(&'a self, message: &'a str, schema: &'a Value) -> ElicitFuture<'a> {
        Box::pin(self.elicit_as(None, message, schema))
    }

    fn elicit_named<'a>(
        &'a self,
        key: &'a str,
        message: &'a str,
        schema: &'a Value,
    ) -> ElicitFuture<'a> {
        Box::pin(self.elicit_as(Some(key), message, schema))
    }
}

impl<C: Carrier> Sampler for Through<C> {
    fn sample<'a>(
        &'a self,
        key: Option<&'a str>,
        request: &'a SamplingRequest,
    ) -> SampleFuture<'a> {
        Box::pin(async move {
            match self.asked(key, Question::Sample(request)).await {
                Ok(answer) => sampling::answer_of_value(&answer),
                Err(NoAnswer::Ended) => Err(SampleError::Cancelled),
                Err(NoAnswer::Unsupported) => Err(SampleError::Unsupported),
                Err(NoAnswer::KeyTaken { reason, .. }) => Err(SampleError::Request(reason)),
                Err(NoAnswer::Failed(reason)) => Err(SampleError::Failed(reason)),
            }
        })
    }
}

impl<C: Carrier> RootsSource for Through<C> {
    fn roots<'a>(&'a self, key: Option<&'a str>) -> RootsFuture<'a> {
        Box::pin(async move {
            match self.asked(key, Question::Roots).await {
                Ok(answer) => roots::roots_of_value(&answer),
                Err(NoAnswer::Ended) => Err(RootsError::Cancelled),
                Err(NoAnswer::Unsupported) => Err(RootsError::Unsupported),
                Err(NoAnswer::KeyTaken { key, .. }) => Err(RootsError::Key(key)),
                Err(NoAnswer::Failed(reason)) => Err(RootsError::Failed(reason)),
            }
        })
    }
}

/// `call_ctx` asking its questions (elicitation, sampling, roots) through `carrier`.
pub(crate) fn questions_in<C: Carrier>(call_ctx: Context, carrier: &Arc<C>) -> Context {
    let through = Arc::new(Through(Arc::clone(carrier)));
    call_ctx
        .with_elicitor(Arc::clone(&through) as Arc<dyn Elicitor>)
        .with_sampler(Arc::clone(&through) as Arc<dyn Sampler>)
        .with_roots_source(through as Arc<dyn RootsSource>)
}

/// The input request asking `message` with the form `schema` (an elicitation).
pub(crate) fn elicitation_request(message: &str, schema: &Value) -> Result<InputRequest, String> {
    let schema: ElicitationSchema = serde_json::from_value(schema.clone())
        .map_err(|e| format!("the schema is not one MCP elicitation takes: {e}"))?;
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message.to_owned(),
        requested_schema: schema,
    };
    Ok(InputRequest::Elicitation(ElicitRequest::new(params)))
}

/// The handler's answer from the client's `ElicitResult`; anything unreadable is a decline.
pub(crate) fn answer_of(answer: &Value) -> ElicitAnswer {
    match serde_json::from_value::<ElicitResult>(answer.clone()) {
        Ok(result) => match result.action {
            ElicitationAction::Accept => {
                ElicitAnswer::Accept(result.content.unwrap_or(Value::Object(Default::default())))
            }
            ElicitationAction::Cancel => ElicitAnswer::Cancel,
            _ => ElicitAnswer::Decline,
        },
        Err(_) => ElicitAnswer::Decline,
    }
}
