import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { MODERN_STDIO_COMMAND, startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { EVERYTHING_STDIO_COMMAND, startEverything, type RunningServer } from '../helpers/processes.js';
import { startV1WsServer } from '../fixtures/v1-ws-server.js';

/**
 * `mcp-bridge probe --json` from the built CLI against every upstream kind the
 * foundation issue names: one JSON object on stdout with epoch, protocolVersion,
 * serverInfo and capabilities, exit 0; a URL that is not MCP exits 1.
 */

interface ProbeJson {
  epoch: string;
  transport: string;
  protocolVersion: string;
  supportedVersions: string[];
  serverInfo: { name: string; version: string } | null;
  capabilities: Record<string, unknown>;
}

async function probe(args: string[]): Promise<ProbeJson> {
  const r = await runCli(['probe', '--json', ...args]);
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]) as ProbeJson;
}

/** An HTTP server that is not MCP: answers every request with `status` and an HTML page. */
async function startNotMcp(status: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(status, { 'content-type': 'text/html' }).end('<h1>just a web page</h1>'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('mcp-bridge probe --json against each upstream kind', () => {
  let everythingSse: RunningServer;
  let everythingHttp: RunningServer;
  let modern: RunningModernServer;
  let ws: { url: string; close(): Promise<void> };
  const notMcp: Array<{ url: string; close(): Promise<void> }> = [];

  beforeAll(async () => {
    [everythingSse, everythingHttp, modern, ws] = await Promise.all([startEverything('sse'), startEverything('streamableHttp'), startModernHttpServer(), startV1WsServer()]);
    notMcp.push(await startNotMcp(404), await startNotMcp(200));
  });

  afterAll(async () => {
    await Promise.allSettled([everythingSse?.close(), everythingHttp?.close(), modern?.close(), ws?.close(), ...notMcp.map((s) => s.close())]);
  });

  it('server-everything over stdio: initialize epoch, its serverInfo and capabilities', async () => {
    const facts = await probe(['--', ...EVERYTHING_STDIO_COMMAND]);
    expect(facts).toMatchObject({ epoch: 'initialize', transport: 'stdio', protocolVersion: '2025-11-25', serverInfo: { name: 'mcp-servers/everything' } });
    expect(facts.capabilities).toMatchObject({ tools: { listChanged: true }, resources: { subscribe: true } });
  });

  it('server-everything in sse mode: http+sse epoch', async () => {
    const facts = await probe([`${everythingSse.url}/sse`]);
    expect(facts).toMatchObject({ epoch: 'http+sse', transport: 'http+sse', serverInfo: { name: 'mcp-servers/everything' } });
    expect(facts.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(facts.capabilities).toHaveProperty('tools');
  });

  it('server-everything in streamableHttp mode: initialize epoch over Streamable HTTP', async () => {
    const facts = await probe([`${everythingHttp.url}/mcp`]);
    expect(facts).toMatchObject({ epoch: 'initialize', transport: 'streamable-http', protocolVersion: '2025-11-25', serverInfo: { name: 'mcp-servers/everything' } });
    expect(facts.capabilities).toHaveProperty('tools');
  });

  it('the SDK v2 fixture over HTTP: modern epoch, 2026-07-28 among the supported versions', async () => {
    const facts = await probe([modern.url]);
    expect(facts).toMatchObject({ epoch: 'modern', transport: 'streamable-http', protocolVersion: '2026-07-28', serverInfo: { name: 'modern-fixture', version: '1.0.0' } });
    expect(facts.supportedVersions).toContain('2026-07-28');
    expect(facts.capabilities).toMatchObject({ tools: { listChanged: true } });
  });

  it('the SDK v2 fixture over stdio: modern epoch', async () => {
    const facts = await probe(['--', ...MODERN_STDIO_COMMAND]);
    expect(facts).toMatchObject({ epoch: 'modern', transport: 'stdio', protocolVersion: '2026-07-28', serverInfo: { name: 'modern-fixture' } });
    expect(facts.capabilities).toMatchObject({ tools: { listChanged: true } });
  });

  it('the SDK v1 WebSocket fixture: initialize epoch over WebSocket', async () => {
    const facts = await probe([ws.url]);
    expect(facts).toMatchObject({ epoch: 'initialize', transport: 'ws', serverInfo: { name: 'v1-ws-fixture', version: '1.0.0' } });
    expect(facts.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(facts.capabilities).toHaveProperty('tools');
  });

  it.each([
    ['answers 404 with HTML', 0],
    ['answers 200 with HTML', 1],
  ])('a URL that is not MCP (%s) exits 1, says so on stderr and prints nothing on stdout', async (_name, index) => {
    const r = await runCli(['probe', '--json', notMcp[index].url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/not look like an MCP server/i);
  });
});
