//! A run's typed final answer (O2): [`Typed`].

use tool_core::ErrorKind;
use tool_core::schema::{Schema, parse_arguments};
use tool_core::violation::ParseCx;

use super::error::RunError;
use super::output::RunOutput;

/// The typed final answer of a run (O2, [`crate::RunRequest::typed`]), with the run's output
/// (whose `text` is the answer's JSON).
#[derive(Debug)]
pub struct Typed<T> {
    /// The answer, parsed by its type's parser.
    pub value: T,
    /// The run's output.
    pub output: RunOutput,
}

impl<T: Schema> Typed<T> {
    /// The answer of `output`, whose text the run checked already.
    pub(crate) fn read(output: RunOutput) -> Result<Self, RunError> {
        let mut cx = ParseCx::new();
        match parse_arguments::<T>(output.text.as_bytes(), &mut cx) {
            Ok(Some(value)) => Ok(Self { value, output }),
            // The run checked the answer with the same parser: this does not happen.
            _ => Err(RunError::new(
                ErrorKind::Protocol,
                "the final answer did not parse again after it was checked",
            )),
        }
    }
}
