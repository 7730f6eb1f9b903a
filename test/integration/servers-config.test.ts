import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as V2Client, StreamableHTTPClientTransport as V2Http } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1Http } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket as WsWebSocket } from 'ws';
import { CLI_COMMAND, runCli, startCli } from '../helpers/cli.js';
import { startConfigBridge, type ConfigBridge } from '../helpers/config-bridge.js';
import { modernPost, textOf, waitUntil } from '../helpers/faults.js';
import { MODERN_STDIO_COMMAND, startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { EVERYTHING_ENTRY, startEverything, type RunningServer } from '../helpers/processes.js';

/**
 * Issue 14: one daemon serving every server of a desktop-client config file,
 * each on /servers/<name>/…: a stdio server-everything, the 2026-07-28 SDK v2
 * fixture over HTTP and a legacy http+sse server-everything, reached by SDK v1
 * and v2 clients; tool filters; SIGHUP adding, removing and changing entries
 * while a session on an unchanged one keeps working; a broken file on reload.
 */

// The SDK v1 WebSocket transport needs a global WebSocket, which node 20 lacks.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WsWebSocket;

const MODERN = '2026-07-28';
let dir: string;
let file: string;
let modern: RunningModernServer;
let sse: RunningServer;
let bridge: ConfigBridge;

function config(servers: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ mcpServers: servers, ...extra }, null, 2);
}

