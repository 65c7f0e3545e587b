//! The integrity of a paused run (H3): a digest over its canonical content (H8), SHA-256 by
//! default or HMAC-SHA256 under the application's key, and the fingerprint of a tool.
//!
//! Without a key the digest detects accidental edits and naive ones (a changed byte, a
//! truncated file, a hand-edited argument), but anyone who can write the file can also
//! recompute it. With a key ([`crate::AgentBuilder::state_key`]) only a holder of the key can
//! produce a state that resumes. The HMAC is RustCrypto's, the comparison `subtle`'s (in
//! constant time), the hex `base16ct`'s: none is written here.
//!
//! A keyed seal also names its key by an identifier (an HMAC of a fixed label under the key,
//! cut to 8 bytes), so that a state sealed under another key is refused as such
//! ([`ResumeError::WrongKey`]) rather than as altered: an operator who set the wrong key
//! learns it, and a change of content under the right key is still [`ResumeError::Altered`].
//! The identifier tells nothing of the key that the digest beside it does not already.

use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tool_core::Tool;

use super::canonical;
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

/// The seal of a paused run: the algorithm and the digest, in lowercase hex, and for a keyed
/// seal the identifier of its key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Seal {
    pub(crate) algorithm: Algorithm,
    pub(crate) digest: String,
    /// The identifier of the key of a keyed seal ([`key_id`]). Absent from an unkeyed seal,
    /// and from keyed seals written before it existed: those are checked by their digest
    /// alone, as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) key_id: Option<String>,
}

impl Seal {
    /// Seals `content`: with HMAC-SHA256 under `key` when there is one, else with SHA-256.
    pub(crate) fn new(content: &[u8], key: Option<&[u8]>) -> Self {
        let algorithm = match key {
            Some(_) => Algorithm::HmacSha256,
            None => Algorithm::Sha256,
        };
        // No digest (a seal nothing matches) only if the HMAC refused the key, which it does
        // not: HMAC takes keys of any length.
        let digest = digest(content, key)
            .map(|digest| base16ct::lower::encode_string(&digest))
            .unwrap_or_default();
        Seal {
            algorithm,
            digest,
            key_id: key.and_then(key_id),
        }
    }

    /// Checks that this seal is `content`'s under `key`, comparing the digests in constant
    /// time.
    ///
    /// # Errors
    ///
    /// [`ResumeError::KeyRequired`] for a keyed seal and no key, [`ResumeError::NotKeyed`] for
    /// an unkeyed seal and a key (anyone could have made it), [`ResumeError::WrongKey`] for a
    /// keyed seal whose key identifier is not `key`'s, [`ResumeError::Altered`] when the
    /// digest does not match or is not lowercase hex.
    pub(crate) fn verify(&self, content: &[u8], key: Option<&[u8]>) -> Result<(), ResumeError> {
        match (self.algorithm, key) {
            (Algorithm::HmacSha256, None) => return Err(ResumeError::KeyRequired),
            (Algorithm::Sha256, Some(_)) => return Err(ResumeError::NotKeyed),
            (Algorithm::HmacSha256, Some(key)) => {
                // Identifiers are public: an ordinary comparison leaks nothing.
                if let Some(sealed_with) = &self.key_id
                    && key_id(key).as_ref() != Some(sealed_with)
                {
                    return Err(ResumeError::WrongKey);
                }
            }
            (Algorithm::Sha256, None) => {}
        }
        let stored = base16ct::lower::decode_vec(&self.digest).map_err(|_| ResumeError::Altered)?;
        let expected = digest(content, key).ok_or(ResumeError::Altered)?;
        if bool::from(expected.as_slice().ct_eq(&stored)) {
            Ok(())
        } else {
            Err(ResumeError::Altered)
        }
    }
}

/// The digest of `content`: HMAC-SHA256 under `key` when there is one, else SHA-256. `None`
/// only if the HMAC refused the key.
fn digest(content: &[u8], key: Option<&[u8]>) -> Option<[u8; 32]> {
    let digest = match key {
        Some(key) => Hmac::<Sha256>::new_from_slice(key)
            .ok()?
            .chain_update(content)
            .finalize()
            .into_bytes(),
        None => Sha256::digest(content),
    };
    Some(digest.into())
}

/// The identifier of a key: HMAC-SHA256 of a fixed label under the key, its first 8 bytes in
/// lowercase hex. It names the key without revealing it; `None` only if the HMAC refused the
/// key.
fn key_id(key: &[u8]) -> Option<String> {
    let tag = Hmac::<Sha256>::new_from_slice(key)
        .ok()?
        .chain_update(b"tool-runtime paused run key id")
        .finalize()
        .into_bytes();
    Some(base16ct::lower::encode_string(&tag[..8]))
}

