import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify } from 'jose';

/** What the guard saw of one admitted request: the token's subject and audience. */
export interface Admitted {
  sub: string;
  aud: string | string[] | undefined;
  /** The `Mcp-Session-Id` the request carried (legacy upstreams), if any. */
  session?: string;
  /** The JSON-RPC method of a POST body, when it is one message. */
  method?: string;
}

export interface GuardedUpstream {
  /** The guarded MCP endpoint: `${base}/mcp`. */
  url: string;
  admitted: Admitted[];
  /** Requests refused with 401 (no or bad token). */
  refused(): number;
  close(): Promise<void>;
}

/**
 * An OAuth-protected MCP server for tests: a reverse proxy on 127.0.0.1:0 in
 * front of `target` that admits a request only with a bearer JWT from
 * `issuer` naming one of `audiences()` (RFC 8707), refuses others with 401 and
 * a `resource_metadata` challenge, and serves its RFC 9728 metadata.
 */
export async function guardUpstream(target: string, issuer: string, audiences: () => string[]): Promise<GuardedUpstream> {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const t = new URL(target);
  const admitted: Admitted[] = [];
  let refused = 0;
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const url = `${base}/mcp`;
  const metadataUrl = `${base}/.well-known/oauth-protected-resource/mcp`;
  server.on('request', (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path.startsWith('/.well-known/oauth-protected-resource')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ resource: url, authorization_servers: [issuer], scopes_supported: ['mcp:tools'], bearer_methods_supported: ['header'] }));
    }
    const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const deny = (error?: string) => {
      refused++;
      req.resume();
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': `Bearer resource_metadata="${metadataUrl}"${error ? `, error="${error}"` : ''}` });
      // The body of an OAuth resource server (RFC 6750 §3), as the SDKs' bearer middleware sends it.
      res.end(JSON.stringify({ error: error ?? 'invalid_request', error_description: 'a bearer token for this resource is required' }));
    };
    if (!m) return deny();
    jwtVerify(m[1], jwks, { issuer, audience: audiences() }).then(
      ({ payload }) => {
        const session = req.headers['mcp-session-id'];
        const entry: Admitted = { sub: String(payload.sub), aud: payload.aud, ...(typeof session === 'string' ? { session } : {}) };
        admitted.push(entry);
        const method = req.headers['mcp-method'];
        if (typeof method === 'string') entry.method = method;
        const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: { ...req.headers, host: t.host } }, (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          // An SSE stream's head goes out at once, as the server sent it (node holds it until the first byte).
          res.flushHeaders();
          upRes.pipe(res);
        });
        up.on('error', () => res.destroy());
        res.on('close', () => up.destroy());
        req.pipe(up);
      },
      () => deny('invalid_token'),
    );
  });
  return {
    url,
    admitted,
    refused: () => refused,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

/**
 * An OAuth client provider (the SDKs' `OAuthClientProvider` shape, v1 and v2)
 * that registers dynamically as a public client and plays the browser: it
 * follows the authorization server's redirects (with its cookies) to the
 * redirect URI and keeps the code for `finishAuth`.
 */
export class BrowserlessOAuthProvider {
  readonly redirectUrl = 'http://127.0.0.1:9/callback';
  code: string | undefined;
  /** RFC 9207 `iss` of the authorization response (the SDK v2 client checks it). */
  iss: string | undefined;
  authorizations = 0;
  private info: unknown;
  private saved: unknown;
  private verifier = '';

  get clientMetadata() {
    return { client_name: 'mcp-bridge test client', redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', scope: 'mcp:tools' };
  }
  clientInformation() {
    return this.info as never;
  }
  saveClientInformation(info: unknown) {
    this.info = info;
  }
  tokens() {
    return this.saved as never;
  }
  saveTokens(tokens: unknown) {
    this.saved = tokens;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizations++;
    const cookies = new Map<string, string>();
    let next = new URL(url);
    const hops: string[] = [];
    for (let hop = 0; hop < 12; hop++) {
      hops.push(`${next.pathname}`);
      const res = await fetch(next, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const eq = pair.indexOf('=');
        cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      const location = res.headers.get('location');
      await res.body?.cancel();
      if (!location) throw new Error(`authorization stopped at ${next.pathname} with HTTP ${res.status}: ${hops.join(' → ')}`);
      const to = new URL(location, next);
      if (to.href.startsWith(this.redirectUrl)) {
        const code = to.searchParams.get('code');
        if (!code) throw new Error(`redirected without a code: ${to.search}`);
        this.code = code;
        this.iss = to.searchParams.get('iss') ?? undefined;
        return;
      }
      next = to;
    }
    throw new Error(`too many redirects during authorization: ${hops.join(' → ')}`);
  }
}
