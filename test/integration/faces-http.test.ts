import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import type { LegacyHandler, ModernHandler, ModernRequestContext, ParamHeaderSpec } from '../../src/contracts/downstream.js';
import { HttpFace } from '../../src/faces/http-face.js';
import { errorResponse, resultResponse } from '../../src/jsonrpc/messages.js';
import { silentLogger } from '../../src/log.js';
import { waitFor } from '../helpers/wait-for.js';

const V = '2026-07-28';
const PV = 'io.modelcontextprotocol/protocolVersion';
const SUB = 'io.modelcontextprotocol/subscriptionId';
const META = { [PV]: V, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } };
const SERVER_META = { 'io.modelcontextprotocol/serverInfo': { name: 'test-modern', version: '1.0.0' } };

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}

/** What the test handler saw, so tests can assert on cancellation and headers. */
const seen = { aborted: [] as unknown[], headers: [] as Array<Record<string, string | undefined>> };
/** `slow` calls in the handler, by id: each runs until its signal aborts or the test lets it go. */
const held = new Map<unknown, () => void>();

const TOOLS = [
  { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  { name: 'stream', inputSchema: { type: 'object' } },
  { name: 'regional', inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } } },
];

type Args = Record<string, unknown>;
const toolImpl: Record<string, (req: JSONRPCRequest, args: Args, ctx: ModernRequestContext) => Promise<Record<string, unknown>>> = {
  echo: async (_r, args) => ({ content: [{ type: 'text', text: String(args.text) }] }),
  regional: async (_r, args) => ({ content: [{ type: 'text', text: `region=${String(args.region)}` }] }),
  stream: async (req, _a, ctx) => {
    const token = (req.params as { _meta?: { progressToken?: unknown } })._meta?.progressToken;
    for (let i = 1; i <= 3; i++) {
      if (token !== undefined) ctx.notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: i, total: 3 } } as JSONRPCNotification);
      await sleep(5);
    }
    return { content: [{ type: 'text', text: 'streamed' }] };
  },
  slow: async (req, _a, ctx) => {
    await new Promise<void>((resolve) => {
      held.set(req.id, resolve);
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      if (ctx.signal.aborted) resolve();
    });
    held.delete(req.id);
    if (ctx.signal.aborted) seen.aborted.push(req.id);
    return { content: [{ type: 'text', text: 'late' }] };
  },
};

const methods: Record<string, (req: JSONRPCRequest, ctx: ModernRequestContext) => Promise<JSONRPCResponse>> = {
  'server/discover': async (req) =>
    resultResponse(req.id, { resultType: 'complete', supportedVersions: [V], capabilities: { tools: { listChanged: true } }, ttlMs: 0, cacheScope: 'private', _meta: SERVER_META }),
  'tools/list': async (req) => resultResponse(req.id, { resultType: 'complete', tools: TOOLS, ttlMs: 0, cacheScope: 'private', _meta: SERVER_META }),
  'tools/call': async (req, ctx) => {
    const { name, arguments: args = {} } = req.params as { name: string; arguments?: Args };
    if (name === 'fail') return errorResponse(req.id, { code: -32603, message: 'tool failed on purpose' });
    const impl = toolImpl[name];
    if (!impl) return errorResponse(req.id, { code: -32602, message: `unknown tool ${name}` });
    return resultResponse(req.id, { resultType: 'complete', ...(await impl(req, args, ctx)), _meta: SERVER_META });
  },
  'subscriptions/listen': async (req, ctx) => {
    ctx.notify({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: { [SUB]: req.id }, notifications: { toolsListChanged: true } } } as JSONRPCNotification);
    await sleep(20);
    ctx.notify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [SUB]: req.id } } } as JSONRPCNotification);
    await sleep(10_000, ctx.signal);
    if (ctx.signal.aborted) seen.aborted.push(req.id);
    return resultResponse(req.id, { resultType: 'complete', _meta: { [SUB]: req.id } });
  },
};

const modern: ModernHandler = {
  async handle(req, ctx) {
    seen.headers.push(ctx.headers ?? {});
    const m = methods[req.method];
    return m ? m(req, ctx) : errorResponse(req.id, { code: -32601, message: 'not in test handler' });
  },
  paramHeaders: (tool): ParamHeaderSpec[] | undefined => (tool === 'regional' ? [{ name: 'Region', path: ['region'], type: 'string' }] : undefined),
  close: async () => {},
};

