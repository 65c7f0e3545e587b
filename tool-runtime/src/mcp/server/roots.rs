//! A handler's roots over MCP (M8): [`tool_core::Context::roots`] in a call served by an
//! [`super::McpServer`] becomes a `roots/list` request to the client. Asked during the call
//! only where an answer can come back: the client declared roots, the server keeps sessions,
//! and the protocol is before 2026-07-28 (on 2026-07-28 the request goes back in the call's
//! answer: `rounds`). Elsewhere the handler is told there is no roots capability.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ListRootsResult, ProtocolVersion};
use rmcp::service::{Peer, RequestContext, ServiceError};
use serde::Deserialize as _;
use serde_json::Value;
use tool_core::CancellationToken;
use tool_core::roots::{MAX_ROOTS, Root, RootsError, RootsFuture, RootsSource, check_roots};

/// The handler's roots from the client's `ListRootsResult`.
pub(super) fn roots_of(result: ListRootsResult) -> Result<Vec<Root>, RootsError> {
    if result.roots.len() > MAX_ROOTS {
        return Err(RootsError::Invalid(format!(
            "{} roots, more than the {MAX_ROOTS} a handler is given",
            result.roots.len()
        )));
    }
    let roots = (result.roots.into_iter())
        .map(|root| Root {
            uri: root.uri,
            name: root.name,
        })
        .collect();
    check_roots(roots)
}

/// The handler's roots from a client's answer as JSON (an input response on 2026-07-28).
pub(super) fn roots_of_value(answer: &Value) -> Result<Vec<Root>, RootsError> {
    let count = (answer.get("roots"))
        .and_then(Value::as_array)
        .map(Vec::len);
    if count.is_some_and(|count| count > MAX_ROOTS) {
        return Err(RootsError::Invalid(format!(
            "more than the {MAX_ROOTS} roots a handler is given"
        )));
    }
    let result = ListRootsResult::deserialize(answer).map_err(|e| {
        RootsError::Invalid(format!(
            "it is not a roots answer: {}",
            tool_core::violation::preview_str(&e.to_string())
        ))
    })?;
    roots_of(result)
}

/// Asks the client of one call.
struct ClientRoots {
    peer: Peer<RoleServer>,
    cancelled: CancellationToken,
}

impl RootsSource for ClientRoots {
    fn roots<'a>(&'a self, _key: Option<&'a str>) -> RootsFuture<'a> {
        Box::pin(async move {
            let answer = tokio::select! {
                answer = self.peer.list_roots() => answer,
                () = self.cancelled.cancelled() => return Err(RootsError::Cancelled),
            };
            match answer {
                Ok(result) => roots_of(result),
                Err(ServiceError::UnexpectedResponse) => Err(RootsError::Invalid(
                    "the client answered with something other than its roots".into(),
                )),
                Err(error) => Err(RootsError::Failed(error.to_string())),
            }
        })
    }
}

/// Whether `cx`'s client declared it has roots.
pub(super) fn has_roots(cx: &RequestContext<RoleServer>) -> bool {
    cx.client_capabilities()
        .is_some_and(|capabilities| capabilities.roots.is_some())
}

/// The roots of a call of `cx`'s client, when they can be asked for during the call.
pub(super) fn for_call(
    cx: &RequestContext<RoleServer>,
    sessions: bool,
) -> Option<Arc<dyn RootsSource>> {
    let during_call = cx
        .protocol_version()
        .is_none_or(|version| version < ProtocolVersion::V_2026_07_28);
    (has_roots(cx) && sessions && during_call).then(|| {
        Arc::new(ClientRoots {
            peer: cx.peer.clone(),
            cancelled: cx.ct.clone(),
        }) as Arc<dyn RootsSource>
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn m8_hostile_roots_answers_are_clear_errors() {
        let many: Vec<Value> = (0..=MAX_ROOTS)
            .map(|i| json!({"uri": format!("file:///{i}")}))
            .collect();
        let cases = [
            json!({"roots": "file:///"}),
            json!({"roots": [{"name": "no uri"}]}),
            json!({"roots": [{"uri": ""}]}),
            json!({"roots": [{"uri": "x".repeat(5000)}]}),
            json!({"roots": many}),
            json!(null),
        ];
        for case in &cases {
            let roots = roots_of_value(case);
            assert!(matches!(roots, Err(RootsError::Invalid(_))), "{roots:?}");
        }
        let good = json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]});
        let roots = roots_of_value(&good).expect("roots");
        assert_eq!(
            roots,
            vec![Root::new("file:///test/root").with_name("Test Root")]
        );
    }
}
