import type { JSONRPCRequest } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamInit } from '../../src/contracts/upstream.js';
import { SseLink } from '../../src/links/sse-link.js';
import { silentLogger } from '../../src/log.js';
import { startEverything, type RunningServer } from '../helpers/processes.js';

const INIT: UpstreamInit = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'links-sse-test', version: '1.0.0' } };

function textOf(outcome: unknown): string {
  const result = (outcome as { result?: { content?: Array<{ text?: string }> } }).result;
  return (result?.content ?? []).map((c) => c.text ?? '').join('\n');
}

describe('SseLink against server-everything (2024-11-05 HTTP+SSE)', () => {
  let server: RunningServer;
  const links: SseLink[] = [];

  beforeAll(async () => {
    server = await startEverything('sse');
  });
  afterEach(async () => {
    await Promise.all(links.splice(0).map((l) => l.close()));
  });
  afterAll(async () => server?.close());

  function link(fetchImpl?: typeof fetch): SseLink {
    const l = new SseLink({ url: `${server.url}/sse`, headers: { 'x-test': 'sse' }, logger: silentLogger, fetch: fetchImpl });
    links.push(l);
    return l;
  }

  it('opens a session and echoes, sending the configured headers on the GET and every POST', async () => {
    const seen: Array<{ method: string; url: string; header: string | null }> = [];
    const recording: typeof fetch = (input, init) => {
      seen.push({ method: init?.method ?? 'GET', url: String(input), header: new Headers(init?.headers).get('x-test') });
      return fetch(input, init);
    };
    const session = await link(recording).openSession(INIT);
    expect(session.initializeResult.serverInfo.name).toBe('mcp-servers/everything');
    expect(session.correlates).toBe(false);
    const echo = await session.call({ method: 'tools/call', params: { name: 'echo', arguments: { message: 'over sse' } } });
    expect(textOf(echo)).toBe('Echo: over sse');
    expect(seen[0]).toMatchObject({ method: 'GET', url: `${server.url}/sse`, header: 'sse' });
    const posts = seen.filter((s) => s.method === 'POST');
    expect(posts.length).toBeGreaterThanOrEqual(3); // initialize, initialized, tools/call
    for (const p of posts) {
      expect(p.url).toMatch(new RegExp(`^${server.url}/message\\?sessionId=`));
      expect(p.header).toBe('sse');
    }
  });

  it('routes elicitation/create to the one call in flight and completes with the answer', async () => {
    const session = await link().openSession({ ...INIT, capabilities: { elicitation: {} } });
    const asked: JSONRPCRequest[] = [];
    const outcome = await session.call(
      { method: 'tools/call', params: { name: 'trigger-elicitation-request', arguments: {} } },
      {
        onServerRequest: async (req) => {
          asked.push(req);
          return { action: 'accept', content: { name: 'Grace Hopper' } };
        },
      },
    );
    expect(asked.map((r) => r.method)).toEqual(['elicitation/create']);
    expect(textOf(outcome)).toContain('- Name: Grace Hopper');
  });

  it('close() ends the stream: the session reports closed and later calls get an error outcome', async () => {
    const session = await link().openSession(INIT);
    const reasons: string[] = [];
    session.onClose((r) => reasons.push(r));
    await session.close();
    expect(session.closed).toBe(true);
    expect(reasons).toHaveLength(1);
    expect(await session.call({ method: 'tools/list' })).toMatchObject({ error: { code: -32603 } });
  });

  it('a URL that is not an http+sse endpoint rejects openSession', async () => {
    const bad = new SseLink({ url: `${server.url}/nope`, headers: {}, logger: silentLogger });
    links.push(bad);
    await expect(bad.openSession(INIT)).rejects.toMatchObject({ status: 404 });
  });
});

describe('SseLink when the server dies', () => {
  let server: RunningServer | undefined;
  afterAll(async () => server?.close());

  it('the stream drop closes the session and the call in flight resolves with an error', async () => {
    server = await startEverything('sse');
    const l = new SseLink({ url: `${server.url}/sse`, headers: {}, logger: silentLogger });
    try {
      const session = await l.openSession(INIT);
      const closed = new Promise<string>((resolve) => session.onClose(resolve));
      // 20 s of work reporting progress every 100 ms: the first report says the server is running it.
      let running!: () => void;
      const started = new Promise<void>((r) => (running = r));
      const call = session.call(
        { method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 20, steps: 200 }, _meta: { progressToken: 'p' } } },
        { onNotification: () => running() },
      );
      await started;
      const killedAt = Date.now();
      server.child.kill('SIGKILL');
      expect(await call).toMatchObject({ error: { code: -32603 } });
      expect(await closed).toMatch(/http\+sse stream dropped/);
      // The drop, not the call's 20 s or a timeout, ended it.
      expect(Date.now() - killedAt).toBeLessThan(5_000);
    } finally {
      await l.close();
    }
  });
});
