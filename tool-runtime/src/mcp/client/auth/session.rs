//! One toolset's authorization with one protected server: discovery and the grant on a
//! `401`, refresh before expiry, step-up on a `403 insufficient_scope`, over rmcp's
//! [`AuthorizationManager`].

use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, OAuthClientConfig, ScopeUpgradeConfig,
    WWWAuthenticateParams,
};
use tokio::sync::Mutex;

use super::assertion::{self, TokenEndpoint};
use super::store::Shared;
use super::{Grant, OAuthClient, OAuthError};

/// The authorization of one toolset: its configuration, and once authorized the manager
/// holding the discovered metadata and the configured client (its tokens are in the store).
pub(crate) struct Session {
    client: OAuthClient,
    server: String,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    manager: Option<AuthorizationManager>,
    /// The discovered token endpoint, for `private_key_jwt`.
    endpoint: Option<TokenEndpoint>,
    /// The scopes of the client credentials grant, grown by step-up.
    scopes: Vec<String>,
}

impl Session {
    /// A session with the server at `server` (its URL, the canonical resource).
    pub(crate) fn new(server: String, client: OAuthClient) -> Self {
        let scopes = client.scopes.clone();
        Self {
            client,
            server,
            state: Mutex::new(State {
                manager: None,
                endpoint: None,
                scopes,
            }),
        }
    }

    /// How many step-ups one request may make.
    pub(crate) fn step_up_limit(&self) -> u32 {
        self.client.step_up_limit
    }

