import type { JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LegacyUpstreamSession, UpstreamInit } from '../../src/contracts/upstream.js';
import { LegacyHttpLink } from '../../src/links/legacy-http-link.js';
import { silentLogger } from '../../src/log.js';
import { startEverything, type RunningServer } from '../helpers/processes.js';

const INIT: UpstreamInit = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'links-http-test', version: '1.0.0' } };

interface Recorded {
  method: string;
  headers: Headers;
  /** The parsed JSON body of a POST. */
  body?: { method?: string; id?: unknown; params?: Record<string, unknown> };
  status?: number;
}

/** The real fetch, writing down each exchange so tests can assert what went on the wire. */
function recordingFetch(log: Recorded[]): typeof fetch {
  return async (input, init) => {
    const entry: Recorded = { method: init?.method ?? 'GET', headers: new Headers(init?.headers) };
    if (typeof init?.body === 'string') entry.body = JSON.parse(init.body);
    log.push(entry);
    const res = await fetch(input, init);
    entry.status = res.status;
    return res;
  };
}

function textOf(outcome: unknown): string {
  const result = (outcome as { result?: { content?: Array<{ text?: string }> } }).result;
  return (result?.content ?? []).map((c) => c.text ?? '').join('\n');
}

/** Resolves with the first value handed to `accept`, or rejects after `ms`. */
function waitFor<T>(ms: number, subscribe: (accept: (v: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nothing arrived within ${ms} ms`)), ms);
    subscribe((v) => {
      clearTimeout(timer);
      resolve(v);
    });
  });
}

describe('LegacyHttpLink against server-everything (Streamable HTTP)', () => {
  let server: RunningServer;
  const links: LegacyHttpLink[] = [];
  const wire: Recorded[] = [];

  beforeAll(async () => {
    server = await startEverything('streamableHttp');
  });
  afterEach(async () => {
    await Promise.all(links.splice(0).map((l) => l.close()));
    wire.length = 0;
  });
  afterAll(async () => server?.close());

  /** The first recorded exchange matching `pred` once its status is known (polls for 2 s). */
  async function recorded(pred: (r: Recorded) => boolean): Promise<Recorded> {
    for (let i = 0; i < 100; i++) {
      const hit = wire.find((r) => pred(r) && r.status !== undefined);
      if (hit) return hit;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('no such exchange was recorded within 2 s');
  }

  async function open(init: UpstreamInit = INIT): Promise<LegacyUpstreamSession> {
    const link = new LegacyHttpLink({ url: `${server.url}/mcp`, headers: { 'x-test': 'yes' }, logger: silentLogger, fetch: recordingFetch(wire) });
    links.push(link);
    return link.openSession(init);
  }

  it('opens a session: InitializeResult, session id and protocol version header on later requests', async () => {
    const session = await open();
    expect(session.initializeResult.serverInfo.name).toBe('mcp-servers/everything');
    expect(session.initializeResult.protocolVersion).toBe('2025-06-18');
    expect(session.correlates).toBe(true);
    const [init, ...later] = wire;
    expect(init.headers.get('mcp-session-id')).toBeNull();
    expect(init.headers.get('accept')).toBe('application/json, text/event-stream');
    expect(later.length).toBeGreaterThan(0);
    for (const r of later) {
      expect(r.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.headers.get('mcp-protocol-version')).toBe('2025-06-18');
      expect(r.headers.get('x-test')).toBe('yes');
    }
    expect(later.some((r) => r.method === 'GET' && r.headers.get('accept') === 'text/event-stream')).toBe(true);
  });

  it('lists tools and calls echo', async () => {
    const session = await open();
    const list = await session.call({ method: 'tools/list' });
    const names = ((list as { result: { tools: Array<{ name: string }> } }).result.tools ?? []).map((t) => t.name);
    expect(names).toContain('echo');
    const echo = await session.call({ method: 'tools/call', params: { name: 'echo', arguments: { message: 'hello over http' } } });
    expect(textOf(echo)).toBe('Echo: hello over http');
  });

  it('hands elicitation/create on the POST stream to the call and completes with the answer', async () => {
    const session = await open({ ...INIT, capabilities: { elicitation: {} } });
    const asked: JSONRPCRequest[] = [];
    const outcome = await session.call(
      { method: 'tools/call', params: { name: 'trigger-elicitation-request', arguments: {} } },
      {
        onServerRequest: async (req) => {
          asked.push(req);
          return { action: 'accept', content: { name: 'Ada Lovelace' } };
        },
      },
    );
    expect(asked.map((r) => r.method)).toEqual(['elicitation/create']);
    expect(textOf(outcome)).toContain('- Name: Ada Lovelace');
    // The answer went back as a POSTed JSON-RPC response to the server's request id, accepted with 202.
    const answer = await recorded((r) => r.body !== undefined && 'result' in r.body);
    expect(answer.body).toMatchObject({ id: asked[0].id, result: { action: 'accept' } });
    expect(answer.status).toBe(202);
  });

  it('maps progress back to the caller token', async () => {
    const session = await open();
    const progress: JSONRPCNotification[] = [];
    const outcome = await session.call(
      { method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 }, _meta: { progressToken: 'caller-token' } } },
      { onNotification: (n) => progress.push(n) },
    );
    expect(textOf(outcome)).toContain('Long running operation completed');
    expect(progress.map((n) => n.params)).toEqual([
      { progress: 1, total: 2, progressToken: 'caller-token' },
      { progress: 2, total: 2, progressToken: 'caller-token' },
    ]);
  });

  it('delivers notifications/resources/updated from the GET stream to the unsolicited handler', async () => {
    const session = await open();
    const uri = 'demo://resource/dynamic/text/1';
    const updated = waitFor<JSONRPCNotification>(8_000, (accept) =>
      session.setUnsolicitedHandlers({
        notification: (n) => {
          if (n.method === 'notifications/resources/updated') accept(n);
        },
        request: async () => ({}),
      }),
    );
    expect(await session.call({ method: 'resources/subscribe', params: { uri } })).toEqual({ result: {} });
    await session.call({ method: 'tools/call', params: { name: 'toggle-subscriber-updates', arguments: {} } });
    expect((await updated).params).toEqual({ uri });
    await session.call({ method: 'tools/call', params: { name: 'toggle-subscriber-updates', arguments: {} } });
  });

  it('answers roots/list from the GET stream through the unsolicited handler', async () => {
    const session = await open({ ...INIT, capabilities: { roots: {} } });
    const requests: JSONRPCRequest[] = [];
    // server-everything asks for roots 350 ms after initialized, then logs how many it got.
    const logged = waitFor<JSONRPCNotification>(5_000, (accept) =>
      session.setUnsolicitedHandlers({
        notification: (n) => {
          if (n.method === 'notifications/message') accept(n);
        },
        request: async (req) => {
          requests.push(req);
          return { roots: [{ uri: 'file:///tmp/bridge-root', name: 'root' }] };
        },
      }),
    );
    expect((await logged).params).toMatchObject({ data: 'Roots updated: 1 root(s) received from client' });
    expect(requests.map((r) => r.method)).toEqual(['roots/list']);
  });

  it('an aborted signal resolves the call as cancelled and POSTs notifications/cancelled', async () => {
    const session = await open();
    const ac = new AbortController();
    const call = session.call({ method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } } }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 200);
    expect(await call).toMatchObject({ error: { code: -32603, message: 'upstream call tools/call cancelled' } });
    const callId = wire.find((r) => r.body?.method === 'tools/call')!.body!.id;
    const cancelled = await recorded((r) => r.body?.method === 'notifications/cancelled');
    expect(cancelled.body!.params).toMatchObject({ requestId: callId });
  });

  it('close() sends DELETE with the session id and the server forgets the session', async () => {
    const session = await open();
    const reasons: string[] = [];
    session.onClose((r) => reasons.push(r));
    const sessionId = wire[1].headers.get('mcp-session-id')!;
    await session.close();
    const del = wire.filter((r) => r.method === 'DELETE');
    expect(del).toHaveLength(1);
    expect(del[0].headers.get('mcp-session-id')).toBe(sessionId);
    expect(del[0].status).toBe(200);
    expect(session.closed).toBe(true);
    expect(reasons).toEqual(['closed']);
    expect(await session.call({ method: 'tools/list' })).toMatchObject({ error: { code: -32603 } });
    const after = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(after.status).toBe(400); // server-everything answers 400 for unknown sessions
  });

  it('times out a call: -32603 outcome and notifications/cancelled POSTed upstream', async () => {
    const session = await open();
    const started = Date.now();
    const outcome = await session.call({ method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } } }, { timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(outcome).toMatchObject({ error: { code: -32603, message: expect.stringContaining('timed out after 300 ms') } });
    const callId = wire.find((r) => r.body?.method === 'tools/call')!.body!.id;
    const cancelled = await recorded((r) => r.body?.method === 'notifications/cancelled');
    expect(cancelled.body!.params).toMatchObject({ requestId: callId });
    expect(cancelled.status).toBe(202);
  });
});

describe('LegacyHttpLink when the server dies', () => {
  let server: RunningServer | undefined;
  afterAll(async () => server?.close());

  it('a call in flight resolves with an error promptly and the session closes as unreachable', async () => {
    server = await startEverything('streamableHttp');
    const link = new LegacyHttpLink({ url: `${server.url}/mcp`, headers: {}, logger: silentLogger });
    try {
      const session = await link.openSession(INIT);
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
      const outcome = await call;
      expect(outcome).toMatchObject({ error: { code: -32603 } });
      // The kill, not the call's 20 s or a timeout, ended it.
      expect(Date.now() - killedAt).toBeLessThan(5_000);
      expect(await closed).toMatch(/^upstream unreachable/);
      expect(session.closed).toBe(true);
    } finally {
      await link.close();
    }
  });
});
