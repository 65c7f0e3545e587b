//! Validation alone: a call's arguments parsed against its tool's schema, with no availability
//! check, no approval question and no handler. What an approver's edited arguments go through
//! before a paused run resumes (B3), so that an edit that does not fit is refused before
//! anything runs.

use serde_json::Value;

use crate::panic::catch;
use crate::tool::{ErasedInput, Limits, Tool};
use crate::violation::{ParseCx, Rule, Violation};

impl Tool {
    /// Parses `args` against the tool's input schema (S2) as a call would, and returns the
    /// input as validated (defaults filled in), rendered as JSON. Nothing else of a call
    /// happens: no availability check, no approval, no handler.
    ///
    /// # Errors
    ///
    /// Every violation the parser found (S3), in its order; a size, syntax or validator
    /// failure is one violation at the root.
    pub fn validate(&self, args: &[u8], limits: &Limits) -> Result<Value, Vec<Violation>> {
        let root = |rule: Rule, message: String| {
            vec![Violation {
                path: String::new(),
                rule,
                message,
            }]
        };
        if args.len() > limits.max_argument_bytes {
            let message = format!(
                "the arguments are {} bytes, over the limit of {}",
                args.len(),
                limits.max_argument_bytes
            );
            return Err(root(Rule::Size, message));
        }
        let parser: &dyn ErasedInput = match (self.handler(), self.deferred_input()) {
            (Some(handler), _) => &**handler,
            (None, Some(input)) => &**input,
            (None, None) => {
                return Err(root(Rule::Type, "the tool has no input parser".to_owned()));
            }
        };
        let mut cx = ParseCx::new();
        match catch(|| parser.parse(args, &mut cx)) {
            Ok(Ok(Some(input))) => Ok(parser.to_json(&input, args)),
            Ok(Ok(None)) => {
                let (mut violations, _, failure) = cx.finish();
                if let Some(cause) = failure {
                    violations.push(Violation {
                        path: String::new(),
                        rule: Rule::Type,
                        message: format!("a validator failed: {cause}"),
                    });
                }
                if violations.is_empty() {
                    return Err(root(
                        Rule::Type,
                        "the arguments do not fit the schema".to_owned(),
                    ));
                }
                Err(violations)
            }
            Ok(Err(e)) => Err(root(Rule::Syntax, e.to_string())),
            Err(panic) => Err(root(Rule::Type, format!("the parser panicked: {panic}"))),
        }
    }
}
