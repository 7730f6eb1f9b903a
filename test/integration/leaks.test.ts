import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fdCount, report, sleep, spawnBridge, waitUntil, type SpawnedBridge } from '../helpers/faults.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';
import { childPidsOf } from '../helpers/proc.js';

/**
 * Issue 6, Load: open and close 1,000 downstream sessions (Streamable HTTP,
 * http+sse, WebSocket: initialize, one echo, close) and 1,000 listens (GET
 * streams and 2026-07-28 `subscriptions/listen`), then check the bridge has
 * nothing left: no child processes beyond its pool's, no extra file
 * descriptors, no parked calls, sessions, listens or calls in flight, and RSS
 * back within 10% of its level before (node --expose-gc; `GET /debug/stats`
 * collects garbage first). A warm-up round of the same size comes first, so
 * the "before" figures include what a busy bridge keeps anyway (allocator
 * arenas, JIT code): the second round must add nothing.
 * The clients run in a process of their own (test/fixtures/leak-churn.mjs).
 */

type Stats = {
  inflight: number;
  children: number;
  pool: { sessions: number; leased: number; queued: number };
  parked: number;
  listens: number;
  face: { streamableHttpSessions: number; sseSessions: number; wsSessions: number; modernRequests: number };
  memory: { gc: boolean; rss: number; heapUsed: number };
};

const POOL_MAX = 4;
/** Each stdio child holds stdin, stdout and stderr (socket pairs) in the bridge. */
const FDS_PER_CHILD = 3;
/** 1,000 sessions (initialize, echo, close) and 1,000 listens: 400 of them GET streams of the Streamable HTTP sessions. */
const ROUND = { streamable: 400, sse: 300, ws: 300, listens: 600 };
const CHURN_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'leak-churn.mjs');

let bridge: SpawnedBridge;
/** `connection: close`: the stats request's own socket is not left open to be counted. */
const stats = async (): Promise<Stats> => (await fetch(`${bridge.url}/debug/stats`, { headers: { connection: 'close' } })).json() as Promise<Stats>;

/**
 * Runs the client side in a process of its own (test/fixtures/leak-churn.mjs):
 * once it has exited, no connection of a client is left, so anything the bridge
 * still holds is its own.
 */
function churn(counts: { streamable: number; sse: number; ws: number; listens: number }): Promise<{ jobs: number; failures: number; errors: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHURN_SCRIPT, bridge.url, JSON.stringify(counts), '16'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`leak-churn exited ${code} without a report: ${out}`));
      }
    });
  });
}

interface Snapshot {
  stats: Stats;
  fds: number;
  /** fds minus the children's pipes: what sessions, sockets and streams hold. */
  ownFds: number;
  childPids: number[];
}

/** Waits until nothing is open, then records the figures (the lowest RSS of a few samples, each after a full GC). */
async function settle(): Promise<Snapshot> {
  await waitUntil(
    'the bridge to have nothing open',
    async () => {
      const st = await stats();
      const open = st.inflight + st.pool.leased + st.pool.queued + st.parked + st.listens + st.face.streamableHttpSessions + st.face.sseSessions + st.face.wsSessions + st.face.modernRequests;
      return open === 0 ? st : undefined;
    },
    20_000,
  );
  // Children the pool was still opening when the last call ended finish their initialize: each alive child is a pooled session.
  await waitUntil(
    'every child of the bridge to be a pooled session',
    async () => {
      const st = await stats();
      return st.children === st.pool.sessions && childPidsOf(bridge.pid).length === st.children ? st : undefined;
    },
    20_000,
  );
  // The lowest of a few samples: a socket being closed (this very stats request's) may still be counted.
  // The pauses space the samples out; RSS and fd noise has no event to wait for.
  let best: Snapshot | undefined;
  for (let i = 0; i < 5; i++) {
    const st = await stats();
    await sleep(200);
    const fds = fdCount(bridge.pid);
    const snap = { stats: st, fds, ownFds: fds - FDS_PER_CHILD * st.children, childPids: childPidsOf(bridge.pid) };
    if (!best) best = snap;
    else {
      if (snap.stats.memory.rss < best.stats.memory.rss) best = { ...best, stats: snap.stats, childPids: snap.childPids };
      if (snap.ownFds < best.ownFds) best = { ...best, fds: snap.fds, ownFds: snap.ownFds };
    }
    await sleep(100);
  }
  return best!;
}

describe('leaks: 1,000 sessions and 1,000 listens opened and closed', () => {
  beforeAll(async () => {
    bridge = await spawnBridge(['--log-level', 'warn', '--debug-stats', '--pool-max', String(POOL_MAX), '--pool-idle', '600000', '--', ...EVERYTHING_STDIO_COMMAND], {
      nodeArgs: ['--expose-gc'],
    });
  }, 60_000);

  afterAll(async () => {
    await bridge?.close();
  });

  it('leaves no child beyond the pool, no file descriptor, no parked call or listen, and RSS within 10%', async () => {
    // Warm-up at full scale: RSS includes allocator arenas and buffers a busy bridge keeps; the second round must add nothing.
    const warm = await churn(ROUND);
    expect(warm.failures, warm.errors.join('; ')).toBe(0);
    const before = await settle();
    expect(before.stats.memory.gc).toBe(true);

    const started = Date.now();
    const run = await churn(ROUND);
    const churnMs = Date.now() - started;
    expect(run.jobs).toBe(1_600);
    expect(run.failures, run.errors.join('; ')).toBe(0);
    const after = await settle();

    const rssRatio = after.stats.memory.rss / before.stats.memory.rss;
    report('leaks (1,000 sessions: 400 Streamable HTTP, 300 http+sse, 300 WebSocket; 1,000 listens: 400 GET streams, 600 subscriptions/listen)', {
      churnMs,
      childrenBefore: before.childPids.length,
      childrenAfter: after.childPids.length,
      poolSessionsAfter: after.stats.pool.sessions,
      fdsBefore: before.fds,
      fdsAfter: after.fds,
      ownFdsBefore: before.ownFds,
      ownFdsAfter: after.ownFds,
      parkedAfter: after.stats.parked,
      listensAfter: after.stats.listens,
      rssBeforeMiB: before.stats.memory.rss / 2 ** 20,
      rssAfterMiB: after.stats.memory.rss / 2 ** 20,
      rssChangePercent: (rssRatio - 1) * 100,
      heapBeforeMiB: before.stats.memory.heapUsed / 2 ** 20,
      heapAfterMiB: after.stats.memory.heapUsed / 2 ** 20,
    });

    // Children: only the pool's, each one a pooled session, never more than --pool-max.
    expect(after.childPids.length).toBe(after.stats.children);
    expect(after.stats.children).toBe(after.stats.pool.sessions);
    expect(after.stats.children).toBeLessThanOrEqual(POOL_MAX);
    // File descriptors: nothing beyond the children's pipes and what was open before.
    expect(after.ownFds).toBeLessThanOrEqual(before.ownFds);
    // Nothing parked, listening or in flight.
    expect(after.stats).toMatchObject({ inflight: 0, parked: 0, listens: 0, pool: { leased: 0, queued: 0 } });
    expect(after.stats.face).toEqual({ streamableHttpSessions: 0, sseSessions: 0, wsSessions: 0, modernRequests: 0 });
    expect(rssRatio).toBeLessThanOrEqual(1.1);
  }, 180_000);
});
