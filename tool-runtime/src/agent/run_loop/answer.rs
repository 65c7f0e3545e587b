//! A run asked for a typed final answer (O2): through the model's native structured output
//! ([`Model::native_answers`](crate::Model::native_answers)), or else through a final-answer
//! tool. Either way the answer is parsed by the answer type's own parser (S2), and an answer
//! that does not fit goes back to the model with its violations, under the retry budget (L1).

use tool_core::schema::{Schema, parse_arguments, render_root};
use tool_core::violation::{ParseCx, Rule, Violation, render_violations};
use tool_core::{ErrorKind, Tool};

use crate::agent::error::RunError;
use crate::agent::state::AnswerState;
use crate::model::{AnswerFormat, Model, ToolSpec};

pub(crate) use crate::agent::state::ANSWER_NAME;

/// What the model reads when it answers in text where a call of the final-answer tool is
/// wanted.
const CALL_THE_TOOL: &str = "Give your final answer by calling the `final_answer` tool \
                             with arguments that fit its schema.";

/// How one run gets its typed answer.
pub(crate) struct Answering {
    /// The answer's name and schema.
    pub(crate) format: AnswerFormat,
    /// The final-answer tool, for a model that takes no native answers.
    pub(crate) tool: Option<ToolSpec>,
    /// Parses an answer's JSON text with the answer type's parser.
    check: fn(&str) -> Result<(), Misfit>,
}

impl Answering {
    /// The typed answer `T` of a run on `model`.
    ///
    /// # Errors
    ///
    /// Kind `Declaration` when `T`'s schema has no object root (an answer is a JSON object)
    /// or the model cannot express it as a tool.
    pub(crate) fn of<T: Schema + Send + 'static>(model: &dyn Model) -> Result<Self, RunError> {
        let schema = render_root::<T>().map_err(|e| {
            RunError::new(
                ErrorKind::Declaration,
                format!("a typed answer must be a JSON object: {e}"),
            )
        })?;
        let format = AnswerFormat::new(ANSWER_NAME, schema.clone());
        let tool = if model.native_answers() {
            None
        } else {
            let declared = Tool::builder(
                ANSWER_NAME,
                "Give the final answer. Call this once you have everything the answer needs.",
            )
            .handler(|_ctx, answer: T| async move {
                Ok::<_, std::convert::Infallible>(answer.to_json())
            })
            .build();
            // The answer type's schema, adapted by the driver as any tool's.
            let spec = model.tool_spec(&declared).map_err(|e| {
                RunError::with_source(
                    ErrorKind::Declaration,
                    "the model cannot take the answer's schema as a tool",
                    e,
                )
            })?;
            Some(spec)
        };
        Ok(Self {
            format,
            tool,
            check: check::<T>,
        })
    }

    /// The state a new run keeps of this answer (H7), with the retry budget `budget`.
    pub(crate) fn start(&self, budget: u32) -> AnswerState {
        AnswerState {
            schema: self.fingerprint(),
            native: self.native(),
            budget,
            failures: 0,
        }
    }

    /// Whether a paused run's answer `state` is this answer: the same schema, taken the same
    /// way (H7).
    pub(crate) fn fits(&self, state: &AnswerState) -> bool {
        state.schema == self.fingerprint() && state.native == self.native()
    }

    /// The fingerprint of the answer's schema.
    fn fingerprint(&self) -> String {
        crate::agent::pause::value_fingerprint(self.format.schema())
    }

    /// Whether the model takes the answer natively.
    pub(crate) fn native(&self) -> bool {
        self.tool.is_none()
    }

    /// Checks the answer `text`, given by the call `call_id` of the final-answer tool (or, as
    /// native output, by no call): `Ok` when it fits; otherwise what the model is told, or the
    /// failure that ends the run when the budget in `state` is spent.
    pub(crate) fn judge(
        &self,
        text: &str,
        call_id: Option<&str>,
        state: &mut AnswerState,
    ) -> Result<(), Correction> {
        match (self.check)(text) {
            Ok(()) => Ok(()),
            Err((violations, dropped)) => {
                let message = format!(
                    "Your final answer does not fit its schema.\n{}",
                    render_violations(&violations, dropped)
                );
                failed(state, message, call_id, violations)
            }
        }
    }

    /// A reply in text where the final-answer tool was wanted.
    pub(crate) fn text_instead_of_call(&self, state: &mut AnswerState) -> Correction {
        match failed(state, CALL_THE_TOOL.to_owned(), None, Vec::new()) {
            Err(correction) => correction,
            Ok(()) => Correction::Retry(CALL_THE_TOOL.to_owned()),
        }
    }
}

/// An answer that did not fit: counted in `state` against its budget (L1). The failure that
/// ends the run names the call that gave the last answer, if a call did.
fn failed(
    state: &mut AnswerState,
    message: String,
    call_id: Option<&str>,
    violations: Vec<Violation>,
) -> Result<(), Correction> {
    state.failures += 1;
    if state.failures > state.budget {
        let error = RunError::new(
            ErrorKind::RetriesExhausted,
            format!(
                "the final answer did not fit its schema {} times in a row, more than its \
                 retry budget of {}",
                state.failures, state.budget
            ),
        )
        .with_tool(ANSWER_NAME);
        let error = match call_id {
            Some(id) => error.with_call(id, violations),
            None => error.with_violations(violations),
        };
        return Err(Correction::GiveUp(Box::new(error)));
    }
    Err(Correction::Retry(message))
}

/// Why an answer does not fit: its violations, and how many more were dropped.
type Misfit = (Vec<Violation>, usize);

/// What follows an answer that did not fit.
pub(crate) enum Correction {
    /// Tell the model this, and go on.
    Retry(String),
    /// The retry budget is spent: the run ends.
    GiveUp(Box<RunError>),
}

/// Parses `text` as a `T` (S2): its violations when it does not fit, a syntax violation when
/// it is not JSON.
fn check<T: Schema>(text: &str) -> Result<(), Misfit> {
    let mut cx = ParseCx::new();
    match parse_arguments::<T>(text.as_bytes(), &mut cx) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => {
            let (violations, dropped, _) = cx.finish();
            Err((violations, dropped))
        }
        Err(e) => Err((
            vec![Violation {
                path: String::new(),
                rule: Rule::Syntax,
                message: e.to_string(),
            }],
            0,
        )),
    }
}