    /// The token to send, refreshed first when it is about to expire; `None` before the
    /// first authorization (the request then goes without one, and a `401` starts it).
    pub(crate) async fn token(&self) -> Result<Option<String>, OAuthError> {
        let mut state = self.state.lock().await;
        let Some(manager) = &state.manager else {
            return Ok(None);
        };
        match manager.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            // Expired, and no refresh token: client credentials ask again; a user's grant
            // waits for the server's `401`.
            Err(AuthError::AuthorizationRequired) => match self.client.grant {
                Grant::ClientCredentials => self.client_credentials(&mut state).await.map(Some),
                Grant::AuthorizationCode { .. } => Ok(None),
            },
            Err(e) => Err(OAuthError::token(e)),
        }
    }

    /// Answers a `401` whose `WWW-Authenticate` is `challenge`, for a request sent with
    /// `sent`: a token another request got meanwhile, else a refreshed one, else a new grant.
    pub(crate) async fn authorize(
        &self,
        challenge: &str,
        sent: Option<&str>,
    ) -> Result<String, OAuthError> {
        let mut state = self.state.lock().await;
        if let Some(manager) = &state.manager {
            if let Ok(token) = manager.get_access_token().await
                && Some(token.as_str()) != sent
            {
                return Ok(token);
            }
            if manager.refresh_token().await.is_ok()
                && let Ok(token) = manager.get_access_token().await
                && Some(token.as_str()) != sent
            {
                return Ok(token);
            }
        }
        let (manager, endpoint) = self.discover(challenge).await?;
        state.manager = Some(manager);
        state.endpoint = Some(endpoint);
        if let Some(token) = self.stored_token(&mut state, sent).await? {
            return Ok(token);
        }
        match &self.client.grant {
            Grant::AuthorizationCode { .. } => self.authorization_code(&mut state).await,
            Grant::ClientCredentials => self.client_credentials(&mut state).await,
        }
    }

    /// Answers a `403 insufficient_scope` whose `WWW-Authenticate` is `challenge`: a token
    /// for the scopes held and those the server names.
    pub(crate) async fn step_up(
        &self,
        challenge: &str,
        sent: Option<&str>,
    ) -> Result<String, OAuthError> {
        let mut state = self.state.lock().await;
        if let Some(manager) = &state.manager
            && let Ok(token) = manager.get_access_token().await
            && Some(token.as_str()) != sent
        {
            return Ok(token);
        }
        let base = reqwest::Url::parse(&self.server).map_err(|e| OAuthError::Discovery {
            server: self.server.clone(),
            source: Box::new(e.into()),
        })?;
        let needed = WWWAuthenticateParams::parse(challenge, &base)
            .scope
            .filter(|s| !s.trim().is_empty())
            .ok_or(OAuthError::UnnamedScope)?;
        tracing::debug!(server = %self.server, scope = %needed, "asking for more scopes");
        match &self.client.grant {
            Grant::ClientCredentials => {
                for scope in needed.split_whitespace() {
                    if !state.scopes.iter().any(|s| s == scope) {
                        state.scopes.push(scope.to_owned());
                    }
                }
                self.client_credentials(&mut state).await
            }
            Grant::AuthorizationCode { browser, .. } => {
                let manager = state.manager.as_ref().ok_or(OAuthError::UnnamedScope)?;
                let url = manager
                    .request_scope_upgrade(&needed)
                    .await
                    .map_err(OAuthError::token)?;
                let redirect = (browser.authorize(&url).await).map_err(OAuthError::Browser)?;
                let callback = self.callback(&redirect)?;
                manager
                    .exchange_code_for_token_with_issuer(
                        &callback.code,
                        &callback.csrf_token,
                        callback.issuer.as_deref(),
                    )
                    .await
                    .map_err(redirect_or_token)?;
                issued(manager).await
            }
        }
    }

    /// A manager that found the authorization server from `challenge` (RFC 9728, then RFC
    /// 8414 / OpenID discovery) and checked that it can be used.
    async fn discover(
        &self,
        challenge: &str,
    ) -> Result<(AuthorizationManager, TokenEndpoint), OAuthError> {
        let discovery = |source| OAuthError::Discovery {
            server: self.server.clone(),
            source: Box::new(source),
        };
        let mut manager =
            (AuthorizationManager::new(self.server.as_str()).await).map_err(discovery)?;
        manager.set_credential_store(Shared(self.client.store.clone()));
        let mut upgrade = ScopeUpgradeConfig::default();
        // The per-request limit is ours (OAuthHttp); rmcp's counter, reset by each token,
        // only has to allow it.
        upgrade.max_upgrade_attempts = self.client.step_up_limit.max(1);
        manager.set_scope_upgrade_config(upgrade);
        let found = (manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await)
            .map_err(discovery)?;
        // rmcp falls back to endpoints guessed from the server's URL: MCP no longer has it.
        if !found.source.is_discovered() {
            return Err(OAuthError::NoMetadata {
                server: self.server.clone(),
            });
        }
        let metadata = found.metadata;
        // rmcp tolerates metadata without `code_challenge_methods_supported`; MCP says a
        // client must refuse an authorization server that does not list S256 there.
        let s256 = (metadata.code_challenge_methods_supported.as_ref())
            .is_some_and(|methods| methods.iter().any(|m| m == "S256"));
        if matches!(self.client.grant, Grant::AuthorizationCode { .. }) && !s256 {
            return Err(OAuthError::PkceUnsupported {
                issuer: (metadata.issuer.clone()).unwrap_or(metadata.authorization_endpoint),
            });
        }
        tracing::debug!(
            server = %self.server,
            issuer = metadata.issuer.as_deref().unwrap_or("?"),
            "found the authorization server"
        );
        let endpoint = TokenEndpoint {
            url: metadata.token_endpoint.clone(),
            issuer: metadata.issuer.clone(),
            methods: (metadata
                .additional_fields
                .get("token_endpoint_auth_methods_supported"))
            .and_then(|v| serde_json::from_value(v.clone()).ok()),
        };
        manager.set_metadata(metadata);
        Ok((manager, endpoint))
    }

    /// A stored token of the same issuer (rmcp discards those of another), refreshed if
    /// need be, when it is not the one the server just refused.
    async fn stored_token(
        &self,
        state: &mut State,
        sent: Option<&str>,
    ) -> Result<Option<String>, OAuthError> {
        let Some(manager) = state.manager.as_mut() else {
            return Ok(None);
        };
        if !(manager.initialize_from_store().await).map_err(OAuthError::store)? {
            return Ok(None);
        }
        if let Grant::AuthorizationCode { redirect_uri, .. } = &self.client.grant
            && let Some(id) = &self.client.client_id
        {
            let mut config = OAuthClientConfig::new(id.clone(), redirect_uri.clone());
            if let Some(secret) = &self.client.client_secret {
                config = config.with_client_secret(secret.clone());
            }
            manager
                .configure_client(config)
                .map_err(OAuthError::registration)?;
        }
        Ok(match manager.get_access_token().await {
            Ok(token) if Some(token.as_str()) != sent => Some(token),
            _ => None,
        })
    }

    /// The authorization-code flow with PKCE: registration, the user's step, the redirect's
    /// checks and the code exchange.
    async fn authorization_code(&self, state: &mut State) -> Result<String, OAuthError> {
        let Grant::AuthorizationCode {
            redirect_uri,
            browser,
        } = &self.client.grant
        else {
            return Err(OAuthError::Redirect(
                "not an authorization-code client".into(),
            ));
        };
        let Some(manager) = state.manager.take() else {
            return Err(OAuthError::NoMetadata {
                server: self.server.clone(),
            });
        };
        let mut request = AuthorizationRequest::new(redirect_uri.clone())
            .with_client_name(&self.client.client_name);
        request = if self.client.scopes.is_empty() {
            request.with_initial_scope_selection()
        } else {
            request.with_scopes(self.client.scopes.clone())
        };
        if let Some(id) = &self.client.client_id {
            request = request.with_preregistered_client(id.clone());
        }
        if let Some(secret) = &self.client.client_secret {
            request = request.with_client_secret(secret.clone());
        }
        if let Some(url) = &self.client.client_metadata_url {
            request = request.with_client_metadata_url(url.clone());
        }
        let session = match AuthorizationSession::new(manager, request).await {
            Ok(session) => session,
            Err((manager, e)) => {
                state.manager = Some(manager);
                return Err(OAuthError::registration(e));
            }
        };
        let outcome = async {
            let url = session.get_authorization_url();
            let redirect = (browser.authorize(url).await).map_err(OAuthError::Browser)?;
            let callback = self.callback(&redirect)?;
            session
                .handle_callback_with_issuer(
                    &callback.code,
                    &callback.csrf_token,
                    callback.issuer.as_deref(),
                )
                .await
                .map_err(redirect_or_token)
        }
        .await;
        let manager = state.manager.insert(session.auth_manager);
        outcome?;
        issued(manager).await
    }

    /// The redirect the browser came back with, checked to be ours and not an error.
    fn callback(&self, redirect: &str) -> Result<AuthorizationCallback, OAuthError> {
        let Grant::AuthorizationCode { redirect_uri, .. } = &self.client.grant else {
            return Err(OAuthError::Redirect(
                "not an authorization-code client".into(),
            ));
        };
        let url = reqwest::Url::parse(redirect)
            .map_err(|e| OAuthError::Redirect(format!("not a URL: {e}")))?;
        let mut bare = url.clone();
        bare.set_query(None);
        bare.set_fragment(None);
        if bare.as_str().trim_end_matches('/') != redirect_uri.trim_end_matches('/') {
            return Err(OAuthError::Redirect(format!(
                "it goes to {bare}, not to the redirect URI {redirect_uri}"
            )));
        }
        if let Some((_, error)) = url.query_pairs().find(|(key, _)| key == "error") {
            let detail = (url.query_pairs())
                .find(|(key, _)| key == "error_description")
                .map(|(_, d)| format!(" ({d})"))
                .unwrap_or_default();
            return Err(OAuthError::Redirect(format!(
                "the authorization server answered `{error}`{detail}"
            )));
        }
        AuthorizationCallback::from_redirect_url(redirect)
            .map_err(|e| OAuthError::Redirect(e.to_string()))
    }

    /// A token by the client credentials grant, for the session's scopes and the server.
    async fn client_credentials(&self, state: &mut State) -> Result<String, OAuthError> {
        if let Some((key, algorithm)) = &self.client.private_key {
            return self.private_key_jwt(state, key, *algorithm).await;
        }
        let config = self.credentials_config(state.scopes.clone())?;
        let Some(manager) = state.manager.as_mut() else {
            return Err(OAuthError::NoMetadata {
                server: self.server.clone(),
            });
        };
        (manager.validate_client_credentials_metadata(&config))
            .map_err(OAuthError::registration)?;
        (manager.configure_client_credentials(&config)).map_err(OAuthError::registration)?;
        (manager.exchange_client_credentials(&config).await).map_err(OAuthError::token)?;
        issued(manager).await
    }

    /// A token by the client credentials grant with `private_key_jwt` (not rmcp's: see
    /// `assertion`), saved in the store for the manager to hand out.
    async fn private_key_jwt(
        &self,
        state: &mut State,
        key: &[u8],
        algorithm: assertion::SigningAlgorithm,
    ) -> Result<String, OAuthError> {
        let (Some(manager), Some(endpoint)) = (state.manager.as_mut(), &state.endpoint) else {
            return Err(OAuthError::NoMetadata {
                server: self.server.clone(),
            });
        };
        let client_id = self.client.client_id.clone().unwrap_or_default();
        let grant = assertion::Grant {
            client_id: &client_id,
            key,
            algorithm,
            scopes: &state.scopes,
            resource: &self.server,
        };
        let stored = assertion::exchange(endpoint, &grant).await?;
        // The manager hands out the stored token and finds when it expires.
        manager
            .configure_client_id(&client_id)
            .map_err(OAuthError::registration)?;
        (self.client.store.save(stored).await).map_err(OAuthError::store)?;
        issued(manager).await
    }

    /// The client credentials grant's configuration, with the client's secret.
    fn credentials_config(
        &self,
        scopes: Vec<String>,
    ) -> Result<ClientCredentialsConfig, OAuthError> {
        let (Some(client_id), Some(client_secret)) = (
            self.client.client_id.clone(),
            self.client.client_secret.clone(),
        ) else {
            return Err(OAuthError::registration(AuthError::ClientCredentialsError(
                "client credentials need a client ID and a secret or a private key".into(),
            )));
        };
        Ok(ClientCredentialsConfig::ClientSecret {
            client_id,
            client_secret,
            scopes,
            resource: Some(self.server.clone()),
        })
    }
}

/// The access token just issued, as the manager saved it in the store.
async fn issued(manager: &AuthorizationManager) -> Result<String, OAuthError> {
    manager.get_access_token().await.map_err(OAuthError::token)
}

/// A failed code exchange: the redirect's fault (its `state`, its `iss`), or the token
/// endpoint's.
fn redirect_or_token(e: AuthError) -> OAuthError {
    match e {
        AuthError::TokenExchangeFailed(_) | AuthError::HttpError(_) => OAuthError::token(e),
        other => OAuthError::Redirect(other.to_string()),
    }
}
