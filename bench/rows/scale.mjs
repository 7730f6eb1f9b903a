// Row 7, scale (issue 17): one mcp-bridge in front of server-everything stdio
// holds 10,000 idle legacy sessions and then 10,000 open listens as well. RSS
// of the tree is read after every batch (the chart of RSS over items), every
// open is checked, and c = 8 modern echo calls run before any idle load and
// again with all of it in place: their p99 must stay within 1.2×.
import { execFileSync } from 'node:child_process';
import { measureRow } from '../lib/cells.mjs';
import { openLegacySession } from '../lib/mcp-wire.mjs';
import { treeMemory } from '../lib/proc-tree.mjs';
import { knownBridgeFlags } from '../lib/spawn.mjs';
import { listenOpener } from '../lib/streams.mjs';
import { startWrapper } from '../lib/wrappers.mjs';
import { modernWorkers } from '../lib/workers.mjs';

const COUNTS = { full: { n: 10_000, batch: 500 }, quick: { n: 1_000, batch: 250 } };
const OPEN_PARALLEL = 32;
/** Descriptors a process needs here: one per listen on each side, plus room. */
const NOFILE = 65_536;
const ECHO_C = 8;
/** Opened before the figures start, of each kind. */
const WARM = 20;

/**
 * Raises this process's descriptor limit (10,000 listens are 10,000 sockets on
 * each side): prlimit on our own pid needs root or a hard limit already that
 * high. Node raises its soft limit to the hard one at start, so the bridge,
 * spawned after, inherits the room. Returns the limit in force.
 */
