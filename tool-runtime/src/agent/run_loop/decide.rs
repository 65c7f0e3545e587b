//! The decisions of a resume matched to the pending calls they decide (H4, B2, B3): every
//! rule is checked before anything runs, at every level of sub-agent runs whose agents this
//! one holds: an unknown or undecided call, a decision that does not fit its call, edited
//! arguments that do not fit the tool's schema, a sub-agent's paused run that its agent
//! refuses.

use std::collections::{HashMap, HashSet};

use crate::agent::pause::{Decision, Decisions, PausedRun, PendingCall, PendingKind, ResumeError};
use crate::agent::shared::Shared;

/// What a pending call gets at resume.
pub(crate) enum Choice {
    /// Its decision.
    Decided(Decision),
    /// The sub-agent run it started, resumed with these decisions (B2).
    Nested(Box<PausedRun>, Decisions),
}

/// The pending calls of a paused turn, decided or left pending (B3).
pub(crate) struct Matched {
    /// The decided calls, in the model's order.
    pub(crate) decided: Vec<(PendingCall, Choice)>,
    /// The calls left pending ([`Decisions::leave_pending`]).
    pub(crate) left: Vec<PendingCall>,
}

/// How a pending call is decided.
enum Class {
    Decide,
    Nested,
    Leave,
}

/// How `call` is decided by `decision` or by decisions for its sub-agent run (`nested`).
fn classify(
    call: &PendingCall,
    decision: Option<&Decision>,
    nested: bool,
    partial: bool,
) -> Result<Class, ResumeError> {
    let wrong = || ResumeError::WrongDecision {
        call_id: call.id().to_owned(),
        kind: call.kind(),
    };
    match (decision, nested) {
        (Some(_), true) => Err(wrong()),
        (Some(decision), false) => {
            let fits = match call.kind() {
                PendingKind::Approval => {
                    decision.approves() || matches!(decision, Decision::Deny { .. })
                }
                PendingKind::Deferred => {
                    matches!(decision, Decision::Complete(_) | Decision::Deny { .. })
                }
                _ => matches!(decision, Decision::Deny { .. }),
            };
            if fits {
                Ok(Class::Decide)
            } else {
                Err(wrong())
            }
        }
        (None, true) if call.kind() == PendingKind::Nested => Ok(Class::Nested),
        (None, true) => Err(wrong()),
        (None, false) if partial => Ok(Class::Leave),
        (None, false) => Err(ResumeError::Undecided {
            call_id: call.id().to_owned(),
        }),
    }
}

/// A decision for a call that is not pending, named first: it is the likelier mistake (a
/// mistyped id).
fn unknown(pending: &[PendingCall], decisions: &Decisions) -> Result<(), ResumeError> {
    let ids: HashSet<&str> = pending.iter().map(PendingCall::id).collect();
    match decisions.ids().find(|id| !ids.contains(id)) {
        Some(id) => Err(ResumeError::UnknownCall {
            call_id: id.to_owned(),
        }),
        None => Ok(()),
    }
}

/// Checks `decisions` against the pending calls of `paused` under the agent of `shared`,
/// without taking anything (H4, B3), and the paused runs of its sub-agents against their
/// agents, as deep as they go (B2).
pub(crate) fn check(
    shared: &Shared,
    paused: &PausedRun,
    decisions: &Decisions,
) -> Result<(), ResumeError> {
    check_at(shared, paused, decisions, decisions.leaves_pending())
}