/** A legacy handler stub: enough to see that legacy traffic is routed to the session classes. */
const legacy: LegacyHandler = {
  async openSession(params) {
    return {
      result: { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'test-legacy', version: '1' } },
      session: {
        handleRequest: async (req) => resultResponse(req.id, { routed: 'legacy', method: req.method }),
        handleNotification: () => {},
        close: async () => {},
      },
    } as Awaited<ReturnType<LegacyHandler['openSession']>>;
  },
  close: async () => {},
};

let face: HttpFace;
let mcp: string;

beforeAll(async () => {
  face = await HttpFace.start({
    modern,
    legacy,
    logger: silentLogger,
    listen: { host: '127.0.0.1', port: 0 },
    allowOrigins: ['https://allowed.example'],
    maxBodyBytes: 4096,
    heartbeatMs: 15_000,
    sessionIdleMs: 60_000,
  });
  mcp = `${face.url}/mcp`;
});

afterAll(async () => {
  await face?.close();
});

function modernHeaders(method: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': method, ...extra };
}

function post(body: unknown, headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
  return fetch(mcp, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body), signal });
}

function call(id: unknown, name: string, args: Args = {}, meta: Record<string, unknown> = META) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: meta } };
}

/** The JSON-RPC messages of an SSE body. */
function sseMessages(text: string): unknown[] {
  return text
    .split('\n\n')
    .map((frame) => frame.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n'))
    .filter((d) => d !== '')
    .map((d) => JSON.parse(d));
}

/** Waits until `cond` holds; a timeout fails naming the condition (it used to return silently). */
async function until(cond: () => boolean, ms = 3000): Promise<void> {
  await waitFor(() => (cond() ? true : undefined), ms, String(cond));
}

describe('HTTP face: transport refusals', () => {
  it('GET /healthz answers 200 {"status":"ok"}', async () => {
    const res = await fetch(`${face.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('a foreign Origin gets 403 with a JSON-RPC error body (id null) on every route', async () => {
    for (const [path, method] of [['/mcp', 'POST'], ['/healthz', 'GET'], ['/sse', 'GET']] as const) {
      const res = await fetch(`${face.url}${path}`, { method, headers: { origin: 'https://evil.example', 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined });
      expect(res.status).toBe(403);
      const body = await res.json();
      expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    }
  });

  it('loopback and listed Origins are let through', async () => {
    for (const origin of ['http://localhost:5173', 'https://allowed.example']) {
      const res = await fetch(`${face.url}/healthz`, { headers: { origin } });
      expect(res.status).toBe(200);
    }
  });

  it('GET and DELETE /mcp without a session get 405, Allow: POST and the SDK body', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(mcp, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
    }
  });

  it('a body past maxBodyBytes gets 413', async () => {
    const res = await post(call(1, 'echo', { text: 'x'.repeat(8000) }), modernHeaders('tools/call', { 'mcp-name': 'echo' }));
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe(-32000);
  });

  it('a non-JSON Content-Type gets 415', async () => {
    const res = await post('hello', { ...modernHeaders('tools/list'), 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
  });

  it('an unparseable body gets 400 -32700 with id null', async () => {
    const res = await post('{"jsonrpc": "2.0", ', modernHeaders('tools/list'));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ id: null, error: { code: -32700 } });
  });

  it('a posted response without a session gets 400 -32600', async () => {
    const res = await post({ jsonrpc: '2.0', id: 5, result: {} }, modernHeaders('x'));
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe(-32600);
  });

  it('a batch holding a modern element gets 400 -32600', async () => {
    const res = await post([call(1, 'echo'), { jsonrpc: '2.0', id: 2, method: 'tools/list' }], modernHeaders('tools/call'));
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe(-32600);
  });
});

describe('HTTP face: the modern ladder over the wire', () => {
  const cases: Array<{ name: string; body: unknown; headers: Record<string, string>; status: number; code: number }> = [
    { name: 'missing Mcp-Name', body: call(1, 'echo'), headers: modernHeaders('tools/call'), status: 400, code: -32020 },
    { name: 'header/body version mismatch', body: call(1, 'echo', {}, { ...META, [PV]: '2025-11-25' }), headers: modernHeaders('tools/call', { 'mcp-name': 'echo' }), status: 400, code: -32020 },
    { name: 'missing clientCapabilities', body: call(1, 'echo', {}, { [PV]: V }), headers: modernHeaders('tools/call', { 'mcp-name': 'echo' }), status: 400, code: -32602 },
    { name: 'claim-less body with a modern header', body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, headers: modernHeaders('tools/list'), status: 400, code: -32602 },
    { name: 'unsupported version', body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { ...META, [PV]: '2099-01-01' } } }, headers: modernHeaders('tools/list', { 'mcp-protocol-version': '2099-01-01' }), status: 400, code: -32022 },
    { name: 'removed method ping', body: { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: META } }, headers: modernHeaders('ping'), status: 404, code: -32601 },
    { name: 'wrong Mcp-Param-Region', body: call(1, 'regional', { region: 'eu' }), headers: modernHeaders('tools/call', { 'mcp-name': 'regional', 'mcp-param-region': 'us' }), status: 400, code: -32020 },
  ];
  it.each(cases)('$name → HTTP $status, $code', async ({ body, headers, status, code }) => {
    const res = await post(body, headers);
    expect(res.status).toBe(status);
    const json = await res.json();
    expect(json.error.code).toBe(code);
    expect(json.id).toBe(1);
  });

  it('a valid request is answered as JSON when the handler does not notify', async () => {
    const res = await post(call(7, 'echo', { text: 'hi' }), modernHeaders('tools/call', { 'mcp-name': 'echo' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'hi' }] } });
  });

  it('Mcp-Session-Id and Last-Event-ID are ignored on modern requests', async () => {
    const res = await post(call(8, 'echo', { text: 'x' }), modernHeaders('tools/call', { 'mcp-name': 'echo', 'mcp-session-id': 'nope', 'last-event-id': '3' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
  });

  it('a handler error stays in-band with HTTP 200', async () => {
    const res = await post(call(9, 'fail'), modernHeaders('tools/call', { 'mcp-name': 'fail' }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 9, error: { code: -32603, message: 'tool failed on purpose' } });
  });

  it('a handler that notifies first switches the reply to SSE, ending after the final response', async () => {
    const res = await post(call(10, 'stream', {}, { ...META, progressToken: 'p' }), modernHeaders('tools/call', { 'mcp-name': 'stream' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    const messages = sseMessages(await res.text()) as Array<Record<string, unknown>>;
    expect(messages.map((m) => m.method ?? 'response')).toEqual(['notifications/progress', 'notifications/progress', 'notifications/progress', 'response']);
    expect(messages[3]).toMatchObject({ id: 10, result: { content: [{ text: 'streamed' }] } });
  });

  it('a notification POST gets 202 with no body', async () => {
    const res = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'none' } }, modernHeaders('notifications/cancelled'));
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
  });

  it('closing the connection aborts the handler signal', async () => {
    const ac = new AbortController();
    const pending = post(call('drop-1', 'slow'), modernHeaders('tools/call', { 'mcp-name': 'slow' }), ac.signal).catch(() => undefined);
    await until(() => held.has('drop-1'));
    ac.abort();
    await pending;
    await until(() => seen.aborted.includes('drop-1'));
    expect(seen.aborted).toContain('drop-1');
  });

  it('a posted notifications/cancelled cancels nothing: on HTTP only closing the stream cancels', async () => {
    // Several clients on one address may use the same id; honouring the id could cancel another client's call.
    const pending = post(call('cancel-1', 'slow'), modernHeaders('tools/call', { 'mcp-name': 'slow' }));
    await until(() => held.has('cancel-1'));
    const res = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'cancel-1' } }, modernHeaders('notifications/cancelled'));
    expect(res.status).toBe(202);
    // The call is still running once the notification has been answered; now it may finish.
    expect(held.has('cancel-1')).toBe(true);
    held.get('cancel-1')!();
    const reply = await pending;
    const body = reply.headers.get('content-type')?.includes('json') ? await reply.json() : sseMessages(await reply.text())[0];
    expect(body).toMatchObject({ id: 'cancel-1', result: {} });
    expect(seen.aborted).not.toContain('cancel-1');
  });
});

describe('HTTP face: routing legacy traffic', () => {
  const legacyHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } };

  it('initialize, then a session request, GET and DELETE go to the Streamable HTTP sessions', async () => {
    const res = await post(init, legacyHeaders);
    expect(res.status).toBe(200);
    const sessionId = res.headers.get('mcp-session-id');
    expect(sessionId).toMatch(/^[0-9a-f]{64}$/);
    const initBody = res.headers.get('content-type')?.includes('json') ? await res.json() : sseMessages(await res.text())[0];
    expect(initBody).toMatchObject({ id: 0, result: { serverInfo: { name: 'test-legacy' } } });

    const withSession = { ...legacyHeaders, 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-06-18' };
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, withSession);
    const r2 = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, withSession);
    const body2 = r2.headers.get('content-type')?.includes('json') ? await r2.json() : sseMessages(await r2.text())[0];
    expect(body2).toMatchObject({ id: 1, result: { routed: 'legacy', method: 'tools/list' } });

    const ac = new AbortController();
    const get = await fetch(mcp, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId! }, signal: ac.signal });
    expect(get.status).toBe(200);
    expect(get.headers.get('content-type')).toBe('text/event-stream');
    ac.abort();

    const del = await fetch(mcp, { method: 'DELETE', headers: { 'mcp-session-id': sessionId! } });
    expect(del.status).toBe(200);
    const after = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, withSession);
    expect(after.status).toBe(404);
  });

  it('GET /sse opens a 2024 http+sse stream whose first event names the POST endpoint', async () => {
    const ac = new AbortController();
    const res = await fetch(`${face.url}/sse`, { headers: { accept: 'text/event-stream' }, signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    for (let i = 0; i < 20 && !text.includes('\n\n'); i++) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    expect(text).toMatch(/^event: endpoint\ndata: \/messages\?sessionId=\S+\n\n/);
  });
  it('WebSocket /ws (subprotocol mcp) reaches the WebSocket sessions', async () => {
    const ws = new WebSocket(`${face.url.replace(/^http/, 'ws')}/ws`, 'mcp');
    try {
      await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
      expect(ws.protocol).toBe('mcp');
      const reply = new Promise<Record<string, unknown>>((resolve) => ws.once('message', (data) => resolve(JSON.parse(String(data)))));
      ws.send(JSON.stringify(init));
      expect(await reply).toMatchObject({ id: 0, result: { serverInfo: { name: 'test-legacy' } } });
    } finally {
      ws.close();
    }
  });
});

describe('HTTP face: the real SDK v2 client pinned to 2026-07-28', () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: 'sdk-v2-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: V } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp)));
  });
  afterAll(async () => {
    await client?.close();
  });

  it('connects (server/discover), lists tools and calls one', async () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'test-modern' });
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(['echo', 'stream', 'regional']);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'from sdk' } });
    expect(result.content).toEqual([{ type: 'text', text: 'from sdk' }]);
  });

  it('sends the Mcp-Param-* header a tool declares, and the face accepts it', async () => {
    await client.listTools();
    const result = await client.callTool({ name: 'regional', arguments: { region: 'eu-west' } });
    expect(result.content).toEqual([{ type: 'text', text: 'region=eu-west' }]);
    expect(seen.headers.at(-1)).toMatchObject({ 'mcp-param-region': 'eu-west', 'mcp-name': 'regional', 'mcp-method': 'tools/call' });
  });

  it('receives progress notifications over the SSE reply', async () => {
    const progress: number[] = [];
    const result = await client.callTool({ name: 'stream', arguments: {} }, { onprogress: (p) => progress.push(p.progress) });
    expect(progress).toEqual([1, 2, 3]);
    expect(result.content).toEqual([{ type: 'text', text: 'streamed' }]);
  });

  it('listen: gets the ack and a list_changed, and close() aborts the listen on the face', async () => {
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => void changed++);
    const before = seen.aborted.length;
    const sub = await client.listen({ toolsListChanged: true });
    expect(sub.honoredFilter).toEqual({ toolsListChanged: true });
    await until(() => changed > 0);
    expect(changed).toBe(1);
    await sub.close();
    await until(() => seen.aborted.length > before);
    expect(seen.aborted.length).toBe(before + 1);
  });
});

describe('HTTP face: SSE heartbeats', () => {
  let fast: HttpFace;
  beforeAll(async () => {
    fast = await HttpFace.start({ modern, legacy, logger: silentLogger, listen: { host: '127.0.0.1', port: 0 }, allowOrigins: [], maxBodyBytes: 4096, heartbeatMs: 25, sessionIdleMs: 60_000 });
  });
  afterAll(async () => {
    await fast?.close();
  });

  it('an open modern SSE reply carries a keepalive comment every heartbeatMs', async () => {
    const ac = new AbortController();
    const body = { jsonrpc: '2.0', id: 'hb', method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: META } };
    const res = await fetch(`${fast.url}/mcp`, { method: 'POST', headers: modernHeaders('subscriptions/listen'), body: JSON.stringify(body), signal: ac.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    let text = '';
    const end = Date.now() + 2000;
    while ((text.match(/: keepalive\n\n/g) ?? []).length < 2 && Date.now() < end) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    expect((text.match(/: keepalive\n\n/g) ?? []).length).toBeGreaterThanOrEqual(2);
    expect(sseMessages(text)[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
  });
});
