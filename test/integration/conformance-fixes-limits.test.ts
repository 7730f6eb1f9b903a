import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_OPTIONS, type BridgeOptions } from '../../src/daemon/options.js';
import { startBridge, type RunningBridge } from '../../src/daemon/start-bridge.js';
import { silentLogger } from '../../src/log.js';
import { startModernHttpServer } from '../helpers/modern-fixture.js';
import { envelope, modernHeaders, postModern, sleep, textOf, until } from './accept-helpers.js';
import { ELICIT_NAME, recordingLogger, startLegacyServer, type Obj, type RunningTestServer } from './conformance-fixes-servers.js';

/**
 * `--max-parked` and `--max-listens` (BridgeOptions maxParkedCalls,
 * maxListens) with small values through startBridge: one past the bound is an
 * answer naming the limit, and the slot comes back when its holder ends.
 */

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function bridgeTo(url: string, extra: Partial<BridgeOptions>): Promise<RunningBridge> {
  const b = await startBridge({ ...DEFAULT_OPTIONS, upstream: { kind: 'url', url, headers: {} }, logger: silentLogger, listen: { host: '127.0.0.1', port: 0 }, callTimeoutMs: 10_000, ...extra });
  cleanups.push(() => b.close());
  return b;
}

/** An open `subscriptions/listen` stream read up to its first message (the acknowledgement), or the error reply. */
interface OpenListen {
  status: number;
  first: Obj;
  close(): void;
}

async function openListen(base: string, id: string, notifications: Obj): Promise<OpenListen> {
  const ac = new AbortController();
  cleanups.push(async () => ac.abort());
  const params = { notifications };
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...modernHeaders('subscriptions/listen', params) },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { ...params, _meta: envelope({}) } }),
    signal: ac.signal,
  });
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return { status: res.status, first: (await res.json()) as Obj, close: () => ac.abort() };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (let i = 0; i < 100; i++) {
    const chunk = await reader.read();
    if (chunk.done) break;
    buf += decoder.decode(chunk.value, { stream: true });
    const line = buf.split('\n').find((l) => l.startsWith('data: '));
    if (line) return { status: res.status, first: JSON.parse(line.slice(6)) as Obj, close: () => ac.abort() };
  }
  throw new Error('listen stream ended without a message');
}

/** Listens again (up to 40 times, 50 ms apart) until a slot freed elsewhere lets a listen through. */
async function listenOnceFree(base: string, idPrefix: string): Promise<OpenListen> {
  let last: OpenListen | undefined;
  for (let i = 0; i < 40; i++) {
    last = await openListen(base, `${idPrefix}-${i}`, { toolsListChanged: true });
    if (last.first.method === ACK) return last;
    await sleep(50);
  }
  return last!;
}

const ACK = 'notifications/subscriptions/acknowledged';
const LIMIT = { code: -32603, message: 'Subscription limit reached' };

async function elicitingServer(): Promise<RunningTestServer> {
  const server = await startLegacyServer({
    define: (mcp) => {
      mcp.registerTool('ask_name', { description: 'elicits a name' }, async (extra) => {
        const r = await extra.sendRequest(ELICIT_NAME, ElicitResultSchema);
        return { content: [{ type: 'text', text: `hello ${String(r.content?.name)}` }] };
      });
    },
  });
  cleanups.push(() => server.close());
  return server;
}

