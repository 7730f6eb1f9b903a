import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventId } from '../../src/wire/sse-event-id.js';
import { runCli, startCli, type RunningCli } from '../helpers/cli.js';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';
import { SseCall } from '../helpers/sse-call.js';

/**
 * Resumable Streamable HTTP for initialize-era clients (2025-11-25 transports,
 * Resumability and Redelivery; issue 11): event ids, the priming event with
 * `retry`, GET + Last-Event-ID after a dropped connection, the bounded
 * per-session store, through the built bridge in front of a 2026-07-28 server
 * and server-everything over stdio.
 */

const ACCEPT_BOTH = 'application/json, text/event-stream';

/** A 2025 session opened by hand, so every byte of the exchange is visible. */
class RawSession {
  private constructor(
    readonly mcp: string,
    readonly id: string,
    readonly version: string,
  ) {}

  static async open(mcp: string, version = '2025-11-25'): Promise<RawSession> {
    const init = await fetch(mcp, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    expect(init.status).toBe(200);
    await init.text();
    const s = new RawSession(mcp, init.headers.get('mcp-session-id')!, version);
    const ack = await fetch(mcp, { method: 'POST', headers: s.headers(), body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    expect(ack.status).toBe(202);
    return s;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-session-id': this.id, 'mcp-protocol-version': this.version, ...extra };
  }

  call(id: number, name: string, args: Record<string, unknown>, progressToken?: string): Promise<SseCall> {
    const params = { name, arguments: args, ...(progressToken ? { _meta: { progressToken } } : {}) };
    return SseCall.open(this.mcp, { method: 'POST', headers: this.headers(), body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }) });
  }

  /** A GET: the standalone stream, or with `lastEventId` the resumption of the stream that id belongs to. */
  get(lastEventId?: string): Promise<SseCall> {
    const headers: Record<string, string> = { accept: 'text/event-stream', 'mcp-session-id': this.id, 'mcp-protocol-version': this.version };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    return SseCall.open(this.mcp, { method: 'GET', headers });
  }
}

const ids = (call: SseCall) => call.events.flatMap((e) => (e.id === undefined ? [] : [e.id]));
const lastId = (call: SseCall) => ids(call).at(-1)!;
const progressOf = (call: SseCall) => call.messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress as number);
const resultOf = (call: SseCall, id: number) => call.messages.find((m) => m.id === id && 'result' in m);
const listChanged = (call: SseCall) => call.messages.filter((m) => m.method === 'notifications/tools/list_changed').length;
const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('resumable streams in front of a 2026-07-28 server (default store)', () => {
  let upstream: RunningModernServer;
  let bridge: RunningCli;
  let mcp: string;

  beforeAll(async () => {
    upstream = await startModernHttpServer();
    bridge = await startCli(['--upstream', upstream.url, '--log-level', 'warn']);
    mcp = `${bridge.url}/mcp`;
  }, 60_000);
  afterAll(async () => {
    await bridge?.close();
    await upstream?.close();
  });

  it('a request answered before the JSON window closes is plain JSON: no stream, no id', async () => {
    const s = await RawSession.open(mcp);
    // ping is answered by the bridge itself, at once; an upstream call as fast is JSON too, but how fast
    // an upstream answers on a loaded machine is not this test's to assume.
    const ping = await SseCall.open(mcp, { method: 'POST', headers: s.headers(), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
    await ping.ended;
    expect(ping.headers['content-type']).toBe('application/json');
    expect(JSON.parse(ping.text)).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('a longer call is an SSE stream that opens with a priming event (id, retry, empty data) and gives every event an id of its stream', async () => {
    const s = await RawSession.open(mcp);
    const call = await s.call(1, 'progress', { steps: 8 }, 'tok');
    await call.ended;
    expect(call.headers['content-type']).toBe('text/event-stream');
    expect(call.text).toMatch(/^id: \d+-\d+\nretry: 1000\ndata: \n\n/);
    expect(call.events[0]).toMatchObject({ data: '', retry: 1000 });
    expect(call.events.every((e) => e.id !== undefined)).toBe(true);
    const parsed = ids(call).map((id) => parseEventId(id)!);
    expect(new Set(parsed.map((p) => p.stream)).size).toBe(1);
    const seqs = parsed.map((p) => p.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(progressOf(call)).toEqual(range(8));
    expect(resultOf(call, 1).result.content[0].text).toBe('done 8 steps');
  });

  it('a call that sends nothing before its answer is still primed once it outlasts the window (what server-sse-polling checks)', async () => {
    const s = await RawSession.open(mcp);
    const call = await s.call(1, 'slow', { ms: 300 });
    await call.ended;
    expect(call.headers['content-type']).toBe('text/event-stream');
    expect(call.events.map((e) => e.data === '')).toEqual([true, false]);
    expect(call.events[0].retry).toBe(1000);
    expect(resultOf(call, 1).result.content[0].text).toBe('slept 300');
  });

  it('a POST stream dropped mid-call is resumed by GET + Last-Event-ID: the missed events, then the response, nothing twice', async () => {
    const s = await RawSession.open(mcp);
    const call = await s.call(7, 'progress', { steps: 20 }, 'tok');
    expect(await call.until((c) => progressOf(c).length >= 3)).toBe(true);
    call.drop();
    await call.ended;
    const before = progressOf(call);
    const resumed = await s.get(lastId(call));
    await resumed.ended;
    expect(resumed.status).toBe(200);
    expect(resumed.headers['content-type']).toBe('text/event-stream');
    expect([...before, ...progressOf(resumed)]).toEqual(range(20));
    expect(resultOf(resumed, 7).result.content[0].text).toBe('done 20 steps');
    // The ids go on where the first connection stopped, on the same stream.
    const stream = parseEventId(lastId(call))!.stream;
    expect(ids(resumed).every((id) => parseEventId(id)!.stream === stream)).toBe(true);
  });

  it('the standalone GET stream is resumable too, and its resumption replays nothing of a POST stream', async () => {
    const observer = await RawSession.open(mcp);
    const driver = await RawSession.open(mcp);
    const get = await observer.get();
    expect(await get.until((c) => c.events.length >= 1)).toBe(true);
    expect(get.events[0]).toMatchObject({ data: '', retry: 1000 });
    get.drop();
    await get.ended;
    // Meanwhile: a POST stream of the observer's own, and two list_changed for its GET stream.
    const own = await observer.call(1, 'progress', { steps: 3 }, 'tok');
    await own.ended;
    for (const n of [1, 2]) await (await driver.call(n, 'add-tool', { name: `resume-get-${n}` })).ended;
    const resumed = await observer.get(lastId(get));
    expect(await resumed.until((c) => listChanged(c) >= 2)).toBe(true);
    expect(resumed.status).toBe(200);
    expect(resumed.messages.every((m) => m.method === 'notifications/tools/list_changed')).toBe(true);
    // It is the standalone stream now: what comes next arrives on it, live.
    await (await driver.call(3, 'add-tool', { name: 'resume-get-3' })).ended;
    expect(await resumed.until((c) => listChanged(c) >= 3)).toBe(true);
    resumed.drop();
  });

  it('a Last-Event-ID this session never issued gets 400 -32000, not a stream', async () => {
    const s = await RawSession.open(mcp);
    for (const bad of ['not-an-id', '1-999999', '']) {
      const r = await s.get(bad);
      await r.ended;
      expect(r.status, bad).toBe(400);
      expect(JSON.parse(r.text).error.code).toBe(-32000);
    }
  });

  it('the store goes with its session: after DELETE a Last-Event-ID of it finds nothing (404)', async () => {
    const s = await RawSession.open(mcp);
    const call = await s.call(1, 'progress', { steps: 3 }, 'tok');
    await call.ended;
    const del = await fetch(mcp, { method: 'DELETE', headers: s.headers() });
    expect(del.status).toBe(200);
    const r = await s.get(lastId(call));
    await r.ended;
    expect(r.status).toBe(404);
    expect(JSON.parse(r.text).error.code).toBe(-32001);
  });

  it('an SDK v1 client whose connections are cut mid-call reconnects with Last-Event-ID and gets every progress step and the result', async () => {
    const proxy = await FaultProxy.start(Number(new URL(bridge.url).port));
    const client = new Client({ name: 'resume-v1', version: '1.0.0' });
    try {
      const errors: string[] = [];
      client.onerror = (err) => errors.push(err.message);
      await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
      const seen: number[] = [];
      let cut: Promise<void> | undefined;
      const result = await client.callTool({ name: 'progress', arguments: { steps: 100 } }, undefined, {
        onprogress: (p) => {
          seen.push(p.progress);
          if (p.progress === 3) cut = proxy.stop().then(() => proxy.start());
        },
      });
      await cut;
      expect(cut).toBeDefined();
      // The client saw its POST stream break, and still got every step once and the result.
      expect(errors.some((m) => /SSE stream disconnected/.test(m))).toBe(true);
      expect(seen).toEqual(range(100));
      expect((result.content as Array<{ text: string }>)[0].text).toBe('done 100 steps');
    } finally {
      await client.close();
      await proxy.stop();
    }
  }, 30_000);
});

describe('the store bound (--event-store-max 5)', () => {
  let upstream: RunningModernServer;
  let bridge: RunningCli;
  let mcp: string;

  beforeAll(async () => {
    upstream = await startModernHttpServer();
    bridge = await startCli(['--upstream', upstream.url, '--log-level', 'warn', '--event-store-max', '5']);
    mcp = `${bridge.url}/mcp`;
  }, 60_000);
  afterAll(async () => {
    await bridge?.close();
    await upstream?.close();
  });

  it('holds the newest 5 events: older ids restart their stream cleanly (no error, nothing replayed), newer ones replay exactly what followed', async () => {
    const observer = await RawSession.open(mcp);
    const driver = await RawSession.open(mcp);
    // A long call, primed, whose connection drops at once.
    const slow = await observer.call(1, 'slow', { ms: 8_000 });
    expect(await slow.until((c) => c.events.length >= 1)).toBe(true);
    const slowPriming = slow.events[0].id!;
    slow.drop();
    // The standalone stream: its priming event, then five list_changed: six events push the call's priming out.
    const get = await observer.get();
    for (const n of range(5)) await (await driver.call(n, 'add-tool', { name: `bound-${n}` })).ended;
    expect(await get.until((c) => listChanged(c) >= 5)).toBe(true);
    const getPriming = get.events[0].id!;
    const firstChange = get.events.find((e) => e.data !== '')!.id!;

    // Still stored: the four events after the first list_changed, on a connection that takes the stream over.
    const replay = await observer.get(firstChange);
    expect(await replay.until((c) => listChanged(c) >= 4)).toBe(true);
    await get.ended;
    expect(listChanged(replay)).toBe(4);

    // Older than the store, standalone stream: it carries on from now, nothing replayed.
    const restarted = await observer.get(getPriming);
    expect(restarted.status).toBe(200);
    await replay.ended;
    await (await driver.call(6, 'add-tool', { name: 'bound-6' })).ended;
    expect(await restarted.until((c) => listChanged(c) >= 1)).toBe(true);
    expect(restarted.messages).toHaveLength(1);

    // Older than the store, POST stream still running: nothing replayed, its response arrives when it is ready.
    const resumedCall = await observer.get(slowPriming);
    await resumedCall.ended;
    expect(resumedCall.status).toBe(200);
    expect(resumedCall.messages).toHaveLength(1);
    expect(resultOf(resumedCall, 1).result.content[0].text).toBe('slept 8000');

    // Older than the store, POST stream finished: nothing is left to carry, the stream ends at once (no id: no loop of retries).
    const gone = await observer.get(slowPriming);
    await gone.ended;
    expect(gone.status).toBe(200);
    expect(gone.events).toHaveLength(0);
    restarted.drop();
  }, 30_000);
});

describe('resumability off and older versions', () => {
  let upstream: RunningModernServer;
  let off: RunningCli;
  let on: RunningCli;

  beforeAll(async () => {
    upstream = await startModernHttpServer();
    [off, on] = await Promise.all([
      startCli(['--upstream', upstream.url, '--log-level', 'warn', '--event-store-max', '0']),
      startCli(['--upstream', upstream.url, '--log-level', 'warn']),
    ]);
  }, 60_000);
  afterAll(async () => {
    await off?.close();
    await on?.close();
    await upstream?.close();
  });

  it('--event-store-max 0: no ids, no priming, a slow call stays JSON, and Last-Event-ID is ignored', async () => {
    const s = await RawSession.open(`${off.url}/mcp`);
    const slow = await s.call(1, 'slow', { ms: 200 });
    await slow.ended;
    expect(slow.headers['content-type']).toBe('application/json');
    const progress = await s.call(2, 'progress', { steps: 3 }, 'tok');
    await progress.ended;
    expect(progress.headers['content-type']).toBe('text/event-stream');
    expect(progress.text).not.toMatch(/^(id|retry):/m);
    expect(progressOf(progress)).toEqual(range(3));
    const get = await s.get('1-1');
    expect(get.status).toBe(200);
    get.drop();
  });

  it('a 2025-06-18 session gets ids but no priming event (empty data breaks older parsers), and no JSON window', async () => {
    const s = await RawSession.open(`${on.url}/mcp`, '2025-06-18');
    const slow = await s.call(1, 'slow', { ms: 200 });
    await slow.ended;
    expect(slow.headers['content-type']).toBe('application/json');
    const call = await s.call(2, 'progress', { steps: 6 }, 'tok');
    expect(await call.until((c) => progressOf(c).length >= 2)).toBe(true);
    expect(call.events[0].data).not.toBe('');
    expect(call.text).not.toMatch(/^retry:/m);
    call.drop();
    await call.ended;
    const resumed = await s.get(lastId(call));
    await resumed.ended;
    expect([...progressOf(call), ...progressOf(resumed)]).toEqual(range(6));
    expect(resultOf(resumed, 2)).toBeDefined();
  });
});

describe('resumable streams in front of server-everything over stdio', () => {
  let bridge: RunningCli;

  beforeAll(async () => {
    bridge = await startCli(['--log-level', 'warn', '--', ...EVERYTHING_STDIO_COMMAND]);
  }, 60_000);
  afterAll(async () => {
    await bridge?.close();
  });

  it('an SDK v1 client cut off mid-operation resumes with Last-Event-ID: every progress step once, then the result', async () => {
    const proxy = await FaultProxy.start(Number(new URL(bridge.url).port));
    const client = new Client({ name: 'resume-v1', version: '1.0.0' });
    try {
      const errors: string[] = [];
      client.onerror = (err) => errors.push(err.message);
      await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
      const seen: number[] = [];
      let cut: Promise<void> | undefined;
      const result = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 15 } }, undefined, {
        onprogress: (p) => {
          seen.push(p.progress);
          if (p.progress === 2) cut = proxy.stop().then(() => proxy.start());
        },
      });
      await cut;
      expect(cut).toBeDefined();
      expect(errors.some((m) => /SSE stream disconnected/.test(m))).toBe(true);
      expect(seen).toEqual(range(15));
      expect((result.content as Array<{ text: string }>)[0].text).toMatch(/Long running operation completed/);
    } finally {
      await client.close();
      await proxy.stop();
    }
  }, 30_000);

  it('raw: the operation streams with a priming event and ids, and a resume after a drop loses nothing', async () => {
    const s = await RawSession.open(`${bridge.url}/mcp`);
    const call = await s.call(3, 'trigger-long-running-operation', { duration: 2, steps: 10 }, 'tok');
    expect(await call.until((c) => progressOf(c).length >= 2)).toBe(true);
    expect(call.events[0]).toMatchObject({ data: '', retry: 1000 });
    expect(call.events[0].id).toMatch(/^\d+-\d+$/);
    call.drop();
    await call.ended;
    const resumed = await s.get(lastId(call));
    await resumed.ended;
    expect([...progressOf(call), ...progressOf(resumed)]).toEqual(range(10));
    expect(resultOf(resumed, 3).result.content[0].text).toMatch(/completed/);
  });
});

describe('--event-store-max is validated', () => {
  it.each(['-1', 'many', '2.5'])('--event-store-max %s exits 2 and says what it takes', async (value) => {
    const r = await runCli(['--event-store-max', value, '--upstream', 'http://127.0.0.1:9/mcp']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--event-store-max must be a whole number ≥ 0 (got '${value}')`);
  });
});
