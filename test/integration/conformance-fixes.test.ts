import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageResultSchema, ElicitResultSchema, McpError, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamInit } from '../../src/contracts/upstream.js';
import { DEFAULT_OPTIONS } from '../../src/daemon/options.js';
import { startBridge, type RunningBridge } from '../../src/daemon/start-bridge.js';
import { probeUpstream } from '../../src/epochs/probe-upstream.js';
import { LegacyHttpLink } from '../../src/links/legacy-http-link.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { postModern, sleep, textOf, until } from './accept-helpers.js';
import { ELICIT_NAME, HEADER_TOOLS, recordingLogger, SAMPLING, startHeaderToolsServer, startLegacyServer, type Obj, type RunningTestServer } from './conformance-fixes-servers.js';

/**
 * Regressions for the bridge bugs the official conformance suite found
 * (test/conformance/baseline): each case rebuilds the suite's situation with
 * real SDK peers and checks what the bridge now does.
 */

const INIT: UpstreamInit = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'conformance-fixes', version: '1.0.0' } };

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function legacyServer(opts: Parameters<typeof startLegacyServer>[0]): Promise<RunningTestServer> {
  const s = await startLegacyServer(opts);
  cleanups.push(() => s.close());
  return s;
}

async function bridgeTo(url: string, logger: Logger = silentLogger): Promise<RunningBridge> {
  const b = await startBridge({ ...DEFAULT_OPTIONS, upstream: { kind: 'url', url, headers: {} }, logger, listen: { host: '127.0.0.1', port: 0 }, callTimeoutMs: 10_000 });
  cleanups.push(() => b.close());
  return b;
}

