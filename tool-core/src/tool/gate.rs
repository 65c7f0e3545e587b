//! What makes a call pause (H1, H5): the approval a tool requires, always or by a predicate
//! over the validated input, and deferred tools, which have no handler here. The builder
//! methods that declare them, and the checks `build()` makes.

use std::any::{Any, TypeId, type_name};
use std::marker::PhantomData;
use std::sync::Arc;

use serde_json::Value;

use crate::approval::{Approval, ApprovalPredicate, AsyncApproval, AsyncApprovalFn, SyncApproval};
use crate::context::Context;
use crate::error::BoxError;
use crate::json::DecodeError;
use crate::policy::BoxFuture;
use crate::schema::{Schema, parse_arguments, render_root};
use crate::tool::{Body, DeclarationError, ErasedInput, ParsedInput, Site, ToolBuilder};
use crate::violation::ParseCx;

/// How a tool's calls are approved (H1).
#[derive(Clone)]
pub(crate) enum Gate {
    /// Every call waits for a decision.
    Always,
    /// The predicate decides, call by call.
    Predicate(Arc<dyn ErasedApproval>),
}

/// The approval declared on a builder, with the input type its predicate takes, checked
/// against the handler's at `build()`.
pub(crate) enum GateSpec {
    Always,
    Predicate {
        check: Arc<dyn ErasedApproval>,
        input: TypeId,
        input_name: &'static str,
    },
}

impl GateSpec {
    pub(crate) fn into_gate(self) -> Gate {
        match self {
            GateSpec::Always => Gate::Always,
            GateSpec::Predicate { check, .. } => Gate::Predicate(check),
        }
    }
}

/// The problem with a tool's approval, if any: a deferred tool pauses every call already, and
/// a predicate must take the input the handler takes.
pub(super) fn check(
    name: &str,
    site: Site,
    body: &Body,
    gate: &GateSpec,
) -> Option<DeclarationError> {
    match (body, gate) {
        (Body::Deferred(_), _) => Some(DeclarationError::ApprovalOnDeferred {
            name: name.to_owned(),
            site,
        }),
        (
            Body::Handler(_),
            GateSpec::Predicate {
                input, input_name, ..
            },
        ) => {
            let (expected, expected_name) = body.input_type();
            (expected != *input).then(|| DeclarationError::ApprovalInputMismatch {
                name: name.to_owned(),
                site,
                expected: expected_name,
                found: input_name,
            })
        }
        (Body::Handler(_), GateSpec::Always) => None,
    }
}

/// An approval predicate with its input type erased.
pub(crate) trait ErasedApproval: Send + Sync + 'static {
    /// Whether the call with this parsed input needs approval. An input of another type
    /// (which `build()` rules out) is an error.
    fn check<'a>(
        &'a self,
        ctx: &'a Context,
        input: &'a (dyn Any + Send),
    ) -> BoxFuture<'a, Result<Approval, BoxError>>;
}

struct TypedApproval<I, P> {
    predicate: P,
    _input: PhantomData<fn(&I)>,
}

impl<I, P> ErasedApproval for TypedApproval<I, P>
where
    I: Sync + 'static,
    P: ApprovalPredicate<I>,
{
    fn check<'a>(
        &'a self,
        ctx: &'a Context,
        input: &'a (dyn Any + Send),
    ) -> BoxFuture<'a, Result<Approval, BoxError>> {
        match input.downcast_ref::<I>() {
            Some(input) => self.predicate.check(ctx, input),
            None => Box::pin(std::future::ready(Err(
                "the approval predicate was given an input of another type".into(),
            ))),
        }
    }
}

/// The input parser of a deferred tool whose input type derives `Schema`.
struct TypedInput<I>(PhantomData<fn() -> I>);

