import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';
import { spawnBridge, type SpawnedBridge } from '../helpers/faults.js';
import { CLIENT_SECRET, startOidcIssuer, TOOLS_SCOPE, type OidcIssuer } from '../helpers/oidc-issuer.js';
import { envelope, modernHeaders, stdinTee, type Obj, type Recorder } from './accept-helpers.js';

/**
 * `--auth jwt` through the built CLI, with a real authorization server
 * (oidc-provider) issuing the tokens: each way a token can be wrong gets its
 * status, its `WWW-Authenticate` and a JSON-RPC error, and none reaches the
 * upstream (its stdin is recorded); a good token is served.
 */

const AUDIENCE = 'urn:mcp-bridge:test-audience';

let as: OidcIssuer;
let bridge: RunningCli;
let upstream: Recorder;
let nextId = 1;

beforeAll(async () => {
  as = await startOidcIssuer();
  const tee = stdinTee(EVERYTHING_STDIO_COMMAND);
  upstream = tee.recorder;
  bridge = await startCli(['--log-level', 'warn', '--auth', 'jwt', '--auth-issuer', as.issuer, '--auth-audience', AUDIENCE, '--auth-required-scope', TOOLS_SCOPE, '--', ...tee.command]);
});

afterAll(async () => {
  await bridge?.close();
  await as?.close();
  await upstream?.close();
});

const toolCalls = () => upstream.received().filter((m) => m.method === 'tools/call').length;

/** A modern tools/call with this Authorization (or none). */
async function call(authorization: string | undefined): Promise<{ status: number; challenge: string | null; body: Obj }> {
  const params = { name: 'echo', arguments: { message: 'hi' } };
  const body = { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { ...params, _meta: envelope({}) } };
  const res = await fetch(`${bridge.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...modernHeaders('tools/call', params), ...(authorization ? { authorization } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const json = (res.headers.get('content-type') ?? '').includes('event-stream')
    ? (text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Obj).find((m) => 'result' in m || 'error' in m) ?? {})
    : (JSON.parse(text) as Obj);
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body: json };
}

const now = () => Math.floor(Date.now() / 1000);
const claims = (over: Obj = {}) => ({ iss: as.issuer, aud: AUDIENCE, sub: 'forger', scope: TOOLS_SCOPE, iat: now(), exp: now() + 300, ...over });

describe('--auth jwt', () => {
  it('a token from the authorization server (client credentials) is served', async () => {
    const before = toolCalls();
    const r = await call(`Bearer ${await as.clientCredentials('alice-svc', AUDIENCE)}`);
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body.result)).toContain('Echo: hi');
    expect(toolCalls()).toBe(before + 1);
  });

  it('serves protected-resource metadata naming the issuer (root and /mcp path variant), open to anyone', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await fetch(`${bridge.url}${path}`);
      expect(res.status).toBe(200);
      const doc = (await res.json()) as Obj;
      expect(doc.authorization_servers).toEqual([as.issuer]);
      expect(doc.scopes_supported).toEqual([TOOLS_SCOPE]);
      expect(doc.resource).toBe(path.endsWith('/mcp') ? `${bridge.url}/mcp` : `${bridge.url}/`);
    }
  });

  it('no token: 401 with resource_metadata and scope, no error attribute', async () => {
    const before = toolCalls();
    const r = await call(undefined);
    expect(r.status).toBe(401);
    expect(r.challenge).toBe(`Bearer resource_metadata="${bridge.url}/.well-known/oauth-protected-resource/mcp", scope="${TOOLS_SCOPE}"`);
    expect((r.body.error as Obj).code).toBe(-32000);
    expect(toolCalls()).toBe(before);
  });

  const invalid: Array<[string, () => Promise<string>, RegExp]> = [
    ['expired', () => as.sign(claims({ iat: now() - 600, exp: now() - 120 })), /expired/],
    ['not yet valid', () => as.sign(claims({ nbf: now() + 300 })), /not yet valid/],
    ['wrong aud (a real token for another resource)', () => as.clientCredentials('alice-svc', 'urn:another:resource'), /another audience/],
    ['wrong iss', () => as.sign(claims({ iss: 'http://127.0.0.1:1' })), /another issuer/],
    ['bad signature', () => as.sign(claims(), { foreignKey: true }), /signature does not verify/],
    ['not a JWT', async () => 'opaque-token-without-introspection', /not a JWT/],
  ];
  for (const [name, token, reason] of invalid) {
    it(`${name}: 401 invalid_token, never reaches the upstream`, async () => {
      const before = toolCalls();
      const r = await call(`Bearer ${await token()}`);
      expect(r.status).toBe(401);
      expect(r.challenge).toMatch(new RegExp(`^Bearer resource_metadata="${bridge.url}/.well-known/oauth-protected-resource/mcp", scope="${TOOLS_SCOPE}", error="invalid_token", error_description="[^"]+"$`));
      const error = r.body.error as Obj;
      expect(error.code).toBe(-32000);
      expect(error.message).toMatch(reason);
      expect(r.body.id).toBeNull();
      expect(toolCalls()).toBe(before);
    });
  }

  it('unknown kid: 401, the JWKS is fetched again at most once for two such tokens', async () => {
    const before = as.jwksFetches();
    const a = await call(`Bearer ${await as.sign(claims(), { foreignKey: true, kid: 'rotated-away' })}`);
    const b = await call(`Bearer ${await as.sign(claims(), { foreignKey: true, kid: 'rotated-away-2' })}`);
    expect([a.status, b.status]).toEqual([401, 401]);
    expect((a.body.error as Obj).message).toMatch(/key the issuer does not publish/);
    expect(a.challenge).toContain('error="invalid_token"');
    expect(as.jwksFetches() - before).toBeLessThanOrEqual(1);
  });

  it('a valid token without the required scope: 403 insufficient_scope', async () => {
    const before = toolCalls();
    const r = await call(`Bearer ${await as.clientCredentials('noscope-svc', AUDIENCE, '')}`);
    expect(r.status).toBe(403);
    expect(r.challenge).toContain('error="insufficient_scope"');
    expect(r.challenge).toContain(`scope="${TOOLS_SCOPE}"`);
    expect((r.body.error as Obj).message).toMatch(/lacks the scope mcp:tools/);
    expect(toolCalls()).toBe(before);
  });

  it('http+sse and WebSocket clients get the 401 and its challenge at connect', async () => {
    const sse = await fetch(`${bridge.url}/sse`, { headers: { accept: 'text/event-stream' } });
    expect(sse.status).toBe(401);
    expect(sse.headers.get('www-authenticate')).toContain(`resource_metadata="${bridge.url}/.well-known/oauth-protected-resource/sse"`);
    await sse.body?.cancel();
    const ws = new WebSocket(`${bridge.url.replace('http', 'ws')}/ws`, 'mcp');
    const status = await new Promise<number>((resolve) => {
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => resolve(101));
      ws.once('error', () => undefined);
    });
    ws.terminate();
    expect(status).toBe(401);
  });
});

