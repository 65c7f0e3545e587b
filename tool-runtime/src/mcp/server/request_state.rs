//! The `requestState` of an approval question (H10): what a server hands a client in an
//! `input_required` result, for the client to bring back with its user's answer, sealed with
//! HMAC-SHA256 under the server's key, bound to the call and the question, and given an
//! expiry, so that a client cannot make up an answer to a question it was never asked.
//!
//! A state is `ta1.` followed by the unpadded base64url of 56 bytes: a random nonce (16), the
//! expiry in unix seconds (8, big-endian) and the tag (32). The tag is the HMAC, under the
//! key, of a canonical binding: a purpose tag and version, the tool's name (length first),
//! the SHA-256 of the call's argument bytes, the SHA-256 of the question asked (the
//! elicitation the server sent, serialized), the nonce and the expiry. The tool, arguments
//! and question are not in the state: the retry's own are bound, so a state counts only for
//! the call and the question it was made for.
//!
//! A state answered once is remembered until it expires, in a set bounded by
//! [`MAX_REMEMBERED`], so that the same process refuses it again; processes share no such
//! set, so across replicas a replay is bounded by the expiry alone.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// How long a question may wait for its answer by default: ten minutes.
pub(super) const DEFAULT_EXPIRY: Duration = Duration::from_secs(10 * 60);

/// The shortest expiry: a second (the state counts whole seconds).
pub(super) const MIN_EXPIRY: Duration = Duration::from_secs(1);

/// The longest expiry: a day.
pub(super) const MAX_EXPIRY: Duration = Duration::from_secs(24 * 60 * 60);

/// The most answered states one process remembers (to refuse their replay) at once. When
/// that many unexpired states were answered, further answers are refused until some expire:
/// forgetting one instead would let it be replayed.
pub(super) const MAX_REMEMBERED: usize = 100_000;

/// The format's version, as the state starts.
const PREFIX: &str = "ta1.";
/// What the tag is for: no other use of the key can make a valid state.
const PURPOSE: &[u8] = b"tool-runtime/mcp/approval-request-state";
const VERSION: u8 = 1;
/// The length of the key a server makes itself.
const RANDOM_KEY_LEN: usize = 32;
const NONCE_LEN: usize = 16;
const EXPIRY_LEN: usize = 8;
const TAG_LEN: usize = 32;
const BODY_LEN: usize = NONCE_LEN + EXPIRY_LEN + TAG_LEN;
/// The length of the body in unpadded base64.
const ENCODED_BODY_LEN: usize = (BODY_LEN * 4).div_ceil(3);

/// What a sealed state is bound to: the call and the question asked about it.
#[derive(Clone, Copy)]
pub(super) struct Binding<'a> {
    /// The tool's name.
    pub(super) tool: &'a str,
    /// The call's arguments, as the bytes the pipeline parses.
    pub(super) args: &'a [u8],
    /// The question, as sent (the serialized elicitation).
    pub(super) question: &'a [u8],
}

/// Why a state was not made, or not taken as an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum Refusal {
    /// The server has no key: none was configured and the system gave no randomness.
    #[error("the server has no key to seal approval states with")]
    NoKey,
    /// The system gave no randomness for a state's nonce.
    #[error("no randomness for the state's nonce")]
    NoRandomness,
    /// The state is not one of this format and version (truncated, too long, not base64).
    #[error("the state is malformed")]
    Malformed,
    /// The tag does not match: forged, altered, sealed under another key, or made for another
    /// tool, other arguments or another question.
    #[error("the state was not sealed by this server for this call and question")]
    Forged,
    /// The state's expiry has passed.
    #[error("the state expired")]
    Expired,
    /// The state was answered before, in this process.
    #[error("the state was answered before")]
    Replayed,
    /// This process remembers [`MAX_REMEMBERED`] answered states that have not expired.
    #[error("too many answered states await their expiry")]
    Full,
}

/// Seals the states of a server's approval questions and takes them back: its key, the
/// expiry it gives them and the states already answered.
pub(crate) struct RequestStates {
    /// The keyed MAC, cloned for each tag; `None` when the server has no key.
    key: Option<HmacSha256>,
    /// Whole seconds a state counts for.
    expiry_secs: u64,
    /// The states answered, by expiry then nonce.
    answered: Mutex<BTreeSet<(u64, [u8; NONCE_LEN])>>,
}

