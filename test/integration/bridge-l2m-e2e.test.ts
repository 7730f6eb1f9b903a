import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { WebSocket as WsWebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_OPTIONS, type UpstreamTarget } from '../../src/daemon/options.js';
import { startBridge, type RunningBridge } from '../../src/daemon/start-bridge.js';
import { silentLogger } from '../../src/log.js';
import { CLI_COMMAND, startCli, type RunningCli } from '../helpers/cli.js';
import { MODERN_STDIO_COMMAND, startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';

// The SDK v1 WebSocket transport uses the global WebSocket, which Node 20 only has behind a flag.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WsWebSocket;

type Obj = Record<string, unknown>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(pred: () => T | undefined | Promise<T | undefined>, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

const textOf = (r: unknown) => (r as { content: { text: string }[] }).content[0]?.text;

function bridgeOptions(upstream: UpstreamTarget, over: Partial<typeof DEFAULT_OPTIONS> = {}) {
  return { ...DEFAULT_OPTIONS, upstream, logger: silentLogger, listen: { host: '127.0.0.1', port: 0 }, inputTimeoutMs: 2_000, ...over };
}

/** What a v1 client saw arrive unsolicited or alongside its calls. */
interface Seen {
  toolsChanged: number;
  updated: string[];
  logs: { level: string; data: unknown }[];
}

/** A real SDK v1 client that declares elicitation, sampling and roots and answers them. */
async function connectV1(transport: Transport): Promise<{ client: Client; seen: Seen }> {
  const client = new Client({ name: 'v1-e2e', version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } });
  const seen: Seen = { toolsChanged: 0, updated: [], logs: [] };
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    const message = req.params.message;
    if (message === 'What is your name?') return { action: 'accept', content: { name: 'Ada' } };
    if (message.startsWith('Is "Ada" right?')) return { action: 'accept', content: { ok: true } };
    if (message === 'Favourite colour?') return { action: 'accept', content: { color: 'teal' } };
    return { action: 'decline' };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'hi from v1' }, model: 'v1-model' }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///v1', name: 'v1' }] }));
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => void seen.toolsChanged++);
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => void seen.updated.push(n.params.uri));
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => void seen.logs.push({ level: n.params.level, data: n.params.data }));
  await client.connect(transport);
  return { client, seen };
}

/**
 * Every bridged feature, asserted through one connected v1 client. `headerSeen`
 * says whether the upstream can see HTTP headers (HTTP upstreams only).
 */
function featureTests(get: () => { client: Client; seen: Seen }, label: string, headerSeen: boolean): void {
  let client: Client;
  let seen: Seen;
  beforeAll(() => {
    ({ client, seen } = get());
  });

  it('initialize succeeds with the upstream serverInfo and its capabilities', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'modern-fixture', version: '1.0.0' });
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, resources: { subscribe: true } });
  });

  it('tools/list and tools/call work', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'ask-name', 'ask-two', 'sample', 'tenant-echo']));
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'v1' } }))).toBe('Echo: v1');
  });

  it('elicitation through several MRTR rounds (ask-name)', async () => {
    expect(textOf(await client.callTool({ name: 'ask-name', arguments: {} }))).toBe('Hello, Ada!');
  });

  it('two inputs at once: elicitation and roots (ask-two)', async () => {
    expect(textOf(await client.callTool({ name: 'ask-two', arguments: {} }))).toBe('color=teal roots=file:///v1');
  });

  it('sampling (sample)', async () => {
    expect(textOf(await client.callTool({ name: 'sample', arguments: { prompt: 'hey' } }))).toBe('sampled: hi from v1');
  });

  it('progress notifications pass through', async () => {
    const progress: number[] = [];
    const r = await client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: (p) => void progress.push(p.progress) });
    expect(textOf(r)).toBe('done 3 steps');
    expect(progress).toEqual([1, 2, 3]);
  });

  it('x-mcp-header: the upstream sees Mcp-Param-Region when the upstream is HTTP', async () => {
    const r = await client.callTool({ name: 'tenant-echo', arguments: { region: 'ap-south' } });
    expect(r.structuredContent).toEqual({ region: 'ap-south', header: headerSeen ? 'ap-south' : null });
  });

  it('a tool that changes the tool list: the client receives tools/list_changed', async () => {
    const before = seen.toolsChanged;
    await client.callTool({ name: 'add-tool', arguments: { name: `added-${label.replace(/\W/g, '')}` } });
    await waitFor(() => (seen.toolsChanged > before ? true : undefined));
  });

  it('resources/subscribe: resources/updated arrives after bump', async () => {
    await client.subscribeResource({ uri: 'test://counter' });
    const before = seen.updated.length;
    await client.callTool({ name: 'bump', arguments: {} });
    expect(await waitFor(() => seen.updated[before])).toBe('test://counter');
    await client.unsubscribeResource({ uri: 'test://counter' });
  });

  it('logging at a set level: below it nothing, at or above it notifications/message', async () => {
    await client.setLoggingLevel('warning');
    await client.callTool({ name: 'log', arguments: { level: 'info', data: `quiet-${label}` } });
    await client.callTool({ name: 'log', arguments: { level: 'error', data: `loud-${label}` } });
    await waitFor(() => seen.logs.find((l) => l.data === `loud-${label}`));
    expect(seen.logs.find((l) => l.data === `quiet-${label}`)).toBeUndefined();
  });

  it('cancellation mid-call reaches the upstream', async () => {
    const ac = new AbortController();
    const call = client.callTool({ name: 'slow', arguments: { ms: 10_000 } }, undefined, { signal: ac.signal });
    await sleep(300);
    ac.abort('test cancels');
    await expect(call).rejects.toThrow();
    const cancelled = await waitFor(async () => {
      const r = await client.callTool({ name: 'last-cancelled', arguments: {} });
      return (r.structuredContent as Obj).cancelled === true ? true : undefined;
    });
    expect(cancelled).toBe(true);
  });
}

