import type { JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { ModernHandler, ModernRequestContext } from '../../src/contracts/downstream.js';
import type { UpstreamFacts } from '../../src/contracts/upstream.js';
import { configFromFlags } from '../../src/daemon/config-from-flags.js';
import { InflightCalls } from '../../src/daemon/inflight-calls.js';
import { probeUntilUp } from '../../src/daemon/wait-for-upstream.js';
import { BridgeError } from '../../src/errors.js';
import { mayRetry, safeRetry } from '../../src/links/safe-retry.js';
import { SessionMemo } from '../../src/links/session-memo.js';
import { silentLogger } from '../../src/log.js';

/** A fetch failure as undici reports it: TypeError('fetch failed') with the socket error as cause. */
function fetchFailed(code: string): Error {
  return Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) });
}

describe('mayRetry: which failed requests the modern HTTP link sends again', () => {
  const cases: Array<{ method: string; code?: string; retry: boolean; why: string }> = [
    { method: 'tools/list', code: 'ECONNRESET', retry: true, why: 'a read may be repeated' },
    { method: 'resources/read', code: 'UND_ERR_SOCKET', retry: true, why: 'a read may be repeated' },
    { method: 'server/discover', retry: true, why: 'a read may be repeated whatever failed' },
    { method: 'prompts/get', code: 'ECONNRESET', retry: true, why: 'a read may be repeated' },
    { method: 'tools/call', code: 'ECONNRESET', retry: false, why: 'the tool may have run' },
    { method: 'tools/call', code: 'UND_ERR_SOCKET', retry: false, why: 'the tool may have run' },
    { method: 'tools/call', retry: false, why: 'unknown failure, unsafe method' },
    { method: 'tools/call', code: 'ECONNREFUSED', retry: true, why: 'a refused connection sent nothing' },
    { method: 'subscriptions/listen', code: 'ECONNRESET', retry: false, why: 'its keeper re-opens it' },
    { method: 'subscriptions/listen', code: 'ECONNREFUSED', retry: true, why: 'a refused connection sent nothing' },
    { method: 'vendor/thing', code: 'ECONNRESET', retry: false, why: 'unknown methods are unsafe' },
  ];
  it.each(cases)('$method after $code → $retry ($why)', ({ method, code, retry }) => {
    expect(mayRetry(method, code ? fetchFailed(code) : new Error('boom'))).toBe(retry);
  });
});

describe('safeRetry', () => {
  const opts = { logger: silentLogger, baseDelayMs: 1 };

  it('retries a refused connection with backoff until it answers', async () => {
    let attempts = 0;
    const attempt = async () => {
      if (++attempts < 3) throw fetchFailed('ECONNREFUSED');
      return 'answered';
    };
    expect(await safeRetry('tools/call', opts, undefined, attempt)).toBe('answered');
    expect(attempts).toBe(3);
  });

  it('gives up after `retries` attempts with the last error', async () => {
    let attempts = 0;
    const attempt = async () => {
      attempts++;
      throw fetchFailed('ECONNREFUSED');
    };
    await expect(safeRetry('tools/list', { ...opts, retries: 2 }, undefined, attempt)).rejects.toThrow('fetch failed');
    expect(attempts).toBe(3);
  });

  it('does not retry an unsafe method whose connection broke, nor an aborted request', async () => {
    let attempts = 0;
    const reset = async () => {
      attempts++;
      throw fetchFailed('ECONNRESET');
    };
    await expect(safeRetry('tools/call', opts, undefined, reset)).rejects.toThrow();
    expect(attempts).toBe(1);
    const ac = new AbortController();
    ac.abort();
    await expect(safeRetry('tools/list', opts, ac.signal, reset)).rejects.toThrow();
    expect(attempts).toBe(2);
  });
});

describe('SessionMemo: what a re-initialized session is given again', () => {
  const cases: Array<{ name: string; calls: Array<[string, Record<string, unknown> | undefined, boolean]>; replay: Array<[string, unknown]> }> = [
    { name: 'nothing set', calls: [['tools/list', undefined, true]], replay: [] },
    { name: 'the last log level', calls: [['logging/setLevel', { level: 'info' }, true], ['logging/setLevel', { level: 'debug' }, true]], replay: [['logging/setLevel', { level: 'debug' }]] },
    { name: 'a refused call changes nothing', calls: [['logging/setLevel', { level: 'info' }, false]], replay: [] },
    {
      name: 'subscriptions minus unsubscriptions, level first',
      calls: [
        ['resources/subscribe', { uri: 'a://1' }, true],
        ['resources/subscribe', { uri: 'a://2' }, true],
        ['resources/unsubscribe', { uri: 'a://1' }, true],
        ['logging/setLevel', { level: 'warning' }, true],
      ],
      replay: [
        ['logging/setLevel', { level: 'warning' }],
        ['resources/subscribe', { uri: 'a://2' }],
      ],
    },
  ];
  it.each(cases)('$name', ({ calls, replay }) => {
    const memo = new SessionMemo();
    for (const [method, params, ok] of calls) memo.remember(method, params, ok ? { result: {} } : { error: { code: -32603, message: 'no' } });
    expect(memo.replay().map((r) => [r.method, r.params])).toEqual(replay);
  });
});