describe('--max-parked (modern-to-legacy)', () => {
  it('a park beyond the bound is answered -32603 and cancelled upstream; the parked call resumes, then the slot is free again', async () => {
    const server = await elicitingServer();
    const bridge = await bridgeTo(server.url, { maxParkedCalls: 1 });
    const caps = { elicitation: {} };
    const params = { name: 'ask_name', arguments: {} };
    const a = await postModern(bridge.url!, 'park-a', 'tools/call', params, caps);
    expect(a.body).toMatchObject({ result: { resultType: 'input_required', inputRequests: { 'elicit-1': { method: 'elicitation/create' } } } });
    expect(bridge.stats().parked).toBe(1);

    const b = await postModern(bridge.url!, 'park-b', 'tools/call', params, caps);
    expect(b).toMatchObject({ status: 200, body: { id: 'park-b', error: { code: -32603, message: 'too many parked calls (--max-parked)' } } });
    expect(bridge.stats().parked).toBe(1);
    const upstreamIds = server.received.filter((m) => m.method === 'tools/call').map((m) => m.id);
    expect(upstreamIds).toHaveLength(2);
    await until(() => server.received.some((m) => m.method === 'notifications/cancelled' && (m.params as Obj).requestId === upstreamIds[1]));

    const result = a.body.result as Obj;
    const done = await postModern(bridge.url!, 'park-a2', 'tools/call', { ...params, inputResponses: { 'elicit-1': { action: 'accept', content: { name: 'Ada' } } }, requestState: result.requestState }, caps);
    expect(done.body).toMatchObject({ result: { resultType: 'complete', content: [{ type: 'text', text: 'hello Ada' }] } });
    expect(bridge.stats().parked).toBe(0);
    const c = await postModern(bridge.url!, 'park-c', 'tools/call', params, caps);
    expect(c.body).toMatchObject({ result: { resultType: 'input_required' } });
  });
});

describe('--max-listens', () => {
  it('modern-to-legacy: a listen beyond the bound is -32603 "Subscription limit reached" (HTTP 200); closing one frees its slot', async () => {
    const server = await elicitingServer();
    const bridge = await bridgeTo(server.url, { maxListens: 1 });
    const first = await openListen(bridge.url!, 'listen-1', { toolsListChanged: true });
    expect(first.first).toMatchObject({ method: ACK, params: { notifications: { toolsListChanged: true } } });
    const second = await openListen(bridge.url!, 'listen-2', { toolsListChanged: true });
    expect(second).toMatchObject({ status: 200, first: { id: 'listen-2', error: LIMIT } });
    first.close();
    await until(() => bridge.stats().listens === 0);
    const third = await openListen(bridge.url!, 'listen-3', { toolsListChanged: true });
    expect(third.first).toMatchObject({ method: ACK });
  });

  it('modern-to-modern: relayed listens count the same way', async () => {
    const upstream = await startModernHttpServer();
    cleanups.push(() => upstream.close());
    const bridge = await bridgeTo(upstream.url, { maxListens: 1 });
    const first = await openListen(bridge.url!, 'm2m-1', { toolsListChanged: true });
    expect(first.first).toMatchObject({ method: ACK });
    const second = await openListen(bridge.url!, 'm2m-2', { toolsListChanged: true });
    expect(second).toMatchObject({ status: 200, first: { id: 'm2m-2', error: LIMIT } });
    first.close();
    expect((await listenOnceFree(bridge.url!, 'm2m-3')).first).toMatchObject({ method: ACK });
  });

  it('legacy-to-modern: a session beyond the bound works without an upstream listen (warning); its listen shares the bound with modern clients', async () => {
    const upstream = await startModernHttpServer();
    cleanups.push(() => upstream.close());
    const { logger, records } = recordingLogger('warn');
    const bridge = await bridgeTo(upstream.url, { maxListens: 1, logger });
    const connect = async (name: string) => {
      const transport = new StreamableHTTPClientTransport(new URL(`${bridge.url}/mcp`));
      const client = new Client({ name, version: '1.0.0' });
      await client.connect(transport);
      cleanups.push(() => client.close());
      return { client, transport };
    };
    const one = await connect('l2m-one');
    expect(records.filter((r) => r.event === 'l2m.listen.limit')).toHaveLength(0);
    const modern = await openListen(bridge.url!, 'shared-1', { toolsListChanged: true });
    expect(modern.first).toMatchObject({ id: 'shared-1', error: LIMIT });

    const two = await connect('l2m-two');
    expect(records.filter((r) => r.event === 'l2m.listen.limit')).toHaveLength(1);
    expect(textOf(await two.client.callTool({ name: 'echo', arguments: { message: 'still served' } }))).toContain('still served');

    await one.transport.terminateSession();
    expect((await listenOnceFree(bridge.url!, 'shared-2')).first).toMatchObject({ method: ACK });
  });
});
