//! [`Claims`]: what a validated token says, as a handler receives it (Z3, C1).

use serde_json::{Map, Value};

/// The claims of a validated access token (Z2), in the context of every request it
/// authorized: a handler takes `&Claims` as a context value (C1) and authorizes the resource
/// it touches from them (whose ticket, which tenant), never from the model's arguments (Z3).
///
/// It holds no token: nothing here can be sent on as a credential.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Claims {
    /// `sub`: whom the token was issued for (a user, or a client acting for itself).
    pub subject: Option<String>,
    /// `iss`: the authorization server that issued it.
    pub issuer: String,
    /// `aud`: the resources it is meant for (this server's canonical URI among them).
    pub audience: Vec<String>,
    /// `scope` (or `scp`): the scopes granted, as the token names them (before the server's
    /// hierarchy is applied).
    pub scopes: Vec<String>,
    /// `client_id`: the client the token was issued to.
    pub client_id: Option<String>,
    /// `exp`: when it expires (seconds since the Unix epoch).
    pub expires_at: Option<u64>,
    /// Every other claim of the token.
    pub extra: Map<String, Value>,
}

impl Claims {
    /// Whether the token names `scope` itself (the server's hierarchy aside).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The claims of a JWT's payload: `iss`, `sub`, `aud` (a string or an array), `scope` (a
    /// string of scopes separated by spaces) or `scp` (an array), `client_id`, `exp`; the rest
    /// in [`Claims::extra`].
    pub(crate) fn from_payload(mut payload: Map<String, Value>) -> Self {
        let mut take_string = |key: &str| match payload.remove(key) {
            Some(Value::String(text)) => Some(text),
            _ => None,
        };
        let issuer = take_string("iss").unwrap_or_default();
        let subject = take_string("sub");
        let client_id = take_string("client_id");
        let scope = take_string("scope");
        let audience = match payload.remove("aud") {
            Some(Value::String(aud)) => vec![aud],
            Some(Value::Array(auds)) => strings(auds),
            _ => Vec::new(),
        };
        let scopes = match (scope, payload.remove("scp")) {
            (Some(scope), _) => scope
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            (None, Some(Value::Array(scp))) => strings(scp),
            (None, Some(Value::String(scp))) => scp
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        let expires_at = payload.get("exp").and_then(Value::as_u64);
        payload.remove("exp");
        Self {
            subject,
            issuer,
            audience,
            scopes,
            client_id,
            expires_at,
            extra: payload,
        }
    }
}

/// The strings of `values`, the rest left out.
fn strings(values: Vec<Value>) -> Vec<String> {
    values
        .into_iter()
        .filter_map(|value| match value {
            Value::String(text) => Some(text),
            _ => None,
        })
        .collect()
}
