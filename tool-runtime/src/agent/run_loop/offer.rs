//! [`Offer`]: what a run offers the model and runs its calls with, built when its turns begin
//! (U2, A8) and again when a search loads deferred tools (Q1).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::agent::shared::Shared;
use crate::model::ToolSpec;

/// The tools a run advertises and the slots its calls take (R2): one value that every turn,
/// the final answer, a pause and a resumed turn read. What the run's policies offer is fixed
/// for the whole run (A8); of it, a deferred tool is advertised only once loaded (Q1).
pub(super) struct Offer<'a> {
    /// What each request advertises: the agent's advertised tools, the deferred ones a
    /// provider's own search may load (marked so), then the final-answer tool of a typed
    /// answer (O2).
    pub(super) specs: Cow<'a, [ToolSpec]>,
    /// The names of the agent's advertised tools, shared with the run's output and events.
    pub(super) names: Arc<[String]>,
    /// For each of the agent's tools, in declaration order, whether it is advertised: only
    /// those are callable in the run (A5).
    pub(super) visible: Vec<bool>,
    /// For each of the agent's tools, whether the run's policies offer it (A2): what a pause
    /// keeps, and what a search may load from.
    pub(super) available: Arc<[bool]>,
    /// The run's concurrency slots (R2).
    pub(super) slots: Semaphore,
    /// The final-answer tool of a typed answer (O2), offered after the agent's tools.
    answer_tool: Option<ToolSpec>,
}

impl<'a> Offer<'a> {
    /// The offer of a run whose policies offer the tools `available` marks, which loaded the
    /// deferred tools `loaded`, with `answer_tool` when it wants a typed answer through a
    /// tool. A run that shows every tool shares the agent's list and names instead of
    /// copying them.
    pub(super) fn new(
        shared: &'a Shared,
        available: Arc<[bool]>,
        loaded: &BTreeSet<String>,
        answer_tool: Option<ToolSpec>,
    ) -> Self {
        let mut offer = Self {
            specs: Cow::Borrowed(&[]),
            names: Arc::from(Vec::new()),
            visible: Vec::new(),
            available,
            slots: Semaphore::new(shared.max_concurrency),
            answer_tool,
        };
        offer.reload(shared, loaded);
        offer
    }

    /// Renders the offer again after `loaded` changed (Q1).
    pub(super) fn reload(&mut self, shared: &'a Shared, loaded: &BTreeSet<String>) {
        let (visible, marked) = self.advertised(shared, loaded);
        let every = !visible.contains(&false);
        if every && marked.is_empty() && self.answer_tool.is_none() {
            self.specs = Cow::Borrowed(&shared.specs[..]);
            self.names = Arc::clone(&shared.names);
        } else {
            let mut specs: Vec<ToolSpec> = (shared.specs.iter().zip(&visible))
                .filter(|(_, shown)| **shown)
                .map(|(spec, _)| spec.clone())
                .collect();
            self.names = specs.iter().map(|s| s.name().to_owned()).collect();
            // Q1: the deferred tools a provider's own search may load, marked deferred.
            specs.extend(marked);
            // O2: the final-answer tool, offered beside the agent's tools.
            specs.extend(self.answer_tool.clone());
            self.specs = Cow::Owned(specs);
        }
        self.visible = visible;
    }

    /// Which tools are advertised, and the specs of the deferred ones a provider's own
    /// search may load. A deferred tool is advertised once loaded; the local search tool
    /// when the run offers some deferred tool and the provider has no search of its own.
    /// The cost follows the deferred and loaded tools, with one copy of the run's mask.
    fn advertised(&self, shared: &Shared, loaded: &BTreeSet<String>) -> (Vec<bool>, Vec<ToolSpec>) {
        let mut visible = self.available.to_vec();
        let Some(catalog) = &shared.catalog else {
            return (visible, Vec::new());
        };
        let mut any_deferred = false;
        for &at in &catalog.deferred_at {
            if let Some(shown) = visible.get_mut(at) {
                any_deferred |= *shown;
                *shown = false;
            }
        }
        for name in loaded {
            if let Some(&at) = shared.set.by_name.get(name.as_str())
                && catalog.is_deferred(at)
                && self.available.get(at).copied().unwrap_or(false)
                && let Some(shown) = visible.get_mut(at)
            {
                *shown = true;
            }
        }
        let native = shared.model.native_tool_search();
        let marked = if native {
            (catalog.deferred_at.iter())
                .filter(|&&at| {
                    self.available.get(at) == Some(&true) && visible.get(at) == Some(&false)
                })
                .filter_map(|&at| shared.specs.get(at))
                .map(|spec| spec.clone().with_defer_loading(true))
                .collect()
        } else {
            Vec::new()
        };
        if let Some(search) = visible.get_mut(catalog.search_at) {
            *search = *search && any_deferred && !native;
        }
        (visible, marked)
    }
}
