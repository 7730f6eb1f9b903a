import type { InitializeResult } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { LegacyLink, LegacyUpstreamSession, UnsolicitedHandlers, UpstreamInit } from '../../src/contracts/upstream.js';
import { BridgeError, RpcError } from '../../src/errors.js';
import type { RpcOutcome } from '../../src/jsonrpc/messages.js';
import { SessionPool } from '../../src/links/session-pool.js';
import { silentLogger } from '../../src/log.js';
import { waitFor } from '../helpers/wait-for.js';

/** An in-memory legacy session: the pool's scheduling is under test, not a transport. */
class MemorySession implements LegacyUpstreamSession {
  static count = 0;
  readonly id = `mem-${++MemorySession.count}`;
  readonly initializeResult = { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'mem', version: '0' } } as InitializeResult;
  closed = false;
  unsolicited: UnsolicitedHandlers | undefined;
  private listeners: Array<(r: string) => void> = [];
  constructor(
    readonly init: UpstreamInit,
    readonly correlates: boolean,
  ) {}
  async call(): Promise<RpcOutcome> {
    return { result: {} };
  }
  async notify(): Promise<void> {}
  setUnsolicitedHandlers(h: UnsolicitedHandlers | undefined): void {
    this.unsolicited = h;
  }
  onClose(l: (r: string) => void): void {
    this.listeners.push(l);
  }
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const l of this.listeners.splice(0)) l('closed');
  }
}

class MemoryLink implements LegacyLink {
  readonly kind = 'stdio' as const;
  readonly opened: MemorySession[] = [];
  /** performance.now() at each openSession call. */
  readonly openedAt: number[] = [];
  failNext = 0;
  constructor(private readonly correlates = false) {}
  async openSession(init: UpstreamInit): Promise<LegacyUpstreamSession> {
    this.openedAt.push(performance.now());
    await Promise.resolve();
    if (this.failNext > 0) {
      this.failNext--;
      throw new BridgeError('BRIDGE_ERR_UPSTREAM_UNREACHABLE', 'cannot start');
    }
    const s = new MemorySession(init, this.correlates);
    this.opened.push(s);
    return s;
  }
  async close(): Promise<void> {}
}

const tick = () => new Promise((r) => setTimeout(r, 5));
const init = (capabilities: Record<string, unknown> = {}, protocolVersion = '2025-06-18'): UpstreamInit => ({
  protocolVersion,
  capabilities,
  clientInfo: { name: 'c', version: '1' },
});

