import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestStateCodec } from '../../bridges/shared/request-state.js';
import { ClusterKeys } from '../../src/cluster/cluster-keys.js';
import { DEFAULT_OPTIONS } from '../../src/daemon/options.js';
import { startBridge, type RunningBridge } from '../../src/daemon/start-bridge.js';
import { createLogger } from '../../src/log.js';
import { replicaPorts, startReplica, TEST_CLUSTER_SECRET } from '../helpers/cluster.js';
import { freePort, modernPost, openRawLegacySession, readMessages, waitUntil } from '../helpers/faults.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';

/**
 * The internal route and the answers for an owner that is gone, on three
 * replicas in this process (the library, real sockets, server-everything over
 * stdio), a third that drains, and a fourth peer that is listed but never started.
 */

const keys = new ClusterKeys(TEST_CLUSTER_SECRET);
const logs: string[] = [];
const logger = createLogger('debug', {}, (line) => void logs.push(line), [TEST_CLUSTER_SECRET]);
let a: RunningBridge;
let b: RunningBridge;
let d: RunningBridge;
let deadUrl: string;

async function replica(port: number, peers: string[], handoffMs = 0): Promise<RunningBridge> {
  return startBridge({
    ...DEFAULT_OPTIONS,
    upstream: { kind: 'command', command: EVERYTHING_STDIO_COMMAND[0], args: EVERYTHING_STDIO_COMMAND.slice(1) },
    logger,
    listen: { host: '127.0.0.1', port },
    poolMax: 2,
    callTimeoutMs: 20_000,
    cluster: { self: `http://127.0.0.1:${port}`, peers, secret: TEST_CLUSTER_SECRET, handoffMs },
  });
}

beforeAll(async () => {
  const [pa, pb, pc, pd] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const peers = [pa, pb, pc, pd].map((p) => `http://127.0.0.1:${p}`);
  deadUrl = peers[2];
  // D drains in one case: its hand-off lasts until the case hurries it.
  [a, b, d] = await Promise.all([replica(pa, peers), replica(pb, peers), replica(pd, peers, 60_000)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), d?.close()]);
});