function raiseFdLimit(log) {
  let raised = true;
  try {
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${NOFILE}:${NOFILE}`], { stdio: 'ignore' });
  } catch {
    raised = false;
  }
  let limit;
  try {
    limit = Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim());
  } catch {
    limit = undefined;
  }
  if (!raised) log(`row 7: prlimit could not raise the descriptor limit to ${NOFILE} (not root, or a container's cap); ${limit ?? 'unknown'} in force`);
  return limit;
}

/**
 * Least squares of y over x: slope and R², and the slopes of the first and
 * second half (growth that speeds up as items pile on is what "linear" rules
 * out; V8 growing its heap in steps is what keeps R² of an RSS curve below 1).
 */
export function fit(points) {
  const half = Math.floor(points.length / 2);
  return { ...line(points), firstHalf: line(points.slice(0, half + 1)).slope, secondHalf: line(points.slice(half)).slope };
}

function line(points) {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const p of points) {
    sxy += (p.x - mx) * (p.y - my);
    sxx += (p.x - mx) ** 2;
    syy += (p.y - my) ** 2;
  }
  const slope = sxx > 0 ? sxy / sxx : NaN;
  return { slope, r2: sxx > 0 && syy > 0 ? (sxy * sxy) / (sxx * syy) : NaN };
}

/** Opens `n` items with `addOne`, OPEN_PARALLEL at a time, reading RSS after each batch; counts failures instead of stopping. */
async function grow({ root, n, batch, addOne, phase, base, points, log }) {
  let errors = 0;
  let firstError;
  const t0 = performance.now();
  for (let done = 0; done < n; ) {
    const upTo = Math.min(n, done + batch);
    while (done < upTo) {
      const k = Math.min(OPEN_PARALLEL, upTo - done);
      const results = await Promise.allSettled(Array.from({ length: k }, () => addOne()));
      for (const r of results) if (r.status === 'rejected') (errors += 1), (firstError ??= String(r.reason?.message ?? r.reason));
      done += k;
    }
    points.push({ phase, items: base + done, open: done, rssKiB: treeMemory(root).rssKiB });
  }
  const seconds = (performance.now() - t0) / 1000;
  log(`row 7 ${phase}: ${n} opened in ${seconds.toFixed(1)} s, ${errors} errors${firstError ? ` (${firstError.slice(0, 120)})` : ''}, tree RSS ${(points.at(-1).rssKiB / 1024).toFixed(0)} MiB`);
  return { errors, firstError, seconds };
}

/** c = 8 echo calls on the instance, one cell (the row's plan). */
async function echoCell(ctx, w, label) {
  const target = { id: 'mcp-bridge', label, roots: () => [w.proc.pid], workers: async (c) => modernWorkers(ctx.undici, w.mcpUrl, c) };
  const [cell] = await measureRow({ row: 7, targets: [target], concurrencies: [ECHO_C], plan: ctx.plan, log: ctx.log });
  return cell;
}

export async function rowScale(ctx) {
  // BENCH_SCALE_N=10000 with --quick: the full scale with the quick run's short echo cells (checking the harness at size).
  const n = Number(process.env.BENCH_SCALE_N) > 0 ? Math.floor(Number(process.env.BENCH_SCALE_N)) : COUNTS[ctx.mode].n;
  const { batch } = COUNTS[ctx.mode];
  const fdLimit = raiseFdLimit(ctx.log);
  // Each listen is a socket on each side; sessions hold none (they are opened over a small pool).
  if (fdLimit !== undefined && fdLimit < n + 1_000) ctx.log(`row 7: a descriptor limit of ${fdLimit} is short of ${n} listens: expect errors`);
  const room = String(n + WARM + 1_000);
  const w = await startWrapper('mcp-bridge', { ...ctx, bridgeArgs: knownBridgeFlags([['--max-sessions', room], ['--max-listens', room], ['--session-idle', String(3_600_000)]]) });
  const { origin, pathname } = new URL(w.mcpUrl);
  const opener = new ctx.undici.Pool(origin, { connections: OPEN_PARALLEL, headersTimeout: 60_000 });
  const holder = new ctx.undici.Pool(origin, { connections: n + WARM + 64, headersTimeout: 60_000, bodyTimeout: 0 });
  const bodies = [];
  try {
    // A few of each first, not counted: the first legacy session and the first listen start what every later one shares (an upstream child).
    const openSession = () => openLegacySession(opener, pathname);
    const openListen = listenOpener(holder, pathname, bodies);
    await Promise.all(Array.from({ length: WARM }, () => openSession()));
    await Promise.all(Array.from({ length: WARM }, () => openListen()));
    const idle = await echoCell(ctx, w, `echo c=8, no idle load (${WARM} sessions + ${WARM} listens)`);
    const root = w.proc.pid;
    const points = [{ phase: 'start', items: 0, open: 0, rssKiB: treeMemory(root).rssKiB }];
    const sessions = await grow({ root, n, batch, phase: 'idle legacy sessions', base: 0, points, log: ctx.log, addOne: openSession });
    const listens = await grow({ root, n, batch, phase: 'open listens', base: n, points, log: ctx.log, addOne: openListen });
    const loaded = await echoCell(ctx, w, `echo c=8, with ${n} idle sessions + ${n} listens`);
    const fits = {
      sessions: fit(points.filter((p) => p.phase !== 'open listens').map((p) => ({ x: p.items, y: p.rssKiB }))),
      listens: fit(points.filter((p) => p.phase === 'open listens' || p.items === n).map((p) => ({ x: p.items, y: p.rssKiB }))),
    };
    ctx.log(`row 7 p99 of echo c=8: ${idle.p99Ms.toFixed(2)} ms idle → ${loaded.p99Ms.toFixed(2)} ms loaded (${(loaded.p99Ms / idle.p99Ms).toFixed(2)}×); RSS ${fits.sessions.slope.toFixed(1)} KiB/session (R² ${fits.sessions.r2.toFixed(3)}), ${fits.listens.slope.toFixed(1)} KiB/listen (R² ${fits.listens.r2.toFixed(3)})`);
    return [
      { ...idle, phase: 'idle' },
      { ...loaded, phase: 'loaded' },
      { row: 7, kind: 'scale', target: 'mcp-bridge', label: 'mcp-bridge → server-everything stdio', n, fdLimit, points, fits, sessions, listens, p99Ratio: loaded.p99Ms / idle.p99Ms },
    ];
  } finally {
    for (const b of bodies) b.destroy();
    await holder.destroy().catch(() => undefined);
    await opener.destroy().catch(() => undefined);
    await w.proc.stop();
  }
}
