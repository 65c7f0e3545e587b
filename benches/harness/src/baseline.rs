//! The hand-written floor: `serde_json::from_slice` into the struct, the same checks written
//! by hand (unknown fields, lengths in characters, the range), a direct call, and
//! `serde_json::to_string` of the result. No framework can do less and keep the contract.

use std::fmt::Write as _;

use serde::Deserialize;

use crate::TOOL_NAME;
use crate::shared::triage;

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Bug,
    Feature,
    Chore,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Bug => "bug",
            Kind::Feature => "feature",
            Kind::Chore => "chore",
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Ticket {
    pub title: String,
    pub reporter: String,
    pub priority: u8,
    pub estimate_hours: Option<f64>,
    pub kind: Kind,
    pub labels: Vec<String>,
}

fn check_len(problems: &mut String, path: &str, s: &str, min: usize, max: usize) {
    let len = s.chars().count();
    if len < min {
        let _ = write!(
            problems,
            "\n- {path}: must be at least {min} characters long, found {len} [minLength]"
        );
    }
    if len > max {
        let _ = write!(
            problems,
            "\n- {path}: must be at most {max} characters long, found {len} [maxLength]"
        );
    }
}

/// From (tool name, argument bytes) to the model-facing text.
pub fn call(name: &str, args: &[u8]) -> String {
    if name != TOOL_NAME {
        return "tool unavailable".to_owned();
    }
    let t: Ticket = match serde_json::from_slice(args) {
        Ok(t) => t,
        Err(e) => return format!("invalid arguments:\n- (root): {e} [type]"),
    };
    let mut problems = String::new();
    check_len(&mut problems, "/title", &t.title, 1, 80);
    check_len(&mut problems, "/reporter", &t.reporter, 1, 40);
    if !(1..=5).contains(&t.priority) {
        let _ = write!(
            problems,
            "\n- /priority: must be between 1 and 5, found {} [range]",
            t.priority
        );
    }
    if !problems.is_empty() {
        return format!("invalid arguments:{problems}");
    }
    let out = triage(
        &t.title,
        &t.reporter,
        t.priority,
        t.estimate_hours,
        t.kind.as_str(),
        &t.labels,
    );
    serde_json::to_string(&out).unwrap_or_else(|_| "the tool failed".to_owned())
}