describe('the internal route', () => {
  it('is a plain 404 without a valid proof, and never serves the request', async () => {
    const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const forged = new ClusterKeys(`${TEST_CLUSTER_SECRET}-other`).sign('POST', '/.cluster/mcp');
    const unknown = await (await fetch(`${a.url}/no-such-path`)).text();
    for (const proof of [undefined, forged, `${Date.now()}.AAAA`, keys.sign('POST', '/.cluster/mcp', Date.now() - 120_000)]) {
      const res = await fetch(`${a.url}/.cluster/mcp`, { method: 'POST', headers: proof ? { ...headers, 'x-mcp-bridge-cluster': proof } : headers, body: init });
      expect(res.status).toBe(404);
      expect(res.headers.get('mcp-session-id')).toBeNull();
      expect(await res.text()).toBe(unknown);
    }
  });

  it('serves a request with a valid proof as if it had arrived directly', async () => {
    const res = await fetch(`${a.url}/.cluster/healthz`, { headers: { 'x-mcp-bridge-cluster': keys.sign('GET', '/.cluster/healthz') } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});

describe('state held by another replica', () => {
  it('a legacy session minted on A is served through B, its SSE replies relayed as they come', async () => {
    const s = await openRawLegacySession(a.url!, 'owned-by-a');
    expect(s.sessionId).toMatch(new RegExp(`^${keys.tagOf(a.url!)}\\.[0-9a-f]{64}$`));
    const viaB = (body: unknown) => fetch(`${b.url}/mcp`, { method: 'POST', headers: s.headers, body: JSON.stringify(body) });
    const echo = await readMessages(await viaB({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'through b' } } }));
    expect(echo).toEqual([expect.objectContaining({ id: 1, result: expect.objectContaining({ content: [{ type: 'text', text: 'Echo: through b' }] }) })]);
    const long = await viaB({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 }, _meta: { progressToken: 'p' } } });
    expect(long.headers.get('content-type')).toContain('text/event-stream');
    const messages = await readMessages(long);
    expect(messages.map((m) => (m.method as string | undefined) ?? `result:${String(m.id)}`)).toEqual(['notifications/progress', 'notifications/progress', 'result:2']);
    expect(await fetch(`${b.url}/mcp`, { method: 'DELETE', headers: s.headers }).then((r) => r.status)).toBe(200);
    expect((await viaB({ jsonrpc: '2.0', id: 3, method: 'ping' })).status).toBe(404);
  }, 30_000);

  it('a draining replica: /healthz and /readyz 503, new work handed to a peer, and the client closing its stream cancels it there', async () => {
    expect((await fetch(`${d.url}/readyz`)).status).toBe(200);
    const closing = d.close(20_000);
    try {
      await waitUntil('D answers /healthz 503', async () => (await fetch(`${d.url}/healthz`)).status === 503);
      const ready = await fetch(`${d.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ reason: 'draining' });
      const echo = await readMessages(await modernPost(d.url!, 1, 'tools/call', { name: 'echo', arguments: { message: 'handed on' } }));
      expect(echo).toEqual([expect.objectContaining({ id: 1, result: expect.objectContaining({ content: [{ type: 'text', text: 'Echo: handed on' }] }) })]);
      const listens = () => (a.stats().listens ?? 0) + (b.stats().listens ?? 0);
      const ac = new AbortController();
      const listen = await modernPost(d.url!, 2, 'subscriptions/listen', { notifications: { toolsListChanged: true } }, ac.signal);
      expect(listen.status).toBe(200);
      await waitUntil('a peer holds the listen', () => listens() === 1);
      expect(d.stats().listens ?? 0).toBe(0);
      ac.abort();
      await waitUntil('the peer ends the listen its client left', () => listens() === 0);
    } finally {
      await d.close(0);
      await closing;
    }
  }, 40_000);

  it('a session whose owner is gone: 404 on Streamable HTTP POST, GET and DELETE and on POST /messages, so the SDK re-initializes', async () => {
    const sid = `${keys.tagOf(deadUrl)}.${'ab'.repeat(32)}`;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const answers = await Promise.all([
      fetch(`${a.url}/mcp`, { method: 'POST', headers, body: ping }),
      fetch(`${a.url}/mcp`, { method: 'GET', headers: { ...headers, accept: 'text/event-stream' } }),
      fetch(`${a.url}/mcp`, { method: 'DELETE', headers }),
      fetch(`${a.url}/messages?sessionId=${sid}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ping }),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: -32001, message: expect.stringMatching(/^Session not found: the bridge instance holding it is gone/) } });
    }
  });

  it('a requestState whose owner is gone or unknown: -32602 expired, naming it, at once', async () => {
    for (const owner of [keys.tagOf(deadUrl), 'feedfacecafe']) {
      const codec = new RequestStateCodec({ key: keys.requestStateKey, ttlMs: 60_000, instanceId: owner });
      const params = { name: 'trigger-elicitation-request', arguments: {} };
      const started = Date.now();
      const res = await modernPost(a.url!, 7, 'tools/call', { ...params, requestState: codec.seal('ref', 'tools/call', params), inputResponses: {} });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        id: 7,
        error: { code: -32602, message: expect.stringContaining(`bridge instance ${owner}, which held the parked call, is gone`), data: { requestState: 'expired', instance: owner } },
      });
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });

  it('logs name no secret and no proof', () => {
    const all = logs.join('');
    expect(all).toContain('cluster.forwarded');
    expect(all).not.toContain(TEST_CLUSTER_SECRET);
    expect(all).not.toContain('x-mcp-bridge-cluster');
  });
});

/**
 * --call-timeout also bounds the upstream's initialize, whose clock starts when
 * the child is spawned: it must cover a cold server-everything's boot on a
 * loaded machine (0.5 s on a quiet one, well past 1 s under two suites at once).
 */
const FROZEN_CALL_TIMEOUT_MS = 3_000;
/** The router's margin past the call deadline before a silent owner counts as gone (cluster-router.ts). */
const RESPONSE_MARGIN_MS = 5_000;

describe('an owner that stops answering (SIGSTOP: its port still accepts connections)', () => {
  it('is given up 5 s past --call-timeout: the client gets 404 "gone", not a hang', async () => {
    const ports = await replicaPorts(2);
    const upstream = ['--', ...EVERYTHING_STDIO_COMMAND];
    const [x, y] = await Promise.all(ports.map((p) => startReplica(p, ports, upstream, ['--call-timeout', String(FROZEN_CALL_TIMEOUT_MS), '--log-level', 'warn'])));
    try {
      const s = await openRawLegacySession(x.url, 'owned-by-x');
      x.cli.child.kill('SIGSTOP');
      const started = Date.now();
      const res = await fetch(`${y.url}/mcp`, { method: 'POST', headers: s.headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
      const waited = Date.now() - started;
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: -32001, message: expect.stringContaining('the bridge instance holding it is gone') } });
      // Not before the deadline plus the margin; well before a hang (the slack is event-loop lag on a loaded machine).
      expect(waited).toBeGreaterThanOrEqual(FROZEN_CALL_TIMEOUT_MS + RESPONSE_MARGIN_MS - 500);
      expect(waited).toBeLessThan(FROZEN_CALL_TIMEOUT_MS + RESPONSE_MARGIN_MS + 9_000);
    } finally {
      x.cli.child.kill('SIGCONT');
      await Promise.all([x.cli.close(), y.cli.close()]);
    }
  }, 60_000);
});
