//! The thought signatures a Gemini model put on its function calls, kept by call id so that
//! each goes back on its call (V3): at most a number of them and of their bytes (a signature
//! may be large), the oldest dropped first.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

/// Signatures by call id, bounded.
#[derive(Debug)]
pub(super) struct Signatures {
    capacity: usize,
    max_bytes: usize,
    inner: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    by_id: HashMap<String, String>,
    order: VecDeque<String>,
    bytes: usize,
}

impl Signatures {
    pub(super) fn new(capacity: usize, max_bytes: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            max_bytes,
            inner: Mutex::new(Kept::default()),
        }
    }

    /// Keeps `signature` for the call `id` (replacing an older one), dropping the oldest
    /// past the capacity.
    pub(super) fn keep(&self, id: &str, signature: &str) {
        let mut kept = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let size = id.len() + signature.len();
        match kept.by_id.insert(id.to_owned(), signature.to_owned()) {
            None => kept.order.push_back(id.to_owned()),
            Some(old) => kept.bytes -= id.len() + old.len(),
        }
        kept.bytes += size;
        while kept.order.len() > self.capacity || kept.bytes > self.max_bytes {
            let Some(oldest) = kept.order.pop_front() else {
                break;
            };
            if let Some(old) = kept.by_id.remove(&oldest) {
                kept.bytes -= oldest.len() + old.len();
            }
        }
    }

    /// The signature kept for the call `id`.
    pub(super) fn get(&self, id: &str) -> Option<String> {
        let kept = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        kept.by_id.get(id).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // V3: signatures are kept by call id, and the oldest go first past the capacity.
    #[test]
    fn v3_signatures_are_kept_by_call_and_bounded() {
        let kept = Signatures::new(2, 1000);
        kept.keep("a", "sig-a");
        kept.keep("b", "sig-b");
        kept.keep("a", "sig-a2");
        assert_eq!(kept.get("a").as_deref(), Some("sig-a2"));
        kept.keep("c", "sig-c");
        assert_eq!(
            kept.get("a"),
            None,
            "the oldest call's signature is dropped"
        );
        assert_eq!(kept.get("b").as_deref(), Some("sig-b"));
        assert_eq!(kept.get("c").as_deref(), Some("sig-c"));
        let small = Signatures::new(10, 11);
        small.keep("a", "12345");
        small.keep("b", "12345");
        assert_eq!(small.get("a"), None, "past the byte budget, the oldest go");
        small.keep("c", &"x".repeat(100));
        assert_eq!(
            (small.get("b"), small.get("c")),
            (None, None),
            "too big to keep"
        );
    }
}
