import http from 'node:http';
import { pathToFileURL } from 'node:url';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { UpstreamFacts } from '../../src/contracts/upstream.js';
import type { UpstreamTarget } from '../../src/daemon/options.js';
import { probeUpstream } from '../../src/epochs/probe-upstream.js';
import { BridgeError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { MODERN_STDIO_COMMAND, startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { EVERYTHING_STDIO_COMMAND, startEverything, type RunningServer } from '../helpers/processes.js';

const url = (u: string): UpstreamTarget => ({ kind: 'url', url: u, headers: {} });
const cmd = ([command, ...args]: string[]): UpstreamTarget => ({ kind: 'command', command: command!, args });

async function probeError(target: UpstreamTarget, epoch: 'auto' | 'modern' | 'initialize' | 'http+sse' = 'auto'): Promise<BridgeError> {
  try {
    await probeUpstream(target, { logger: silentLogger, timeoutMs: 1_500, epoch });
  } catch (err) {
    if (err instanceof BridgeError) return err;
    throw err;
  }
  throw new Error('probe succeeded');
}

describe('probeUpstream: epoch detection against real servers', () => {
  let everythingSse: RunningServer;
  let everythingHttp: RunningServer;
  let modern: RunningModernServer;
  let notMcp: http.Server;
  let notMcpUrl: string;
  let closedPortUrl: string;
  let wsServer: WebSocketServer;
  let wsUrl: string;

  beforeAll(async () => {
    [everythingSse, everythingHttp, modern] = await Promise.all([startEverything('sse'), startEverything('streamableHttp'), startModernHttpServer()]);
    notMcp = http.createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>Not here</body></html>'));
    await new Promise<void>((r) => notMcp.listen(0, '127.0.0.1', r));
    notMcpUrl = `http://127.0.0.1:${(notMcp.address() as AddressInfo).port}/mcp`;
    // A port that was just free and is now closed again.
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    closedPortUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/mcp`;
    await new Promise<void>((r) => probe.close(() => r()));
    // A minimal initialize-era WebSocket peer (subprotocol mcp), answering only initialize.
    wsServer = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: (p) => (p.has('mcp') ? 'mcp' : false) });
    wsServer.on('connection', (socket) =>
      socket.on('message', (data) => {
        const msg = JSON.parse(String(data)) as { id: unknown; method: string };
        if (msg.method === 'initialize') {
          socket.send(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: '2025-03-26', capabilities: { tools: {} }, serverInfo: { name: 'ws-peer', version: '1' } } }));
        }
      }),
    );
    await new Promise<void>((r) => wsServer.once('listening', r));
    wsUrl = `ws://127.0.0.1:${(wsServer.address() as AddressInfo).port}/ws`;
  });

  afterAll(async () => {
    await Promise.all([everythingSse?.close(), everythingHttp?.close(), modern?.close()]);
    await new Promise<void>((r) => (notMcp ? notMcp.close(() => r()) : r()));
    for (const c of wsServer?.clients ?? []) c.terminate();
    await new Promise<void>((r) => (wsServer ? wsServer.close(() => r()) : r()));
  });

  const table: { name: string; target: () => UpstreamTarget; expect: Partial<UpstreamFacts> }[] = [
    { name: 'the modern fixture over HTTP is modern', target: () => url(modern.url), expect: { epoch: 'modern', transport: 'streamable-http', protocolVersion: '2026-07-28', serverInfo: { name: 'modern-fixture', version: '1.0.0' } } },
    { name: 'the modern fixture over stdio is modern', target: () => cmd(MODERN_STDIO_COMMAND), expect: { epoch: 'modern', transport: 'stdio', protocolVersion: '2026-07-28', supportedVersions: ['2026-07-28'] } },
    { name: 'server-everything streamableHttp is initialize-era Streamable HTTP', target: () => url(`${everythingHttp.url}/mcp`), expect: { epoch: 'initialize', transport: 'streamable-http', protocolVersion: '2025-11-25' } },
    { name: 'server-everything sse (SDK v1) is http+sse', target: () => url(`${everythingSse.url}/sse`), expect: { epoch: 'http+sse', transport: 'http+sse' } },
    { name: 'server-everything stdio is initialize-era stdio', target: () => cmd(EVERYTHING_STDIO_COMMAND), expect: { epoch: 'initialize', transport: 'stdio', protocolVersion: '2025-11-25' } },
    { name: 'a ws:// URL is initialize-era WebSocket', target: () => url(wsUrl), expect: { epoch: 'initialize', transport: 'ws', protocolVersion: '2025-03-26', serverInfo: { name: 'ws-peer', version: '1' } } },
  ];

  for (const row of table) {
    it(row.name, async () => {
      const facts = await probeUpstream(row.target(), { logger: silentLogger, timeoutMs: 1_500 });
      expect(facts).toMatchObject(row.expect);
      expect(typeof facts.capabilities).toBe('object');
      if (facts.epoch === 'modern') expect(facts.discover).toMatchObject({ supportedVersions: expect.arrayContaining(['2026-07-28']) });
      else expect(facts.initialize).toMatchObject({ protocolVersion: facts.protocolVersion });
    });
  }

  it('server-everything reports its serverInfo and tools capability', async () => {
    const facts = await probeUpstream(url(`${everythingHttp.url}/mcp`), { logger: silentLogger });
    expect(facts.serverInfo?.name).toBeTruthy();
    expect(facts.capabilities).toHaveProperty('tools');
  });

  it('epoch given: initialize against server-everything skips discover and still reads the facts', async () => {
    const facts = await probeUpstream(url(`${everythingHttp.url}/mcp`), { logger: silentLogger, epoch: 'initialize' });
    expect(facts).toMatchObject({ epoch: 'initialize', transport: 'streamable-http' });
  });

  it('epoch given: initialize against the modern-only fixture is refused as not MCP for that epoch', async () => {
    const err = await probeError(url(modern.url), 'initialize');
    expect(err.code).toBe('BRIDGE_ERR_UPSTREAM_NOT_MCP');
    expect(err.message).toMatch(/not an initialize-era server: it refused initialize naming 2026-07-28/);
  });

  it('epoch given: http+sse against server-everything sse runs only the GET leg and reads the facts', async () => {
    const facts = await probeUpstream(url(`${everythingSse.url}/sse`), { logger: silentLogger, epoch: 'http+sse' });
    expect(facts).toMatchObject({ epoch: 'http+sse', transport: 'http+sse', serverInfo: { name: expect.any(String) } });
  });

  it('epoch given: modern against server-everything stdio is refused as not a 2026-07-28 server', async () => {
    const err = await probeError(cmd(EVERYTHING_STDIO_COMMAND), 'modern');
    expect(err.code).toBe('BRIDGE_ERR_UPSTREAM_NOT_MCP');
    expect(err.message).toMatch(/did not answer as a 2026-07-28 server/);
  });

  it('a modern stdio server slower to start than the discover timeout is still modern (its -32022 to initialize says so)', async () => {
    // Each start of this command waits 1 s before the fixture reads stdin, as a loaded machine makes it.
    const slow = [process.execPath, '-e', `setTimeout(() => import(${JSON.stringify(pathToFileURL(MODERN_STDIO_COMMAND[1]!).href)}), 1_000)`];
    const facts = await probeUpstream(cmd(slow), { logger: silentLogger, timeoutMs: 300 });
    expect(facts).toMatchObject({ epoch: 'modern', transport: 'stdio', protocolVersion: '2026-07-28', supportedVersions: ['2026-07-28'] });
  });

  it('epoch given: initialize against the modern fixture over stdio is refused', async () => {
    const err = await probeError(cmd(MODERN_STDIO_COMMAND), 'initialize');
    expect(err.code).toBe('BRIDGE_ERR_UPSTREAM_NOT_MCP');
    expect(err.message).toMatch(/not an initialize-era server: it refused initialize \(-32022\)/);
  });

  it('a plain node:http server answering 404 HTML is not MCP, naming all three legs', async () => {
    const err = await probeError(url(notMcpUrl));
    expect(err.code).toBe('BRIDGE_ERR_UPSTREAM_NOT_MCP');
    expect(err.message).toMatch(/answered HTTP 404 \(text\/html\) to server\/discover, HTTP 404 \(text\/html\) to initialize and HTTP 404 without an endpoint event .* to GET; it does not look like an MCP server/);
  });

  it('a closed port is unreachable', async () => {
    const err = await probeError(url(closedPortUrl));
    expect(err.code).toBe('BRIDGE_ERR_UPSTREAM_UNREACHABLE');
    expect(err.message).toMatch(/^cannot reach .*ECONNREFUSED/);
  });

  it('a command that exits at once is unreachable, with its exit in the message', async () => {
    const err = await probeError(cmd([process.execPath, '-e', 'process.exit(3)']));
    expect(err.code).toBe('BRIDGE_ERR_UPSTREAM_UNREACHABLE');
    expect(err.message).toMatch(/exited with code 3 before answering initialize/);
  });

  it('a command that does not exist is unreachable', async () => {
    const err = await probeError(cmd(['/nonexistent/mcp-server-binary']));
    expect(err.code).toBe('BRIDGE_ERR_UPSTREAM_UNREACHABLE');
    expect(err.message).toMatch(/ENOENT/);
  });
});
