import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';

/**
 * A real OAuth 2.1 / OIDC authorization server (oidc-provider) on 127.0.0.1:0
 * that issues RFC 9068 JWT access tokens for resources (RFC 8707):
 * - `alice-svc` / `bob-svc`: client credentials with scope `mcp:tools`;
 * - `noscope-svc`: client credentials, no scope;
 * - dynamic registration (public clients, authorization code + PKCE), the
 *   login and consent steps answered by the test's own interaction route
 *   (`accountId` from `interactionAccount`, every requested scope granted).
 */
export interface OidcIssuer {
  issuer: string;
  /** GETs of the JWKS so far (a token with an unknown kid refetches it once). */
  jwksFetches(): number;
  /** A client-credentials token for `resource` (its `aud`). */
  clientCredentials(clientId: 'alice-svc' | 'bob-svc' | 'noscope-svc', resource: string, scope?: string): Promise<string>;
  /** Signs arbitrary claims with the issuer's own key (for expiry, nbf, iss cases), or with a foreign key. */
  sign(claims: Record<string, unknown>, opts?: { foreignKey?: boolean; kid?: string }): Promise<string>;
  /** Who logs in at the next authorization request. */
  interactionAccount: string;
  close(): Promise<void>;
}

export const CLIENT_SECRET = 'secret-of-the-test-clients-0123456789';
export const TOOLS_SCOPE = 'mcp:tools';

export async function startOidcIssuer(): Promise<OidcIssuer> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'issuer-key-1', alg: 'RS256', use: 'sig' };
  const foreign = (await generateKeyPair('RS256', { extractable: true })).privateKey;
  const cc = (client_id: string, scope?: string) => ({
    client_id,
    client_secret: CLIENT_SECRET,
    grant_types: ['client_credentials'],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
    redirect_uris: [],
    ...(scope ? { scope } : {}),
  });
  const provider = new Provider(issuer, {
    clients: [cc('alice-svc', TOOLS_SCOPE), cc('bob-svc', TOOLS_SCOPE), cc('noscope-svc')],
    jwks: { keys: [jwk] },
    scopes: ['openid', 'offline_access', TOOLS_SCOPE],
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', id_token_signed_response_alg: 'RS256' },
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        defaultResource: () => undefined,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({ scope: TOOLS_SCOPE, audience: resource, accessTokenFormat: resource.startsWith('urn:opaque:') ? 'opaque' : 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } }),
      },
    },
    pkce: { required: () => true },
    ttl: { AccessToken: 600, ClientCredentials: 600, Interaction: 600, Session: 600, Grant: 600 },
  } as never);
  let jwksFetches = 0;
  const state = { interactionAccount: 'alice' };
  const callback = provider.callback();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/jwks') jwksFetches++;
    if (path.startsWith('/interaction/')) return void interact(provider, req, res, state.interactionAccount).catch((err: unknown) => {
      res.writeHead(500).end(String(err));
    });
    callback(req, res);
  });
  const out: OidcIssuer = {
    issuer,
    jwksFetches: () => jwksFetches,
    get interactionAccount() {
      return state.interactionAccount;
    },
    set interactionAccount(v: string) {
      state.interactionAccount = v;
    },
    async clientCredentials(clientId, resource, scope = TOOLS_SCOPE) {
      const body = new URLSearchParams({ grant_type: 'client_credentials', resource, ...(scope ? { scope } : {}) });
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${CLIENT_SECRET}`).toString('base64')}` },
        body: body.toString(),
      });
      const json = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!json.access_token) throw new Error(`token endpoint: ${res.status} ${json.error} ${json.error_description}`);
      return json.access_token;
    },
    async sign(claims, opts = {}) {
      return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: opts.kid ?? jwk.kid }).sign(opts.foreignKey ? foreign : privateKey);
    },
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
  return out;
}

/** The login and consent prompts, answered at once: `account` logs in, every requested scope and resource is granted. */
async function interact(provider: Provider, req: http.IncomingMessage, res: http.ServerResponse, account: string): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const prompt = details.prompt as { name: string; details: Record<string, unknown> };
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: account } }, { mergeWithLastSubmission: false });
    return;
  }
  const params = details.params as Record<string, string | undefined>;
  const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId: details.session!.accountId, clientId: params.client_id! });
  const oidc = (prompt.details.missingOIDCScope ?? []) as string[];
  if (oidc.length > 0) grant!.addOIDCScope(oidc.join(' '));
  const resources = (prompt.details.missingResourceScopes ?? {}) as Record<string, string[]>;
  for (const [resource, wanted] of Object.entries(resources)) grant!.addResourceScope(resource, wanted.join(' '));
  const grantId = await grant!.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}
