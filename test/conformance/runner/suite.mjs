// Runs the suite's CLI (server or client mode) and reads what it saved: one
// `checks.json` per scenario. The CLI's own exit code and the runner's timeout
// are checked against those checks, so a CLI that dies, hangs or disagrees
// with what it saved shows up as an error instead of a quiet pass.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { start } from './processes.mjs';
import { SUITE } from './suite-install.mjs';

const TIMESTAMP = /-\d{4}-\d{2}-\d{2}T[\d-]+Z$/;

/**
 * Client scenarios whose class sets `allowClientError` in the suite
 * (0.2.0-alpha.12, dist/index.js): the client is expected to refuse something
 * and may exit non-zero. Every other client scenario requires exit code 0.
 * Each run cross-checks this table against what the CLI printed.
 */
export const ALLOWS_CLIENT_ERROR = new Set([
  'http-invalid-tool-headers',
  'auth/scope-retry-limit',
  'auth/resource-mismatch',
  'auth/iss-supported-missing',
  'auth/iss-wrong-issuer',
  'auth/iss-unexpected',
  'auth/iss-normalized',
  'auth/metadata-issuer-mismatch',
]);

/** Every `<prefix><scenario>-<timestamp>/checks.json` under `dir`. */
function readResults(dir, prefix) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((d) => d.startsWith(prefix) && TIMESTAMP.test(d) && existsSync(path.join(dir, d, 'checks.json')))
    .map((d) => ({ scenario: d.slice(prefix.length).replace(TIMESTAMP, ''), checks: JSON.parse(readFileSync(path.join(dir, d, 'checks.json'), 'utf8')) }));
}

async function runCli(args, timeoutMs) {
  const proc = start(SUITE.node, [SUITE.cli, ...args], { stdout: 'pipe' });
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    proc.child.kill('SIGKILL');
  }, timeoutMs);
  const { code, signal } = await proc.exited;
  clearTimeout(timer);
  return { code, signal, killed, stderr: proc.stderr, stdout: proc.stdout };
}

const tail = (text) => text.trim().split('\n').slice(-5).join(' / ').slice(-600);

/**
 * What is wrong with how the CLI ended, or undefined: killed at the runner's
 * timeout, ended by a signal, or an exit code other than `expected` (the code
 * its saved checks imply).
 */
export function cliProblem(run, expected, timeoutMs) {
  if (run.killed) return `the suite CLI did not finish within ${timeoutMs} ms and was killed`;
  if (run.code === null) return `the suite CLI was ended by ${run.signal}`;
  if (run.code !== expected) return `the suite CLI exited ${run.code} where its saved checks imply ${expected}: ${tail(run.stderr || run.stdout)}`;
  return undefined;
}

/**
 * Server scenarios of revision `spec` against `url`: everything the suite
 * applies at that revision (`--suite all --spec-version`, which leaves out
 * extensions), plus each scenario in `extra` run on its own with `--force`.
 * Resolves `{ results: [{ scenario, checks }], errors: [message] }`.
 */