const everything = () => ({ command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'], env: { GREETING: '${SERVERS_TEST_GREETING}' }, denyTools: ['get-env', 'trigger-*'], pool: 2 });
const modernEntry = (extra: Record<string, unknown> = {}) => ({ type: 'http', url: modern.url, denyTools: ['tenant-*'], ...extra });
const sseEntry = () => ({ type: 'sse', url: `${sse.url}/sse` });

async function v1(url: string, kind: 'http' | 'sse' | 'ws' = 'http'): Promise<V1Client> {
  const client = new V1Client({ name: `v1-${kind}`, version: '1.0.0' });
  const transport = kind === 'http' ? new V1Http(new URL(`${url}/mcp`)) : kind === 'sse' ? new SSEClientTransport(new URL(`${url}/sse`)) : new WebSocketClientTransport(new URL(`${url.replace(/^http/, 'ws')}/ws`));
  await client.connect(transport);
  return client;
}

async function v2(url: string): Promise<V2Client> {
  const client = new V2Client({ name: 'v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new V2Http(new URL(`${url}/mcp`)));
  return client;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mcp-bridge-servers-'));
  file = path.join(dir, 'claude_desktop_config.json');
  [modern, sse] = await Promise.all([startModernHttpServer(), startEverything('sse')]);
  writeFileSync(file, config({ everything: everything(), modern: modernEntry(), 'legacy-sse': sseEntry() }, { bridge: { logLevel: 'warn', debugStats: true } }));
  process.env.SERVERS_TEST_GREETING = 'hello';
  bridge = await startConfigBridge(file);
  await bridge.waitReady(['everything', 'modern', 'legacy-sse']);
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await Promise.allSettled([modern?.close(), sse?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a config file with three servers', () => {
  it('GET /servers lists each server with its detected epoch and state', async () => {
    const list = await bridge.servers();
    expect(list.map((s) => [s.name, s.state, s.epoch, s.transport])).toEqual([
      ['everything', 'ready', 'initialize', 'stdio'],
      ['modern', 'ready', 'modern', 'streamable-http'],
      ['legacy-sse', 'ready', 'http+sse', 'http+sse'],
    ]);
  });

  it.each(['everything', 'modern', 'legacy-sse'])('%s: an SDK v1 client over Streamable HTTP, http+sse and WebSocket, and an SDK v2 client, each call echo on its route', async (name) => {
    const base = `${bridge.url}/servers/${name}`;
    for (const kind of ['http', 'sse', 'ws'] as const) {
      const client = await v1(base, kind);
      try {
        expect(textOf(await client.callTool({ name: 'echo', arguments: { message: `${name}-${kind}` } }))).toContain(`${name}-${kind}`);
      } finally {
        await client.close();
      }
    }
    const client = await v2(base);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { message: `${name}-v2` } }))).toContain(`${name}-v2`);
    } finally {
      await client.close();
    }
  });

  it('with three servers the root /mcp serves none of them', async () => {
    const res = await fetch(`${bridge.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(404);
    expect((await fetch(`${bridge.url}/servers/nope/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);
  });

  it('tool filters: hidden tools leave tools/list for v1 and v2 clients, and calling one is -32602 unknown tool', async () => {
    const base = `${bridge.url}/servers/everything`;
    const c1 = await v1(base);
    const c2 = await v2(base);
    try {
      for (const names of [(await c1.listTools()).tools.map((t) => t.name), (await c2.listTools()).tools.map((t) => t.name)]) {
        expect(names).toContain('echo');
        expect(names).not.toContain('get-env');
        expect(names.filter((n) => n.startsWith('trigger-'))).toEqual([]);
      }
      await expect(c1.callTool({ name: 'get-env', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: get-env') });
      await expect(c2.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 1 } })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await Promise.allSettled([c1.close(), c2.close()]);
    }
  });

  it('tool filters: a hidden tool of the modern server is unknown to the Mcp-Param header check too (its x-mcp-header declaration is not applied)', async () => {
    const base = `${bridge.url}/servers/modern`;
    const c2 = await v2(base);
    try {
      expect((await c2.listTools()).tools.map((t) => t.name)).not.toContain('tenant-echo');
    } finally {
      await c2.close();
    }
    // A wrong Mcp-Param-Region would be a header mismatch for a visible tenant-echo; hidden, it is an unknown tool.
    const res = await modernPost(base, 7, 'tools/call', { name: 'tenant-echo', arguments: { region: 'eu' } }, undefined, { 'mcp-param-region': 'us' });
    const body = (await res.json()) as { error?: { code: number; message: string } };
    expect(body.error).toMatchObject({ code: -32602, message: 'Unknown tool: tenant-echo' });
  });
});

describe('SIGHUP', () => {
  it('adds, removes and changes entries while a session on an unchanged server keeps working; a broken file keeps the running config', async () => {
    const held = await v1(`${bridge.url}/servers/everything`);
    try {
      expect(textOf(await held.callTool({ name: 'echo', arguments: { message: 'before' } }))).toContain('before');
      const sessionBefore = (held.transport as V1Http).sessionId;

      // A call in flight on the server about to be removed: it must finish after the reload.
      const leaving = await v1(`${bridge.url}/servers/legacy-sse`, 'sse');
      let progressed!: () => void;
      const started = new Promise<void>((resolve) => (progressed = resolve));
      const inFlight = leaving.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 2, steps: 4 } }, undefined, { onprogress: () => progressed(), timeout: 20_000 });
      await started;

      writeFileSync(file, config({ everything: everything(), modern: modernEntry({ callTimeout: 60_000 }), added: { command: MODERN_STDIO_COMMAND[0], args: MODERN_STDIO_COMMAND.slice(1) } }, { bridge: { logLevel: 'warn', debugStats: true } }));
      const line = await bridge.reload();
      expect(line).toContain('added [added], removed [legacy-sse], changed [modern], kept [everything]');
      expect((await fetch(`${bridge.url}/servers/legacy-sse/sse`)).status).toBe(404);
      expect(textOf(await inFlight)).toContain('Long running operation completed');
      await leaving.close();
      await bridge.waitReady(['everything', 'modern', 'added']);
      expect((await bridge.servers()).map((s) => s.name)).toEqual(['everything', 'modern', 'added']);

      // The held session is the same one: its session id still answers, no new initialize.
      expect(textOf(await held.callTool({ name: 'echo', arguments: { message: 'after' } }))).toContain('after');
      expect((held.transport as V1Http).sessionId).toBe(sessionBefore);
      const stats = (await (await fetch(`${bridge.url}/debug/stats`)).json()) as { servers: Record<string, { children: number; face: { streamableHttpSessions: number } }> };
      expect(stats.servers.everything.face.streamableHttpSessions).toBeGreaterThanOrEqual(1);
      for (const name of ['modern', 'added']) {
        const c = await v2(`${bridge.url}/servers/${name}`);
        try {
          expect(textOf(await c.callTool({ name: 'echo', arguments: { message: name } }))).toContain(name);
        } finally {
          await c.close();
        }
      }

      const broken = '{ "mcpServers": { "everything": { "command": "x", "comand": "y" } } }';
      writeFileSync(file, broken);
      const refused = await bridge.reload();
      expect(refused).toContain(`kept the running config, ${file}:1:${broken.indexOf('"comand"') + 1}: unknown key "comand" in mcpServers.everything`);
      expect((await bridge.servers()).map((s) => [s.name, s.state])).toEqual([
        ['everything', 'ready'],
        ['modern', 'ready'],
        ['added', 'ready'],
      ]);
      expect(textOf(await held.callTool({ name: 'echo', arguments: { message: 'still' } }))).toContain('still');
    } finally {
      await held.close();
    }
  }, 60_000);
});

