import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as V2Client, StreamableHTTPClientTransport as V2Http } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport as V1Http } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket as WsWebSocket } from 'ws';
import { parseServersConfig } from '../../src/config/servers-config.js';
import { createBridgeHandler, type BridgeHandler } from '../../src/embed/create-bridge-handler.js';
import { createBridgeRouter, type BridgeRouter } from '../../src/express.js';
import { createLogger } from '../../src/log.js';
import { textOf } from '../helpers/faults.js';
import { startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { EVERYTHING_ENTRY } from '../helpers/processes.js';

/**
 * Issue 14, embedding: `mcp-bridge/express` mounted at /tools/ of an express 5
 * app (with and without express.json() in front), and createBridgeHandler on a
 * bare node:http server, each reached by SDK v1 and v2 clients.
 */

(globalThis as { WebSocket?: unknown }).WebSocket ??= WsWebSocket;

const MODERN = '2026-07-28';
const logger = createLogger('warn');
let fixture: RunningModernServer;
const servers: http.Server[] = [];
const bridges: BridgeHandler[] = [];

function listen(listener: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(listener);
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

async function echoV1(url: string, transport: 'http' | 'sse' | 'ws', message: string): Promise<string> {
  const client = new V1Client({ name: `v1-${transport}`, version: '1.0.0' });
  await client.connect(transport === 'http' ? new V1Http(new URL(`${url}/mcp`)) : transport === 'sse' ? new SSEClientTransport(new URL(`${url}/sse`)) : new WebSocketClientTransport(new URL(`${url.replace(/^http/, 'ws')}/ws`)));
  try {
    return textOf(await client.callTool({ name: 'echo', arguments: { message } }));
  } finally {
    await client.close();
  }
}

async function echoV2(url: string, message: string): Promise<string> {
  const client = new V2Client({ name: 'v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new V2Http(new URL(`${url}/mcp`)));
  try {
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    return textOf(await client.callTool({ name: 'echo', arguments: { message } }));
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  fixture = await startModernHttpServer();
});

afterAll(async () => {
  await Promise.allSettled(bridges.map((b) => b.close()));
  for (const s of servers) s.closeAllConnections();
  await Promise.allSettled(servers.map((s) => new Promise((r) => s.close(r))));
  await fixture?.close();
});

describe('mcp-bridge/express', () => {
  let withJson: string;
  let withoutJson: string;
  let parsedPosts = 0;

  beforeAll(async () => {
    // App 1: express.json() runs first for every route; the bridge uses the body it parsed.
    const app1 = express();
    app1.use(express.json());
    // Proof that the bridge gets bodies express.json() already read: count the POSTs that reach it parsed.
    app1.use((req, _res, next) => {
      if (req.method === 'POST' && req.body !== undefined && req.readableEnded) parsedPosts++;
      next();
    });
    const r1: BridgeRouter = createBridgeRouter({ upstream: fixture.url, options: { logger } });
    bridges.push(r1.bridge);
    app1.use('/tools/', r1);
    app1.get('/other', (_req, res) => void res.json({ app: 'still here' }));
    // App 2: no body parser; a config with one stdio server-everything, served at /tools/servers/everything/ and (one server) /tools/.
    const app2 = express();
    const config = parseServersConfig(JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'], denyTools: ['get-env'] } } }), 'inline.json');
    const r2 = createBridgeRouter({ config, options: { logger } });
    bridges.push(r2.bridge);
    app2.use('/tools/', r2);
    await Promise.all([r1.bridge.ready, r2.bridge.ready]);
    withJson = (await listen(app1)).url;
    withoutJson = (await listen(app2)).url;
  }, 30_000);

  it('after express.json(): SDK v1 (Streamable HTTP, http+sse) and v2 clients reach the modern fixture at /tools/', async () => {
    expect(await echoV1(`${withJson}/tools`, 'http', 'v1-json')).toContain('v1-json');
    expect(await echoV1(`${withJson}/tools`, 'sse', 'v1-sse-json')).toContain('v1-sse-json');
    expect(await echoV2(`${withJson}/tools`, 'v2-json')).toContain('v2-json');
    expect(parsedPosts).toBeGreaterThanOrEqual(6);
  });

  it('the app keeps its own routes, and paths the bridge does not serve go on to them', async () => {
    expect(await (await fetch(`${withJson}/other`)).json()).toEqual({ app: 'still here' });
    expect((await fetch(`${withJson}/tools/nothing-here`)).status).toBe(404);
  });

  it('without a body parser, with a config: SDK v1 and v2 clients reach server-everything at /tools/servers/everything/ and /tools/, the filter applies', async () => {
    const named = `${withoutJson}/tools/servers/everything`;
    expect(await echoV1(named, 'http', 'v1-named')).toContain('v1-named');
    expect(await echoV1(named, 'sse', 'v1-sse-named')).toContain('v1-sse-named');
    expect(await echoV2(named, 'v2-named')).toContain('v2-named');
    expect(await echoV2(`${withoutJson}/tools`, 'v2-root')).toContain('v2-root');
    const list = (await (await fetch(`${withoutJson}/tools/servers`)).json()) as { servers: Array<{ name: string; state: string }> };
    expect(list.servers).toEqual([expect.objectContaining({ name: 'everything', state: 'ready', epoch: 'initialize' })]);
    const client = new V1Client({ name: 'v1-filter', version: '1.0.0' });
    await client.connect(new V1Http(new URL(`${named}/mcp`)));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('get-env');
    } finally {
      await client.close();
    }
  });
});

describe('createBridgeHandler on a bare node:http server', () => {
  it('serves SDK v1 (Streamable HTTP, WebSocket through upgrade) and v2 clients', async () => {
    const handler = createBridgeHandler({ upstream: fixture.url, options: { logger } });
    bridges.push(handler);
    await handler.ready;
    const { server, url } = await listen(handler);
    server.on('upgrade', handler.upgrade);
    expect(await echoV1(url, 'http', 'plain-v1')).toContain('plain-v1');
    expect(await echoV1(url, 'ws', 'plain-ws')).toContain('plain-ws');
    expect(await echoV2(url, 'plain-v2')).toContain('plain-v2');
  });
});

describe('GET /servers', () => {
  it('is behind the same bearer token as /mcp (and /healthz is not)', async () => {
    const token = 'a-test-token-0123456789abcdef';
    const config = parseServersConfig(JSON.stringify({ mcpServers: { modern: { url: fixture.url } } }), 'inline.json');
    const handler = createBridgeHandler({ config, options: { logger, authToken: token } });
    bridges.push(handler);
    await handler.ready;
    const { url } = await listen(handler);
    expect((await fetch(`${url}/servers`)).status).toBe(401);
    expect((await fetch(`${url}/servers/modern/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    const listed = await fetch(`${url}/servers`, { headers: { authorization: `Bearer ${token}` } });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual({ servers: [expect.objectContaining({ name: 'modern', state: 'ready', epoch: 'modern' })] });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});
