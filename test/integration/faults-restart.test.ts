import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { linesWith, report, textOf, waitUntil } from '../helpers/faults.js';
import { startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { startEverything, type RunningServer } from '../helpers/processes.js';

/**
 * Issue 6, Faults: the upstream HTTP server restarts on the same port. A legacy
 * Streamable HTTP upstream forgets every session; the bridge re-initializes
 * its upstream sessions and the next calls of clients that stayed connected
 * succeed, without the clients noticing. Through the built CLI in front of
 * server-everything (Streamable HTTP), with SDK v1 clients (Streamable HTTP and
 * http+sse, legacy-to-legacy) and an SDK v2 client pinned to 2026-07-28
 * (modern-to-legacy).
 *
 * A modern upstream is stateless, so nothing needs re-initializing; what a
 * restart costs is calls whose connection failed. The bridge sends a call
 * again only when that is safe (src/links/safe-retry.ts): when the connection
 * was refused (the request never left), or when the method is a read. The
 * modern fixture sits behind a TCP fault proxy that can play "down" and can
 * cut a connection after the server did the work but before the answer.
 */

interface Caller {
  kind: string;
  echo(message: string): Promise<string>;
  close(): Promise<void>;
}

async function v1(kind: 'Streamable HTTP' | 'http+sse', url: string): Promise<Caller> {
  const client = new Client({ name: `restart-${kind}`, version: '1.0.0' });
  await client.connect(kind === 'http+sse' ? new SSEClientTransport(new URL(`${url}/sse`)) : new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return {
    kind: `SDK v1 over ${kind}`,
    echo: async (message) => textOf(await client.callTool({ name: 'echo', arguments: { message } }, undefined, { timeout: 20_000 })),
    close: () => client.close(),
  };
}

async function v2(url: string): Promise<Caller> {
  const client = new V2Client({ name: 'restart-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new V2Transport(new URL(`${url}/mcp`)));
  return {
    kind: 'SDK v2 pinned to 2026-07-28',
    echo: async (message) => textOf(await client.callTool({ name: 'echo', arguments: { message } }, { timeout: 20_000 })),
    close: () => client.close(),
  };
}

describe('a legacy Streamable HTTP upstream restarted on the same port', () => {
  let upstream: RunningServer;
  let cli: RunningCli;
  const callers: Caller[] = [];

  beforeAll(async () => {
    upstream = await startEverything('streamableHttp');
    cli = await startCli(['--log-level', 'info', '--upstream', `${upstream.url}/mcp`]);
    callers.push(await v1('Streamable HTTP', cli.url), await v1('http+sse', cli.url), await v2(cli.url));
  });

  afterAll(async () => {
    for (const c of callers) await c.close().catch(() => undefined);
    await cli?.close();
    await upstream?.close();
  });

  it('every client keeps working: the next calls succeed on re-initialized upstream sessions', async () => {
    for (const c of callers) expect(await c.echo(`before (${c.kind})`)).toBe(`Echo: before (${c.kind})`);
    const port = upstream.port;
    await upstream.close();
    upstream = await startEverything('streamableHttp', { PORT: String(port) });
    expect(upstream.port).toBe(port);
    const restartedAt = Date.now();
    const latencies: Record<string, number> = {};
    for (const c of callers) {
      const started = Date.now();
      expect(await c.echo(`after (${c.kind})`)).toBe(`Echo: after (${c.kind})`);
      latencies[c.kind] = Date.now() - started;
    }
    // And they stay on the new sessions.
    for (const c of callers) expect(await c.echo(`again (${c.kind})`)).toBe(`Echo: again (${c.kind})`);
    const reinitialized = linesWith(cli.stderr(), /"upstream\.session\.reinitialized"|"l2l\.upstream_reopened"/).length;
    report('legacy Streamable HTTP upstream restarted', { firstCallsAfterRestartMs: Date.now() - restartedAt, ...latencies, reinitialized });
  });
});

describe('a modern HTTP upstream that restarts (behind a fault proxy)', () => {
  let fixture: RunningModernServer;
  let proxy: FaultProxy;
  let cli: RunningCli;
  let modern: V2Client;
  let legacy: Client;

  beforeAll(async () => {
    fixture = await startModernHttpServer();
    proxy = await FaultProxy.start(fixture.port);
    cli = await startCli(['--log-level', 'info', '--upstream', `${proxy.url}/mcp`]);
    modern = new V2Client({ name: 'restart-modern', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await modern.connect(new V2Transport(new URL(`${cli.url}/mcp`)));
    legacy = new Client({ name: 'restart-legacy', version: '1.0.0' });
    await legacy.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`)));
    // The bridge learns the tools' headers from a tools/list before any tools/call (digest §2.5).
    await modern.listTools();
  });

  afterAll(async () => {
    await modern?.close().catch(() => undefined);
    await legacy?.close().catch(() => undefined);
    await cli?.close();
    await proxy?.stop();
    await fixture?.close();
  });

  it('calls made while it is down succeed once it is back: a refused connection sent nothing, so any call is retried', async () => {
    // stop() resolves once the bridge has closed its side of each connection, so it holds no stale keep-alive
    // socket when these calls reach it. (A call already on its way when the server dies is not retried unless
    // it is a read: the next test.)
    await proxy.stop();
    const retriesBefore = linesWith(cli.stderr(), '"upstream.call.retry"').length;
    const firstRetries = () =>
      linesWith(cli.stderr(), '"upstream.call.retry"')
        .slice(retriesBefore)
        .map((l) => JSON.parse(l) as { method: string; attempt: number; cause: string })
        .filter((r) => r.attempt === 1);
    const downAt = Date.now();
    const calls = Promise.all([
      modern.listTools().then((r) => r.tools.length),
      modern.callTool({ name: 'echo', arguments: { message: 'while down (modern)' } }).then(textOf),
      legacy.callTool({ name: 'echo', arguments: { message: 'while down (legacy)' } }, undefined, { timeout: 20_000 }).then(textOf),
    ]);
    calls.catch(() => undefined); // awaited below
    // Back up once each of the three calls has failed and is waiting to retry (about 3 s of retries each).
    const eachFailedOnce = waitUntil('each call to fail once', () => {
      const first = firstRetries();
      return first.filter((r) => r.method === 'tools/call').length >= 2 && first.some((r) => r.method === 'tools/list');
    });
    eachFailedOnce.catch(() => undefined); // raced below
    await Promise.race([eachFailedOnce, calls.then(() => Promise.reject(new Error('the calls settled while the upstream was down')))]);
    const downMs = Date.now() - downAt;
    await proxy.start();
    const [tools, modernEcho, legacyEcho] = await calls;
    const answeredMs = Date.now() - downAt;
    expect(tools).toBeGreaterThan(0);
    expect(modernEcho).toBe('Echo: while down (modern)');
    expect(legacyEcho).toBe('Echo: while down (legacy)');
    // A tools/call is sent again only because the connection was refused.
    expect(firstRetries().filter((r) => r.method === 'tools/call').map((r) => r.cause)).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
    report('modern HTTP upstream down until three calls were refused', { downMs, callsAnsweredAfterMs: answeredMs, retries: linesWith(cli.stderr(), '"upstream.call.retry"').length });
  });

  it('a read whose answer was cut is retried and succeeds', async () => {
    const retriesBefore = linesWith(cli.stderr(), '"upstream.call.retry"').length;
    // Only the tools/list: the legacy session's upstream listen may be re-opening after the restart meanwhile.
    proxy.dropResponses(1, '"tools/list"');
    const tools = await modern.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('echo');
    expect(proxy.dropped).toBe(1);
    // The log line travels on stderr, a different pipe from the answer: wait for it, then check it was the only one.
    const retries = () => linesWith(cli.stderr(), '"upstream.call.retry"').length - retriesBefore;
    await waitUntil('the retry to be logged', () => retries() >= 1);
    expect(retries()).toBe(1);
  });

  it('a tools/call whose answer was cut is not retried: the caller gets an error and the tool ran exactly once', async () => {
    const before = fixture.state.counter;
    const droppedBefore = proxy.dropped;
    proxy.dropResponses(1, '"tools/call"');
    const err = await modern.callTool({ name: 'bump', arguments: {} }).then(
      () => undefined,
      (e: { code?: number; message: string }) => e,
    );
    expect(proxy.dropped).toBe(droppedBefore + 1);
    expect(err?.message).toMatch(/upstream unreachable|other side closed|socket/i);
    expect(fixture.state.counter).toBe(before + 1);
    // The next call is fine.
    expect(textOf(await modern.callTool({ name: 'echo', arguments: { message: 'after the cut' } }))).toBe('Echo: after the cut');
  });
});
