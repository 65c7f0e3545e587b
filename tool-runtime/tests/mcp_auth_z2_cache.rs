//! Z2, what a protected server remembers of the tokens it verified: a token verified in full
//! is answered from memory by its whole text only (a token one byte off is verified again, and
//! refused when its signature does not match), its claims shared with every request rather
//! than copied (`TokenVerifier::verify_shared` hands out one allocation), the owned form
//! (`verify`) saying the same, and the claims reach a handler's context as they are.
#![cfg(feature = "mcp")]

mod support {
    // Its outage switch and encoding helper serve the other Z tests.
    #[allow(dead_code)]
    pub mod issuer;
}

use std::sync::Arc;
use std::sync::atomic::Ordering;

use support::issuer::Issuer;
use tool_runtime::Context;
use tool_runtime::mcp::auth::{Claims, JwtVerifier, TokenVerifier, VerifyError};

const RESOURCE: &str = "http://127.0.0.1:1/mcp";

#[tokio::test]
async fn z2_a_remembered_token_shares_its_claims_and_only_the_very_token_is_remembered() {
    let issuer = Issuer::start().await;
    let verifier = JwtVerifier::new(&issuer.url, RESOURCE);
    let token = issuer.token(RESOURCE, "tickets:read");

    let first = verifier.verify_shared(&token).await.expect("a valid token");
    let fetches = issuer.jwks_fetches.load(Ordering::SeqCst);
    let second = verifier.verify_shared(&token).await.expect("remembered");
    assert!(Arc::ptr_eq(&first, &second), "the same claims, not a copy");
    assert_eq!(issuer.jwks_fetches.load(Ordering::SeqCst), fetches);
    let owned = verifier.verify(&token).await.expect("the owned form");
    assert_eq!(&owned, first.as_ref());
    assert_eq!(owned.subject.as_deref(), Some(issuer.subject.as_str()));

    // One character off, inside the signature: verified again, and refused.
    let at = token.len() - 10;
    let was = &token[at..at + 1];
    let forged = format!(
        "{}{}{}",
        &token[..at],
        if was == "A" { "B" } else { "A" },
        &token[at + 1..]
    );
    let refused = verifier.verify_shared(&forged).await;
    assert!(
        matches!(
            refused,
            Err(VerifyError::Signature | VerifyError::Malformed)
        ),
        "{refused:?}"
    );
    // A prefix of a remembered token is not it either.
    let prefix = &token[..token.len() - 1];
    assert!(verifier.verify_shared(prefix).await.is_err());
    // Nothing remembered: every request's token is verified in full, with equal claims.
    let forgetful = JwtVerifier::new(&issuer.url, RESOURCE).max_cached(0);
    let a = forgetful.verify_shared(&token).await.expect("valid");
    let b = forgetful.verify_shared(&token).await.expect("valid");
    assert!(!Arc::ptr_eq(&a, &b) && a == b);
}

#[test]
fn z2_shared_claims_are_what_a_handler_reads() {
    let claims = Arc::new(Claims {
        subject: Some("ada".to_owned()),
        ..Claims::default()
    });
    let ctx = Context::new().with_shared(Arc::clone(&claims));
    let read = ctx.get::<Claims>().expect("in the context");
    assert!(
        std::ptr::eq(read, claims.as_ref()),
        "the shared value itself"
    );
    assert_eq!(read.subject.as_deref(), Some("ada"));
}
