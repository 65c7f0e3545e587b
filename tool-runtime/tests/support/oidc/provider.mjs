// A real authorization server for the authorization tests (Z5): node-oidc-provider on
// loopback, issuing RFC 9068 JWT access tokens (ES256, `aud` = the resource) by the client
// credentials grant to the client `svc` (secret `svc-secret`). The resource comes from
// `RESOURCE`; the issuer URL is printed as the first line of stdout once it listens.
import { generateKeyPair, exportJWK } from 'jose';
import Provider from 'oidc-provider';
import http from 'node:http';

const resource = process.env.RESOURCE;
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: 'oidc-es256', alg: 'ES256', use: 'sig' };

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks: { keys: [jwk] },
  clients: [{
    client_id: 'svc',
    client_secret: 'svc-secret',
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    id_token_signed_response_alg: 'ES256',
  }],
  scopes: ['tickets:read', 'tickets:write'],
  features: {
    devInteractions: { enabled: false },
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
server.on('request', provider.callback());
process.stdout.write(`${issuer}\n`);
