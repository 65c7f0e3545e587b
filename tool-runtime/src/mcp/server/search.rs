//! Deferred tools over MCP (Q1): a server holding tools declared `deferred_loading` serves the
//! local search tool beside its other tools. `tools/list` shows a deferred tool, and
//! `tools/call` runs it, only to a caller a search loaded it for; to anyone else it is
//! unknown (A5: the answer a name the server does not hold gets, and nothing runs).
//!
//! What a search loaded belongs to whoever owns the request's leftovers (as tasks do, M5): the
//! session where one lasts (stdio, stateful HTTP before 2026-07-28), else the holder of the
//! request's `Authorization`, else every anonymous caller alike. A server without sessions
//! keeps it for [`KEPT_FOR`] after its last use, for at most [`MAX_OWNERS`] owners at once (the
//! least recently used is forgotten first): a forgotten owner searches again.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tool_core::{Context, Tool};

use crate::agent::catalog::{self, Catalog, RunScope};

use super::naming::McpNaming;

/// How long the tools a search loaded stay loaded after their owner last used them.
pub(crate) const KEPT_FOR: Duration = Duration::from_secs(60 * 60);
/// The most owners whose loaded tools are kept at once.
pub(crate) const MAX_OWNERS: usize = 10_000;

/// What a server with deferred tools holds: which tools are deferred, and what each owner's
/// searches loaded.
pub(crate) struct Deferred {
    catalog: Catalog,
    /// The name a search result gives each tool: the one the server publishes (M2).
    rename: catalog::Rename,
    loads: Mutex<HashMap<String, Loaded>>,
}

/// The tools one owner's searches loaded, by position, and when the owner last used them.
struct Loaded {
    tools: BTreeSet<usize>,
    used: Instant,
}