impl RequestStates {
    /// How long a state counts: how long a client has to answer an approval.
    pub(crate) fn expiry(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.expiry_secs)
    }

    /// States sealed under `key`, or under a random key of this process when there is none;
    /// `expiry` is kept within [`MIN_EXPIRY`] and [`MAX_EXPIRY`], and counted in whole
    /// seconds, rounded up.
    pub(super) fn new(key: Option<&[u8]>, expiry: Duration) -> Self {
        let key = match key {
            Some(key) => HmacSha256::new_from_slice(key).ok(),
            None => {
                let mut random = [0_u8; RANDOM_KEY_LEN];
                match getrandom::fill(&mut random) {
                    Ok(()) => HmacSha256::new_from_slice(&random).ok(),
                    Err(e) => {
                        tracing::error!(
                            error = %e,
                            "the system gave no randomness for the MCP server's state key: \
                             no call needing approval can be approved"
                        );
                        None
                    }
                }
            }
        };
        let expiry = expiry.clamp(MIN_EXPIRY, MAX_EXPIRY);
        let expiry_secs = expiry.as_secs() + u64::from(expiry.subsec_nanos() > 0);
        Self {
            key,
            expiry_secs,
            answered: Mutex::new(BTreeSet::new()),
        }
    }

    /// A fresh state for the question `binding` asks.
    pub(super) fn seal(&self, binding: &Binding<'_>) -> Result<String, Refusal> {
        self.seal_at(binding, unix_now())
    }

    /// Takes `state` as the state of the question `binding` asks, answered now: it must have
    /// been sealed under this server's key for this very binding, not have expired and not
    /// have been answered before in this process. Taken, it is remembered until it expires.
    pub(super) fn redeem(&self, state: &str, binding: &Binding<'_>) -> Result<(), Refusal> {
        self.redeem_at(state, binding, unix_now())
    }

    fn seal_at(&self, binding: &Binding<'_>, now: u64) -> Result<String, Refusal> {
        let key = self.key.as_ref().ok_or(Refusal::NoKey)?;
        let mut nonce = [0_u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|_| Refusal::NoRandomness)?;
        let expires = now.saturating_add(self.expiry_secs);
        let tag = tag(key, binding, &nonce, expires).finalize().into_bytes();
        let mut body = [0_u8; BODY_LEN];
        body[..NONCE_LEN].copy_from_slice(&nonce);
        body[NONCE_LEN..NONCE_LEN + EXPIRY_LEN].copy_from_slice(&expires.to_be_bytes());
        body[NONCE_LEN + EXPIRY_LEN..].copy_from_slice(&tag);
        let mut state = String::with_capacity(PREFIX.len() + ENCODED_BODY_LEN);
        state.push_str(PREFIX);
        URL_SAFE_NO_PAD.encode_string(body, &mut state);
        Ok(state)
    }

    fn redeem_at(&self, state: &str, binding: &Binding<'_>, now: u64) -> Result<(), Refusal> {
        let key = self.key.as_ref().ok_or(Refusal::NoKey)?;
        let (nonce, expires, tag_bytes) = parse(state)?;
        // The tag first: nothing of an unauthenticated state is believed, its expiry neither.
        tag(key, binding, &nonce, expires)
            .verify_slice(&tag_bytes)
            .map_err(|_| Refusal::Forged)?;
        if now > expires {
            return Err(Refusal::Expired);
        }
        let mut answered = self.answered.lock().unwrap_or_else(PoisonError::into_inner);
        // Forget what has expired: it would be refused as expired anyway.
        while answered.first().is_some_and(|&(at, _)| at < now) {
            answered.pop_first();
        }
        if answered.contains(&(expires, nonce)) {
            return Err(Refusal::Replayed);
        }
        if answered.len() >= MAX_REMEMBERED {
            return Err(Refusal::Full);
        }
        answered.insert((expires, nonce));
        Ok(())
    }
}

impl fmt::Debug for RequestStates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestStates")
            .field("keyed", &self.key.is_some())
            .field("expiry_secs", &self.expiry_secs)
            .finish_non_exhaustive()
    }
}

/// The MAC of a state, over the canonical binding (fixed-length fields, the tool's name after
/// its length), ready to finalize or verify.
fn tag(
    key: &HmacSha256,
    binding: &Binding<'_>,
    nonce: &[u8; NONCE_LEN],
    expires: u64,
) -> HmacSha256 {
    let mut mac = key.clone();
    mac.update(PURPOSE);
    mac.update(&[VERSION]);
    let tool_len = u64::try_from(binding.tool.len()).unwrap_or(u64::MAX);
    mac.update(&tool_len.to_be_bytes());
    mac.update(binding.tool.as_bytes());
    mac.update(&Sha256::digest(binding.args));
    mac.update(&Sha256::digest(binding.question));
    mac.update(nonce);
    mac.update(&expires.to_be_bytes());
    mac
}

