//! The scope check of a call (Z3), written once: [`missing`] says which scopes a call of a
//! tool needs that the caller's token does not grant. The HTTP layer asks it before the body
//! reaches rmcp (where a `403` can still be answered), and [`super::enter`] asks it again,
//! so that no other way in runs a call its token does not grant.

use std::collections::BTreeSet;
use std::sync::Arc;

use tool_core::{Context, Tool};

/// The scopes a request's validated token grants, its hierarchy applied, as the server put it
/// in the request's [`Context`] (Z3). A context without one (an agent's run, an MCP server
/// that does not authorize) grants everything: nothing is checked.
#[derive(Clone, Debug)]
pub(crate) struct Granted {
    scopes: Arc<BTreeSet<String>>,
    /// Whether `tools/list` lists a tool the token does not grant, for step-up.
    step_up: bool,
}

impl Granted {
    /// `scopes` granted (the hierarchy already applied); `step_up`: whether tools the token
    /// does not grant are still listed.
    pub(crate) fn new(scopes: BTreeSet<String>, step_up: bool) -> Self {
        Self {
            scopes: Arc::new(scopes),
            step_up,
        }
    }
}

/// The scopes a call of `tool` needs that the token behind `ctx` does not grant, in the
/// tool's order; empty when the call may go on.
pub(crate) fn missing<'t>(tool: &'t Tool, ctx: &Context) -> Vec<&'t str> {
    // A tool that needs no scope needs no look-up of what the token grants.
    if tool.scopes().is_empty() {
        return Vec::new();
    }
    match ctx.get::<Granted>() {
        None => Vec::new(),
        Some(granted) => tool
            .scopes()
            .iter()
            .map(String::as_str)
            .filter(|scope| !granted.scopes.contains(*scope))
            .collect(),
    }
}

/// Whether the token behind `ctx` grants every scope of `needed` (a context without a grant
/// grants everything): what a resource or prompt needs to be offered (M7).
#[cfg(feature = "mcp")]
pub(crate) fn grants_all(ctx: &Context, needed: &[String]) -> bool {
    needed.is_empty()
        || ctx
            .get::<Granted>()
            .is_none_or(|granted| needed.iter().all(|scope| granted.scopes.contains(scope)))
}

/// Whether `tools/list` offers `tool` to the token behind `ctx`: it grants every scope the
/// tool needs, or the server lists for step-up.
pub(crate) fn offers(tool: &Tool, ctx: &Context) -> bool {
    ctx.get::<Granted>()
        .is_none_or(|granted| granted.step_up || missing(tool, ctx).is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(scopes: &[&str]) -> Tool {
        Tool::builder("t", "T.").scopes(scopes).build()
    }

    #[test]
    fn z3_a_call_misses_every_scope_the_token_does_not_grant() {
        let ctx = Context::new().with(Granted::new(["a".to_owned()].into(), false));
        assert_eq!(missing(&tool(&["a", "b", "c"]), &ctx), ["b", "c"]);
        assert!(missing(&tool(&["a"]), &ctx).is_empty());
        assert!(!offers(&tool(&["b"]), &ctx));
        assert!(offers(&tool(&[]), &ctx));
        let step_up = Context::new().with(Granted::new(BTreeSet::new(), true));
        assert!(offers(&tool(&["b"]), &step_up));
        assert_eq!(missing(&tool(&["b"]), &step_up), ["b"]);
        // Without a grant (no authorization configured), nothing is checked.
        assert!(missing(&tool(&["b"]), &Context::new()).is_empty());
    }

    /// Z3, U1: the one way into a call runs nothing its token does not grant, whatever
    /// brought the call; with the scope granted, the call runs.
    #[tokio::test]
    async fn z3_the_one_way_into_a_call_runs_nothing_its_token_does_not_grant() {
        use std::sync::atomic::{AtomicUsize, Ordering};

        use tool_core::violation::ParseCx;
        use tool_core::{BoxError, Hooks, Limits, OutcomeKind};

        use crate::call::{CallRequest, Entered, Facts, Pausing, Via, enter};

        let runs = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&runs);
        let tool = Tool::builder("close", "Closes.")
            .scopes(["tickets:write"])
            .dynamic_handler(
                serde_json::json!({"type": "object"}),
                |_: &serde_json::Value, _: &mut ParseCx| {},
                move |_, args: serde_json::Value| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    async move { Ok::<_, BoxError>(args) }
                },
            )
            .build();
        let (hooks, limits) = (
            Hooks::new(tool_core::hook::Transport::Mcp),
            Limits::default(),
        );
        for (granted, kind, ran) in [
            ("tickets:read", OutcomeKind::Unavailable, 0),
            ("tickets:write", OutcomeKind::Success, 1),
        ] {
            let ctx = Context::new().with(Granted::new([granted.to_owned()].into(), true));
            let request = CallRequest {
                tool: &tool,
                ctx: &ctx,
                args: b"{}",
                hooks: &hooks,
                limits: &limits,
                approved: false,
                cancelled: None,
                facts: Facts {
                    via: Via::Http { stateless: true },
                    protocol: None,
                    task: false,
                    round: false,
                },
            };
            let Entered::Outcome(outcome) = enter(&request, &Pausing).await;
            assert_eq!(outcome.kind(), kind, "{granted}: {}", outcome.text());
            assert_eq!(runs.load(Ordering::SeqCst), ran, "{granted}");
        }
    }
}
