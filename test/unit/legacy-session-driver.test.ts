import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { LegacyChannel, LegacyHandler, LegacyRequestContext, LegacySessionInfo } from '../../src/contracts/downstream.js';
import { RpcError } from '../../src/errors.js';
import { LegacySessionDriver } from '../../src/faces/legacy-session-driver.js';
import { errorResponse, resultResponse } from '../../src/jsonrpc/messages.js';
import { silentLogger } from '../../src/log.js';

type Method = (req: JSONRPCRequest, ctx: LegacyRequestContext) => Promise<JSONRPCResponse>;

/** A small real handler: what it saw is recorded for the assertions. */
function harness(opts: { version?: string; refuse?: RpcError; inputTimeoutMs?: number } = {}) {
  const seen = { notifications: [] as JSONRPCNotification[], opened: [] as Omit<LegacySessionInfo, 'protocolVersion'>[], closed: 0, signals: [] as AbortSignal[] };
  const sent: JSONRPCMessage[] = [];
  let channel: LegacyChannel | undefined;
  const methods: Record<string, Method> = {
    echo: async (req) => resultResponse(req.id, { echoed: req.params ?? null }),
    wait: (req, ctx) =>
      new Promise((resolve) => {
        seen.signals.push(ctx.signal);
        ctx.signal.addEventListener('abort', () => resolve(errorResponse(req.id, { code: -32800, message: 'cancelled' })));
      }),
    ask: async (req, ctx) => {
      try {
        return resultResponse(req.id, { answer: await ctx.request('elicitation/create', { message: 'name?' }) });
      } catch (err) {
        return errorResponse(req.id, { code: (err as RpcError).code, message: (err as RpcError).message });
      }
    },
    progress: async (req, ctx) => {
      ctx.notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } } as JSONRPCNotification);
      return resultResponse(req.id, {});
    },
  };
  const handler: LegacyHandler = {
    async openSession(params, info, ch) {
      if (opts.refuse) throw opts.refuse;
      seen.opened.push(info);
      channel = ch;
      return {
        result: { protocolVersion: opts.version ?? params.protocolVersion, capabilities: {}, serverInfo: { name: 't', version: '1' } },
        session: {
          handleRequest: (req, ctx) => methods[req.method](req, ctx),
          handleNotification: (n) => void seen.notifications.push(n),
          close: async () => void seen.closed++,
        },
      };
    },
    close: async () => {},
  };
  const driver = new LegacySessionDriver({
    handler,
    transport: 'ws',
    sessionId: 'S1',
    logger: silentLogger,
    inputTimeoutMs: opts.inputTimeoutMs,
    send: (m) => (sent.push(m), true),
  });
  return { driver, seen, sent, channel: () => channel! };
}

const init = (id: number | string = 0, protocolVersion = '2025-06-18') => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: { elicitation: {} }, clientInfo: { name: 'c', version: '1' } },
});
const req = (id: number | string, method: string, params?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
const note = (method: string, params?: Record<string, unknown>) => ({ jsonrpc: '2.0', method, ...(params ? { params } : {}) });
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('LegacySessionDriver before initialize', () => {
  const cases: Array<[string, unknown, unknown]> = [
    ['a request is refused with -32600 Server not initialized', req(1, 'echo'), { jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'Bad Request: Server not initialized' } }],
    ['ping is answered {} locally', req(2, 'ping'), { jsonrpc: '2.0', id: 2, result: {} }],
    ['a batch is refused as one -32600 with id null', [req(3, 'echo')], { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('not supported') } }],
    ['initialize without capabilities is -32602', { jsonrpc: '2.0', id: 4, method: 'initialize', params: { protocolVersion: '2025-06-18' } }, { jsonrpc: '2.0', id: 4, error: { code: -32602, message: expect.any(String) } }],
  ];
  it.each(cases)('%s', async (_name, msg, expected) => {
    const { driver } = harness();
    expect(await driver.receive(msg)).toEqual(expected);
    expect(driver.initialized).toBe(false);
  });
});

