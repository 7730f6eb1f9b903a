import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
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
import { startCli, type RunningCli } from '../helpers/cli.js';
import { MODERN_STDIO_COMMAND, startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { rawPost, sleep, until, type Obj } from './accept-helpers.js';

// The SDK v1 WebSocket transport uses the global WebSocket, which Node 20 only has behind a flag.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WsWebSocket;

/**
 * Acceptance of issue 4 through the built CLI, for what bridge-l2m-e2e.test.ts
 * does not already prove there (it runs the stdio client against both
 * upstreams and the Streamable HTTP client against the HTTP upstream through
 * the CLI): the http+sse and WebSocket clients against both upstreams, the
 * Streamable HTTP client against the stdio upstream, and sessions (expiry,
 * DELETE, a 2025-03-26 batch, an input request never answered) via CLI flags.
 */

const textOf = (r: unknown) => (r as { content: { text: string }[] }).content[0]?.text;

/** What a v1 client saw arrive unsolicited or alongside its calls. */
interface Seen {
  toolsChanged: number;
  updated: string[];
  logs: { level: string; data: unknown }[];
}

/** A real SDK v1 client that declares elicitation, sampling and roots and answers the fixture's questions. */
async function connectV1(transport: Transport): Promise<{ client: Client; seen: Seen }> {
  const client = new Client({ name: 'v1-accept', version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } });
  const seen: Seen = { toolsChanged: 0, updated: [], logs: [] };
  const answers: Record<string, Obj> = {
    'What is your name?': { name: 'Ada' },
    'Favourite colour?': { color: 'teal' },
  };
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    const message = req.params.message;
    if (message.startsWith('Is "Ada" right?')) return { action: 'accept', content: { ok: true } };
    const content = answers[message];
    return content ? { action: 'accept', content: content as Record<string, string> } : { action: 'decline' };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'hi from v1' }, model: 'v1-model' }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///v1', name: 'v1' }] }));
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => void seen.toolsChanged++);
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => void seen.updated.push(n.params.uri));
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => void seen.logs.push({ level: n.params.level, data: n.params.data }));
  await client.connect(transport);
  return { client, seen };
}

/** Every item of issue 4's first Tests bullet, through one connected v1 client. */
function featureCases(get: () => { client: Client; seen: Seen }, slug: string, headerSeen: boolean): void {
  const c = () => get().client;

  it('initialize is answered with the modern server’s serverInfo and capabilities', () => {
    expect(c().getServerVersion()).toMatchObject({ name: 'modern-fixture', version: '1.0.0' });
    expect(c().getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, resources: { subscribe: true } });
  });

  it('tools/list and tools/call', async () => {
    expect((await c().listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'ask-name', 'ask-two', 'sample', 'tenant-echo']));
    expect(textOf(await c().callTool({ name: 'echo', arguments: { message: slug } }))).toBe(`Echo: ${slug}`);
  });

  it('elicitation over several MRTR rounds (ask-name)', async () => {
    expect(textOf(await c().callTool({ name: 'ask-name', arguments: {} }))).toBe('Hello, Ada!');
  });

  it('two inputs in one round: elicitation and roots (ask-two)', async () => {
    expect(textOf(await c().callTool({ name: 'ask-two', arguments: {} }))).toBe('color=teal roots=file:///v1');
  });

  it('sampling (sample)', async () => {
    expect(textOf(await c().callTool({ name: 'sample', arguments: { prompt: 'hey' } }))).toBe('sampled: hi from v1');
  });

  it('progress notifications reach the client in order', async () => {
    const progress: number[] = [];
    const r = await c().callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: (p) => void progress.push(p.progress) });
    expect(textOf(r)).toBe('done 3 steps');
    expect(progress).toEqual([1, 2, 3]);
  });

  it(`x-mcp-header: the upstream sees Mcp-Param-Region ${headerSeen ? 'from the bridge' : 'as absent (stdio has no headers)'}`, async () => {
    await c().listTools();
    const r = await c().callTool({ name: 'tenant-echo', arguments: { region: 'ap-south' } });
    expect(r.structuredContent).toEqual({ region: 'ap-south', header: headerSeen ? 'ap-south' : null });
  });

  it('a tool that changes the tool list: tools/list_changed reaches the client', async () => {
    const before = get().seen.toolsChanged;
    await c().callTool({ name: 'add-tool', arguments: { name: `added-${slug}` } });
    await until(() => get().seen.toolsChanged > before);
  });

  it('resources/subscribe: resources/updated reaches the subscriber', async () => {
    await c().subscribeResource({ uri: 'test://counter' });
    const before = get().seen.updated.length;
    await c().callTool({ name: 'bump', arguments: {} });
    await until(() => get().seen.updated.length > before);
    expect(get().seen.updated[before]).toBe('test://counter');
    await c().unsubscribeResource({ uri: 'test://counter' });
  });

  it('logging at a set level: below it nothing, at or above it notifications/message', async () => {
    await c().setLoggingLevel('warning');
    await c().callTool({ name: 'log', arguments: { level: 'info', data: `quiet-${slug}` } });
    await c().callTool({ name: 'log', arguments: { level: 'error', data: `loud-${slug}` } });
    await until(() => get().seen.logs.some((l) => l.data === `loud-${slug}`));
    expect(get().seen.logs.some((l) => l.data === `quiet-${slug}`)).toBe(false);
  });

  it('cancellation mid-call reaches the upstream', async () => {
    const ac = new AbortController();
    const call = c().callTool({ name: 'slow', arguments: { ms: 10_000 } }, undefined, { signal: ac.signal });
    await sleep(300);
    ac.abort('test cancels');
    await expect(call).rejects.toThrow();
    let cancelled = false;
    for (let i = 0; i < 100 && !cancelled; i++) {
      const r = await c().callTool({ name: 'last-cancelled', arguments: {} });
      cancelled = (r.structuredContent as Obj).cancelled === true;
      if (!cancelled) await sleep(50);
    }
    expect(cancelled).toBe(true);
  });
}

