//! What a tool declares for catalogs of many tools: whether it is offered only once a search
//! in the run returned it (Q1), and the example inputs published beside its schema (Q3).

use std::sync::Arc;

use serde_json::Value;

use super::declaration::{DeclarationError, Site};
use super::{ErasedInput, Tool, ToolBuilder};
use crate::violation::ParseCx;

/// A tool's catalog metadata: its loading and its examples.
#[derive(Debug, Clone, Default)]
pub(super) struct Catalog {
    /// Whether the tool is advertised only after a search returned it (Q1).
    pub(super) deferred_loading: bool,
    /// Example inputs, each checked against the input's parser when the tool is built (Q3).
    pub(super) examples: Arc<[Value]>,
}

/// The first example of `examples` that the input's own parser refuses (Q3): an example the
/// model is shown must be one a call could make.
pub(super) fn check_examples(
    name: &str,
    site: Site,
    examples: &[Value],
    input: &dyn ErasedInput,
) -> Option<DeclarationError> {
    examples.iter().enumerate().find_map(|(index, example)| {
        let text = example.to_string();
        let mut cx = ParseCx::new();
        let reason = match input.parse(text.as_bytes(), &mut cx) {
            Ok(Some(_)) if cx.is_clean() => return None,
            Ok(_) => {
                let (violations, _, _) = cx.finish();
                violations
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            }
            Err(decode) => decode.to_string(),
        };
        Some(DeclarationError::InvalidExample {
            name: name.to_owned(),
            site,
            index,
            reason,
        })
    })
}

impl Tool {
    /// Whether this tool is advertised only once a search in the run returned it (Q1).
    pub fn is_deferred_loading(&self) -> bool {
        self.inner.catalog.deferred_loading
    }

    /// The example inputs published beside the input schema (Q3), each one the input's own
    /// parser accepts (checked when the tool was built).
    pub fn examples(&self) -> &[Value] {
        &self.inner.catalog.examples
    }
}

impl ToolBuilder {
    /// Offers the tool only once a search in the run returned it (Q1): a catalog of many
    /// tools sends the model only what it looked for. An MCP server lists it, and runs it,
    /// only for a caller a search of its own returned it to.
    pub fn deferred_loading(mut self) -> Self {
        self.catalog.deferred_loading = true;
        self
    }

    /// Adds example inputs, published beside the input schema (Q3). Each must be one the
    /// input's parser accepts: one that is not makes the tool unusable (D2,
    /// [`DeclarationError::InvalidExample`]).
    pub fn examples(mut self, examples: impl IntoIterator<Item = Value>) -> Self {
        let mut all = self.catalog.examples.to_vec();
        all.extend(examples);
        self.catalog.examples = all.into();
        self
    }
}