/// The nonce, expiry and tag of a state of this format, checked for length before it is
/// decoded (a huge state costs nothing).
fn parse(state: &str) -> Result<([u8; NONCE_LEN], u64, [u8; TAG_LEN]), Refusal> {
    let encoded = state.strip_prefix(PREFIX).ok_or(Refusal::Malformed)?;
    if encoded.len() != ENCODED_BODY_LEN {
        return Err(Refusal::Malformed);
    }
    // Room for the decoder's estimate, which rounds up to whole groups of three bytes.
    let mut buffer = [0_u8; BODY_LEN + 3];
    let decoded = URL_SAFE_NO_PAD
        .decode_slice(encoded, &mut buffer)
        .map_err(|_| Refusal::Malformed)?;
    let body = buffer.get(..decoded).ok_or(Refusal::Malformed)?;
    if body.len() != BODY_LEN {
        return Err(Refusal::Malformed);
    }
    let mut nonce = [0_u8; NONCE_LEN];
    nonce.copy_from_slice(&body[..NONCE_LEN]);
    let mut expires = [0_u8; EXPIRY_LEN];
    expires.copy_from_slice(&body[NONCE_LEN..NONCE_LEN + EXPIRY_LEN]);
    let mut tag = [0_u8; TAG_LEN];
    tag.copy_from_slice(&body[NONCE_LEN + EXPIRY_LEN..]);
    Ok((nonce, u64::from_be_bytes(expires), tag))
}