export async function runServerScenarios({ url, spec, outDir, extra = [], timeoutMs = 300_000 }) {
  rmSync(outDir, { recursive: true, force: true });
  const errors = [];
  const main = await runCli(['server', '--url', url, '--suite', 'all', '--spec-version', spec, '-o', outDir], timeoutMs);
  const results = readResults(outDir, 'server-');
  // `--suite all` exits 1 when any scenario has a FAILURE check, 0 otherwise (warnings do not count there).
  // (A scenario that threw counts: the CLI records it as a FAILURE check it does not save.)
  const failed = (list) => +list.some((r) => r.crash !== undefined || r.checks.some((c) => c.status === 'FAILURE'));
  // A scenario that threw inside the CLI is announced on stdout but leaves no checks.json behind.
  for (const [, scenario] of main.stdout.matchAll(/=== Running scenario: (\S+) ===/g)) {
    if (!results.some((r) => r.scenario === scenario)) results.push({ scenario, checks: [], crash: 'the suite started the scenario but saved no result (see its stderr)' });
  }
  const mainProblem = results.length === 0 ? `the suite saved no results (exit ${main.code ?? main.signal}): ${tail(main.stderr || main.stdout)}` : cliProblem(main, failed(results), timeoutMs);
  if (mainProblem) errors.push(mainProblem);
  for (const scenario of extra) {
    const dir = path.join(outDir, 'forced');
    const one = await runCli(['server', '--url', url, '--scenario', scenario, '--spec-version', spec, '--force', '-o', dir], 60_000);
    const saved = readResults(dir, 'server-').filter((r) => r.scenario === scenario);
    if (saved.length === 0) results.push({ scenario, checks: [], crash: `the suite saved no result (exit ${one.code ?? one.signal}): ${tail(one.stderr || one.stdout)}` });
    else {
      const problem = cliProblem(one, failed(saved), 60_000);
      results.push({ ...saved[0], ...(problem ? { harness: [problem] } : {}) });
    }
  }
  return { results, errors };
}

/**
 * How the client under test ended, from the CLI's stderr: `{ exitCode, timedOut }`
 * plus `flagged`, whether the CLI called the exit an error (it does not when
 * the scenario allows client errors).
 */
export function clientOutcome(stderr) {
  const exited = /Client exited with code (-?\d+)/.exec(stderr);
  return {
    exitCode: exited ? Number(exited[1]) : 0,
    timedOut: /Client timed out after|CLIENT TIMED OUT/.test(stderr),
    flagged: /CLIENT EXITED WITH ERROR/.test(stderr),
  };
}

/**
 * One client scenario: the suite plays the server, `command` is the client
 * under test. Resolves `{ scenario, checks, client, allowsClientError, crash?, harness? }`.
 */
export async function runClientScenario({ scenario, spec, command, outDir, timeoutMs = 20_000, force = false }) {
  rmSync(outDir, { recursive: true, force: true });
  const cliTimeout = timeoutMs + 30_000;
  // Extensions are on no spec timeline: the suite skips them at a version unless forced.
  const run = await runCli(['client', '--command', command, '--scenario', scenario, '--spec-version', spec, '--timeout', String(timeoutMs), '-o', outDir, ...(force ? ['--force'] : [])], cliTimeout);
  // `auth/x` is saved as `<outDir>/auth/x-<timestamp>/`.
  const [saved] = readResults(path.join(outDir, path.dirname(scenario)), `${path.basename(scenario)}-`).map((r) => ({ ...r, scenario }));
  const allowsClientError = ALLOWS_CLIENT_ERROR.has(scenario);
  if (!saved) {
    const why = run.killed ? `killed after ${cliTimeout} ms` : tail(run.stdout.includes('SKIPPED') ? run.stdout : run.stderr || run.stdout);
    return { scenario, checks: [], allowsClientError, crash: `the suite saved no result (exit ${run.code ?? run.signal}): ${why}` };
  }
  const client = clientOutcome(run.stderr);
  const harness = [];
  if (client.exitCode !== 0 && !client.timedOut && client.flagged === allowsClientError) {
    harness.push(`the suite ${client.flagged ? 'does not allow' : 'allows'} a client error here, ALLOWS_CLIENT_ERROR in runner/suite.mjs says the opposite`);
  }
  // Single client scenarios exit 1 on a FAILURE or WARNING check, a timeout, or a client error it does not allow.
  const failing = saved.checks.some((c) => c.status === 'FAILURE' || c.status === 'WARNING') || client.timedOut || (client.exitCode !== 0 && !allowsClientError);
  const problem = cliProblem(run, +failing, cliTimeout);
  if (problem) harness.push(problem);
  return { scenario, checks: saved.checks, client, allowsClientError, ...(harness.length ? { harness } : {}) };
}
