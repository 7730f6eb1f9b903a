// Runs one row's cells: for each concurrency, every target gets a warm-up,
// then the measured time in rounds that alternate between targets, so drift
// in the machine's load (other work on the 2 cores) hits all of them alike.
import { CellStats, runSlice } from './load.mjs';
import { cpuOf, ownCpuSeconds, treePids } from './proc-tree.mjs';

const processCount = (roots) => roots.reduce((n, r) => n + treePids(r).length, 0);

/**
 * Warms a target up, then keeps going until its process tree has stopped
 * changing and its CPU per call has stopped falling (children a pool spawns
 * for this concurrency boot before the clock starts), within a bound.
 */
async function warmUp(x, plan, cold) {
  const slice = async (durationMs) => {
    const stats = new CellStats(1);
    await runSlice({ senders: x.w.senders, durationMs, maxCalls: plan.maxCalls, stats, cpu: () => cpuOf(x.t.roots()) });
    return stats.calls > 0 ? stats.cpuS / stats.calls : Infinity;
  };
  let count = processCount(x.t.roots());
  // A fresh process compiles its hot paths for seconds (V8's compiler threads count in its CPU): the first
  // concurrency of a target gets the longer warm-up, so its cell measures calls, not the JIT.
  let perCall = await slice(cold ? plan.coldWarmupMs ?? plan.warmupMs : plan.warmupMs);
  for (let i = 0; i < plan.maxSettleSlices; i++) {
    const nowCount = processCount(x.t.roots());
    const nowPerCall = await slice(plan.settleSliceMs);
    const steady = nowCount === count && nowPerCall >= perCall * 0.8;
    count = nowCount;
    perCall = nowPerCall;
    if (steady) return;
  }
}

/**
 * A target: `{ id, label, roots(): pid[], upstreamRoots?(): pid[],
 * workers(c): Promise<{ senders, close, sessionMs }>, rounds?, warmup? }`.
 * `roots` is the process tree under test; `upstreamRoots` a separate server
 * whose CPU is reported beside it. Resolves with one cell per target × c.
 */
export async function measureRow({ row, targets, concurrencies, plan, log }) {
  const cells = [];
  for (const c of concurrencies) {
    const live = [];
    for (const t of targets) {
      try {
        live.push({ t, w: await t.workers(c), stats: new CellStats(plan.maxCalls * plan.rounds) });
      } catch (err) {
        log(`row ${row} ${t.label} c=${c}: could not prepare: ${err.message}`);
        cells.push({ row, target: t.id, label: t.label, concurrency: c, failed: err.message.slice(0, 300) });
      }
    }
    try {
      for (const x of live) if (x.t.warmup !== false) await warmUp(x, plan, c === concurrencies[0]);
      for (let r = 0; r < plan.rounds; r++) {
        // Rotate the order each round: no target always runs right after another's burst.
        for (let k = 0; k < live.length; k++) {
          const x = live[(k + r) % live.length];
          const rounds = x.t.rounds ?? plan.rounds;
          if (r >= rounds) continue;
          const outcome = await runSlice({
            senders: x.w.senders,
            durationMs: plan.measureMs / rounds,
            maxCalls: plan.maxCalls,
            stats: x.stats,
            cpu: () => cpuOf(x.t.roots()),
            rootCpu: () => ownCpuSeconds(x.t.roots()[0]),
            upstreamCpu: x.t.upstreamRoots ? () => cpuOf(x.t.upstreamRoots()) : undefined,
          });
          if (outcome === 'drain-timeout') x.drainTimeout = true;
        }
      }
    } finally {
      for (const x of live) await x.w.close();
    }
    for (const x of live) {
      const s = x.stats.summary();
      const cell = { row, target: x.t.id, label: x.t.label, concurrency: c, ...s };
      if (x.w.sessionMs.length > 0) cell.sessionOpenMsMax = Math.max(...x.w.sessionMs);
      if (x.drainTimeout) cell.note = 'calls still in flight at the drain limit were abandoned';
      cells.push(cell);
      log(`row ${row} ${x.t.label.padEnd(28)} c=${String(c).padStart(2)}  ${s.callsPerS.toFixed(0).padStart(6)} calls/s  p50 ${s.p50Ms.toFixed(2)} ms  p99 ${s.p99Ms.toFixed(2)} ms  CPU ${s.cpuUsPerCall.toFixed(0)} µs/call (root ${s.rootCpuUsPerCall.toFixed(0)})${s.errors ? `  errors ${s.errors} (${s.firstError})` : ''}`);
    }
  }
  return cells;
}
