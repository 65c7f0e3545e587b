//! Handler and policy glue for generated code: results rendered for the model (E1), policy
//! outputs boxed (A1), and the compile-time checks that point a wrong signature at the user's
//! code.

use crate::approval::Approval;
use crate::context::Context;
use crate::error::BoxError;

/// The boxed policy error of a policy's output.
pub fn policy_output<E: Into<BoxError>>(out: Result<bool, E>) -> Result<bool, BoxError> {
    out.map_err(Into::into)
}

/// Checks at compile time that a handler's result can be sent to the model.
pub fn assert_serialize<T: serde::Serialize>() {}

/// Renders a handler's success for the model (E1).
///
/// Generated code calls this at the span of the handler's return type, so that a success type
/// that is not `Serialize` is reported there, once. The text it returns renders to itself
/// again in the tool's pipeline (a JSON string goes to the model as its text).
///
/// # Errors
///
/// Returns the handler's error, or the serialization error.
pub fn render_output<T: serde::Serialize>(
    out: Result<T, BoxError>,
) -> Result<crate::tool::Rendered, BoxError> {
    out.and_then(|value| crate::tool::render_rich(&value))
}

/// What an availability policy returns: `Result<bool, E>` with `E: Into<BoxError>` (A1).
#[diagnostic::on_unimplemented(
    message = "an availability policy returns `Result<bool, E>`, and this one returns `{Self}`",
    label = "this policy must be `async fn(&Context) -> Result<bool, E>` or `fn(&Context) -> Result<bool, E>`",
    note = "`E` is any error that converts into `BoxError`: any std error, `Box<dyn Error + Send + Sync>`, `anyhow::Error`"
)]
pub trait PolicyOutput {
    /// The output with its error boxed.
    fn into_policy_result(self) -> Result<bool, BoxError>;
}

impl<E: Into<BoxError>> PolicyOutput for Result<bool, E> {
    fn into_policy_result(self) -> Result<bool, BoxError> {
        self.map_err(Into::into)
    }
}

/// The boxed output of a policy. Generated code calls this at the span of the policy's path,
/// so that a policy of the wrong signature is reported there.
///
/// # Errors
///
/// Returns the policy's error, boxed.
pub fn policy_result<T: PolicyOutput>(out: T) -> Result<bool, BoxError> {
    out.into_policy_result()
}

/// Calls an availability policy, a fn of `&Context` (A1). Generated code calls this at the
/// span of the policy's path, so a policy that takes anything else is reported there, with
/// the signature it should have.
pub fn call_policy<'a, F, R>(policy: F, ctx: &'a Context) -> R
where
    F: FnOnce(&'a Context) -> R,
{
    policy(ctx)
}

/// What an approval predicate returns: `Result<Approval, E>` with `E: Into<BoxError>` (H1).
#[diagnostic::on_unimplemented(
    message = "an approval predicate returns `Result<Approval, E>`, and this one returns `{Self}`",
    label = "this predicate must be `async fn(&Context, &Input) -> Result<Approval, E>` or `fn(&Context, &Input) -> Result<Approval, E>`",
    note = "return `Approval::required(\"why\")` to make the call wait for a decision, `Approval::NotRequired` to run it now; `E` is any error that converts into `BoxError`"
)]
pub trait ApprovalOutput {
    /// The output with its error boxed.
    fn into_approval_result(self) -> Result<Approval, BoxError>;
}

impl<E: Into<BoxError>> ApprovalOutput for Result<Approval, E> {
    fn into_approval_result(self) -> Result<Approval, BoxError> {
        self.map_err(Into::into)
    }
}

/// The boxed output of an approval predicate. Generated code calls this at the span of the
/// predicate's path, so that a predicate of the wrong signature is reported there.
///
/// # Errors
///
/// Returns the predicate's error, boxed.
pub fn approval_result<T: ApprovalOutput>(out: T) -> Result<Approval, BoxError> {
    out.into_approval_result()
}

/// Calls an approval predicate, a fn of `&Context` and the tool's `&Input` (H1). Generated
/// code calls this at the span of the predicate's path, with the input type given, so a
/// predicate that takes anything else is reported there, with the signature it should have.
pub fn call_approval<'a, I, F, R>(predicate: F, ctx: &'a Context, input: &'a I) -> R
where
    F: FnOnce(&'a Context, &'a I) -> R,
{
    predicate(ctx, input)
}

/// The tool kept in `cell`, made by `make` the first time: what `#[tool]`'s `into_tool`
/// returns, a clone. Compiled once, rather than a `OnceLock` initialization per tool.
pub fn cached_tool(
    cell: &'static std::sync::OnceLock<crate::tool::Tool>,
    make: fn() -> crate::tool::Tool,
) -> crate::tool::Tool {
    cell.get_or_init(make).clone()
}
