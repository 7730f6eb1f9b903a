import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { WebSocket as WsWebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { MODERN_STDIO_COMMAND, startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { connectV1, rawSession, textOf, v1FeatureTests, type V1Connected } from '../helpers/v1-modern-client.js';
import { rawPost, until } from './accept-helpers.js';

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
        let connected: V1Connected;
        beforeAll(async () => {
          connected = await connectV1(transports[kind](cli.url), 'v1-accept');
        });
        afterAll(async () => {
          await connected?.client.close();
        });
        const slug = `${upstream}-${kind}`.replace(/\W+/g, '-');
        v1FeatureTests(() => connected, { tag: slug, echo: slug, headerSeen: upstream === 'HTTP', listToolsBeforeHeader: true });
      });
    }
  });
}

describe('issue 4 through the built CLI: sessions (--input-timeout 500; --session-idle 600 on a bridge of its own)', () => {
  let server: RunningModernServer;
  let cli: RunningCli;
  /** Sessions idle out after 600 ms here, so only the expiry test uses it: a slow machine's pause between two requests must not end another test's session. */
  let idleCli: RunningCli;

  beforeAll(async () => {
    server = await startModernHttpServer();
    [cli, idleCli] = await Promise.all([
      startCli(['--log-level', 'warn', '--input-timeout', '500', '--upstream', server.url]),
      startCli(['--log-level', 'debug', '--session-idle', '600', '--upstream', server.url]),
    ]);
  });
  afterAll(async () => {
    await Promise.all([cli?.close(), idleCli?.close()]);
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
    const sid = await rawSession(idleCli.url, '2025-06-18');
    // The face closes the session once idle for --session-idle; its debug log says so.
    const closedIdle = () => idleCli.stderr().split('\n').some((l) => l.includes('"legacy.session.close"') && l.includes(sid) && l.includes('"reason":"idle"'));
    await until(closedIdle, 20_000);
    const after = await rawPost(idleCli.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
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