/// The fingerprint of a JSON value (a typed answer's schema, H7): SHA-256 over its canonical
/// JSON, the same in every build (H8).
pub(crate) fn value_fingerprint(value: &serde_json::Value) -> String {
    format!(
        "sha256:{}",
        base16ct::lower::encode_string(&Sha256::digest(canonical::to_vec(value)))
    )
}

/// The fingerprint of a tool as a paused run records it: SHA-256 over its name, the canonical
/// JSON of its input schema and whether it has a handler here, so that a tool whose schema
/// changed, or that became deferred, no longer matches (H3), and the same tool matches in
/// every build (H8: the schema's JSON text follows the map serde_json was built with).
pub(crate) fn fingerprint(tool: &Tool) -> String {
    let mut hasher = Sha256::new();
    hasher.update(tool.name().as_bytes());
    hasher.update(b"\n");
    hasher.update(canonical::to_vec(tool.schema()));
    hasher.update(if tool.is_deferred() {
        &b"\ndeferred"[..]
    } else {
        &b"\nhandler"[..]
    });
    format!(
        "sha256:{}",
        base16ct::lower::encode_string(&hasher.finalize())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // RFC 4231, test cases 1 and 6 (a key longer than the block).
        let key = [0x0b_u8; 20];
        let hi = Seal::new(b"Hi There", Some(&key));
        assert_eq!(hi.algorithm, Algorithm::HmacSha256);
        assert_eq!(
            hi.digest,
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        let long_key = [0xaa_u8; 131];
        let message = b"Test Using Larger Than Block-Size Key - Hash Key First";
        assert_eq!(
            Seal::new(message, Some(&long_key)).digest,
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
        // And SHA-256 without a key (FIPS 180-2's "abc").
        assert_eq!(
            Seal::new(b"abc", None).digest,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
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
            Err(ResumeError::WrongKey)
        );
        assert_eq!(
            keyed.verify(b"content", None),
            Err(ResumeError::KeyRequired)
        );
    }

    #[test]
    fn h3_another_key_is_told_apart_from_an_alteration() {
        // H3/H8: a state sealed under one key and checked under another is refused as sealed
        // with another key; a change of content under the right key is still an alteration.
        let keyed = Seal::new(b"content", Some(b"key"));
        assert!(keyed.key_id.is_some(), "a keyed seal names its key");
        assert_eq!(
            keyed.verify(b"content", Some(b"other")),
            Err(ResumeError::WrongKey)
        );
        assert_eq!(
            keyed.verify(b"contenT", Some(b"key")),
            Err(ResumeError::Altered)
        );
        // The identifier changed to another key's: still refused, as sealed with another key.
        let relabelled = Seal {
            key_id: Seal::new(b"content", Some(b"other")).key_id,
            ..keyed.clone()
        };
        assert_eq!(
            relabelled.verify(b"content", Some(b"key")),
            Err(ResumeError::WrongKey)
        );
        // A keyed seal without an identifier (as written before there was one) is checked by
        // its digest alone, as before: another key reads as altered, the right one passes.
        let old = Seal {
            key_id: None,
            ..keyed.clone()
        };
        assert_eq!(old.verify(b"content", Some(b"key")), Ok(()));
        assert_eq!(
            old.verify(b"content", Some(b"other")),
            Err(ResumeError::Altered)
        );
        // An unkeyed seal carries none.
        assert_eq!(Seal::new(b"content", None).key_id, None);
        let json = serde_json::to_value(Seal::new(b"content", None)).expect("JSON");
        assert!(json.get("key_id").is_none(), "{json}");
    }

    #[test]
    fn h8_a_digest_that_is_not_lowercase_hex_of_the_content_is_altered() {
        let sealed = Seal::new(b"content", None);
        let with = |digest: String| Seal {
            algorithm: Algorithm::Sha256,
            digest,
            key_id: None,
        };
        let refused = [
            sealed.digest.to_uppercase(),
            sealed.digest[..62].to_owned(),
            format!("{}00", sealed.digest),
            format!("{}g", &sealed.digest[..63]),
            format!("{} ", sealed.digest),
            String::new(),
        ];
        for digest in refused {
            assert_eq!(
                with(digest.clone()).verify(b"content", None),
                Err(ResumeError::Altered),
                "{digest:?}"
            );
        }
        assert_eq!(with(sealed.digest).verify(b"content", None), Ok(()));
    }
}
