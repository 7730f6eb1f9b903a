// Runs the suite's CLI (server or client mode) and reads what it saved: one
// `checks.json` per scenario. A scenario fails when any check is FAILURE, or
// (client mode) when the client under test exited with an error or timed out.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { start } from './processes.mjs';
import { SUITE } from './suite-install.mjs';

const TIMESTAMP = /-\d{4}-\d{2}-\d{2}T[\d-]+Z$/;

function summarize(scenario, checks, clientError) {
  const failedChecks = checks.filter((c) => c.status === 'FAILURE').map((c) => ({ id: c.id, message: c.errorMessage ?? c.description ?? '' }));
  const warnings = checks.filter((c) => c.status === 'WARNING').map((c) => ({ id: c.id, message: c.errorMessage ?? c.description ?? '' }));
  const fail = failedChecks.length > 0 || clientError !== undefined;
  return { scenario, status: fail ? 'fail' : 'pass', checks: checks.length, failedChecks, warnings, ...(clientError ? { clientError } : {}) };
}

/** Every `<prefix><scenario>-<timestamp>/checks.json` under `dir`. */
function readResults(dir, prefix) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((d) => d.startsWith(prefix) && TIMESTAMP.test(d) && existsSync(path.join(dir, d, 'checks.json')))
    .map((d) => ({ scenario: d.slice(prefix.length).replace(TIMESTAMP, ''), checks: JSON.parse(readFileSync(path.join(dir, d, 'checks.json'), 'utf8')) }));
}

async function runCli(args, timeoutMs) {
  const proc = start(SUITE.node, [SUITE.cli, ...args]);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), timeoutMs);
  const { code, signal } = await proc.exited;
  clearTimeout(timer);
  return { code, signal, stderr: proc.stderr };
}

/**
 * Server scenarios of revision `spec` against `url`: everything the suite
 * applies at that revision (`--suite all --spec-version`, which leaves out
 * extensions), plus each scenario in `extra` run on its own with `--force`.
 */
export async function runServerScenarios({ url, spec, outDir, extra = [] }) {
  rmSync(outDir, { recursive: true, force: true });
  const main = await runCli(['server', '--url', url, '--suite', 'all', '--spec-version', spec, '-o', outDir], 180_000);
  for (const scenario of extra) await runCli(['server', '--url', url, '--scenario', scenario, '--spec-version', spec, '--force', '-o', outDir], 60_000);
  const results = readResults(outDir, 'server-').map((r) => summarize(r.scenario, r.checks));
  if (results.length === 0) throw new Error(`the suite saved no results (exit ${main.code ?? main.signal}):\n${main.stderr.slice(-2000)}`);
  return results;
}

/** One client scenario: the suite plays the server, `command` is the client under test. */
export async function runClientScenario({ scenario, spec, command, outDir, timeoutMs = 20_000 }) {
  rmSync(outDir, { recursive: true, force: true });
  const run = await runCli(['client', '--command', command, '--scenario', scenario, '--spec-version', spec, '--timeout', String(timeoutMs), '-o', outDir], timeoutMs + 30_000);
  const [saved] = readResults(outDir, '');
  const clientError = /CLIENT TIMED OUT/.test(run.stderr)
    ? `the client timed out after ${timeoutMs} ms`
    : /CLIENT EXITED WITH ERROR/.test(run.stderr)
      ? 'the client exited with an error'
      : undefined;
  if (!saved) {
    const why = run.stderr.split('\n').find((l) => /error/i.test(l)) ?? `exit ${run.code ?? run.signal}`;
    return summarize(scenario, [], `the suite could not run the scenario: ${why.trim()}`);
  }
  return summarize(scenario, saved.checks, clientError);
}