async function v1Client(bridgeUrl: string): Promise<Client> {
  const client = new Client({ name: 'conformance-fixes-v1', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${bridgeUrl}/mcp`)));
  cleanups.push(() => client.close());
  return client;
}

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
const methods = (s: RunningTestServer) => s.received.map((m) => m.method).filter((m): m is string => typeof m === 'string');

/** The suite's 2025 servers: a 200 `result: {}` to server/discover, no session id, GET refused. */
const lenientStateless = (getStatus: 404 | 405) => ({
  discover: 'lenient' as const,
  stateless: { getStatus },
  define: (mcp: Parameters<Parameters<typeof startLegacyServer>[0]['define']>[0]) => {
    mcp.registerTool('echo', { description: 'says ok' }, async () => text('echo ok'));
  },
});

describe('detection: a lenient legacy server (conformance client-2025 initialize, sse-retry)', () => {
  it('a 200 `result: {}` to server/discover is not a DiscoverResult: detection falls back to initialize', async () => {
    const server = await legacyServer(lenientStateless(404));
    const facts = await probeUpstream({ kind: 'url', url: server.url, headers: {} }, { logger: silentLogger });
    expect(facts).toMatchObject({ epoch: 'initialize', transport: 'streamable-http', serverInfo: { name: 'conformance-fixes-legacy' } });
    expect(methods(server).slice(0, 2)).toEqual(['server/discover', 'initialize']);
  });
});

describe('a stateless legacy server whose GET stream is refused (conformance client-2025 tools_call)', () => {
  it.each([404, 405] as const)('GET answered %i without Mcp-Session-Id: the session stays open, serves calls, and is never re-initialized', async (getStatus) => {
    const server = await legacyServer(lenientStateless(getStatus));
    const { logger, records } = recordingLogger('debug');
    const link = new LegacyHttpLink({ url: server.url, headers: {}, logger });
    cleanups.push(() => link.close());
    const session = await link.openSession(INIT);
    const closes: string[] = [];
    session.onClose((r) => closes.push(r));
    expect(await session.call({ method: 'tools/call', params: { name: 'echo', arguments: {} } })).toMatchObject({ result: text('echo ok') });
    // The link has settled the refused GET: a stateless server just has no GET stream.
    await until(() => records.some((r) => r.event === 'upstream.get_stream.none'));
    expect(session.closed).toBe(false);
    expect(await session.call({ method: 'tools/call', params: { name: 'echo', arguments: {} } })).toMatchObject({ result: text('echo ok') });
    expect(closes).toEqual([]);
    expect(server.others).toContain('GET');
    expect(methods(server).filter((m) => m === 'initialize')).toHaveLength(1);
  });

  it('through the bridge, an SDK v1 client and a 2026-07-28 client both call the lenient stateless server repeatedly', async () => {
    const server = await legacyServer(lenientStateless(404));
    const bridge = await bridgeTo(server.url);
    expect(bridge.facts.epoch).toBe('initialize');
    const client = await v1Client(bridge.url!);
    for (let i = 0; i < 3; i++) {
      expect(textOf(await client.callTool({ name: 'echo', arguments: {} }))).toBe('echo ok');
      await sleep(100);
    }
    for (let i = 0; i < 2; i++) {
      const r = await postModern(bridge.url!, `m-${i}`, 'tools/call', { name: 'echo', arguments: {} });
      expect(r).toMatchObject({ status: 200, body: { result: { resultType: 'complete', content: [{ type: 'text', text: 'echo ok' }] } } });
    }
  });
});

describe('legacy-to-modern toward an HTTP upstream (conformance client-2026 http-invalid-tool-headers)', () => {
  it('tools with an invalid x-mcp-header are dropped from tools/list, each with a warning; the valid tool is listed and callable', async () => {
    const upstream = await startHeaderToolsServer();
    cleanups.push(() => upstream.close());
    const { logger, records } = recordingLogger('warn');
    const bridge = await bridgeTo(upstream.url, logger);
    const client = await v1Client(bridge.url!);
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name)).toEqual(['valid_tool']);
    const dropped = records.filter((r) => r.event === 'l2m.tool_dropped').map((r) => r.tool);
    expect(dropped.sort()).toEqual(HEADER_TOOLS.map((t) => t.name).filter((n) => n !== 'valid_tool').sort());
    expect(textOf(await client.callTool({ name: 'valid_tool', arguments: { region: 'eu' } }))).toBe('called valid_tool');
  });
});

describe('modern-to-legacy (conformance m2l server-stateless, resources, tasks)', () => {
  const sampling = () => ({
    define: (mcp: Parameters<Parameters<typeof startLegacyServer>[0]['define']>[0]) => {
      mcp.registerTool('needs_sampling', { description: 'asks the client to sample' }, async (extra) => {
        try {
          await extra.sendRequest(SAMPLING, CreateMessageResultSchema);
          return text('sampled');
        } catch (err) {
          return { ...text(`sampling refused: ${(err as Error).message}`), isError: true };
        }
      });
      mcp.registerTool('ask_name', { description: 'elicits a name' }, async (extra) => {
        const r = await extra.sendRequest(ELICIT_NAME, ElicitResultSchema);
        return text(`hello ${String(r.content?.name)}`);
      });
      mcp.registerTool('echo', { description: 'says ok' }, async () => text('echo ok'));
      mcp.server.registerCapabilities({ resources: {} });
      mcp.server.setRequestHandler(ReadResourceRequestSchema, async () => {
        throw new McpError(-32002, 'Resource not found');
      });
    },
  });

  it('an input the request did not declare: HTTP 400 + -32021 naming just {sampling: {}}; upstream the server request is refused and the call cancelled', async () => {
    const server = await legacyServer(sampling());
    const bridge = await bridgeTo(server.url);
    const r = await postModern(bridge.url!, 'undeclared-1', 'tools/call', { name: 'needs_sampling', arguments: {} }, {});
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ id: 'undeclared-1', error: { code: -32021, data: { requiredCapabilities: { sampling: {} } } } });
    expect(Object.keys((r.body.error as { data: { requiredCapabilities: Obj } }).data.requiredCapabilities)).toEqual(['sampling']);
    const upstreamCall = server.received.find((m) => m.method === 'tools/call' && (m.params as Obj).name === 'needs_sampling')!;
    await until(() => server.received.some((m) => m.method === 'notifications/cancelled' && (m.params as Obj).requestId === upstreamCall.id));
    expect(server.received.some((m) => m.method === undefined && 'error' in m && (m.error as Obj).code === -32601)).toBe(true);
  });

  it('the same call declaring sampling is not refused: it gets input_required with the sampling request', async () => {
    const server = await legacyServer(sampling());
    const bridge = await bridgeTo(server.url);
    const r = await postModern(bridge.url!, 'declared-1', 'tools/call', { name: 'needs_sampling', arguments: {} }, { sampling: {} });
    expect(r).toMatchObject({ status: 200, body: { result: { resultType: 'input_required', inputRequests: { 'sample-1': { method: 'sampling/createMessage' } } } } });
  });

  it('a handler error that is not one of the MCP codes stays in-band at HTTP 200 (a forged requestState: -32602)', async () => {
    const server = await legacyServer(sampling());
    const bridge = await bridgeTo(server.url);
    const r = await postModern(bridge.url!, 'forged-1', 'tools/call', { name: 'ask_name', arguments: {}, requestState: 'forged', inputResponses: {} }, { elicitation: {} });
    expect(r).toMatchObject({ status: 200, body: { error: { code: -32602, data: { requestState: 'tampered' } } } });
  });

  it('a legacy -32002 without data becomes -32602 with data.uri from the request', async () => {
    const server = await legacyServer(sampling());
    const bridge = await bridgeTo(server.url);
    const r = await postModern(bridge.url!, 'nf-1', 'resources/read', { uri: 'test://missing' });
    expect(r.body).toMatchObject({ id: 'nf-1', error: { code: -32602, message: expect.stringContaining('Resource not found'), data: { uri: 'test://missing' } } });
  });

  it('a modern client’s params.task never reaches the legacy server', async () => {
    const server = await legacyServer(sampling());
    const bridge = await bridgeTo(server.url);
    const r = await postModern(bridge.url!, 'task-1', 'tools/call', { name: 'echo', arguments: {}, task: { ttl: 60_000 } });
    expect(r.body).toMatchObject({ result: { resultType: 'complete', content: [{ type: 'text', text: 'echo ok' }] } });
    const upstream = server.received.find((m) => m.method === 'tools/call')!;
    expect(upstream.params).toEqual({ name: 'echo', arguments: {} });
  });
});
