//! How the macros report problems. Every error goes into darling's accumulator
//! (`darling::Error::accumulator()`), spanned on the token it is about; the accumulator is
//! finished once the input has been read (`ast`) and checked (`valid`), so that every problem
//! is reported at once.

use std::fmt::Display;

use proc_macro2::Span;

/// The error `message`, at `span`.
pub(crate) fn at(span: Span, message: impl Display) -> darling::Error {
    syn::Error::new(span, message).into()
}

/// Each of the errors held in a `syn::Error` (which may hold several), as darling errors.
pub(crate) fn from_syn(error: syn::Error) -> impl Iterator<Item = darling::Error> {
    error.into_iter().map(darling::Error::from)
}
