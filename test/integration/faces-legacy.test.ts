import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket as WsWebSocket } from 'ws';
import type { LegacyChannel, LegacyHandler, LegacyRequestContext, LegacySessionInfo } from '../../src/contracts/downstream.js';
import { negotiateLegacyVersion } from '../../src/epochs/versions.js';
import { SseSessions } from '../../src/faces/sse-sessions.js';
import { StreamableHttpSessions, type LegacyFaceOptions } from '../../src/faces/streamable-http-sessions.js';
import { WsSessions } from '../../src/faces/ws-sessions.js';
import { errorResponse, resultResponse } from '../../src/jsonrpc/messages.js';
import { silentLogger } from '../../src/log.js';
import { SseParser, type SseEvent } from '../../src/wire/sse-parser.js';

// The SDK v1 WebSocket transport uses the global WebSocket, which Node 20 only has behind a flag.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WsWebSocket;

// ─── a tiny real LegacyHandler ──────────────────────────────────────────────

interface OpenedSession {
  info: Omit<LegacySessionInfo, 'protocolVersion'>;
  channel: LegacyChannel;
  closed: boolean;
}

type Tool = (args: Record<string, unknown>, ctx: LegacyRequestContext, req: JSONRPCRequest) => Promise<string>;

function createTestHandler() {
  const opened: OpenedSession[] = [];
  /** Each `slow` call: it runs until the test releases it, then records whether its signal was aborted. */
  const slowCalls: Array<{ aborted: boolean | undefined; release: () => void }> = [];
  const progress = (req: JSONRPCRequest, ctx: LegacyRequestContext, n: number) => {
    const token = (req.params as { _meta?: { progressToken?: unknown } })._meta?.progressToken ?? 'none';
    ctx.notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: n, total: 2 } } as JSONRPCNotification);
  };
  const tools: Record<string, Tool> = {
    echo: async (args) => String(args.text),
    ask: async (_args, ctx) => {
      const r = await ctx.request('elicitation/create', {
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      });
      return `${r.action}:${(r.content as { name?: string } | undefined)?.name}`;
    },
    progress: async (_args, ctx, req) => {
      progress(req, ctx, 1);
      progress(req, ctx, 2);
      // SDK v1 clients handle progress a microtask late and drop it once the response is in: leave a gap, as an upstream would.
      await new Promise((r) => setTimeout(r, 20));
      return 'done';
    },
    notify_changed: async (_args, ctx) => {
      const s = opened.find((o) => o.info.id === ctx.session.id)!;
      return s.channel.notify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' } as JSONRPCNotification) ? 'delivered' : 'undelivered';
    },
    slow: async (_args, ctx, req) => {
      const released = new Promise<void>((resolve) => slowCalls.push({ aborted: undefined, release: resolve }));
      const record = slowCalls[slowCalls.length - 1];
      progress(req, ctx, 1);
      await released;
      record.aborted = ctx.signal.aborted;
      return 'slow done';
    },
  };
  const methods: Record<string, (req: JSONRPCRequest, ctx: LegacyRequestContext) => Promise<Record<string, unknown>>> = {
    'tools/list': async () => ({ tools: Object.keys(tools).map((name) => ({ name, inputSchema: { type: 'object' } })) }),
    'tools/call': async (req, ctx) => {
      const p = req.params as { name: string; arguments?: Record<string, unknown> };
      return { content: [{ type: 'text', text: await tools[p.name](p.arguments ?? {}, ctx, req) }] };
    },
  };
  const handler: LegacyHandler = {
    async openSession(params, info, channel) {
      const s: OpenedSession = { info, channel, closed: false };
      opened.push(s);
      return {
        result: { protocolVersion: negotiateLegacyVersion(params.protocolVersion), capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'test-bridge', version: '1.0.0' } },
        session: {
          handleRequest: async (req, ctx) => {
            const m = methods[req.method];
            if (!m) return errorResponse(req.id, { code: -32601, message: `Method not found: ${req.method}` });
            try {
              return resultResponse(req.id, await m(req, ctx));
            } catch (err) {
              return errorResponse(req.id, { code: -32603, message: String(err) });
            }
          },
          handleNotification: () => {},
          close: async () => void (s.closed = true),
        },
      };
    },
    close: async () => {},
  };
  return { handler, opened, slowCalls };
}

