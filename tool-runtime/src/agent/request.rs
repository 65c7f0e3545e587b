//! [`RunRequest`]: one run of an agent described whole before it starts — where it starts (a
//! conversation, or a paused run with the decisions for its pending calls), its options, its
//! typed answer and its journal — and [`Answer`], what a run gives back.
//!
//! [`Agent::execute`](super::Agent::execute) runs a request to its end and
//! [`Agent::execute_stream`](super::Agent::execute_stream) as a stream of events; `run`,
//! `run_stream` and `resume` are shorthands of the two.
//!
//! A pause stays an error kind (`Paused`, with [`RunError::into_paused`]) rather than a
//! second kind of success: a caller that does not expect approvals passes the run's result
//! on with `?` and cannot mistake a run that stopped half-way for an answer, while the caller
//! that holds tools needing approval matches the one kind it expects. The same holds for
//! every way a run is started, so the request does not change it.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use tool_core::{ErrorKind, Schema};

use super::error::RunError;
use super::event::{Observer, RunEvent};
use super::journal::Journal;
use super::options::RunOptions;
use super::output::RunOutput;
use super::pause::{Decisions, PausedRun, ResumeOptions};
use super::run_loop::{Answering, Start};
use super::typed::Typed;
use crate::model::{Input, Model};

/// One run of an agent: where it starts, its options, its typed answer and its journal.
///
/// Built with [`RunRequest::new`] (a conversation) or [`RunRequest::resume`] (a paused run
/// and the decisions that resume it), then given to [`Agent::execute`] or
/// [`Agent::execute_stream`]. `O` is what the run gives back: a [`RunOutput`], or a
/// [`Typed`] answer after [`RunRequest::typed`].
///
/// ```
/// use tool_runtime::{Agent, Context, RunOptions, RunRequest, ScriptedModel, ScriptedTurn, UsageLimits};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = Agent::builder(ScriptedModel::new([ScriptedTurn::reply("Done.")])).build()?;
/// let options = RunOptions::new().limits(UsageLimits::new().requests(2));
/// let out = agent
///     .execute(&Context::new(), RunRequest::new("Go").options(options))
///     .await?;
/// assert_eq!(out.text, "Done.");
/// # Ok(())
/// # }
/// ```
///
/// [`Agent::execute`]: super::Agent::execute
/// [`Agent::execute_stream`]: super::Agent::execute_stream
#[must_use = "a request does nothing until an agent executes it"]
pub struct RunRequest<'j, O = RunOutput> {
    begin: Begin,
    journal: Option<&'j dyn Journal>,
    observer: Option<Observer>,
    answer: PhantomData<fn() -> O>,
}

/// Where a request starts, with the options of that kind of start.
enum Begin {
    /// A new run of this conversation, with its own options or the agent's.
    New(Input, Option<RunOptions>),
    /// A paused run, with its decisions and what the resume adds (H7, H9).
    Resume(Box<PausedRun>, Decisions, ResumeOptions),
    /// Options for a new run given to a resume (or the reverse): refused when executed.
    Mismatch(&'static str),
}

impl RunRequest<'static, RunOutput> {
    /// A new run of `input`: a prompt, or a conversation (`Vec<Message>`, an earlier run's
    /// [`RunOutput`]). It runs with the agent's options unless [`RunRequest::options`] gives
    /// its own.
    pub fn new(input: impl Into<Input>) -> Self {
        Self::starting(Begin::New(input.into(), None))
    }

    /// The paused run `paused`, resumed with `decisions` for its pending calls (H3, H4): the
    /// run keeps the options it paused with (H7); [`RunRequest::resume_options`] adds what a
    /// resume may add.
    pub fn resume(paused: PausedRun, decisions: Decisions) -> Self {
        Self::starting(Begin::Resume(
            Box::new(paused),
            decisions,
            ResumeOptions::new(),
        ))
    }

    fn starting(begin: Begin) -> Self {
        RunRequest {
            begin,
            journal: None,
            observer: None,
            answer: PhantomData,
        }
    }
}

impl<'j, O> RunRequest<'j, O> {
    /// The options of a new run (limits, tool choice, stop tools), in place of the agent's;
    /// `None` keeps the agent's ([`AgentBuilder::options`](super::AgentBuilder::options)).
    ///
    /// A resumed run keeps the options sealed in its state (H7): options given to a request
    /// made by [`RunRequest::resume`] are refused when the request is executed (kind
    /// `Declaration`); give [`RunRequest::resume_options`] instead.
    pub fn options(mut self, options: impl Into<Option<RunOptions>>) -> Self {
        let Some(options) = options.into() else {
            return self;
        };
        self.begin = match self.begin {
            Begin::New(input, _) => Begin::New(input, Some(options)),
            Begin::Resume(..) => Begin::Mismatch(
                "`RunRequest::options` is for a new run: a resumed run keeps the options it \
                 paused with (H7); give `RunRequest::resume_options`",
            ),
            mismatch @ Begin::Mismatch(_) => mismatch,
        };
        self
    }

