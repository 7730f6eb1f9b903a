// Row 2: Streamable HTTP clients (2025-06-18 sessions) reaching server-everything
// over stdio through each wrapper. Each worker opens one session on its own
// connection, then calls `echo`; the tree under test is the wrapper and every
// child it spawned.
import { measureRow } from '../lib/cells.mjs';
import { percentile } from '../lib/load.mjs';
import { startWrapper, WRAPPERS } from '../lib/wrappers.mjs';
import { legacyWorkers, sessionOpenTimes } from '../lib/workers.mjs';

/** Sequential session opens per wrapper for the open-time column (each may spawn a child). */
const OPENS = { full: 10, quick: 3 };

export async function rowWrapStdio(ctx) {
  const started = [];
  try {
    // BENCH_ROW2_TARGETS=mcp-bridge-ops-off,mcp-bridge-ops-on measures only those (the cost of metrics and traces).
    const only = process.env.BENCH_ROW2_TARGETS?.split(',').map((k) => k.trim());
    for (const kind of Object.keys(WRAPPERS)) if (!only || only.includes(kind)) started.push({ kind, ...(await startWrapper(kind, ctx)) });
    const opens = {};
    for (const w of started) {
      const times = Float64Array.from(await sessionOpenTimes(ctx.undici, w.mcpUrl, OPENS[ctx.mode])).sort();
      opens[w.kind] = { n: times.length, p50Ms: percentile(times, 50), maxMs: times[times.length - 1] };
      ctx.log(`row 2 ${WRAPPERS[w.kind].padEnd(28)} session open p50 ${opens[w.kind].p50Ms.toFixed(1)} ms, max ${opens[w.kind].maxMs.toFixed(1)} ms`);
    }
    const targets = started.map((w) => ({
      id: w.kind,
      label: WRAPPERS[w.kind],
      roots: () => [w.proc.pid],
      workers: async (c) => legacyWorkers(ctx.undici, w.mcpUrl, c),
      // A child per request: every call is cold, one slice is all the time it gets.
      ...(w.kind === 'supergateway-stateless' ? { rounds: 1, warmup: false } : {}),
    }));
    const cells = await measureRow({ row: 2, targets, concurrencies: ctx.concurrencies, plan: ctx.plan, log: ctx.log });
    for (const cell of cells) if (opens[cell.target]) cell.sessionOpen = opens[cell.target];
    return cells;
  } finally {
    for (const w of started) await w.proc.stop();
  }
}