/// Seconds since the Unix epoch (0 for a clock before it).
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_800_000_000;

    fn binding<'a>(tool: &'a str, args: &'a [u8]) -> Binding<'a> {
        Binding {
            tool,
            args,
            question: b"{\"message\":\"Allow?\"}",
        }
    }

    fn states(key: &[u8]) -> RequestStates {
        RequestStates::new(Some(key), DEFAULT_EXPIRY)
    }

    #[test]
    fn h10_a_sealed_state_is_taken_once_for_its_own_call() {
        let states = states(b"a key of thirty-two bytes or more");
        let call = binding("restart", b"{\"service_id\":\"prod-1\"}");
        let state = states.seal_at(&call, NOW).expect("sealed");
        assert!(state.starts_with(PREFIX));
        assert_eq!(state.len(), PREFIX.len() + ENCODED_BODY_LEN);
        assert_eq!(states.redeem_at(&state, &call, NOW + 5), Ok(()));
        assert_eq!(
            states.redeem_at(&state, &call, NOW + 6),
            Err(Refusal::Replayed)
        );
    }

    #[test]
    fn h10_a_state_counts_for_its_tool_arguments_and_question_only() {
        let states = states(b"a key of thirty-two bytes or more");
        let call = binding("restart", b"{\"service_id\":\"prod-1\"}");
        let state = states.seal_at(&call, NOW).expect("sealed");
        let others = [
            binding("purge", call.args),
            binding("restart", b"{\"service_id\":\"prod-2\"}"),
            Binding {
                question: b"{\"message\":\"Allow this instead?\"}",
                ..call
            },
            // The length prefix keeps a name from taking bytes of what follows.
            binding("restar", b"t{\"service_id\":\"prod-1\"}"),
        ];
        for other in &others {
            assert_eq!(
                states.redeem_at(&state, other, NOW),
                Err(Refusal::Forged),
                "{}",
                other.tool
            );
        }
        // Refused for the others, it still counts for its own call.
        assert_eq!(states.redeem_at(&state, &call, NOW), Ok(()));
    }

    #[test]
    fn h10_a_state_expires() {
        let states = RequestStates::new(Some(b"key"), Duration::from_secs(60));
        let call = binding("restart", b"{}");
        let state = states.seal_at(&call, NOW).expect("sealed");
        assert_eq!(
            states.redeem_at(&state, &call, NOW + 61),
            Err(Refusal::Expired)
        );
        assert_eq!(states.redeem_at(&state, &call, NOW + 60), Ok(()));
    }

    #[test]
    fn h10_an_expiry_is_kept_within_its_bounds_and_rounded_up() {
        let secs = |expiry| RequestStates::new(Some(b"k"), expiry).expiry_secs;
        assert_eq!(secs(Duration::ZERO), 1);
        assert_eq!(secs(Duration::from_millis(1500)), 2);
        assert_eq!(secs(Duration::from_secs(u64::MAX)), 24 * 60 * 60);
        assert_eq!(secs(DEFAULT_EXPIRY), 600);
    }

    #[test]
    fn h10_another_key_or_an_altered_state_is_refused() {
        let call = binding("restart", b"{}");
        let state = states(b"key one").seal_at(&call, NOW).expect("sealed");
        assert_eq!(
            states(b"key two").redeem_at(&state, &call, NOW),
            Err(Refusal::Forged)
        );
        let states = states(b"key one");
        // Every character changed, one at a time: the expiry too is under the tag.
        for at in PREFIX.len()..state.len() {
            let mut altered = state.clone().into_bytes();
            altered[at] = if altered[at] == b'A' { b'B' } else { b'A' };
            let altered = String::from_utf8(altered).expect("ASCII");
            assert!(
                matches!(
                    states.redeem_at(&altered, &call, NOW),
                    Err(Refusal::Forged | Refusal::Malformed)
                ),
                "{altered}"
            );
        }
        assert_eq!(states.redeem_at(&state, &call, NOW), Ok(()));
    }

    #[test]
    fn h10_malformed_states_are_refused_before_anything_is_believed() {
        let states = states(b"key");
        let call = binding("restart", b"{}");
        let long = format!("{PREFIX}{}", "A".repeat(1 << 20));
        let wrong_version = states
            .seal_at(&call, NOW)
            .expect("sealed")
            .replacen("ta1.", "ta2.", 1);
        let padded = format!("{PREFIX}{}=", "A".repeat(ENCODED_BODY_LEN - 1));
        for state in [
            "",
            "ta1.",
            "approval:0123456789abcdef0123456789abcdef",
            &long,
            &wrong_version,
            &padded,
            &format!("{PREFIX}{}", "*".repeat(ENCODED_BODY_LEN)),
        ] {
            assert_eq!(
                states.redeem_at(state, &call, NOW),
                Err(Refusal::Malformed),
                "{state:.40}"
            );
        }
    }

    #[test]
    fn h10_answered_states_are_forgotten_at_their_expiry_and_bounded() {
        let states = RequestStates::new(Some(b"key"), Duration::from_secs(10));
        let call = binding("restart", b"{}");
        for i in 0..3 {
            let state = states.seal_at(&call, NOW + i).expect("sealed");
            assert_eq!(states.redeem_at(&state, &call, NOW + i), Ok(()));
        }
        let remembered = || states.answered.lock().expect("not poisoned").len();
        assert_eq!(remembered(), 3);
        let state = states.seal_at(&call, NOW + 12).expect("sealed");
        assert_eq!(states.redeem_at(&state, &call, NOW + 12), Ok(()));
        // Those that expired before NOW + 12 are gone (the one expiring at NOW + 12 is not).
        assert_eq!(remembered(), 2);
        // Full: answers are refused rather than a remembered one forgotten.
        {
            let mut answered = states.answered.lock().expect("not poisoned");
            let mut i = 0_u64;
            while answered.len() < MAX_REMEMBERED {
                let mut nonce = [0_u8; NONCE_LEN];
                nonce[..8].copy_from_slice(&i.to_be_bytes());
                answered.insert((NOW + 20, nonce));
                i += 1;
            }
        }
        let state = states.seal_at(&call, NOW + 12).expect("sealed");
        assert_eq!(
            states.redeem_at(&state, &call, NOW + 12),
            Err(Refusal::Full)
        );
    }

    #[test]
    fn h10_a_server_without_a_configured_key_makes_its_own() {
        let call = binding("restart", b"{}");
        let one = RequestStates::new(None, DEFAULT_EXPIRY);
        let two = RequestStates::new(None, DEFAULT_EXPIRY);
        let state = one.seal_at(&call, NOW).expect("sealed");
        assert_eq!(two.redeem_at(&state, &call, NOW), Err(Refusal::Forged));
        assert_eq!(one.redeem_at(&state, &call, NOW), Ok(()));
        assert_ne!(
            one.seal_at(&call, NOW).expect("sealed"),
            one.seal_at(&call, NOW).expect("sealed"),
            "each state has its own nonce"
        );
    }
}