// ─── a plain node:http server routing to the legacy face classes ────────────

interface Face {
  url: string;
  /** Ids of the POST /mcp requests whose response closed (finished, or the client went away). */
  closedPosts: unknown[];
  streamable: StreamableHttpSessions;
  sse: SseSessions;
  ws: WsSessions;
  test: ReturnType<typeof createTestHandler>;
  close(): Promise<void>;
}

async function startFace(overrides: Partial<LegacyFaceOptions> = {}): Promise<Face> {
  const test = createTestHandler();
  const opts: LegacyFaceOptions = { handler: test.handler, logger: silentLogger, heartbeatMs: 15_000, sessionIdleMs: 60_000, allowOrigins: [], inputTimeoutMs: 5_000, ...overrides };
  const streamable = new StreamableHttpSessions(opts);
  const sse = new SseSessions(opts);
  const ws = new WsSessions(opts);
  const readJson = async (req: http.IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  };
  const closedPosts: unknown[] = [];
  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/mcp' && req.method === 'POST') {
      const body = await readJson(req);
      res.once('close', () => closedPosts.push((body as { id?: unknown }).id));
      return streamable.handlePost(req, res, body);
    }
    if (path === '/mcp' && req.method === 'GET') return streamable.handleGet(req, res);
    if (path === '/mcp' && req.method === 'DELETE') return streamable.handleDelete(req, res);
    if (path === '/sse' && req.method === 'GET') return sse.handleGet(req, res);
    if (path === '/messages' && req.method === 'POST') return sse.handlePost(req, res, await readJson(req));
    res.writeHead(404).end();
  });
  ws.attach(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    closedPosts,
    streamable,
    sse,
    ws,
    test,
    async close() {
      await Promise.all([streamable.close(), sse.close(), ws.close()]);
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

// ─── helpers ────────────────────────────────────────────────────────────────

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` up to `tries` times; every loop in these tests is bounded. */
async function eventually<T>(check: () => T | Promise<T>, tries = 50, everyMs = 20): Promise<T> {
  let last: T = await check();
  for (let i = 0; i < tries && !last; i++) {
    await sleep(everyMs);
    last = await check();
  }
  return last;
}

/** An SSE body read incrementally: `until` says when to stop reading; every read is bounded by a timeout. */
function sseReader(res: Response) {
  const events: SseEvent[] = [];
  let raw = '';
  const parser = new SseParser((e) => events.push(e));
  const reader = res.body!.getReader();
  return {
    events,
    reader,
    get raw() {
      return raw;
    },
    async until(stop: (events: SseEvent[], raw: string) => boolean, timeoutMs = 5_000): Promise<boolean> {
      const timer = setTimeout(() => void reader.cancel(), timeoutMs);
      try {
        while (!stop(events, raw)) {
          const { value, done } = await reader.read();
          if (done) return false;
          raw += new TextDecoder().decode(value);
          parser.push(value);
        }
        return true;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Reads an SSE body until `stop` says so or the stream ends. */
async function readSse(res: Response, stop: (events: SseEvent[], raw: string) => boolean) {
  const r = sseReader(res);
  await r.until(stop);
  return r;
}

const ACCEPT_BOTH = 'application/json, text/event-stream';
const initBody = (protocolVersion: string, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

function post(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...headers }, body: JSON.stringify(body), signal });
}

async function rawInit(face: Face, protocolVersion = '2025-06-18'): Promise<string> {
  const res = await post(`${face.url}/mcp`, initBody(protocolVersion));
  expect(res.status).toBe(200);
  await res.text();
  const sid = res.headers.get('mcp-session-id')!;
  const ack = await post(`${face.url}/mcp`, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sid });
  expect(ack.status).toBe(202);
  return sid;
}

// ─── real SDK v1 clients over the three transports ──────────────────────────

const transports: Array<[string, (url: string) => Transport]> = [
  ['Streamable HTTP', (url) => new StreamableHTTPClientTransport(new URL(`${url}/mcp`))],
  ['http+sse', (url) => new SSEClientTransport(new URL(`${url}/sse`))],
  ['WebSocket', (url) => new WebSocketClientTransport(new URL(`${url.replace('http', 'ws')}/ws`))],
];

describe.each(transports)('SDK v1 client over %s', (_name, makeTransport) => {
  let face: Face;
  let client: Client;
  const listChanged: unknown[] = [];

  beforeAll(async () => {
    face = await startFace();
    client = new Client({ name: 'sdk-v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }));
    client.setNotificationHandler(ToolListChangedNotificationSchema, async (n) => void listChanged.push(n));
    await client.connect(makeTransport(face.url));
  });
  afterAll(async () => {
    await client?.close();
    await face?.close();
  });

  it('initializes: the bridge result reaches the client and the session is opened with its facts', () => {
    expect(client.getServerVersion()).toEqual({ name: 'test-bridge', version: '1.0.0' });
    expect(face.test.opened).toHaveLength(1);
    expect(face.test.opened[0].info.clientInfo).toEqual({ name: 'sdk-v1', version: '1.0.0' });
    expect(face.test.opened[0].info.clientCapabilities).toMatchObject({ elicitation: {} });
  });

  it('tools/call echo returns the echoed text', async () => {
    expect(await client.callTool({ name: 'echo', arguments: { text: 'hi there' } })).toMatchObject({ content: [{ type: 'text', text: 'hi there' }] });
  });

  it('elicitation round trip: the server→client request is answered by the client handler', async () => {
    expect(await client.callTool({ name: 'ask', arguments: {} })).toMatchObject({ content: [{ text: 'accept:Ada' }] });
  });

  it('progress notifications reach the onprogress callback before the result', async () => {
    const seen: number[] = [];
    const result = await client.callTool({ name: 'progress', arguments: {} }, undefined, { onprogress: (p) => void seen.push(p.progress) });
    expect(seen).toEqual([1, 2]);
    expect(result).toMatchObject({ content: [{ text: 'done' }] });
  });

  it('a channel list_changed notification is received by the client', async () => {
    // Streamable HTTP clients open their GET stream asynchronously after initialized: retry until it is there.
    const delivered = await eventually(async () => {
      const r = (await client.callTool({ name: 'notify_changed', arguments: {} })) as { content: Array<{ text: string }> };
      return r.content[0].text === 'delivered';
    });
    expect(delivered).toBe(true);
    expect(await eventually(() => listChanged.length > 0)).toBe(true);
  });
});

// ─── raw Streamable HTTP ────────────────────────────────────────────────────

describe('Streamable HTTP sessions, raw', () => {
  let face: Face;
  beforeAll(async () => void (face = await startFace()));
  afterAll(async () => face?.close());

  it('initialize mints a 64-hex Mcp-Session-Id and answers JSON', async () => {
    const res = await post(`${face.url}/mcp`, initBody('2025-11-25'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('mcp-session-id')).toMatch(/^[0-9a-f]{64}$/);
    expect(await res.json()).toMatchObject({ id: 1, result: { protocolVersion: '2025-11-25' } });
    expect(face.streamable.has(res.headers.get('mcp-session-id')!)).toBe(true);
  });

  it('a request without Mcp-Session-Id is 400 -32000', async () => {
    const res = await post(`${face.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: Mcp-Session-Id header is required' } });
  });

  it('an unknown session id is 404 -32001', async () => {
    const res = await post(`${face.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': 'nope' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ id: null, error: { code: -32001, message: 'Session not found' } });
  });

  it('an Accept without text/event-stream is 406', async () => {
    const res = await post(`${face.url}/mcp`, initBody('2025-06-18'), { accept: 'application/json' });
    expect(res.status).toBe(406);
    expect(await res.json()).toMatchObject({ error: { code: -32000 } });
  });

  it('an unsupported MCP-Protocol-Version is 400 -32000; a missing one is accepted', async () => {
    const sid = await rawInit(face);
    const bad = await post(`${face.url}/mcp`, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sid, 'mcp-protocol-version': '1999-01-01' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: -32000, message: expect.stringContaining('1999-01-01') } });
    const ok = await post(`${face.url}/mcp`, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'mcp-session-id': sid });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ id: 3, result: { tools: expect.any(Array) } });
  });

  it('a notification POST is 202 with no body', async () => {
    const sid = await rawInit(face);
    const res = await post(`${face.url}/mcp`, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, { 'mcp-session-id': sid });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
  });

  it('a second initialize on a session is 400 -32600', async () => {
    const sid = await rawInit(face);
    const res = await post(`${face.url}/mcp`, initBody('2025-06-18', 9), { 'mcp-session-id': sid });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: -32600, message: expect.stringContaining('already initialized') } });
  });

  it('a batch from a 2025-03-26 client is answered with an array of responses', async () => {
    const sid = await rawInit(face, '2025-03-26');
    const res = await post(
      `${face.url}/mcp`,
      [
        { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'echo', arguments: { text: 'one' } } },
        { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
        { jsonrpc: '2.0', id: 'b', method: 'ping' },
      ],
      { 'mcp-session-id': sid },
    );
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual([
      { jsonrpc: '2.0', id: 'a', result: { content: [{ type: 'text', text: 'one' }] } },
      { jsonrpc: '2.0', id: 'b', result: {} },
    ]);
  });

  it('a request whose handler notifies first is answered as SSE: progress, then the response, then the end', async () => {
    const sid = await rawInit(face);
    const res = await post(`${face.url}/mcp`, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'progress', _meta: { progressToken: 'p1' } } }, { 'mcp-session-id': sid });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    const { events } = await readSse(res, () => false);
    expect(events.map((e) => JSON.parse(e.data))).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p1', progress: 1, total: 2 } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p1', progress: 2, total: 2 } },
      { jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: 'done' }] } },
    ]);
  });

  it('the client closing a POST SSE stream does not cancel the request', async () => {
    const sid = await rawInit(face);
    const ac = new AbortController();
    const res = await post(`${face.url}/mcp`, { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'slow' } }, { 'mcp-session-id': sid }, ac.signal);
    await readSse(res, (events) => events.length > 0);
    ac.abort();
    // Once the face's side of the POST has closed, the tool looks at its signal.
    await eventually(() => face.closedPosts.includes(6), 250);
    expect(face.closedPosts).toContain(6);
    face.test.slowCalls[0].release();
    await eventually(() => face.test.slowCalls[0].aborted !== undefined, 250);
    expect(face.test.slowCalls.map((c) => c.aborted)).toEqual([false]);
  });

  it('a second GET stream on a session is 409; the first stays open', async () => {
    const sid = await rawInit(face);
    const ac = new AbortController();
    const first = await fetch(`${face.url}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid }, signal: ac.signal });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    const second = await fetch(`${face.url}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid } });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ error: { code: -32000, message: 'Conflict: Only one SSE stream is allowed per session' } });
    const s = face.test.opened.find((o) => o.info.id === sid)!;
    expect(s.channel.notify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' } as JSONRPCNotification)).toBe(true);
    const { events } = await readSse(first, (ev) => ev.length > 0);
    expect(JSON.parse(events[0].data)).toEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    ac.abort();
  });

  it('DELETE closes the session: 200, the bridge session is closed, later requests are 404', async () => {
    const sid = await rawInit(face);
    const del = await fetch(`${face.url}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    expect(del.status).toBe(200);
    expect(face.streamable.has(sid)).toBe(false);
    expect(face.test.opened.find((o) => o.info.id === sid)!.closed).toBe(true);
    const after = await post(`${face.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': sid });
    expect(after.status).toBe(404);
  });
});

describe('Streamable HTTP sessions, timers', () => {
  let face: Face | undefined;
  afterEach(async () => {
    await face?.close();
    face = undefined;
  });

  it('an idle session (no request, no GET stream) is closed after sessionIdleMs', async () => {
    face = await startFace({ sessionIdleMs: 100 });
    const sid = await rawInit(face);
    expect(face.streamable.has(sid)).toBe(true);
    expect(await eventually(() => !face!.streamable.has(sid), 50, 20)).toBe(true);
    expect(face.test.opened[0].closed).toBe(true);
  });

  it('a session with an open GET stream is not idle, and the stream carries heartbeat comments', async () => {
    face = await startFace({ sessionIdleMs: 100, heartbeatMs: 30 });
    const sid = await rawInit(face);
    const ac = new AbortController();
    const get = await fetch(`${face.url}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid }, signal: ac.signal });
    // Five heartbeats 30 ms apart span more than sessionIdleMs: the stream itself is the clock.
    const { raw } = await readSse(get, (_e, text) => text.split(': keepalive').length > 5);
    expect(raw).toContain(': keepalive\n\n');
    expect(face.streamable.has(sid)).toBe(true);
    ac.abort();
  });

  it('close() ends open GET streams and every session', async () => {
    face = await startFace();
    const sid = await rawInit(face);
    const get = await fetch(`${face.url}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid } });
    await face.streamable.close();
    const { reader } = await readSse(get, () => false);
    expect((await reader.read()).done).toBe(true);
    expect(face.streamable.size).toBe(0);
  });
});

// ─── raw http+sse and WebSocket ─────────────────────────────────────────────

describe('http+sse sessions, raw', () => {
  let face: Face;
  beforeAll(async () => void (face = await startFace()));
  afterAll(async () => face?.close());

  it('GET /sse first sends the endpoint event; a POST is 202 Accepted and its answer arrives on the stream', async () => {
    const ac = new AbortController();
    const get = await fetch(`${face.url}/sse`, { headers: { accept: 'text/event-stream' }, signal: ac.signal });
    const stream = sseReader(get);
    await stream.until((ev) => ev.length > 0);
    expect(stream.events[0].event).toBe('endpoint');
    expect(stream.events[0].data).toMatch(/^\/messages\?sessionId=[0-9a-f]{64}$/);
    const res = await post(`${face.url}${stream.events[0].data}`, initBody('2024-11-05'));
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('Accepted');
    await stream.until((ev) => ev.length > 1);
    expect(stream.events[1].event).toBe('message');
    expect(JSON.parse(stream.events[1].data)).toMatchObject({ id: 1, result: { protocolVersion: '2024-11-05' } });
    ac.abort();
  });

  it('a POST to an unknown sessionId is 404', async () => {
    const res = await post(`${face.url}/messages?sessionId=unknown`, initBody('2024-11-05'));
    expect(res.status).toBe(404);
  });

  it('the client closing the stream closes the session', async () => {
    const before = face.sse.size;
    const ac = new AbortController();
    const get = await fetch(`${face.url}/sse`, { signal: ac.signal });
    const { events } = await readSse(get, (ev) => ev.length > 0);
    expect(face.sse.size).toBe(before + 1);
    await post(`${face.url}${events[0].data}`, initBody('2024-11-05', 'x'));
    const opened = await eventually(() => face.test.opened.find((o) => events[0].data.endsWith(o.info.id)));
    expect(opened).toBeDefined();
    ac.abort();
    expect(await eventually(() => opened!.closed)).toBe(true);
    expect(await eventually(() => face.sse.size === before)).toBe(true);
  });
});

describe('WebSocket sessions, raw', () => {
  let face: Face;
  beforeAll(async () => void (face = await startFace()));
  afterAll(async () => face?.close());

  const open = (headers: Record<string, string> = {}) => new WsWebSocket(`${face.url.replace('http', 'ws')}/ws`, 'mcp', { headers });

  it('accepts the mcp subprotocol; bad JSON gets a -32700 error frame', async () => {
    const ws = open();
    await new Promise((r) => ws.once('open', r));
    expect(ws.protocol).toBe('mcp');
    const reply = new Promise<string>((r) => ws.once('message', (d) => r(d.toString())));
    ws.send('{not json');
    expect(JSON.parse(await reply)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    ws.close();
  });

  it('a foreign Origin is refused with 403 on the upgrade', async () => {
    const ws = open({ origin: 'http://evil.example' });
    const status = await new Promise<number>((resolve) => {
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => resolve(101));
      ws.once('error', () => {});
    });
    expect(status).toBe(403);
    ws.terminate();
  });

  it('closing the socket closes the session', async () => {
    const ws = open();
    await new Promise((r) => ws.once('open', r));
    const reply = new Promise<string>((r) => ws.once('message', (d) => r(d.toString())));
    ws.send(JSON.stringify(initBody('2025-06-18', 1)));
    expect(JSON.parse(await reply)).toMatchObject({ id: 1, result: { serverInfo: { name: 'test-bridge' } } });
    const s = face.test.opened.at(-1)!;
    expect(face.ws.size).toBe(1);
    ws.close();
    expect(await eventually(() => s.closed)).toBe(true);
    expect(face.ws.size).toBe(0);
  });
});
