//! The context values a tool's handler takes (C1): declared with [`ToolBuilder::requires`]
//! (which `#[tool]` calls for each context parameter), they make the tool unavailable in a
//! context that lacks one of them. They are checked as part of the tool's availability
//! policy, so discovery (A2), the re-check of every call (A4) and every transport that asks
//! the policy see the same answer.

use std::any::{TypeId, type_name};
use std::sync::Arc;

use crate::context::Context;
use crate::error::BoxError;
use crate::policy::{BoxFuture, Policy};
use crate::tool::ToolBuilder;

/// A context value a tool needs: looked up by its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Need {
    id: TypeId,
    name: &'static str,
}

impl Need {
    /// The name of the type, as `std::any::type_name` spells it.
    pub(crate) fn name(self) -> &'static str {
        self.name
    }
}

/// The policy of a tool that needs context values: absent values make it unavailable, and
/// only when every value is present does the explicit policy, if any, decide.
struct NeedsThen {
    needs: Vec<Need>,
    then: Option<Arc<dyn Policy>>,
}

impl Policy for NeedsThen {
    fn check<'a>(&'a self, ctx: &'a Context) -> BoxFuture<'a, Result<bool, BoxError>> {
        if !self.needs.iter().all(|need| ctx.holds(need.id)) {
            return Box::pin(std::future::ready(Ok(false)));
        }
        match &self.then {
            Some(policy) => policy.check(ctx),
            None => Box::pin(std::future::ready(Ok(true))),
        }
    }
}

/// The tool's policy: the explicit one, preceded by the check of its context values when it
/// needs any.
pub(crate) fn policy(needs: &[Need], then: Option<Arc<dyn Policy>>) -> Option<Arc<dyn Policy>> {
    if needs.is_empty() {
        return then;
    }
    Some(Arc::new(NeedsThen {
        needs: needs.to_vec(),
        then,
    }))
}

impl ToolBuilder {
    /// Declares that the handler takes a value of type `T` from the call's [`Context`] (C1):
    /// in a context that holds no `T` the tool is unavailable, as if a policy had said no. It
    /// is not advertised at discovery (A2), and a call of it is refused with
    /// `tool unavailable` (A4). The explicit policy ([`ToolBuilder::available`]), if any, runs
    /// only when every required value is present; both must allow the call.
    ///
    /// `#[tool]` declares this for each context parameter of the handler (`op: &Operator`).
    ///
    /// ```
    /// use tool_core::{Context, Tool};
    ///
    /// struct Operator;
    /// type Args = std::collections::BTreeMap<String, serde_json::Value>;
    ///
    /// let tool = Tool::builder("whoami", "Says who is asking.")
    ///     .requires::<Operator>()
    ///     .handler(|ctx: Context, _: Args| async move {
    ///         ctx.require::<Operator>().map(|_| "an operator")
    ///     })
    ///     .build();
    /// # tokio_test_block_on(async {
    /// assert!(!tool.available(&Context::new()).await.unwrap());
    /// assert!(tool.available(&Context::new().with(Operator)).await.unwrap());
    /// # });
    /// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    /// # }
    /// ```
    pub fn requires<T: Send + Sync + 'static>(mut self) -> Self {
        let need = Need {
            id: TypeId::of::<T>(),
            name: type_name::<T>(),
        };
        if !self.needs.contains(&need) {
            self.needs.push(need);
        }
        self
    }
}