describe('--auth jwt with --auth-introspection-url (RFC 7662) for opaque tokens', () => {
  const OPAQUE_AUDIENCE = 'urn:opaque:bridge';
  let introspecting: SpawnedBridge;
  let recorder: Recorder;

  beforeAll(async () => {
    const tee = stdinTee(EVERYTHING_STDIO_COMMAND);
    recorder = tee.recorder;
    introspecting = await spawnBridge(
      ['--log-level', 'warn', '--auth', 'jwt', '--auth-issuer', as.issuer, '--auth-audience', OPAQUE_AUDIENCE, '--auth-required-scope', TOOLS_SCOPE, '--auth-introspection-url', `${as.issuer}/token/introspection`, '--auth-introspection-client-id', 'alice-svc', '--', ...tee.command],
      { env: { MCP_BRIDGE_AUTH_INTROSPECTION_SECRET: CLIENT_SECRET } },
    );
  });
  afterAll(async () => {
    await introspecting?.close();
    await recorder?.close();
  });

  const post = async (token: string) => {
    const params = { name: 'echo', arguments: { message: 'opaque' } };
    const res = await fetch(`${introspecting.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...modernHeaders('tools/call', params), authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...params, _meta: envelope({}) } }),
    });
    return { status: res.status, challenge: res.headers.get('www-authenticate'), text: await res.text() };
  };

  it('an active opaque token for the audience is served; one for another audience, or a made-up one, is 401 invalid_token', async () => {
    const token = await as.clientCredentials('bob-svc', OPAQUE_AUDIENCE);
    expect(token.split('.').length).not.toBe(3);
    const good = await post(token);
    expect(good.status).toBe(200);
    expect(good.text).toContain('Echo: opaque');
    const before = recorder.received().filter((m) => m.method === 'tools/call').length;
    const other = await post(await as.clientCredentials('bob-svc', 'urn:opaque:another'));
    expect(other.status).toBe(401);
    expect(other.text).toMatch(/another audience/);
    const made = await post('made-up-opaque-token-0123456789');
    expect(made.status).toBe(401);
    expect(made.challenge).toContain('error="invalid_token"');
    expect(made.text).toMatch(/not active/);
    expect(recorder.received().filter((m) => m.method === 'tools/call').length).toBe(before);
  });
});