describe('LegacySessionDriver malformed messages', () => {
  const bad: Array<[string, unknown]> = [
    ['a number', 42],
    ['null', null],
    ['an object without jsonrpc', { id: 1, method: 'ping' }],
    ['jsonrpc 1.0', { jsonrpc: '1.0', id: 1, method: 'ping' }],
    ['a non-string method', { jsonrpc: '2.0', id: 1, method: 7 }],
    ['an object id', { jsonrpc: '2.0', id: {}, method: 'ping' }],
  ];
  it.each(bad)('%s → -32600 with id null', async (_name, msg) => {
    const { driver } = harness();
    expect(await driver.receive(msg)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });
});

describe('LegacySessionDriver initialize', () => {
  it('opens the session with the client facts and answers the bridge result', async () => {
    const { driver, seen } = harness({ version: '2025-03-26' });
    const answer = await driver.receive(init(0, '2025-06-18'));
    expect(answer).toMatchObject({ id: 0, result: { protocolVersion: '2025-03-26', serverInfo: { name: 't' } } });
    expect(seen.opened).toEqual([{ id: 'S1', transport: 'ws', clientCapabilities: { elicitation: {} }, clientInfo: { name: 'c', version: '1' } }]);
    expect(driver.info).toMatchObject({ id: 'S1', protocolVersion: '2025-03-26', transport: 'ws' });
  });

  it('a second initialize is -32600 Server already initialized', async () => {
    const { driver } = harness();
    await driver.receive(init(0));
    expect(await driver.receive(init(1))).toMatchObject({ id: 1, error: { code: -32600, message: expect.stringContaining('Server already initialized') } });
  });

  it('a refused session answers the RpcError and stays uninitialized', async () => {
    const { driver } = harness({ refuse: new RpcError(-32602, 'Unsupported protocol version', { data: { supported: ['2025-06-18'] } }) });
    expect(await driver.receive(init(0))).toEqual({ jsonrpc: '2.0', id: 0, error: { code: -32602, message: 'Unsupported protocol version', data: { supported: ['2025-06-18'] } } });
    expect(driver.initialized).toBe(false);
  });
});

describe('LegacySessionDriver notifications', () => {
  it('swallows notifications/initialized and passes others to the session', async () => {
    const { driver, seen } = harness();
    await driver.receive(init());
    expect(await driver.receive(note('notifications/initialized'))).toBeUndefined();
    expect(await driver.receive(note('notifications/roots/list_changed'))).toBeUndefined();
    expect(seen.notifications.map((n) => n.method)).toEqual(['notifications/roots/list_changed']);
  });

  it('notifications/cancelled aborts that request and no response is answered', async () => {
    const { driver, seen } = harness();
    await driver.receive(init());
    const pending = driver.receive(req(7, 'wait'));
    await tick();
    await driver.receive(note('notifications/cancelled', { requestId: 7, reason: 'user' }));
    expect(seen.signals[0].aborted).toBe(true);
    expect(await pending).toBeUndefined();
    expect(seen.notifications).toEqual([]);
  });
});

describe('LegacySessionDriver requests', () => {
  it('routes a request to the session and answers its response', async () => {
    const { driver } = harness();
    await driver.receive(init());
    expect(await driver.receive(req('a', 'echo', { x: 1 }))).toEqual({ jsonrpc: '2.0', id: 'a', result: { echoed: { x: 1 } } });
  });

  it('refuses a request id that is already in flight', async () => {
    const { driver } = harness();
    await driver.receive(init());
    const first = driver.receive(req(5, 'wait'));
    await tick();
    expect(await driver.receive(req(5, 'echo'))).toMatchObject({ id: 5, error: { code: -32600 } });
    await driver.close('test');
    expect(await first).toMatchObject({ id: 5, error: { code: -32800 } });
  });

  it('ctx.notify writes on the related stream when given, else on send', async () => {
    const { driver, sent } = harness();
    await driver.receive(init());
    const related: JSONRPCMessage[] = [];
    await driver.receive(req(1, 'progress'), { send: (m) => (related.push(m), true) });
    expect(related).toMatchObject([{ method: 'notifications/progress' }]);
    expect(sent).toEqual([]);
    await driver.receive(req(2, 'progress'));
    expect(sent).toMatchObject([{ method: 'notifications/progress' }]);
  });

  it('ctx.request mints an id and resolves with the client result', async () => {
    const { driver, sent } = harness();
    await driver.receive(init());
    const call = driver.receive(req(1, 'ask'));
    await tick();
    expect(sent).toEqual([{ jsonrpc: '2.0', id: 'mcp-bridge-1', method: 'elicitation/create', params: { message: 'name?' } }]);
    expect(await driver.receive({ jsonrpc: '2.0', id: 'mcp-bridge-1', result: { action: 'accept', content: { n: 'x' } } })).toBeUndefined();
    expect(await call).toEqual({ jsonrpc: '2.0', id: 1, result: { answer: { action: 'accept', content: { n: 'x' } } } });
  });

  it('a client error response rejects ctx.request with that RpcError', async () => {
    const { driver } = harness();
    await driver.receive(init());
    const call = driver.receive(req(1, 'ask'));
    await tick();
    await driver.receive({ jsonrpc: '2.0', id: 'mcp-bridge-1', error: { code: -32601, message: 'no elicitation' } });
    expect(await call).toMatchObject({ id: 1, error: { code: -32601, message: 'no elicitation' } });
  });

  it('an unanswered server→client request rejects after inputTimeoutMs and the client is told', async () => {
    const { driver, sent } = harness({ inputTimeoutMs: 20 });
    await driver.receive(init());
    expect(await driver.receive(req(1, 'ask'))).toMatchObject({ id: 1, error: { code: -32603, message: expect.stringContaining('20 ms') } });
    expect(sent[1]).toEqual({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'mcp-bridge-1', reason: expect.any(String) } });
  });

  it('channel.notify and channel.request use send', async () => {
    const { driver, sent, channel } = harness();
    await driver.receive(init());
    expect(channel().notify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' } as JSONRPCNotification)).toBe(true);
    const roots = channel().request('roots/list', undefined);
    await driver.receive({ jsonrpc: '2.0', id: 'mcp-bridge-1', result: { roots: [] } });
    expect(await roots).toEqual({ roots: [] });
    expect(sent.map((m) => ('method' in m ? m.method : ''))).toEqual(['notifications/tools/list_changed', 'roots/list']);
  });
});

describe('LegacySessionDriver batches', () => {
  it('2025-03-26: answers an array with one response per request, none for notifications', async () => {
    const { driver, seen } = harness({ version: '2025-03-26' });
    await driver.receive(init(0, '2025-03-26'));
    const answer = await driver.receive([req(1, 'echo', { a: 1 }), note('notifications/roots/list_changed'), req(2, 'ping')]);
    expect(answer).toEqual([
      { jsonrpc: '2.0', id: 1, result: { echoed: { a: 1 } } },
      { jsonrpc: '2.0', id: 2, result: {} },
    ]);
    expect(seen.notifications).toHaveLength(1);
  });

  const refused: Array<[string, string, unknown[]]> = [
    ['2025-06-18 batch', '2025-06-18', [req(1, 'echo')]],
    ['empty batch', '2025-03-26', []],
  ];
  it.each(refused)('%s → one -32600 with id null', async (_n, version, batch) => {
    const { driver } = harness({ version });
    await driver.receive(init(0, version));
    expect(await driver.receive(batch)).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it('initialize inside a batch is refused for that element', async () => {
    const { driver } = harness({ version: '2025-03-26' });
    await driver.receive(init(0, '2025-03-26'));
    expect(await driver.receive([init(9, '2025-03-26'), req(1, 'ping')])).toMatchObject([{ id: 9, error: { code: -32600 } }, { id: 1, result: {} }]);
  });
});

describe('LegacySessionDriver close', () => {
  it('aborts in-flight requests, rejects pending client requests, closes the session once, tells listeners', async () => {
    const { driver, seen } = harness();
    await driver.receive(init());
    const waiting = driver.receive(req(1, 'wait'));
    const asking = driver.receive(req(2, 'ask'));
    await tick();
    let closed = 0;
    driver.onClose(() => closed++);
    await driver.close('bye');
    await driver.close('again');
    expect(seen.signals[0].aborted).toBe(true);
    expect(await waiting).toMatchObject({ id: 1, error: { code: -32800 } });
    expect(await asking).toMatchObject({ id: 2, error: { code: -32603, message: expect.stringContaining('bye') } });
    expect(seen.closed).toBe(1);
    expect(closed).toBe(1);
    expect(await driver.receive(req(3, 'echo'))).toMatchObject({ id: 3, error: { code: -32603 } });
  });
});