const upstreams: { name: string; start(): Promise<{ target: UpstreamTarget; close(): Promise<void> }> }[] = [
  {
    name: 'HTTP',
    async start() {
      const server = await startModernHttpServer();
      return { target: { kind: 'url', url: server.url, headers: {} }, close: () => server.close() };
    },
  },
  {
    name: 'stdio',
    async start() {
      const [command, ...args] = MODERN_STDIO_COMMAND;
      return { target: { kind: 'command', command: command!, args }, close: async () => {} };
    },
  },
];

const clientTransports: { name: string; make(url: string): Transport }[] = [
  { name: 'Streamable HTTP', make: (url) => new StreamableHTTPClientTransport(new URL(`${url}/mcp`)) },
  { name: 'http+sse', make: (url) => new SSEClientTransport(new URL(`${url}/sse`)) },
  { name: 'WebSocket', make: (url) => new WebSocketClientTransport(new URL(`${url.replace('http', 'ws')}/ws`)) },
];

for (const up of upstreams) {
  describe(`SDK v1 clients → mcp-bridge → modern-only SDK v2 server over ${up.name}`, () => {
    let upstream: Awaited<ReturnType<(typeof upstreams)[number]['start']>>;
    let bridge: RunningBridge;

    beforeAll(async () => {
      upstream = await up.start();
      bridge = await startBridge(bridgeOptions(upstream.target));
    }, 20_000);
    afterAll(async () => {
      await bridge?.close();
      await upstream?.close();
    });

    it('the bridge detected a modern upstream', () => {
      expect(bridge.facts.epoch).toBe('modern');
    });

    for (const ct of clientTransports) {
      describe(`over ${ct.name}`, () => {
        let connected: { client: Client; seen: Seen };
        beforeAll(async () => {
          connected = await connectV1(ct.make(bridge.url!));
        }, 10_000);
        afterAll(async () => {
          await connected?.client.close();
        });
        featureTests(() => connected, `${up.name}-${ct.name}`, up.name === 'HTTP');
      });
    }
  });
}

describe('without the bridge', () => {
  let server: RunningModernServer;
  beforeAll(async () => {
    server = await startModernHttpServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('the same v1 client talking to the fixture over HTTP directly fails to initialize', async () => {
    const client = new Client({ name: 'v1-direct', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(server.url)))).rejects.toThrow(/-32022|Unsupported protocol version|400/i);
    await client.close();
  });

  it('the same v1 client launching the fixture over stdio directly fails to initialize', async () => {
    const [command, ...args] = MODERN_STDIO_COMMAND;
    const client = new Client({ name: 'v1-direct', version: '1.0.0' }, { capabilities: {} });
    await expect(client.connect(new StdioClientTransport({ command: command!, args, stderr: 'ignore' }))).rejects.toThrow(/-32022|Unsupported protocol version/i);
    await client.close();
  });
});

// ─── sessions, batches and unanswered input, raw ────────────────────────────

const ACCEPT_BOTH = 'application/json, text/event-stream';

function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...headers }, body: JSON.stringify(body) });
}

/** The JSON-RPC body of a reply, whether it came as JSON or as one SSE stream. */
async function replyBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(text);
  const datas = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
  return datas.find((d) => Array.isArray(d) || 'result' in d || 'error' in d);
}