impl Deferred {
    /// The deferred tools of `catalog`, none loaded, named in search results as `naming`
    /// publishes them.
    pub(crate) fn new(catalog: Catalog, naming: &McpNaming) -> Self {
        let naming = naming.clone();
        Self {
            catalog,
            rename: Arc::new(move |declared: &str| naming.published(declared).into_owned()),
            loads: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the tool at `at` is the search tool.
    pub(crate) fn is_search(&self, at: usize) -> bool {
        at == self.catalog.search_at
    }

    /// The scope of a search on `call_ctx`: the deferred tools among `tools` that the call's
    /// policies and scopes offer (A2, Z3), each checked on the request's context as
    /// `tools/list` checks it. A policy that fails offers its tool not.
    pub(crate) async fn scope(&self, tools: &[Tool], call_ctx: &Context) -> RunScope {
        let mut offered = vec![false; tools.len()];
        for &at in &self.catalog.deferred_at {
            offered[at] = offers(&tools[at], call_ctx).await;
        }
        RunScope::of_request(offered.into(), Arc::clone(&self.rename))
    }

    /// Whether the tool at `at` is deferred.
    pub(crate) fn is_deferred(&self, at: usize) -> bool {
        self.catalog.is_deferred(at)
    }

    /// Whether `owner` may be shown or call the tool at `at`: any tool not deferred, and a
    /// deferred one a search of the owner's loaded.
    pub(crate) fn loaded_for(&self, owner: &str, at: usize) -> bool {
        if !self.catalog.is_deferred(at) {
            return true;
        }
        let mut loads = self.loads.lock().unwrap_or_else(PoisonError::into_inner);
        loads.get_mut(owner).is_some_and(|loaded| {
            loaded.used = Instant::now();
            loaded.tools.contains(&at)
        })
    }

    /// The deferred tools loaded for `owner`, by position.
    pub(crate) fn loaded(&self, owner: &str) -> BTreeSet<usize> {
        let loads = self.loads.lock().unwrap_or_else(PoisonError::into_inner);
        loads
            .get(owner)
            .map(|loaded| loaded.tools.clone())
            .unwrap_or_default()
    }

    /// Loads for `owner` each tool at `found` that is deferred and `offered` to it. Returns
    /// whether anything was added.
    pub(crate) fn load(&self, owner: &str, found: &[usize], offered: &[bool]) -> bool {
        let loadable = |at: &&usize| {
            self.catalog.is_deferred(**at) && offered.get(**at).copied().unwrap_or(false)
        };
        if !found.iter().any(|at| loadable(&at)) {
            return false;
        }
        let now = Instant::now();
        let mut loads = self.loads.lock().unwrap_or_else(PoisonError::into_inner);
        if !loads.contains_key(owner) && loads.len() >= MAX_OWNERS {
            forget_one(&mut loads, now);
        }
        let loaded = loads.entry(owner.to_owned()).or_insert_with(|| Loaded {
            tools: BTreeSet::new(),
            used: now,
        });
        loaded.used = now;
        let mut added = false;
        for &at in found.iter().filter(loadable) {
            added |= loaded.tools.insert(at);
        }
        added
    }
}

/// Makes room for one owner: forgets every owner unused for [`KEPT_FOR`], else the least
/// recently used. Linear in the owners kept, and only when they are [`MAX_OWNERS`].
fn forget_one(loads: &mut HashMap<String, Loaded>, now: Instant) {
    loads.retain(|_, loaded| now.duration_since(loaded.used) < KEPT_FOR);
    if loads.len() < MAX_OWNERS {
        return;
    }
    let oldest = (loads.iter())
        .min_by_key(|(_, loaded)| loaded.used)
        .map(|(owner, _)| owner.clone());
    if let Some(oldest) = oldest {
        loads.remove(&oldest);
    }
}

/// Whether `tools/list` would show `tool` to the caller behind `ctx`: its scopes (Z3) and its
/// availability policy (A2); a policy that fails shows it not (and is logged).
pub(crate) async fn offers(tool: &Tool, ctx: &Context) -> bool {
    if !crate::call::scopes::offers(tool, ctx) {
        return false;
    }
    tool.available(ctx).await.unwrap_or_else(|error| {
        tracing::error!(
            tool = tool.name(),
            error = %error,
            "an availability policy failed while searching MCP tools; the tool is left out"
        );
        false
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::call::scopes::Granted;

    fn tool(scopes: &[&str]) -> Tool {
        Tool::builder("t", "T.").scopes(scopes).build()
    }

    /// Q1, Z3, A2: a search over MCP offers a deferred tool only to a token granting its
    /// scopes, and never one whose policy fails.
    #[tokio::test]
    async fn q1_z3_a_search_offers_only_what_the_token_and_the_policy_allow() {
        let reader = Context::new().with(Granted::new(["read".to_owned()].into(), false));
        let admin = Context::new().with(Granted::new(["admin".to_owned()].into(), false));
        assert!(!offers(&tool(&["admin"]), &reader).await);
        assert!(offers(&tool(&["admin"]), &admin).await);
        let step_up = Context::new().with(Granted::new(BTreeSet::new(), true));
        assert!(
            offers(&tool(&["admin"]), &step_up).await,
            "listed for step-up, as tools/list"
        );
        let failing = Tool::builder("f", "F.")
            .available_fn(|_ctx: &Context| Err::<bool, _>("the policy failed"))
            .build();
        assert!(!offers(&failing, &admin).await);
    }

    /// Q1: what a server without sessions keeps is bounded: past the most owners, the least
    /// recently used is forgotten.
    #[test]
    fn q1_loads_are_kept_for_at_most_max_owners() {
        let mut loads = HashMap::new();
        let now = Instant::now();
        for n in 0..MAX_OWNERS {
            let used = now.checked_sub(Duration::from_secs(1)).unwrap_or(now);
            let tools = BTreeSet::from([n]);
            loads.insert(format!("owner-{n}"), Loaded { tools, used });
        }
        let oldest = now.checked_sub(Duration::from_secs(2)).unwrap_or(now);
        if let Some(loaded) = loads.get_mut("owner-7") {
            loaded.used = oldest;
        }
        forget_one(&mut loads, now);
        assert_eq!(loads.len(), MAX_OWNERS - 1);
        assert!(!loads.contains_key("owner-7"));
    }
}