/// [`check`] at one level; `partial`: whether undecided calls stay pending, as the decisions
/// of this level or of a level above say.
fn check_at(
    shared: &Shared,
    paused: &PausedRun,
    decisions: &Decisions,
    partial: bool,
) -> Result<(), ResumeError> {
    unknown(paused.pending(), decisions)?;
    for call in paused.pending() {
        let nested = decisions.get_nested(call.id());
        let decision = decisions.get(call.id());
        let class = classify(call, decision, nested.is_some(), partial)?;
        match (class, decision, nested) {
            (Class::Decide, Some(Decision::ApproveWith { arguments }), _) => {
                check_arguments(shared, call, arguments)?;
            }
            (Class::Nested, _, Some(nested)) => {
                check_nested(shared, call, nested, partial).map_err(|error| nest(call, error))?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The arguments an approver gave `call` fit its tool's schema (B3).
fn check_arguments(
    shared: &Shared,
    call: &PendingCall,
    arguments: &serde_json::Value,
) -> Result<(), ResumeError> {
    let Some(tool) = shared
        .set
        .by_name
        .get(call.tool())
        .map(|&i| &shared.set.tools[i])
    else {
        return Err(ResumeError::ToolMissing {
            tool: call.tool().to_owned(),
        });
    };
    let text = arguments.to_string();
    tool.validate(text.as_bytes(), &shared.set.limits)
        .map(drop)
        .map_err(|violations| ResumeError::InvalidArguments {
            call_id: call.id().to_owned(),
            violations,
        })
}

/// The sub-agent run of `call` and its decisions, checked by the sub-agent (when this agent
/// holds it as a sub-agent; else its own resume checks them).
fn check_nested(
    shared: &Shared,
    call: &PendingCall,
    decisions: &Decisions,
    partial: bool,
) -> Result<(), ResumeError> {
    let (Some(agent), Some(paused)) = (shared.sub_agent(call.tool()), call.nested_run()) else {
        return Ok(());
    };
    let child = &agent.shared;
    paused.verify(
        &child.set.tools,
        &child.set.by_name,
        child.set.state_key.as_deref(),
    )?;
    check_at(
        child,
        paused,
        decisions,
        partial || decisions.leaves_pending(),
    )
}

/// `error` of the sub-agent run of `call`, with the path to it.
fn nest(call: &PendingCall, error: ResumeError) -> ResumeError {
    match error {
        ResumeError::Nested { mut path, error } => {
            path.insert(0, call.id().to_owned());
            ResumeError::Nested { path, error }
        }
        error => ResumeError::Nested {
            path: vec![call.id().to_owned()],
            error: Box::new(error),
        },
    }
}

/// Each pending call with what it gets, in the model's order (H4): the checks of [`check`],
/// taking the decisions.
pub(crate) fn match_decisions(
    pending: &[PendingCall],
    mut decisions: Decisions,
) -> Result<Matched, ResumeError> {
    unknown(pending, &decisions)?;
    let partial = decisions.leaves_pending();
    let mut matched = Matched {
        decided: Vec::with_capacity(pending.len()),
        left: Vec::new(),
    };
    for call in pending {
        let class = classify(
            call,
            decisions.get(call.id()),
            decisions.get_nested(call.id()).is_some(),
            partial,
        )?;
        let mut call = call.clone();
        match class {
            Class::Leave => matched.left.push(call),
            Class::Decide => {
                if let Some(decision) = decisions.take(call.id()) {
                    matched.decided.push((call, Choice::Decided(decision)));
                }
            }
            Class::Nested => {
                let below = decisions.take_nested(call.id());
                if let (Some(run), Some(below)) = (call.take_nested(), below) {
                    matched
                        .decided
                        .push((call, Choice::Nested(Box::new(run), below)));
                }
            }
        }
    }
    Ok(matched)
}

/// The arguments each call approved with edits runs with (B3), by its position in its turn.
pub(crate) fn edits(matched: &Matched) -> HashMap<usize, String> {
    matched
        .decided
        .iter()
        .filter_map(|(call, choice)| match choice {
            Choice::Decided(Decision::ApproveWith { arguments }) => {
                Some((call.index(), arguments.to_string()))
            }
            _ => None,
        })
        .collect()
}

/// The tools allowed for the rest of the run by the decisions (B3).
pub(crate) fn allowed(matched: &Matched) -> Vec<String> {
    matched
        .decided
        .iter()
        .filter(|(_, choice)| matches!(choice, Choice::Decided(Decision::AllowForRun)))
        .map(|(call, _)| call.tool().to_owned())
        .collect()
}
