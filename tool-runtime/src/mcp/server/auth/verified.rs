//! The tokens a [`JwtVerifier`](super::JwtVerifier) has verified, remembered until the keys
//! that verified them are due to be fetched again or the token expires, whichever is first:
//! a client sends the same token with every request, and checking its signature each time
//! (an ECDSA or RSA verification, tens of microseconds) would cost more than the call it
//! guards. `benches/RESULTS.md` ("MCP over HTTP under load") has the figures.
//!
//! A token is found by its whole text (std's `HashMap`, whose SipHash has a key of its own per
//! process, then compared byte for byte), so only the very token that was verified is answered
//! from here; the claims are those it was verified with. It used to be found by the SHA-256 of
//! its text, which cost more than the rest of the check together: 23,400 of the 34,600
//! instructions a protected call spent beyond an unprotected one (callgrind, a 600-byte ES256
//! token; `benches/load/callgrind.sh`). Expiry (`exp`, with the verifier's leeway) is checked
//! again on every use. The cache is bounded: when it is full, entries past their time go, and
//! if none has, all go (each is verified again on its next use). It holds at most
//! `max` tokens of at most the verifier's `max_token_bytes` each, in memory only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::Claims;

struct Entry {
    claims: Arc<Claims>,
    /// When the keys that verified the token are no longer fresh.
    until: Instant,
}

/// Verified tokens, at most `max` of them.
pub(super) struct Verified {
    entries: Mutex<HashMap<Box<str>, Entry>>,
    pub(super) max: usize,
}

impl Verified {
    /// An empty cache of at most `max` tokens (none when `max` is 0).
    pub(super) fn new(max: usize) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            max,
        }
    }

    /// The claims of `token`, if it was verified, its keys are still fresh and it has not
    /// expired (`exp` plus `leeway`); a stale entry is dropped.
    pub(super) fn get(&self, token: &str, leeway: Duration) -> Option<Arc<Claims>> {
        let mut entries = self.lock();
        let entry = entries.get(token)?;
        if Instant::now() < entry.until && !expired(&entry.claims, leeway) {
            return Some(Arc::clone(&entry.claims));
        }
        entries.remove(token);
        None
    }

    /// Remembers `token` as verified with `claims`, until `until`.
    pub(super) fn put(&self, token: &str, claims: &Arc<Claims>, until: Instant) {
        if self.max == 0 {
            return;
        }
        let mut entries = self.lock();
        if entries.len() >= self.max {
            let now = Instant::now();
            entries.retain(|_, entry| entry.until > now);
            if entries.len() >= self.max {
                entries.clear();
            }
        }
        let claims = Arc::clone(claims);
        entries.insert(token.into(), Entry { claims, until });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Whether `claims` say the token expired more than `leeway` ago.
fn expired(claims: &Claims, leeway: Duration) -> bool {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    claims
        .expires_at
        .is_none_or(|exp| exp.saturating_add(leeway.as_secs()) < now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(expires_in: i64) -> Arc<Claims> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        Arc::new(Claims {
            subject: Some("ada".to_owned()),
            expires_at: Some(now.saturating_add_signed(expires_in)),
            ..Claims::default()
        })
    }

    #[test]
    fn z2_only_the_verified_token_is_answered_and_only_while_fresh() {
        let cache = Verified::new(8);
        let later = Instant::now() + Duration::from_secs(60);
        cache.put("token-a", &claims(3600), later);
        let subject = |found: Option<Arc<Claims>>| found.and_then(|c| c.subject.clone());
        assert_eq!(
            subject(cache.get("token-a", Duration::ZERO)).as_deref(),
            Some("ada")
        );
        assert_eq!(cache.get("token-a ", Duration::ZERO), None);
        assert_eq!(cache.get("token-", Duration::ZERO), None);
        assert_eq!(cache.get("token-b", Duration::ZERO), None);
        // Keys no longer fresh: the token is verified again.
        cache.put("token-c", &claims(3600), Instant::now());
        assert_eq!(cache.get("token-c", Duration::ZERO), None);
    }

    #[test]
    fn z2_an_expired_token_is_not_answered_past_its_leeway() {
        let cache = Verified::new(8);
        let later = Instant::now() + Duration::from_secs(60);
        cache.put("old", &claims(-30), later);
        assert!(cache.get("old", Duration::from_secs(60)).is_some());
        assert_eq!(cache.get("old", Duration::from_secs(10)), None);
        // Dropped: even the wider leeway does not bring it back.
        assert_eq!(cache.get("old", Duration::from_secs(60)), None);
        let mut forever = Claims::clone(&claims(0));
        forever.expires_at = None;
        cache.put("no-exp", &Arc::new(forever), later);
        assert_eq!(cache.get("no-exp", Duration::from_secs(60)), None);
    }

    #[test]
    fn z2_the_cache_stays_within_its_bound() {
        let cache = Verified::new(4);
        let later = Instant::now() + Duration::from_secs(60);
        for i in 0..100 {
            cache.put(&format!("token-{i}"), &claims(3600), later);
            assert!(cache.lock().len() <= 4);
        }
        let none = Verified::new(0);
        none.put("t", &claims(3600), later);
        assert_eq!(none.get("t", Duration::ZERO), None);
    }
}
