// Expected non-passes, one file per run: `baseline/<run>.txt`. Each line names
// one scenario, exactly one thing about it that is allowed to go wrong, and why:
//
//   <scenario>  <excuse>  <reason>
//
// excuse              excuses
//   fail:<check-id>     that check reporting FAILURE
//   warning:<check-id>  that check reporting WARNING (a SHOULD the suite saw missed)
//   not-scored          the scenario recording no SUCCESS or FAILURE check
//   client-error        the client under test exiting non-zero (client runs)
//   timeout             the scenario or the client running out of time
//   crash               the suite failing to run the scenario at all
//   skip                not running the scenario (it still counts as listed)
//
// A line excuses nothing else and must be needed: one whose problem did not
// happen is stale and fails the run, so it gets removed once the scenario is
// fixed. An excuse ending in `?` (`fail:<check-id>?`) is intermittent: it is
// not stale when its problem does not happen (for checks the suite times on a
// loaded machine). `skip?` is not allowed.
// Nothing is excused by implication: a line for one check does not cover a
// second failing check, a crash or a timeout. A malformed line is an error
// naming its file and line, so a typo cannot silently excuse anything.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Excuses that take no argument. */
export const PLAIN_EXCUSES = ['not-scored', 'client-error', 'timeout', 'crash', 'skip'];
/** Excuses that name one check: `fail:<check-id>`, `warning:<check-id>`. */
export const CHECK_EXCUSES = ['fail', 'warning'];

/** A baseline file that cannot be read as one: the message names file and line. */
export class BaselineError extends Error {}

/** Parses one excuse token (without a trailing `?`); returns undefined when it is not one. */
export function parseExcuse(token) {
  if (PLAIN_EXCUSES.includes(token)) return token;
  const colon = token.indexOf(':');
  if (colon <= 0) return undefined;
  const kind = token.slice(0, colon);
  const check = token.slice(colon + 1);
  return CHECK_EXCUSES.includes(kind) && check.length > 0 ? token : undefined;
}

/**
 * Parses baseline text into `[{ scenario, excuse, reason, line, intermittent? }]`. Throws a
 * BaselineError for a line without excuse or reason, an unknown excuse, the
 * same excuse twice, or `skip` next to another excuse for the same scenario.
 */
export function parseBaseline(text, name = 'baseline') {
  const entries = [];
  const fail = (n, msg) => {
    throw new BaselineError(`${name}:${n}: ${msg}`);
  };
  text.split('\n').forEach((raw, i) => {
    const n = i + 1;
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const m = /^(\S+)\s+(\S+)\s+(.*\S)\s*$/.exec(line);
    if (!m) fail(n, `expected "<scenario> <excuse> <reason>", got ${JSON.stringify(line)}`);
    const [, scenario, token, reason] = m;
    const intermittent = token.endsWith('?');
    const excuse = parseExcuse(intermittent ? token.slice(0, -1) : token);
    if (!excuse) fail(n, `unknown excuse ${JSON.stringify(token)} (one of ${[...CHECK_EXCUSES.map((k) => `${k}:<check-id>`), ...PLAIN_EXCUSES].join(', ')}, optionally ending in ?)`);
    if (intermittent && excuse === 'skip') fail(n, `${scenario}: skip? makes no sense (a scenario is skipped or it runs)`);
    const same = entries.filter((e) => e.scenario === scenario);
    if (same.some((e) => e.excuse === excuse)) fail(n, `${scenario} ${excuse} is listed twice`);
    if (same.length > 0 && (excuse === 'skip' || same.some((e) => e.excuse === 'skip'))) fail(n, `${scenario}: skip cannot be combined with another excuse (a skipped scenario does not run)`);
    entries.push({ scenario, excuse, reason, line: n, ...(intermittent ? { intermittent: true } : {}) });
  });
  return entries;
}

/** Reads `file` (a missing file is an empty baseline). */
export function readBaseline(file) {
  if (!existsSync(file)) return [];
  return parseBaseline(readFileSync(file, 'utf8'), path.basename(file));
}

/** The entries for one scenario as `Map<excuse, { reason, intermittent }>`. */
export function excusesFor(entries, scenario) {
  return new Map(entries.filter((e) => e.scenario === scenario).map((e) => [e.excuse, { reason: e.reason, intermittent: e.intermittent === true }]));
}

/** Scenarios the baseline says not to run, with their reasons. */
export function skipped(entries) {
  return new Map(entries.filter((e) => e.excuse === 'skip').map((e) => [e.scenario, e.reason]));
}
