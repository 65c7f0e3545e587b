//! The integrity of a paused run (H3): a digest over its canonical content, SHA-256 by
//! default or HMAC-SHA256 under the application's key, and the fingerprint of a tool.
//!
//! Without a key the digest detects accidental edits and naive ones (a changed byte, a
//! truncated file, a hand-edited argument), but anyone who can write the file can also
//! recompute it. With a key ([`crate::AgentBuilder::state_key`]) only a holder of the key can
//! produce a state that resumes.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tool_core::Tool;

use super::error::ResumeError;

/// How a paused run is sealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Algorithm {
    /// SHA-256 of the content: detects accidental and unkeyed edits.
    #[serde(rename = "sha256")]
    Sha256,
    /// HMAC-SHA256 of the content under the application's key.
    #[serde(rename = "hmac-sha256")]
    HmacSha256,
}

/// The seal of a paused run: the algorithm and the digest, in lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Seal {
    pub(crate) algorithm: Algorithm,
    pub(crate) digest: String,
}

impl Seal {
    /// Seals `content`: with HMAC-SHA256 under `key` when there is one, else with SHA-256.
    pub(crate) fn new(content: &[u8], key: Option<&[u8]>) -> Self {
        match key {
            Some(key) => Seal {
                algorithm: Algorithm::HmacSha256,
                digest: hex(&hmac_sha256(key, content)),
            },
            None => Seal {
                algorithm: Algorithm::Sha256,
                digest: hex(&Sha256::digest(content)),
            },
        }
    }

    /// Checks that this seal is `content`'s under `key`.
    ///
    /// # Errors
    ///
    /// [`ResumeError::KeyRequired`] for a keyed seal and no key, [`ResumeError::NotKeyed`] for
    /// an unkeyed seal and a key (anyone could have made it), [`ResumeError::Altered`] when
    /// the digest does not match.
    pub(crate) fn verify(&self, content: &[u8], key: Option<&[u8]>) -> Result<(), ResumeError> {
        match (self.algorithm, key) {
            (Algorithm::HmacSha256, None) => return Err(ResumeError::KeyRequired),
            (Algorithm::Sha256, Some(_)) => return Err(ResumeError::NotKeyed),
            _ => {}
        }
        let expected = Seal::new(content, key);
        if equal_in_constant_time(expected.digest.as_bytes(), self.digest.as_bytes()) {
            Ok(())
        } else {
            Err(ResumeError::Altered)
        }
    }
}

/// The fingerprint of a tool as a paused run records it: SHA-256 over its name, its input
/// schema's JSON text and whether it has a handler here, so that a tool whose schema changed,
/// or that became deferred, no longer matches (H3).
pub(crate) fn fingerprint(tool: &Tool) -> String {
    let mut hasher = Sha256::new();
    hasher.update(tool.name().as_bytes());
    hasher.update(b"\n");
    hasher.update(tool.schema_json().as_bytes());
    hasher.update(if tool.is_deferred() {
        &b"\ndeferred"[..]
    } else {
        &b"\nhandler"[..]
    });
    format!("sha256:{}", hex(&hasher.finalize()))
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0_u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|k| k ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    let outer = Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize();
    let mut out = [0_u8; 32];
    out.copy_from_slice(&outer);
    out
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// Whether `a` and `b` are equal, in a time that does not depend on where they differ.
fn equal_in_constant_time(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0_u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // RFC 4231, test cases 1 and 6 (a key longer than the block).
        let key = [0x0b_u8; 20];
        assert_eq!(
            hex(&hmac_sha256(&key, b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        let long_key = [0xaa_u8; 131];
        assert_eq!(
            hex(&hmac_sha256(
                &long_key,
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn seals_verify_and_refuse() {
        let sealed = Seal::new(b"content", None);
        assert_eq!(sealed.verify(b"content", None), Ok(()));
        assert_eq!(sealed.verify(b"contenT", None), Err(ResumeError::Altered));
        assert_eq!(
            sealed.verify(b"content", Some(b"k")),
            Err(ResumeError::NotKeyed)
        );
        let keyed = Seal::new(b"content", Some(b"key"));
        assert_eq!(keyed.verify(b"content", Some(b"key")), Ok(()));
        assert_eq!(
            keyed.verify(b"content", Some(b"other")),
            Err(ResumeError::Altered)
        );
        assert_eq!(
            keyed.verify(b"content", None),
            Err(ResumeError::KeyRequired)
        );
    }
}
