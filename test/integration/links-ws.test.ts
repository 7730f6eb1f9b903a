import type { JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { UpstreamInit } from '../../src/contracts/upstream.js';
import { WsLink } from '../../src/links/ws-link.js';
import { silentLogger } from '../../src/log.js';
import { startV1WsServer } from '../fixtures/v1-ws-server.js';

const INIT: UpstreamInit = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'links-ws-test', version: '1.0.0' } };

function textOf(outcome: unknown): string {
  const result = (outcome as { result?: { content?: Array<{ text?: string }> } }).result;
  return (result?.content ?? []).map((c) => c.text ?? '').join('\n');
}

describe('WsLink against the SDK v1 WebSocket fixture', () => {
  let server: Awaited<ReturnType<typeof startV1WsServer>>;
  const links: WsLink[] = [];

  beforeAll(async () => {
    server = await startV1WsServer();
  });
  afterEach(async () => {
    await Promise.all(links.splice(0).map((l) => l.close()));
  });
  afterAll(async () => server?.close());

  function link(): WsLink {
    const l = new WsLink({ url: server.url, headers: {}, logger: silentLogger });
    links.push(l);
    return l;
  }

  it('opens a session and echoes', async () => {
    const session = await link().openSession(INIT);
    expect(session.initializeResult.serverInfo.name).toBe('v1-ws-fixture');
    expect(session.correlates).toBe(false);
    expect(textOf(await session.call({ method: 'tools/call', params: { name: 'echo', arguments: { message: 'over ws' } } }))).toBe('Echo: over ws');
  });

  it('routes elicitation/create from "ask" to the call in flight and returns its answer', async () => {
    const session = await link().openSession({ ...INIT, capabilities: { elicitation: {} } });
    const asked: JSONRPCRequest[] = [];
    const outcome = await session.call(
      { method: 'tools/call', params: { name: 'ask', arguments: { question: 'Favourite colour?' } } },
      {
        onServerRequest: async (req) => {
          asked.push(req);
          return { action: 'accept', content: { answer: 'teal' } };
        },
      },
    );
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ method: 'elicitation/create', params: { message: 'Favourite colour?' } });
    expect(textOf(outcome)).toBe('teal');
  });

  it('delivers progress to the call with the caller token', async () => {
    const session = await link().openSession(INIT);
    const progress: JSONRPCNotification[] = [];
    const outcome = await session.call(
      { method: 'tools/call', params: { name: 'progress', arguments: {}, _meta: { progressToken: 42 } } },
      { onNotification: (n) => progress.push(n) },
    );
    expect(textOf(outcome)).toBe('progress done');
    expect(progress.map((n) => n.params)).toEqual([
      { progressToken: 42, progress: 1, total: 2 },
      { progressToken: 42, progress: 2, total: 2 },
    ]);
  });

  it('delivers tools/list_changed to the unsolicited handler', async () => {
    const session = await link().openSession(INIT);
    const changed = new Promise<JSONRPCNotification>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no list_changed within 3 s')), 3_000);
      session.setUnsolicitedHandlers({
        notification: (n) => {
          if (n.method !== 'notifications/tools/list_changed') return;
          clearTimeout(timer);
          resolve(n);
        },
        request: async () => ({}),
      });
    });
    expect(textOf(await session.call({ method: 'tools/call', params: { name: 'toggle-tool', arguments: {} } }))).toBe('added');
    expect((await changed).method).toBe('notifications/tools/list_changed');
    const tools = (await session.call({ method: 'tools/list' })) as { result: { tools: Array<{ name: string }> } };
    expect(tools.result.tools.map((t) => t.name)).toContain('extra');
  });

  it('close() closes the socket: closed, onClose fires, later calls get an error outcome', async () => {
    const session = await link().openSession(INIT);
    const reasons: string[] = [];
    session.onClose((r) => reasons.push(r));
    await session.close();
    expect(session.closed).toBe(true);
    expect(reasons).toHaveLength(1);
    expect(await session.call({ method: 'tools/list' })).toMatchObject({ error: { code: -32603 } });
  });
});

describe('WsLink failures', () => {
  it('a server that drops the connection mid-call: the call resolves with an error at once', async () => {
    const server = await startV1WsServer();
    const l = new WsLink({ url: server.url, headers: {}, logger: silentLogger });
    try {
      const session = await l.openSession({ ...INIT, capabilities: { elicitation: {} } });
      const closed = new Promise<string>((resolve) => session.onClose(resolve));
      // "ask" waits for our answer; the server goes away once it has asked.
      let asked!: () => void;
      const askedNow = new Promise<void>((r) => (asked = r));
      const call = session.call(
        { method: 'tools/call', params: { name: 'ask', arguments: {} } },
        { onServerRequest: () => (asked(), new Promise(() => undefined)) },
      );
      await askedNow;
      const droppedAt = Date.now();
      await server.close();
      expect(await call).toMatchObject({ error: { code: -32603 } });
      expect(await closed).toMatch(/^websocket closed/);
      // The close, not a timeout (minutes away), ended the call.
      expect(Date.now() - droppedAt).toBeLessThan(5_000);
    } finally {
      await l.close();
      await server.close();
    }
  });

  it('an upgrade refused with HTTP 401 rejects openSession with that status', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, verifyClient: (_info, cb) => cb(false, 401) });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    const { port } = wss.address() as { port: number };
    const l = new WsLink({ url: `ws://127.0.0.1:${port}/`, headers: { authorization: 'Bearer nope' }, logger: silentLogger });
    try {
      await expect(l.openSession(INIT)).rejects.toMatchObject({ status: 401 });
    } finally {
      await l.close();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    }
  });
});