type ClientKind = 'Streamable HTTP' | 'http+sse' | 'WebSocket';

const transports: Record<ClientKind, (url: string) => Transport> = {
  'Streamable HTTP': (url) => new StreamableHTTPClientTransport(new URL(`${url}/mcp`)),
  'http+sse': (url) => new SSEClientTransport(new URL(`${url}/sse`)),
  WebSocket: (url) => new WebSocketClientTransport(new URL(`${url.replace(/^http/, 'ws')}/ws`)),
};

/** Per upstream, the client transports bridge-l2m-e2e.test.ts does not run through the CLI. */
const plan: { upstream: 'HTTP' | 'stdio'; clients: ClientKind[] }[] = [
  { upstream: 'HTTP', clients: ['http+sse', 'WebSocket'] },
  { upstream: 'stdio', clients: ['Streamable HTTP', 'http+sse', 'WebSocket'] },
];

for (const { upstream, clients } of plan) {
  describe(`issue 4 through the built CLI: SDK v1 clients → mcp-bridge → modern-only SDK v2 server over ${upstream}`, () => {
    let server: RunningModernServer | undefined;
    let cli: RunningCli;

    beforeAll(async () => {
      if (upstream === 'HTTP') server = await startModernHttpServer();
      cli = await startCli(['--log-level', 'warn', ...(server ? ['--upstream', server.url] : ['--', ...MODERN_STDIO_COMMAND])]);
    });
    afterAll(async () => {
      await cli?.close();
      await server?.close();
    });

    for (const kind of clients) {
      describe(`over ${kind}`, () => {
        let connected: { client: Client; seen: Seen };
        beforeAll(async () => {
          connected = await connectV1(transports[kind](cli.url));
        });
        afterAll(async () => {
          await connected?.client.close();
        });
        featureCases(() => connected, `${upstream}-${kind}`.replace(/\W+/g, '-'), upstream === 'HTTP');
      });
    }
  });
}

/** initialize + initialized, raw; returns the minted Mcp-Session-Id. */
async function rawSession(base: string, protocolVersion: string): Promise<string> {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
  const res = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(init) });
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ result: { protocolVersion, serverInfo: { name: 'modern-fixture' } } });
  const sid = res.headers.get('mcp-session-id');
  expect(sid).toMatch(/^[0-9a-f]{64}$/);
  const ack = await rawPost(base, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sid! });
  expect(ack.status).toBe(202);
  return sid!;
}

describe('issue 4 through the built CLI: sessions (--session-idle 600, --input-timeout 500)', () => {
  let server: RunningModernServer;
  let cli: RunningCli;

  beforeAll(async () => {
    server = await startModernHttpServer();
    cli = await startCli(['--log-level', 'warn', '--session-idle', '600', '--input-timeout', '500', '--upstream', server.url]);
  });
  afterAll(async () => {
    await cli?.close();
    await server?.close();
  });

  it('DELETE ends a session: the next request on it gets 404', async () => {
    const sid = await rawSession(cli.url, '2025-06-18');
    const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const ok = await rawPost(cli.url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'a' } } }, headers);
    expect(ok.body).toMatchObject({ result: { content: [{ text: 'Echo: a' }] } });
    const del = await fetch(`${cli.url}/mcp`, { method: 'DELETE', headers });
    expect(del.status).toBe(200);
    expect((await rawPost(cli.url, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, headers)).status).toBe(404);
  });

  it('an idle session expires: the next request on it gets 404', async () => {
    const sid = await rawSession(cli.url, '2025-06-18');
    await sleep(1_300);
    const after = await rawPost(cli.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    expect(after.status).toBe(404);
  });

  it('a 2025-03-26 client’s batch is accepted and every request in it answered', async () => {
    const sid = await rawSession(cli.url, '2025-03-26');
    const batch = [
      { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'echo', arguments: { message: 'one' } } },
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'echo', arguments: { message: 'two' } } },
    ];
    const res = await fetch(`${cli.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid }, body: JSON.stringify(batch) });
    expect(res.status).toBe(200);
    const text = await res.text();
    const bodies = (res.headers.get('content-type') ?? '').includes('text/event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as unknown)
      : [JSON.parse(text) as unknown];
    const answers = bodies.flat() as { id?: string; result?: { content: { text: string }[] } }[];
    expect(Object.fromEntries(answers.filter((m) => m.id !== undefined).map((m) => [m.id, m.result?.content[0]?.text]))).toEqual({ a: 'Echo: one', b: 'Echo: two' });
  });

  it('a client that never answers an input request gets a timeout error, is told it was abandoned, and the session still works', async () => {
    const client = new Client({ name: 'v1-silent', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    let abandoned = false;
    client.setRequestHandler(ElicitRequestSchema, (_req, extra) => new Promise((_, reject) => {
      extra.signal.addEventListener('abort', () => {
        abandoned = true;
        reject(new Error('abandoned'));
      });
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`)));
    try {
      await expect(client.callTool({ name: 'ask-name', arguments: {} })).rejects.toThrow(/not answered within 500 ms/);
      await until(() => abandoned, 3_000);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'still here' } }))).toBe('Echo: still here');
    } finally {
      await client.close();
    }
  });
});
