// A real authorization server for the authorization-code tests (Z4, Z5): node-oidc-provider on
// loopback, issuing RFC 9068 JWT access tokens (ES256, `aud` = the resource) to
// - `app`, a public native client (PKCE, redirect URI `REDIRECT_URI`) by the authorization-code
//   flow, with refresh tokens;
// - clients registered dynamically (RFC 7591), the same way;
// - `svc` (secret `svc-secret`, `client_secret_basic` only) by the client credentials grant.
// The user's step completes by itself: the login page signs the user `USER` in and the consent
// page grants exactly the scopes the request asks for, each by a redirect, so a user agent
// that follows redirects and keeps cookies goes through both. Access tokens live
// `ACCESS_TTL` seconds. The issuer URL is printed as the first line of stdout once it listens.
import { generateKeyPair, exportJWK } from 'jose';
import Provider from 'oidc-provider';
import http from 'node:http';

const resource = process.env.RESOURCE;
const redirectUri = process.env.REDIRECT_URI;
const user = process.env.USER_ID || 'alice';
const ttl = Number(process.env.ACCESS_TTL || 600);
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: 'oidc-es256', alg: 'ES256', use: 'sig' };

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks: { keys: [jwk] },
  cookies: { keys: ['z5-cookie-key'] },
  clients: [
    {
      client_id: 'app',
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [redirectUri],
      id_token_signed_response_alg: 'ES256',
    },
    {
      client_id: 'svc',
      client_secret: 'svc-secret',
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      id_token_signed_response_alg: 'ES256',
    },
  ],
  clientDefaults: {
    grant_types: ['authorization_code'],
    id_token_signed_response_alg: 'ES256',
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  },
  clientAuthMethods: ['none', 'client_secret_basic'],
  scopes: ['tickets:read', 'tickets:write', 'offline_access'],
  ttl: { AccessToken: ttl, ClientCredentials: ttl },
  pkce: { required: () => true },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) throw new Provider.errors.InvalidTarget();
        return {
          scope: 'tickets:read tickets:write',
          audience: resource,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  },
});

// The login and consent pages, answered without a form: login as `user`, then consent to
// what the request asks for.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params } = details;
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: user } }, {
      mergeWithLastSubmission: false,
    });
    return;
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
  if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
  for (const [indicator, scopes] of Object.entries(prompt.details.missingResourceScopes || {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, {
    mergeWithLastSubmission: true,
  });
}

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((e) => {
      res.statusCode = 500;
      res.end(String(e));
    });
  } else {
    callback(req, res);
  }
});
process.stdout.write(`${issuer}\n`);