impl<I: Schema + Send + 'static> ErasedInput for TypedInput<I> {
    fn parse(&self, args: &[u8], cx: &mut ParseCx) -> Result<Option<ParsedInput>, DecodeError> {
        let input = parse_arguments::<I>(args, cx)?;
        Ok(input.map(|input| Box::new(input) as ParsedInput))
    }

    fn input_type(&self) -> (TypeId, &'static str) {
        (TypeId::of::<I>(), type_name::<I>())
    }

    fn to_json(&self, input: &ParsedInput, args: &[u8]) -> Value {
        input
            .downcast_ref::<I>()
            .map_or(Value::Null, |input| input.arguments_json(args))
    }
}

impl ToolBuilder {
    /// Every call of the tool waits for approval (H1): the run pauses with the call pending
    /// (after the availability re-check and validation), and it runs only when resumed with
    /// an approval. Over MCP the client's user is asked (H6).
    pub fn require_approval(mut self) -> Self {
        self.gate = Some(GateSpec::Always);
        self
    }

    /// Sets the approval predicate (H1): it sees the call's context and validated input, and
    /// says whether this call waits for a decision. `I` must be the handler's input type
    /// (`build()` checks it: [`DeclarationError::ApprovalInputMismatch`]).
    pub fn approval<I>(mut self, predicate: impl ApprovalPredicate<I>) -> Self
    where
        I: Sync + 'static,
    {
        self.gate = Some(GateSpec::Predicate {
            check: Arc::new(TypedApproval {
                predicate,
                _input: PhantomData,
            }),
            input: TypeId::of::<I>(),
            input_name: type_name::<I>(),
        });
        self
    }

    /// Sets a plain `fn(&Context, &I) -> Result<Approval, E>` as the approval predicate.
    ///
    /// ```
    /// use tool_core::approval::Approval;
    /// use tool_core::{Context, Tool};
    ///
    /// type Args = std::collections::BTreeMap<String, serde_json::Value>;
    ///
    /// let restart = Tool::builder("restart-service", "Restarts a service now.")
    ///     .handler(|_ctx: Context, args: Args| async move {
    ///         Ok::<_, std::io::Error>(format!("{} restarted", args["service_id"]))
    ///     })
    ///     .approval_fn(|_ctx: &Context, args: &Args| {
    ///         let production = args["service_id"].as_str().is_some_and(|s| s.starts_with("prod-"));
    ///         Ok::<_, std::io::Error>(if production {
    ///             Approval::required("it serves production traffic")
    ///         } else {
    ///             Approval::NotRequired
    ///         })
    ///     })
    ///     .build();
    /// assert!(restart.declaration_error().is_none() && restart.requires_approval());
    /// ```
    pub fn approval_fn<I, F, E>(self, f: F) -> Self
    where
        I: Sync + 'static,
        F: Fn(&Context, &I) -> Result<Approval, E> + Send + Sync + 'static,
        E: Into<BoxError>,
    {
        self.approval::<I>(SyncApproval(f))
    }

    /// Sets an `async fn(&Context, &I) -> Result<Approval, E>` as the approval predicate.
    pub fn approval_async<I, F>(self, f: F) -> Self
    where
        I: Sync + 'static,
        F: for<'a> AsyncApprovalFn<'a, I>,
    {
        self.approval::<I>(AsyncApproval(f))
    }

    /// Declares the tool deferred (H5): it has no handler here. Its input schema is `I`'s;
    /// a call is checked for availability and validated as any other, then the run pauses
    /// with it pending, to be resumed with its result (computed elsewhere: by another
    /// service, a person, a job).
    ///
    /// ```
    /// use tool_core::Tool;
    ///
    /// type Args = std::collections::BTreeMap<String, serde_json::Value>;
    ///
    /// let ship = Tool::builder("ship-order", "Ships an order from the warehouse.")
    ///     .deferred::<Args>()
    ///     .build();
    /// assert!(ship.declaration_error().is_none() && ship.is_deferred());
    /// ```
    pub fn deferred<I>(self) -> Self
    where
        I: Schema + Send + 'static,
    {
        let schema = render_root::<I>();
        self.with_deferred(Arc::new(TypedInput::<I>(PhantomData)), schema)
    }
}
