//! Autoref dispatch for generated code: a [`Probe`] of a value picks, by method resolution,
//! whether a handler's or policy's output is a future to await or a value, and whether it is a
//! `Result` or a plain value.

use std::future::{Future, Ready, ready};

use crate::error::BoxError;

/// Looks at a value's type to pick how to use it (autoref specialization): see
/// [`ViaFuture`] and [`ViaReady`].
pub struct Probe<'a, T>(pub &'a T);

/// Marks a value that is a future: it is awaited.
pub struct FutureTag;
/// Marks a value that is not a future: it is ready.
pub struct ReadyTag;

/// Picked for a [`Probe`] of a future.
pub trait ViaFuture {
    /// The tag.
    fn tag(&self) -> FutureTag {
        FutureTag
    }
}
impl<T: Future> ViaFuture for Probe<'_, T> {}

/// Picked for a [`Probe`] of anything else.
pub trait ViaReady {
    /// The tag.
    fn tag(&self) -> ReadyTag {
        ReadyTag
    }
}
impl<T> ViaReady for &Probe<'_, T> {}

impl FutureTag {
    /// The future itself.
    pub fn into_future<F: Future>(self, f: F) -> F {
        f
    }
}

impl ReadyTag {
    /// A future ready with the value.
    pub fn into_future<T>(self, value: T) -> Ready<T> {
        ready(value)
    }
}

/// Marks a `Result`: its error is boxed.
pub struct ResultTag;
/// Marks a plain value: it is a success.
pub struct PlainTag;

/// Picked for a [`Probe`] of a `Result` whose error converts to [`BoxError`].
pub trait ViaResult {
    /// The tag.
    fn result_tag(&self) -> ResultTag {
        ResultTag
    }
}
impl<T, E: Into<BoxError>> ViaResult for Probe<'_, Result<T, E>> {}

/// Picked for a [`Probe`] of anything else.
pub trait ViaPlain {
    /// The tag.
    fn result_tag(&self) -> PlainTag {
        PlainTag
    }
}
impl<T> ViaPlain for &Probe<'_, T> {}

impl ResultTag {
    /// The result with its error boxed.
    pub fn into_result<T, E: Into<BoxError>>(self, r: Result<T, E>) -> Result<T, BoxError> {
        r.map_err(Into::into)
    }
}

impl PlainTag {
    /// The value as a success.
    pub fn into_result<T>(self, value: T) -> Result<T, BoxError> {
        Ok(value)
    }
}

/// Looks at a handler's result type to pick its output schema (O1): see [`ViaSchemaOutput`]
/// and [`ViaPlainOutput`].
pub struct OutputProbe<T>(std::marker::PhantomData<fn() -> T>);

impl<T> OutputProbe<T> {
    /// A probe of `T`.
    pub fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<T> Default for OutputProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Picked for a result type that implements [`Schema`](crate::schema::Schema).
pub trait ViaSchemaOutput {
    /// The output schema, if the type declares one.
    fn output_schema(&self) -> Option<crate::tool::OutputSchema>;
}
impl<T: crate::schema::Schema> ViaSchemaOutput for &OutputProbe<T> {
    fn output_schema(&self) -> Option<crate::tool::OutputSchema> {
        crate::tool::OutputSchema::of::<T>()
    }
}

/// Picked for any other result type: no output schema.
pub trait ViaPlainOutput {
    /// No output schema.
    fn output_schema(&self) -> Option<crate::tool::OutputSchema> {
        None
    }
}
impl<T> ViaPlainOutput for OutputProbe<T> {}
