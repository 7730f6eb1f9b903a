import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { FAULT_SERVER_COMMAND, openRawLegacySession, spawnBridge, waitUntil, type SpawnedBridge } from '../helpers/faults.js';
import { MODERN_STDIO_COMMAND } from '../helpers/modern-fixture.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';
import { startOidcIssuer, TOOLS_SCOPE, type OidcIssuer } from '../helpers/oidc-issuer.js';
import { postModern, textOf, type Obj } from './accept-helpers.js';

/**
 * Isolation by principal (DESIGN "Identity") through the built CLI, two users
 * at once with real tokens (oidc-provider, client credentials): the stdio
 * children that serve one are never the other's (the child tells its pid), a
 * session id or a requestState presented with the other's token does not
 * exist for it, and the per-principal bounds hold.
 */

const AUDIENCE = 'urn:mcp-bridge:isolation';
const ELICIT = { elicitation: {} };

let as: OidcIssuer;
let alice: string;
let bob: string;
let pids: SpawnedBridge;
let everything: SpawnedBridge;
let modern: RunningCli;

const jwtArgs = () => ['--log-level', 'warn', '--auth', 'jwt', '--auth-issuer', as.issuer, '--auth-audience', AUDIENCE, '--auth-required-scope', TOOLS_SCOPE];
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  as = await startOidcIssuer();
  [alice, bob] = await Promise.all([as.clientCredentials('alice-svc', AUDIENCE), as.clientCredentials('bob-svc', AUDIENCE)]);
  [pids, everything, modern] = await Promise.all([
    spawnBridge([...jwtArgs(), '--pool-max', '4', '--max-sessions-per-principal', '3', '--', ...FAULT_SERVER_COMMAND]),
    spawnBridge([...jwtArgs(), '--max-parked-per-principal', '1', '--', ...EVERYTHING_STDIO_COMMAND]),
    startCli([...jwtArgs(), '--', ...MODERN_STDIO_COMMAND]),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled([pids?.close(), everything?.close(), modern?.close()]);
  await as?.close();
});

/** The pid of the child that served a modern tools/call (modern client → legacy stdio server). */
async function modernPid(token: string): Promise<string> {
  const r = await postModern(pids.url, `p-${Math.random()}`, 'tools/call', { name: 'pid', arguments: {} }, {}, auth(token));
  if (!('result' in r.body)) throw new Error(JSON.stringify(r.body));
  return textOf(r.body.result);
}

async function v1Client(base: string, token: string): Promise<Client> {
  const client = new Client({ name: 'isolation-v1', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: auth(token) } }));
  return client;
}

