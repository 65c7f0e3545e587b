//! Whether an item a server serves besides tools (a resource, a prompt) is offered to a
//! caller (M7, A1, Z3): the one check that listing, reading, getting, listening and every
//! resource update make.

use std::sync::Arc;

use tool_core::panic::CatchUnwind;
use tool_core::{BoxError, Context, Policy};

/// Whether an item is offered in `ctx`: the token behind it grants every scope the item needs
/// (Z3), and its policy says yes (none offers it always, A1); a panic in the policy is an
/// error (E4).
pub(crate) async fn offered(
    policy: Option<&Arc<dyn Policy>>,
    scopes: &[String],
    ctx: &Context,
) -> Result<bool, BoxError> {
    if !crate::call::scopes::grants_all(ctx, scopes) {
        return Ok(false);
    }
    let Some(policy) = policy else {
        return Ok(true);
    };
    match CatchUnwind::new(policy.check(ctx)).await {
        Ok(result) => result,
        Err(panic) => Err(format!("an availability policy panicked: {panic}").into()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::call::scopes::Granted;

    /// M7, Z3: an item that needs scopes is offered only to a token that grants them all; a
    /// context without a grant (no authorization configured) is offered everything.
    #[tokio::test]
    async fn m7_an_item_is_offered_only_to_a_token_granting_its_scopes() {
        let needed = ["docs:read".to_owned(), "docs:admin".to_owned()];
        let reader =
            Context::new().with(Granted::new(BTreeSet::from(["docs:read".to_owned()]), true));
        let admin = Context::new().with(Granted::new(
            BTreeSet::from(["docs:read".to_owned(), "docs:admin".to_owned()]),
            false,
        ));
        assert!(!offered(None, &needed, &reader).await.unwrap_or(true));
        assert!(offered(None, &needed, &admin).await.unwrap_or(false));
        assert!(
            offered(None, &needed, &Context::new())
                .await
                .unwrap_or(false)
        );
        assert!(offered(None, &[], &reader).await.unwrap_or(false));
    }
}
