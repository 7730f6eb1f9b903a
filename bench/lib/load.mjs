// A closed-loop load generator: `workers` each send one request at a time on
// their own connection until the slice's deadline or call cap, whichever
// comes first. Calls still in flight at the deadline are awaited (bounded by
// drainMs) and counted, so the CPU reading covers exactly the calls counted.

/** Percentile of a sorted Float64Array (nearest rank). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Accumulates the slices of one cell. */
export class CellStats {
  constructor(maxSamples) {
    this.lat = new Float64Array(maxSamples);
    this.n = 0;
    this.calls = 0;
    this.errors = 0;
    this.firstError = undefined;
    this.wallMs = 0;
    this.cpuS = 0;
    this.rootCpuS = 0;
    this.upstreamCpuS = 0;
  }

  record(ms) {
    if (this.n < this.lat.length) this.lat[this.n++] = ms;
    this.calls += 1;
  }

  fail(err) {
    this.errors += 1;
    this.firstError ??= err instanceof Error ? err.message : String(err);
  }

  /** calls/s, p50/p99 ms, CPU µs per call of the tree (and of a separate upstream). */
  summary() {
    const sorted = this.lat.slice(0, this.n).sort();
    const perCall = (s) => (this.calls > 0 ? (s * 1e6) / this.calls : NaN);
    return {
      calls: this.calls,
      errors: this.errors,
      firstError: this.firstError,
      seconds: this.wallMs / 1000,
      callsPerS: this.wallMs > 0 ? (this.calls * 1000) / this.wallMs : 0,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      cpuUsPerCall: perCall(this.cpuS),
      rootCpuUsPerCall: perCall(this.rootCpuS),
      upstreamCpuUsPerCall: this.upstreamCpuS > 0 ? perCall(this.upstreamCpuS) : undefined,
    };
  }
}

/**
 * Runs one slice: each of `senders` (async () => void, throws on a bad
 * answer) loops until `durationMs` or `maxCalls`. `cpu()` is read around the
 * slice (tree under test), `rootCpu()` (its root process alone) and
 * `upstreamCpu()` (a separate server) likewise when given.
 */
export async function runSlice({ senders, durationMs, maxCalls, stats, cpu, rootCpu = () => 0, upstreamCpu, drainMs = 30_000 }) {
  const cpu0 = cpu();
  const root0 = rootCpu();
  const up0 = upstreamCpu ? upstreamCpu() : 0;
  const started = performance.now();
  const deadline = started + durationMs;
  let issued = 0;
  let consecutiveErrors = 0;
  let stop = false;
  const loop = async (send) => {
    while (!stop && performance.now() < deadline && issued < maxCalls) {
      issued += 1;
      const t0 = performance.now();
      try {
        await send();
        stats.record(performance.now() - t0);
        consecutiveErrors = 0;
      } catch (err) {
        stats.fail(err);
        // A target that only fails is not measured further.
        if (++consecutiveErrors >= 20) stop = true;
      }
    }
  };
  let drainTimer;
  const drained = new Promise((resolve) => {
    drainTimer = setTimeout(() => resolve('drain-timeout'), durationMs + drainMs);
  });
  const outcome = await Promise.race([Promise.all(senders.map(loop)).then(() => 'done'), drained]);
  clearTimeout(drainTimer);
  stop = true;
  stats.wallMs += performance.now() - started;
  stats.cpuS += cpu() - cpu0;
  stats.rootCpuS += rootCpu() - root0;
  if (upstreamCpu) stats.upstreamCpuS += upstreamCpu() - up0;
  return outcome;
}