describe('two principals through one bridge', () => {
  it('modern → legacy stdio: no call of one principal is served by a child that served the other', async () => {
    const rounds = 3;
    const a: Promise<string>[] = [];
    const b: Promise<string>[] = [];
    for (let i = 0; i < rounds; i++) {
      a.push(modernPid(alice));
      b.push(modernPid(bob));
    }
    const [pa, pb] = [new Set(await Promise.all(a)), new Set(await Promise.all(b))];
    expect([...pa].filter((p) => pb.has(p))).toEqual([]);
  });

  it('legacy → legacy stdio (SDK v1 clients at once): each principal’s children are its own', async () => {
    const [ca, cb] = await Promise.all([v1Client(pids.url, alice), v1Client(pids.url, bob)]);
    try {
      const call = (c: Client) => c.callTool({ name: 'pid', arguments: {} }).then(textOf);
      const [pa, pb] = await Promise.all([Promise.all([call(ca), call(ca), call(ca)]), Promise.all([call(cb), call(cb), call(cb)])]);
      const bobs = new Set(pb);
      expect(pa.filter((p) => bobs.has(p))).toEqual([]);
      // And from the modern face too: alice's modern calls never land on bob's legacy children.
      const modernAlice = await modernPid(alice);
      expect(bobs.has(modernAlice)).toBe(false);
    } finally {
      // DELETE the sessions: the per-principal bound below counts them.
      await Promise.allSettled([ca, cb].map(async (c) => {
        await (c.transport as StreamableHTTPClientTransport).terminateSession();
        await c.close();
      }));
    }
  });

  it('a session id presented with the other principal’s token is 404, as if it did not exist, and is logged', async () => {
    for (const base of [pids.url, modern.url]) {
      const session = await openRawLegacySession(base, 'alice', auth(alice));
      const call = { jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} };
      const stolen = { ...session.headers, ...auth(bob) };
      const post = await fetch(`${base}/mcp`, { method: 'POST', headers: stolen, body: JSON.stringify(call) });
      expect(post.status).toBe(404);
      expect(((await post.json()) as { error: Obj }).error.code).toBe(-32001);
      const get = await fetch(`${base}/mcp`, { method: 'GET', headers: { ...stolen, accept: 'text/event-stream' } });
      expect(get.status).toBe(404);
      await get.body?.cancel();
      const del = await fetch(`${base}/mcp`, { method: 'DELETE', headers: stolen });
      expect(del.status).toBe(404);
      await del.body?.cancel();
      // The owner's session is untouched.
      const own = await session.post(call);
      expect(own.status).toBe(200);
      await own.body?.cancel();
      expect(await session.end()).toBe(200);
    }
    await waitUntil('the attempt is logged', () => /identity\.foreign_state/.test(pids.stderr()));
  });

  it('an http+sse session id posted with the other principal’s token is 404; the owner’s POST is accepted', async () => {
    const ac = new AbortController();
    const stream = await fetch(`${pids.url}/sse`, { headers: { accept: 'text/event-stream', ...auth(alice) }, signal: ac.signal });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    while (!/event: endpoint\ndata: (\S+)/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before the endpoint event: ${text}`);
      text += new TextDecoder().decode(value);
    }
    const endpoint = /event: endpoint\ndata: (\S+)/.exec(text)![1]!;
    const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'sse', version: '1' } } };
    const post = (token: string) => fetch(new URL(endpoint, pids.url), { method: 'POST', headers: { 'content-type': 'application/json', ...auth(token) }, body: JSON.stringify(init) });
    const stolen = await post(bob);
    expect(stolen.status).toBe(404);
    expect(((await stolen.json()) as { error: Obj }).error.code).toBe(-32001);
    const own = await post(alice);
    expect(own.status).toBe(202);
    await own.body?.cancel();
    ac.abort();
  });

  it('a requestState presented with the other principal’s token is -32602 as an unknown one; the owner resumes it', async () => {
    const params = { name: 'trigger-elicitation-request', arguments: {} };
    const first = await postModern(everything.url, 'e-1', 'tools/call', params, ELICIT, auth(alice));
    const parked = first.body.result as Obj;
    expect(parked.resultType).toBe('input_required');
    const key = Object.keys(parked.inputRequests as Obj)[0]!;
    const inputResponses = { [key]: { action: 'accept', content: { name: 'Ada', check: true } } };
    const stolen = await postModern(everything.url, 'e-2', 'tools/call', { ...params, inputResponses, requestState: parked.requestState }, ELICIT, auth(bob));
    const error = stolen.body.error as Obj;
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/no longer parked/);
    await waitUntil('the attempt is logged', () => /identity\.foreign_state.*requestState/.test(everything.stderr()));
    const resumed = await postModern(everything.url, 'e-3', 'tools/call', { ...params, inputResponses, requestState: parked.requestState }, ELICIT, auth(alice));
    expect(JSON.stringify(resumed.body.result)).toContain('Ada');
  });

  it('--max-parked-per-principal: a second parked call of one principal is refused, the other principal still parks', async () => {
    const params = { name: 'trigger-elicitation-request', arguments: {} };
    const one = await postModern(everything.url, 'm-1', 'tools/call', params, ELICIT, auth(alice));
    expect((one.body.result as Obj).resultType).toBe('input_required');
    const two = await postModern(everything.url, 'm-2', 'tools/call', params, ELICIT, auth(alice));
    expect((two.body.error as Obj).message).toMatch(/--max-parked-per-principal/);
    const other = await postModern(everything.url, 'm-3', 'tools/call', params, ELICIT, auth(bob));
    expect((other.body.result as Obj).resultType).toBe('input_required');
  });

  it('--max-sessions-per-principal: one principal gets 503 past its share, the other still opens sessions', async () => {
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await openRawLegacySession(pids.url, `a${i}`, auth(alice)));
    const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'a4', version: '1' } } };
    const refused = await fetch(`${pids.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth(alice) }, body: JSON.stringify(init) });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: Obj }).error.message).toMatch(/--max-sessions-per-principal/);
    const bobs = await openRawLegacySession(pids.url, 'b', auth(bob));
    expect(await bobs.end()).toBe(200);
    for (const s of held) await s.end();
  });
});