const pools: SessionPool[] = [];
function newPool(link: LegacyLink, max = 2, idleMs = 60_000): SessionPool {
  const pool = new SessionPool(link, { max, idleMs, logger: silentLogger });
  pools.push(pool);
  return pool;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe('SessionPool.keyOf', () => {
  const cases: Array<[string, UpstreamInit, UpstreamInit, boolean]> = [
    ['key order does not matter', init({ roots: { listChanged: true }, sampling: {} }), init({ sampling: {}, roots: { listChanged: true } }), true],
    ['nested key order does not matter', init({ elicitation: { form: {}, url: {} } }), init({ elicitation: { url: {}, form: {} } }), true],
    ['clientInfo does not matter', { ...init(), clientInfo: { name: 'a', version: '1' } }, { ...init(), clientInfo: { name: 'b', version: '2' } }, true],
    ['protocol version matters', init({}, '2025-06-18'), init({}, '2025-03-26'), false],
    ['a capability matters', init({ sampling: {} }), init({}), false],
    ['a nested capability matters', init({ roots: { listChanged: true } }), init({ roots: {} }), false],
  ];
  it.each(cases)('%s', (_name, a, b, same) => {
    expect(SessionPool.keyOf(a) === SessionPool.keyOf(b)).toBe(same);
  });
});

describe('SessionPool scheduling', () => {
  it('lets shared leases overlap on one session', async () => {
    const link = new MemoryLink();
    const pool = newPool(link);
    const [a, b] = await Promise.all([pool.acquire(init(), { exclusive: false }), pool.acquire(init(), { exclusive: false })]);
    expect(a.session).toBe(b.session);
    expect(link.opened).toHaveLength(1);
  });

  it('gives an exclusive lease a session of its own and queues FIFO past max', async () => {
    const link = new MemoryLink();
    const pool = newPool(link, 2);
    const a = await pool.acquire(init(), { exclusive: true });
    const b = await pool.acquire(init(), { exclusive: true });
    expect(a.session).not.toBe(b.session);
    const order: string[] = [];
    const c = pool.acquire(init(), { exclusive: true }).then((l) => (order.push('c'), l));
    const d = pool.acquire(init(), { exclusive: false }).then((l) => (order.push('d'), l));
    await tick();
    expect(pool.stats()).toEqual({ sessions: 2, leased: 2, queued: 2 });
    b.release();
    b.release(); // idempotent: must not free a second slot
    const cl = await c;
    expect(cl.session).toBe(b.session);
    await tick();
    expect(order).toEqual(['c']);
    a.release();
    expect((await d).session).toBe(a.session);
    expect(order).toEqual(['c', 'd']);
  });

  it('past eager, opens one more session only after the queue has stalled for growAfterMs', async () => {
    const link = new MemoryLink();
    const pool = new SessionPool(link, { max: 4, idleMs: 60_000, logger: silentLogger, eager: 1, growAfterMs: 40 });
    pools.push(pool);
    const a = await pool.acquire(init(), { exclusive: true });
    const started = performance.now();
    const lease = await pool.acquire(init(), { exclusive: true });
    expect(lease.session).not.toBe(a.session);
    expect(link.opened).toHaveLength(2);
    // The second session was asked for no sooner than growAfterMs into the stall (a timer is never early).
    expect(link.openedAt[1] - started).toBeGreaterThanOrEqual(39);
  });

  it('past eager, a queue that keeps moving is served by the sessions already open', async () => {
    const GROW_AFTER_MS = 100;
    const link = new MemoryLink();
    const pool = new SessionPool(link, { max: 4, idleMs: 60_000, logger: silentLogger, eager: 1, growAfterMs: GROW_AFTER_MS });
    pools.push(pool);
    const first = await pool.acquire(init(), { exclusive: true });
    const started = performance.now();
    const queued = Array.from({ length: 8 }, () => pool.acquire(init(), { exclusive: true }));
    // The queue moves every 25 ms, for longer than growAfterMs in all.
    const moves = [started];
    let lease = first;
    for (const next of queued) {
      await new Promise((r) => setTimeout(r, 25));
      moves.push(performance.now());
      lease.release();
      lease = await next;
    }
    lease.release();
    expect(moves[moves.length - 1] - started).toBeGreaterThan(GROW_AFTER_MS);
    // Only a real stall may grow the pool: a loaded machine can stretch a 25 ms step past growAfterMs.
    const stalls = moves.slice(1).filter((t, i) => t - moves[i] >= GROW_AFTER_MS).length;
    expect(link.opened.length - 1).toBeLessThanOrEqual(stalls);
  });

  it('treats exclusive as shared on sessions that correlate', async () => {
    const pool = newPool(new MemoryLink(true), 1);
    const a = await pool.acquire(init(), { exclusive: true });
    const b = await pool.acquire(init(), { exclusive: true });
    expect(a.session).toBe(b.session);
  });

  it('rejects a waiter with -32603 when its signal aborts, and removes it from the queue', async () => {
    const pool = newPool(new MemoryLink(), 1);
    await pool.acquire(init(), { exclusive: true });
    const ac = new AbortController();
    const waiting = pool.acquire(init(), { exclusive: true, signal: ac.signal });
    await tick();
    expect(pool.stats().queued).toBe(1);
    ac.abort();
    const err = await waiting.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).code).toBe(-32603);
    expect(pool.stats().queued).toBe(0);
  });

  it('evicts an idle session of another key when full', async () => {
    const link = new MemoryLink();
    const pool = newPool(link, 1);
    const a = await pool.acquire(init({ sampling: {} }), { exclusive: false });
    a.release();
    const b = await pool.acquire(init({ roots: {} }), { exclusive: false });
    expect(b.session).not.toBe(a.session);
    expect(a.session.closed).toBe(true);
    expect(pool.stats().sessions).toBe(1);
    expect(link.opened).toHaveLength(2);
  });

  it('answers one waiter with the error of a failed open, then opens again for the next', async () => {
    const link = new MemoryLink();
    link.failNext = 1;
    const pool = newPool(link, 1);
    const first = pool.acquire(init(), { exclusive: true });
    await expect(first).rejects.toMatchObject({ code: 'BRIDGE_ERR_UPSTREAM_UNREACHABLE' });
    const second = await pool.acquire(init(), { exclusive: true });
    expect(second.session.closed).toBe(false);
  });

  it('drops a session that closes, and the next acquire opens a fresh one', async () => {
    const link = new MemoryLink();
    const pool = newPool(link, 1);
    const a = await pool.acquire(init(), { exclusive: true });
    await a.session.close();
    expect(pool.stats().sessions).toBe(0);
    const b = await pool.acquire(init(), { exclusive: true });
    expect(b.session).not.toBe(a.session);
    a.release();
    expect(pool.stats()).toEqual({ sessions: 1, leased: 1, queued: 0 });
  });

  it('closes sessions idle past idleMs, but keeps an anchor while the pool has listeners', async () => {
    const pool = newPool(new MemoryLink(), 3, 30);
    const remove = pool.addListener({ notification: () => {} });
    const anchor = await pool.anchor(init());
    const other = await pool.acquire(init({ sampling: {} }), { exclusive: false });
    other.release();
    // The anchor has been idle at least as long as the other session: had it been let go, it would be closed by now.
    await waitFor(() => other.session.closed || undefined);
    expect(anchor.closed).toBe(false);
    remove();
    await waitFor(() => anchor.closed || undefined);
  });

  it('fans unsolicited notifications out to every listener and asks listeners in turn for requests', async () => {
    const pool = newPool(new MemoryLink());
    const seen: string[] = [];
    pool.addListener({ notification: (s, n) => seen.push(`1:${n.method}`), request: async () => Promise.reject(new RpcError(-32601, 'not mine')) });
    pool.addListener({ notification: (s, n) => seen.push(`2:${n.method}`), request: async (s) => ({ from: s.id }) });
    const lease = await pool.acquire(init(), { exclusive: false });
    const mem = lease.session as MemorySession;
    mem.unsolicited!.notification({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    expect(seen).toEqual(['1:notifications/tools/list_changed', '2:notifications/tools/list_changed']);
    expect(await mem.unsolicited!.request({ jsonrpc: '2.0', id: 1, method: 'roots/list' })).toEqual({ from: mem.id });
  });

  it('close() rejects waiters and closes every session', async () => {
    const link = new MemoryLink();
    const pool = newPool(link, 1);
    await pool.acquire(init(), { exclusive: true });
    const waiting = pool.acquire(init(), { exclusive: true });
    await pool.close();
    await expect(waiting).rejects.toMatchObject({ code: 'BRIDGE_ERR_CLOSED' });
    expect(link.opened.every((s) => s.closed)).toBe(true);
    await expect(pool.acquire(init(), { exclusive: false })).rejects.toBeInstanceOf(BridgeError);
  });
});
