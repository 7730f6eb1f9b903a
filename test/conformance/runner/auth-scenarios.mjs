#!/usr/bin/env node
// Issue 12: every `auth/*` client scenario of both requirement sets, with the
// bridge as the OAuth client under test, through each face a client uses:
//   node test/conformance/runner/auth-scenarios.mjs [--faces http,stdio] [--spec 2025-11-25] [scenario ...]
// `http` is an SDK v1 client on the bridge's HTTP face, `stdio` an SDK v1
// client that spawns the bridge with --stdio, `modern` an SDK v2 client
// (2026-07-28) on the HTTP face. Prints one verdict per run:
// PASS, or FAIL with the FAILURE and WARNING checks (both count) and the
// client's error. Writes nothing into the tree but .conformance/results/auth/.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, start, stopAll } from './processes.mjs';
import { readRequirements } from './requirements.mjs';
import { ensureSuite } from './suite-install.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DRIVER = path.join(HERE, 'client-driver.mjs');
const OUT = path.join(ROOT, '.conformance', 'results', 'auth');
const MODE = { http: 'legacy', stdio: 'stdio', modern: 'modern' };
/** Extensions this client implements (the not-scored client-credentials pair); DPoP, WIF and enterprise-managed are not. */
const EXTENSIONS = new Set(['auth/client-credentials-basic', 'auth/client-credentials-jwt']);

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  if (i === -1) return fallback;
  const [v] = args.splice(i, 2).slice(1);
  return v;
};
const faces = opt('--faces', 'http,stdio').split(',');
const specs = opt('--spec', '2025-11-25,2026-07-28').split(',');
const only = new Set(args);

const suite = ensureSuite((m) => process.stderr.write(`${m}\n`));

/** One scenario through the suite's CLI; `auth/x` saves its checks under `<out>/auth/x-<timestamp>/`. */
async function runScenario({ scenario, spec, command, outDir, timeoutMs }) {
  rmSync(outDir, { recursive: true, force: true });
  // Extensions are on no spec timeline: the suite skips them at a version unless forced.
  const force = EXTENSIONS.has(scenario) ? ['--force'] : [];
  const proc = start(suite.node, [suite.cli, 'client', '--command', command, '--scenario', scenario, '--spec-version', spec, '--timeout', String(timeoutMs), '-o', outDir, ...force]);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), timeoutMs + 30_000);
  await proc.exited;
  clearTimeout(timer);
  const parent = path.join(outDir, path.dirname(scenario));
  const base = path.basename(scenario);
  const dir = existsSync(parent) ? readdirSync(parent).find((d) => d.startsWith(`${base}-`) && existsSync(path.join(parent, d, 'checks.json'))) : undefined;
  const checks = dir ? JSON.parse(readFileSync(path.join(parent, dir, 'checks.json'), 'utf8')) : [];
  const clientError = !dir
    ? `the suite saved no checks: ${proc.stderr.split('\n').filter((l) => /error/i.test(l)).slice(0, 2).join(' ') || 'no detail'}`
    : /CLIENT TIMED OUT|Client timed out/.test(proc.stderr)
      ? `the client timed out after ${timeoutMs} ms`
      : /OVERALL: FAILED/.test(proc.stderr) && !checks.some((c) => c.status === 'FAILURE' || c.status === 'WARNING')
        ? 'the suite judged the run failed (the client exited with an error it did not allow)'
        : undefined;
  const pick = (status) => checks.filter((c) => c.status === status).map((c) => ({ id: c.id, message: c.errorMessage ?? c.description ?? '' }));
  return { checks: checks.length, failedChecks: pick('FAILURE'), warnings: pick('WARNING'), clientError };
}
const rows = [];
for (const spec of specs) {
  const req = readRequirements(suite.requirements(spec));
  const scenarios = [...req.client, ...[...req.notScored.keys()].filter((s) => EXTENSIONS.has(s))].filter((s) => s.startsWith('auth/') && (only.size === 0 || only.has(s)));
  for (const scenario of scenarios) {
    for (const face of faces) {
      const command = `"${process.execPath}" "${DRIVER}" ${MODE[face]}`;
      const r = await runScenario({ scenario, spec, command, outDir: path.join(OUT, spec, face, scenario.replace(/\//g, '_')), timeoutMs: 30_000 });
      const bad = [...r.failedChecks.map((c) => `FAILURE ${c.id}: ${c.message}`), ...r.warnings.map((c) => `WARNING ${c.id}: ${c.message}`), ...(r.clientError ? [`client: ${r.clientError}`] : [])];
      const row = { spec, scenario, face, verdict: bad.length === 0 ? 'PASS' : 'FAIL', checks: r.checks, bad };
      rows.push(row);
      process.stdout.write(`${row.verdict}  ${spec}  ${face.padEnd(5)}  ${scenario}${bad.length ? `\n        ${bad.join('\n        ').slice(0, 1500)}` : ''}\n`);
    }
  }
}
const failed = rows.filter((r) => r.verdict === 'FAIL').length;
process.stdout.write(`\n${rows.length - failed} passed, ${failed} failed\n`);
await stopAll();
process.exitCode = failed === 0 ? 0 : 1;