describe('one server, and starting', () => {
  it('a server that cannot be reached is reported waiting while the others serve; with one server the root routes serve it', async () => {
    const one = path.join(dir, 'one.json');
    writeFileSync(one, config({ 'modern-only': { url: modern.url } }, { bridge: { logLevel: 'error' } }));
    const b = await startConfigBridge(one);
    try {
      await b.waitReady(['modern-only']);
      expect((await fetch(`${b.url}/readyz`)).status).toBe(200);
      const c = await v2(b.url);
      try {
        expect(textOf(await c.callTool({ name: 'echo', arguments: { message: 'root' } }))).toContain('root');
      } finally {
        await c.close();
      }
      writeFileSync(one, config({ 'modern-only': { url: modern.url }, down: { url: 'http://127.0.0.1:9/mcp' } }, { bridge: { logLevel: 'error' } }));
      expect(await b.reload()).toContain('added [down]');
      const down = await waitUntil('down reported waiting', async () => (await b.servers()).find((s) => s.name === 'down' && s.state === 'waiting'));
      expect(down.error).toMatch(/127\.0\.0\.1:9/);
      const res = await fetch(`${b.url}/servers/down/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(res.status).toBe(503);
      expect((await b.servers()).find((s) => s.name === 'modern-only')?.state).toBe('ready');
      // /readyz says which server holds the daemon back, and why.
      const ready = await fetch(`${b.url}/readyz`);
      expect(ready.status).toBe(503);
      const why = (await ready.json()) as { reason: string; detail: string };
      expect(why.reason).toBe('servers-not-ready');
      expect(why.detail).toMatch(/^1 of 2 servers ready; down: waiting \(.*127\.0\.0\.1:9/);
    } finally {
      await b.close();
    }
  }, 40_000);

  it('--stdio --config f --server <name> serves that one server to a desktop client', async () => {
    const desktop = path.join(dir, 'desktop.json');
    writeFileSync(desktop, config({ everything: everything(), modern: modernEntry() }, { bridge: { logLevel: 'warn', authToken: 'a-token-for-http-only-0123456789' } }));
    const client = new V1Client({ name: 'desktop', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: CLI_COMMAND[0], args: [...CLI_COMMAND.slice(1), '--stdio', '--config', desktop, '--server', 'modern'], env: process.env as Record<string, string>, stderr: 'pipe' }));
    try {
      expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'stdio' } }))).toContain('stdio');
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('tenant-echo');
    } finally {
      await client.close();
    }
  });

  it('a file with an unknown key or a missing ${VAR} exits 2 naming it and where', async () => {
    const bad = path.join(dir, 'bad.json');
    const line3 = '    "a": { "url": "http://127.0.0.1:9/mcp", "headerz": {} }';
    writeFileSync(bad, `{\n  "mcpServers": {\n${line3}\n  }\n}\n`);
    const r1 = await runCli(['--config', bad]);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toContain(`${bad}:3:${line3.indexOf('"headerz"') + 1}: unknown key "headerz" in mcpServers.a`);
    writeFileSync(bad, '{ "mcpServers": { "a": { "url": "http://127.0.0.1:9/mcp", "headers": { "Authorization": "Bearer ${NO_SUCH_TOKEN_VAR}" } } } }');
    const r2 = await runCli(['--config', bad]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain('refers to ${NO_SUCH_TOKEN_VAR}, which is not set');
  });
});

describe('--allow-tool / --deny-tool on the single-upstream CLI', () => {
  it('only allowed, not denied tools are listed for v1 and v2 clients; another is -32602 before it goes upstream', async () => {
    const cli = await startCli(['--log-level', 'warn', '--allow-tool', 'echo', '--allow-tool', 'ask-*', '--deny-tool', 'ask-two', '--upstream', modern.url]);
    try {
      const c1 = await v1(cli.url);
      const c2 = await v2(cli.url);
      const counter = modern.state.counter;
      try {
        expect((await c1.listTools()).tools.map((t) => t.name).sort()).toEqual(['ask-name', 'echo']);
        expect((await c2.listTools()).tools.map((t) => t.name).sort()).toEqual(['ask-name', 'echo']);
        await expect(c1.callTool({ name: 'ask-two', arguments: {} })).rejects.toMatchObject({ code: -32602 });
        await expect(c2.callTool({ name: 'bump', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: bump') });
        expect(modern.state.counter).toBe(counter);
      } finally {
        await Promise.allSettled([c1.close(), c2.close()]);
      }
    } finally {
      await cli.close();
    }
  });
});