async function rawSession(base: string, protocolVersion: string): Promise<string> {
  const res = await post(`${base}/mcp`, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ result: { protocolVersion, serverInfo: { name: 'modern-fixture' } } });
  const sid = res.headers.get('mcp-session-id');
  expect(sid).toMatch(/^[0-9a-f]{64}$/);
  const ack = await post(`${base}/mcp`, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sid! });
  expect(ack.status).toBe(202);
  return sid!;
}

describe('sessions in front of a modern server', () => {
  let server: RunningModernServer;
  let bridge: RunningBridge;
  beforeAll(async () => {
    server = await startModernHttpServer();
    bridge = await startBridge(bridgeOptions({ kind: 'url', url: server.url, headers: {} }, { sessionIdleMs: 400, inputTimeoutMs: 500 }));
  }, 20_000);
  afterAll(async () => {
    await bridge?.close();
    await server?.close();
  });

  it('DELETE ends a session: the next request gets 404', async () => {
    const sid = await rawSession(bridge.url!, '2025-06-18');
    const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const ok = await post(`${bridge.url}/mcp`, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'a' } } }, headers);
    expect(await replyBody(ok)).toMatchObject({ result: { content: [{ text: 'Echo: a' }] } });
    const del = await fetch(`${bridge.url}/mcp`, { method: 'DELETE', headers });
    expect(del.status).toBe(200);
    const after = await post(`${bridge.url}/mcp`, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, headers);
    expect(after.status).toBe(404);
  });

  it('an idle session expires: the next request gets 404', async () => {
    const sid = await rawSession(bridge.url!, '2025-06-18');
    await sleep(900);
    const after = await post(`${bridge.url}/mcp`, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    expect(after.status).toBe(404);
  });

  it('a 2025-03-26 client batch is accepted and every request answered', async () => {
    const sid = await rawSession(bridge.url!, '2025-03-26');
    const batch = [
      { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'echo', arguments: { message: 'one' } } },
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'echo', arguments: { message: 'two' } } },
    ];
    const res = await post(`${bridge.url}/mcp`, batch, { 'mcp-session-id': sid });
    expect(res.status).toBe(200);
    const answers = (await replyBody(res)) as { id: string; result: { content: { text: string }[] } }[];
    expect(Array.isArray(answers)).toBe(true);
    expect(Object.fromEntries(answers.map((a) => [a.id, a.result.content[0]!.text]))).toEqual({ a: 'Echo: one', b: 'Echo: two' });
  });

  it('a client that never answers an input request gets a timeout error, and is told the request is abandoned', async () => {
    const client = new Client({ name: 'v1-silent', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    let abandoned = false;
    client.setRequestHandler(ElicitRequestSchema, (_req, extra) => new Promise((_, reject) => {
      extra.signal.addEventListener('abort', () => {
        abandoned = true;
        reject(new Error('abandoned'));
      });
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${bridge.url}/mcp`)));
    try {
      await expect(client.callTool({ name: 'ask-name', arguments: {} })).rejects.toThrow(/not answered within 500 ms/);
      await waitFor(() => (abandoned ? true : undefined));
      expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'still here' } }))).toBe('Echo: still here');
    } finally {
      await client.close();
    }
  });
});

// ─── the built CLI ──────────────────────────────────────────────────────────

describe('SDK v1 clients → the built CLI (dist/bin/mcp-bridge.js) → modern-only server', () => {
  let server: RunningModernServer;
  beforeAll(async () => {
    server = await startModernHttpServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  const launches: { name: string; args(): string[]; headerSeen: boolean }[] = [
    { name: 'stdio client, HTTP upstream', args: () => ['--stdio', '--upstream', server.url], headerSeen: true },
    { name: 'stdio client, stdio upstream', args: () => ['--stdio', '--', ...MODERN_STDIO_COMMAND], headerSeen: false },
  ];
  for (const l of launches) {
    describe(l.name, () => {
      let connected: { client: Client; seen: Seen };
      beforeAll(async () => {
        const transport = new StdioClientTransport({ command: CLI_COMMAND[0]!, args: [CLI_COMMAND[1]!, ...l.args()], stderr: 'ignore' });
        connected = await connectV1(transport);
      }, 20_000);
      afterAll(async () => {
        await connected?.client.close();
      });
      featureTests(() => connected, `cli-${l.name}`, l.headerSeen);
    });
  }

  describe('Streamable HTTP client, HTTP upstream', () => {
    let cli: RunningCli;
    let connected: { client: Client; seen: Seen };
    beforeAll(async () => {
      cli = await startCli(['--upstream', server.url]);
      connected = await connectV1(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`)));
    }, 20_000);
    afterAll(async () => {
      await connected?.client.close();
      await cli?.close();
    });
    featureTests(() => connected, 'cli-http', true);
  });
});
