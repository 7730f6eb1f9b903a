// The verdict on one scenario, as the suite itself would give it, then held
// against the run's baseline. The suite fails a scenario on any FAILURE or
// WARNING check, a timeout, or (client scenarios) a client that exited non-zero
// when the scenario does not allow client errors (`overallFailure` of its CLI).
// It also counts a scenario as passed only when a SUCCESS check ran (its
// tier-check); one whose checks are all INFO scored nothing.

/** The suite appends this to every scenario that exchanged messages; it says nothing about the scenario itself. */
const GENERIC_CHECKS = new Set(['wire-schema-valid']);
/** Problems that make a scenario fail (the rest, warning and not-scored, are SHOULDs and gaps). */
const FAILING = new Set(['fail', 'client-error', 'timeout', 'crash', 'harness']);

/** Verdicts, worst first. */
export const VERDICTS = ['fail', 'expected-fail', 'warning', 'not-scored', 'pass'];

const messageOf = (check) => check.errorMessage ?? check.description ?? '';

/**
 * What went wrong in one result, as `[{ key, kind, message }]`; `key` is the
 * baseline excuse that would cover it (`harness` has none: it is the runner's
 * or the suite's own inconsistency and is never excused).
 * `result`: `{ scenario, checks, crash?, client?: { exitCode, timedOut }, allowsClientError?, harness? }`.
 */
export function problemsOf(result) {
  const problems = [];
  const add = (key, kind, message) => {
    const seen = problems.find((p) => p.key === key);
    if (seen) seen.message = seen.message || message;
    else problems.push({ key, kind, message });
  };
  for (const message of result.harness ?? []) add('harness', 'harness', message);
  if (result.crash !== undefined) add('crash', 'crash', result.crash);
  for (const check of result.checks ?? []) {
    if (check.status === 'FAILURE') {
      // The suite records a scenario that threw as one FAILURE check named after the scenario.
      if (check.id === result.scenario && check.description === 'Failed to run scenario') add('crash', 'crash', messageOf(check));
      else if (check.id === 'scenario-timeout') add('timeout', 'timeout', messageOf(check));
      else add(`fail:${check.id}`, 'fail', messageOf(check));
    } else if (check.status === 'WARNING') add(`warning:${check.id}`, 'warning', messageOf(check));
  }
  const client = result.client;
  if (client?.timedOut) add('timeout', 'timeout', 'the client timed out');
  else if (client && client.exitCode !== 0 && !result.allowsClientError) add('client-error', 'client-error', `the client exited with code ${client.exitCode}`);
  // "Not scored" only means something when nothing failed or warned: those already say the scenario is not
  // passed, and a WARNING is a check that judged something (a SHOULD, found missed).
  const scored = (result.checks ?? []).some((c) => !GENERIC_CHECKS.has(c.id) && ['SUCCESS', 'FAILURE', 'WARNING'].includes(c.status));
  if (!scored && !problems.some((p) => FAILING.has(p.kind))) add('not-scored', 'not-scored', 'no SUCCESS, FAILURE or WARNING check ran: the scenario scored nothing');
  return problems;
}

/**
 * Judges one result that ran against its baseline excuses (`Map<excuse, { reason, intermittent }>`):
 * `{ verdict, problems, unexplained, stale, ok }`. `problems` carry the reason
 * of the line that excuses them; `unexplained` are the keys no line covers;
 * `stale` are lines that excused nothing (a `skip` for a scenario that ran is
 * stale too; an intermittent line never is). `ok` only when both are empty.
 */
export function judge(result, excuses) {
  const problems = problemsOf(result).map((p) => (excuses.has(p.key) ? { ...p, reason: excuses.get(p.key).reason } : p));
  const unexplained = problems.filter((p) => p.reason === undefined).map((p) => p.key);
  const keys = new Set(problems.map((p) => p.key));
  const stale = [...excuses].filter(([k, e]) => !keys.has(k) && !e.intermittent).map(([k]) => k);
  const kinds = new Set(problems.map((p) => p.kind));
  let verdict = 'pass';
  if (problems.some((p) => FAILING.has(p.kind))) verdict = problems.some((p) => FAILING.has(p.kind) && p.reason === undefined) ? 'fail' : 'expected-fail';
  else if (kinds.has('warning')) verdict = 'warning';
  else if (kinds.has('not-scored')) verdict = 'not-scored';
  return { verdict, problems, unexplained, stale, ok: unexplained.length === 0 && stale.length === 0 };
}