    /// What the resume of a paused run adds: tighter usage limits, the ledger that consumes
    /// the pause (H9).
    ///
    /// Only a request made by [`RunRequest::resume`] takes them: on a new run they are
    /// refused when the request is executed (kind `Declaration`).
    pub fn resume_options(mut self, options: ResumeOptions) -> Self {
        self.begin = match self.begin {
            Begin::Resume(paused, decisions, _) => Begin::Resume(paused, decisions, options),
            Begin::New(..) => Begin::Mismatch(
                "`RunRequest::resume_options` is for a request made by `RunRequest::resume`; \
                 a new run takes `RunRequest::options`",
            ),
            mismatch @ Begin::Mismatch(_) => mismatch,
        };
        self
    }

    /// Runs as a durable run (W1): every effect (discovery, each model request, each call)
    /// is a step of `journal`, which records its result and answers it without running it
    /// again when the run is taken again from the same journal after its process died. The
    /// run's id is the journal's ([`Journal::run_id`]); the calls of a turn run one at a
    /// time, in the model's order, unless the journal takes them as concurrent steps
    /// ([`Journal::parallel_calls`], W9), `max_concurrency` at most at once. A paused durable
    /// run resumes on the same journal.
    pub fn journal<'k>(self, journal: &'k dyn Journal) -> RunRequest<'k, O> {
        RunRequest {
            begin: self.begin,
            journal: Some(journal),
            observer: self.observer,
            answer: PhantomData,
        }
    }

    /// Hands each event of the run to `observer` as it happens, as
    /// [`Agent::execute_stream`](super::Agent::execute_stream) yields them (R4), whichever way
    /// the request is executed: a caller of [`Agent::execute`](super::Agent::execute) sees the
    /// model's text as it streams. On a durable run (W1) the events are those of the steps
    /// that run in this process: a step answered from the journal streams no text again.
    /// `observer` runs on the run's task: keep it short (hand the event to a channel).
    pub fn on_event(mut self, observer: impl Fn(&RunEvent) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Asks for a typed final answer (O2): the run ends only with an answer that parses as
    /// `T` (through the model's native structured output, or a final-answer tool), and gives
    /// back a [`Typed<T>`].
    pub fn typed<T: Schema + Send + 'static>(self) -> RunRequest<'j, Typed<T>> {
        RunRequest {
            begin: self.begin,
            journal: self.journal,
            observer: self.observer,
            answer: PhantomData,
        }
    }

    /// The journal this request runs on, if any.
    pub(crate) fn journal_ref(&self) -> Option<&'j dyn Journal> {
        self.journal
    }

    /// The request's observer of events, if any.
    pub(crate) fn observer(&self) -> Option<Observer> {
        self.observer.clone()
    }
}

impl<O: Answer> RunRequest<'_, O> {
    /// Where the run starts, for the run loop; kind `Declaration` when the request's options
    /// do not fit its start, or its answer type cannot be asked of `model`.
    pub(crate) fn into_start(self, model: &dyn Model) -> Result<Start, RunError> {
        let answering = O::answering(model)?.0.map(Box::new);
        match self.begin {
            Begin::New(input, options) => Ok(Start::Fresh(input, options, answering)),
            Begin::Resume(paused, decisions, options) => {
                Ok(Start::Resume(paused, decisions, options, answering))
            }
            Begin::Mismatch(why) => Err(RunError::new(ErrorKind::Declaration, why)),
        }
    }
}

impl<O> fmt::Debug for RunRequest<'_, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let start = match &self.begin {
            Begin::New(..) => "new",
            Begin::Resume(..) => "resume",
            Begin::Mismatch(_) => "mismatched options",
        };
        f.debug_struct("RunRequest")
            .field("start", &start)
            .field("journal", &self.journal.is_some())
            .field("observer", &self.observer.is_some())
            .field("answer", &std::any::type_name::<O>())
            .finish()
    }
}

/// What a run gives back: its [`RunOutput`], or a [`Typed`] answer with it. Sealed: the two
/// are all there is.
pub trait Answer: sealed::Sealed + Sized + Send + 'static {
    /// How a run gets this answer from `model` (O2), if it is a typed one.
    #[doc(hidden)]
    fn answering(model: &dyn Model) -> Result<sealed::Asking, RunError>;

    /// This answer, read from the run's output.
    #[doc(hidden)]
    fn read(output: RunOutput) -> Result<Self, RunError>;
}

impl Answer for RunOutput {
    fn answering(_model: &dyn Model) -> Result<sealed::Asking, RunError> {
        Ok(sealed::Asking(None))
    }

    fn read(output: RunOutput) -> Result<Self, RunError> {
        Ok(output)
    }
}

impl<T: Schema + Send + 'static> Answer for Typed<T> {
    fn answering(model: &dyn Model) -> Result<sealed::Asking, RunError> {
        Answering::of::<T>(model).map(|answering| sealed::Asking(Some(answering)))
    }

    fn read(output: RunOutput) -> Result<Self, RunError> {
        Typed::read(output)
    }
}

mod sealed {
    use crate::agent::run_loop::Answering;

    /// Only this crate's answers implement [`super::Answer`].
    pub trait Sealed {}

    /// How a run asks for its answer: a typed answer's schema and check, or nothing.
    pub struct Asking(pub(crate) Option<Answering>);
    impl Sealed for super::RunOutput {}
    impl<T> Sealed for super::Typed<T> {}
}
