//! Numbers as constraints and values compare them: integers stay exact, floats are floats.

use std::fmt;

use serde_json::Value;

/// A number in a constraint or a value: integers stay exact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
}

impl Num {
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            // Precision loss only past 2^53, where every bound is an integer anyway.
            #[allow(clippy::cast_precision_loss)]
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    pub(crate) fn cmp(self, other: Num) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }

    /// The number a JSON number holds: an integer when it is written as one, else a float.
    pub fn of_json(n: &serde_json::Number) -> Num {
        if let Some(i) = n.as_i64() {
            Num::Int(i.into())
        } else if let Some(u) = n.as_u64() {
            Num::Int(u.into())
        } else {
            Num::Float(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    /// This number as JSON.
    pub fn to_json(self) -> Value {
        match self {
            Num::Int(i) => i64::try_from(i)
                .map(Value::from)
                .or_else(|_| u64::try_from(i).map(Value::from))
                .unwrap_or_else(|_| Value::from(self.as_f64())),
            Num::Float(f) => Value::from(f),
        }
    }
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::Int(i) => write!(f, "{i}"),
            // Plain where that is short; in exponent form past 16 digits or below 1e-5, so
            // that `1e300` is not written out in 301 digits (S3).
            Num::Float(x) if *x == 0.0 || (1e-5..1e16).contains(&x.abs()) => write!(f, "{x}"),
            Num::Float(x) => write!(f, "{x:e}"),
        }
    }
}
