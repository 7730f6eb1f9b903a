import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { WebSocket as WsWebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_OPTIONS, type UpstreamTarget } from '../../src/daemon/options.js';
import { startBridge, type RunningBridge } from '../../src/daemon/start-bridge.js';
import { silentLogger } from '../../src/log.js';
import { CLI_COMMAND, startCli, type RunningCli } from '../helpers/cli.js';
import { MODERN_STDIO_COMMAND, startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { connectV1, rawSession, textOf, v1FeatureTests, type V1Connected } from '../helpers/v1-modern-client.js';
import { waitFor } from '../helpers/wait-for.js';

// The SDK v1 WebSocket transport uses the global WebSocket, which Node 20 only has behind a flag.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WsWebSocket;

function bridgeOptions(upstream: UpstreamTarget, over: Partial<typeof DEFAULT_OPTIONS> = {}) {
  return { ...DEFAULT_OPTIONS, upstream, logger: silentLogger, listen: { host: '127.0.0.1', port: 0 }, inputTimeoutMs: 2_000, ...over };
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
        let connected: V1Connected;
        beforeAll(async () => {
          connected = await connectV1(ct.make(bridge.url!));
        }, 10_000);
        afterAll(async () => {
          await connected?.client.close();
        });
        v1FeatureTests(() => connected, { tag: `${up.name}-${ct.name}`, headerSeen: up.name === 'HTTP' });
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
    // The idle timer closing the session (the face counts none open) is the expiry itself.
    await waitFor(() => (bridge.stats().face?.streamableHttpSessions === 0 ? true : undefined), 5_000, 'the idle session closed');
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
      await waitFor(() => (abandoned ? true : undefined), 5_000, 'the elicitation abandoned on the client');
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
      let connected: V1Connected;
      beforeAll(async () => {
        const transport = new StdioClientTransport({ command: CLI_COMMAND[0]!, args: [CLI_COMMAND[1]!, ...l.args()], stderr: 'ignore' });
        connected = await connectV1(transport);
      }, 20_000);
      afterAll(async () => {
        await connected?.client.close();
      });
      v1FeatureTests(() => connected, { tag: `cli-${l.name}`, headerSeen: l.headerSeen });
    });
  }

  describe('Streamable HTTP client, HTTP upstream', () => {
    let cli: RunningCli;
    let connected: V1Connected;
    beforeAll(async () => {
      cli = await startCli(['--upstream', server.url]);
      connected = await connectV1(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`)));
    }, 20_000);
    afterAll(async () => {
      await connected?.client.close();
      await cli?.close();
    });
    v1FeatureTests(() => connected, { tag: 'cli-http', headerSeen: true });
  });
});