describe('InflightCalls: graceful stop', () => {
  function handler() {
    const pending: Array<() => void> = [];
    let drained = 0;
    const h: ModernHandler = {
      handle: (req: JSONRPCRequest) => new Promise<JSONRPCResponse>((resolve) => pending.push(() => resolve({ jsonrpc: '2.0', id: req.id, result: {} }))),
      drain: () => void drained++,
      close: async () => undefined,
    };
    return { h, pending, drained: () => drained };
  }
  const ctx = { signal: new AbortController().signal, notify: () => undefined, transport: 'http' } as ModernRequestContext;
  const req = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call' }) as JSONRPCRequest;

  it('waits for calls in flight, ends listens through drain(), and refuses new calls', async () => {
    const calls = new InflightCalls();
    const { h, pending, drained } = handler();
    const wrapped = calls.wrapModern(h);
    const first = wrapped.handle(req(1), ctx);
    expect(calls.size).toBe(1);
    const idle = calls.drain(5_000);
    expect(drained()).toBe(1);
    expect(await wrapped.handle(req(2), ctx)).toMatchObject({ id: 2, error: { code: -32603, message: 'mcp-bridge is shutting down' } });
    pending[0]();
    expect(await first).toMatchObject({ id: 1, result: {} });
    expect(await idle).toBe(true);
  });

  it('resolves false at the deadline, or at once when hurried', async () => {
    const calls = new InflightCalls();
    const { h } = handler();
    void calls.wrapModern(h).handle(req(1), ctx);
    expect(await calls.drain(20)).toBe(false);
    const hurry = new AbortController();
    const p = calls.drain(60_000, hurry.signal);
    hurry.abort();
    expect(await p).toBe(false);
    expect(calls.size).toBe(1);
  });
});

describe('probeUntilUp (--wait-for-upstream)', () => {
  const facts = { epoch: 'initialize', transport: 'stdio', protocolVersion: '2025-11-25', capabilities: {} } as UpstreamFacts;
  const unreachable = () => new BridgeError('BRIDGE_ERR_UPSTREAM_UNREACHABLE', 'cannot reach http://127.0.0.1:1/mcp: ECONNREFUSED');

  it('tries again while the upstream is unreachable, then answers with its facts', async () => {
    let attempts = 0;
    const got = await probeUntilUp(
      async () => {
        if (++attempts < 4) throw unreachable();
        return facts;
      },
      { waitMs: 5_000, logger: silentLogger, baseDelayMs: 1 },
    );
    expect(got).toBe(facts);
    expect(attempts).toBe(4);
  });

  it('throws any other failure at once', async () => {
    let attempts = 0;
    const notMcp = new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', 'not MCP');
    await expect(
      probeUntilUp(
        async () => {
          attempts++;
          throw notMcp;
        },
        { waitMs: 5_000, logger: silentLogger, baseDelayMs: 1 },
      ),
    ).rejects.toBe(notMcp);
    expect(attempts).toBe(1);
  });

  it('gives up after waitMs, saying how long it waited', async () => {
    await expect(probeUntilUp(async () => Promise.reject(unreachable()), { waitMs: 60, logger: silentLogger, baseDelayMs: 10 })).rejects.toThrow(
      /ECONNREFUSED \(still unreachable after waiting \d+ ms, \d+ attempts; see --wait-for-upstream\)/,
    );
  });
});

describe('configFromFlags: the fault flags', () => {
  const cases: Array<{ flags: Record<string, unknown>; expected: Record<string, unknown> }> = [
    { flags: {}, expected: { waitForUpstreamMs: undefined, shutdownTimeoutMs: 10_000, debugStats: false } },
    { flags: { waitForUpstream: true }, expected: { waitForUpstreamMs: Infinity } },
    { flags: { waitForUpstream: '1500' }, expected: { waitForUpstreamMs: 1500 } },
    { flags: { shutdownTimeout: '0' }, expected: { shutdownTimeoutMs: 0 } },
    { flags: { debugStats: true }, expected: { debugStats: true } },
  ];
  it.each(cases)('$flags', ({ flags, expected }) => {
    expect(configFromFlags(flags, ['node', 'server.js'], {})).toMatchObject(expected);
  });

  it.each([{ waitForUpstream: 'soon' }, { waitForUpstream: '0' }, { shutdownTimeout: '-1' }])('refuses %o', (flags) => {
    expect(() => configFromFlags(flags, ['node', 'server.js'], {})).toThrow(BridgeError);
  });
});
