// Expected failures, one file per run: `baseline/<run>.txt`, one line per
// scenario (or `scenario:check-id` for a single check) followed by the reason.
// A failure not covered is fatal; an entry that now passes is only reported.
import { existsSync, readFileSync } from 'node:fs';

/** Map of `scenario` or `scenario:check` → reason. */
export function readBaseline(file) {
  const entries = new Map();
  if (!existsSync(file)) return entries;
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const [key, ...reason] = line.split(/\s+/);
    entries.set(key, reason.join(' ').replace(/^[—-]\s*/, ''));
  }
  return entries;
}

/**
 * Judges one scenario against the baseline: `expected` when every failing
 * check is excused (the whole scenario, or each failing check by id),
 * `unexpected` otherwise; `stale` lists entries for it that did not fail.
 */
export function judge(result, baseline) {
  const failing = result.failedChecks.map((c) => c.id);
  const whole = baseline.get(result.scenario);
  const perCheck = [...baseline.keys()].filter((k) => k.startsWith(`${result.scenario}:`));
  const stale = [];
  if (result.status === 'pass') {
    if (whole !== undefined) stale.push(result.scenario);
    stale.push(...perCheck);
    return { verdict: 'pass', stale };
  }
  if (whole !== undefined) return { verdict: 'expected', reason: whole, stale };
  const excused = new Set(perCheck.map((k) => k.slice(result.scenario.length + 1)));
  const unexcused = failing.filter((id) => !excused.has(id));
  for (const k of perCheck) if (!failing.includes(k.slice(result.scenario.length + 1))) stale.push(k);
  if (failing.length > 0 && unexcused.length === 0 && !result.clientError) {
    return { verdict: 'expected', reason: perCheck.map((k) => baseline.get(k)).join('; '), stale };
  }
  return { verdict: 'unexpected', stale };
}
