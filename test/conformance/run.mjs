#!/usr/bin/env node
// The official MCP conformance suite, through the bridge, in both directions
// (issue 5). `npm run conformance` builds the bridge and runs this file:
//   node test/conformance/run.mjs [run-id ...]     all runs, or only those named
//   node test/conformance/run.mjs --list           the run ids
// Each run starts its fixture and the bridge on 127.0.0.1, runs the suite,
// stops everything and judges the results against baseline/<run>.txt. The
// summary goes to results.md / results.json; the exit code is 1 only when a
// scenario fails that its baseline does not list.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { judge, readBaseline } from './runner/baseline.mjs';
import { BRIDGE_BIN, ROOT, fixtureCommand, startBridge, startHttpFixture, stop, stopAll } from './runner/processes.mjs';
import { counts, writeReport } from './runner/report.mjs';
import { readRequirements } from './runner/requirements.mjs';
import { SUITE_VERSION, ensureSuite } from './runner/suite-install.mjs';
import { runClientScenario, runServerScenarios } from './runner/suite.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(ROOT, '.conformance', 'results');
const DRIVER = path.join(HERE, 'runner', 'client-driver.mjs');
const WITH_EXTENSIONS = process.env.CONFORMANCE_EXTENSIONS === '1';

/**
 * Every run. `fixture` + `transport` + `bridge` say what the suite talks to;
 * client runs use `driver` (SDK v1 `legacy` or SDK v2 `modern`) in front of
 * the bridge, the suite playing the server.
 */
const RUNS = [
  { id: 'legacy-fixture-direct', kind: 'server', spec: '2025-11-25', fixture: 'legacy', transport: 'streamable-http', bridge: false, direction: 'legacy fixture, no bridge', title: 'The 2025-11-25 server scenarios straight against the legacy fixture (SDK v1): a failure here is a fixture bug.' },
  { id: 'modern-fixture-direct', kind: 'server', spec: '2026-07-28', fixture: 'modern', transport: 'streamable-http', bridge: false, direction: 'modern fixture, no bridge', title: 'The 2026-07-28 server scenarios straight against the modern fixture (SDK v2): a failure here is a fixture bug.' },
  { id: 'm2l-stdio', kind: 'server', spec: '2026-07-28', fixture: 'legacy', transport: 'stdio', bridge: true, direction: 'modern client → legacy server', title: 'The 2026-07-28 server scenarios against the bridge, in front of the legacy fixture spawned over stdio.' },
  { id: 'm2l-http', kind: 'server', spec: '2026-07-28', fixture: 'legacy', transport: 'streamable-http', bridge: true, direction: 'modern client → legacy server', title: 'The 2026-07-28 server scenarios against the bridge, in front of the legacy fixture over Streamable HTTP.' },
  { id: 'l2m-http', kind: 'server', spec: '2025-11-25', fixture: 'modern', transport: 'streamable-http', bridge: true, direction: 'legacy client → modern server', title: "The 2025-11-25 server scenarios against the bridge's legacy face, in front of the modern fixture over HTTP." },
  { id: 'l2m-stdio', kind: 'server', spec: '2025-11-25', fixture: 'modern', transport: 'stdio', bridge: true, direction: 'legacy client → modern server', title: "The 2025-11-25 server scenarios against the bridge's legacy face, in front of the modern fixture spawned over stdio." },
  { id: 'client-2026-via-legacy-client', kind: 'client', spec: '2026-07-28', driver: 'legacy', transport: 'streamable-http', direction: 'legacy client (SDK v1) → modern server', title: 'Client scenarios: the suite plays a 2026-07-28 server; an SDK v1 client reaches it through the bridge, so the checks judge what the bridge sends upstream.' },
  { id: 'client-2026-via-modern-client', kind: 'client', spec: '2026-07-28', driver: 'modern', transport: 'streamable-http', direction: 'modern client (SDK v2) → modern server', title: 'Client scenarios: the suite plays a 2026-07-28 server; an SDK v2 client reaches it through the bridge.' },
  { id: 'client-2025-via-legacy-client', kind: 'client', spec: '2025-11-25', driver: 'legacy', transport: 'streamable-http', direction: 'legacy client (SDK v1) → legacy server', title: 'Client scenarios: the suite plays a 2025-11-25 server; an SDK v1 client reaches it through the bridge.' },
  { id: 'client-2025-via-modern-client', kind: 'client', spec: '2025-11-25', driver: 'modern', transport: 'streamable-http', direction: 'modern client (SDK v2) → legacy server', title: 'Client scenarios: the suite plays a 2025-11-25 server; an SDK v2 client reaches it through the bridge.' },
];

/** Client scenarios that are not about what a bridge sends: an OAuth client is out of this project's scope. */
const OUT_OF_SCOPE_CLIENT = /^auth\//;
const OUT_OF_SCOPE_REASON = 'out of scope: OAuth client flows (the bridge sends static --header credentials upstream; it is not an OAuth client)';

const log = (msg) => process.stderr.write(`conformance: ${msg}\n`);

function scoredLabel(req, leg, scenario) {
  if (req[leg].has(scenario)) return 'required';
  const ns = req.notScored.get(scenario);
  return ns ? `not scored (${ns.reason})` : 'not in the requirement set';
}

/** Starts what the suite talks to; resolves with its URL and the processes to stop. */
async function startTarget(run) {
  if (!run.bridge) {
    const fixture = await startHttpFixture(run.fixture);
    return { url: fixture.url, procs: [fixture.proc] };
  }
  if (run.transport === 'stdio') {
    const bridge = await startBridge(fixtureCommand(run.fixture));
    return { url: bridge.url, procs: [bridge.proc] };
  }
  const fixture = await startHttpFixture(run.fixture);
  try {
    const bridge = await startBridge(['--upstream', fixture.url]);
    return { url: bridge.url, procs: [bridge.proc, fixture.proc] };
  } catch (err) {
    await stop(fixture.proc);
    throw err;
  }
}

async function serverRun(run, req) {
  const extensions = [...req.notScored].filter(([, v]) => v.leg === 'server' && v.reason === 'extension').map(([k]) => k);
  const target = await startTarget(run);
  try {
    const results = await runServerScenarios({ url: target.url, spec: run.spec, outDir: path.join(OUT, run.id), extra: WITH_EXTENSIONS ? extensions : [] });
    const notRun = WITH_EXTENSIONS ? [] : extensions.map((scenario) => ({ scenario, notRun: 'extension, out of scope (CONFORMANCE_EXTENSIONS=1 runs it)' }));
    return { results, notRun };
  } finally {
    for (const p of target.procs) await stop(p);
  }
}

async function clientRun(run, req) {
  const all = [...req.client, ...[...req.notScored].filter(([, v]) => v.leg === 'client').map(([k]) => k)];
  const results = [];
  const notRun = [];
  for (const scenario of all) {
    if (OUT_OF_SCOPE_CLIENT.test(scenario)) {
      notRun.push({ scenario, notRun: OUT_OF_SCOPE_REASON });
      continue;
    }
    const command = `"${process.execPath}" "${DRIVER}" ${run.driver}`;
    results.push(await runClientScenario({ scenario, spec: run.spec, command, outDir: path.join(OUT, run.id, scenario.replace(/\//g, '_')) }));
  }
  return { results, notRun };
}

async function execute(run) {
  const req = readRequirements(SUITE.requirements(run.spec));
  const leg = run.kind === 'server' ? 'server' : 'client';
  const baseline = readBaseline(path.join(HERE, 'baseline', `${run.id}.txt`));
  const started = Date.now();
  let error;
  let results = [];
  let notRun = [];
  try {
    ({ results, notRun } = await (run.kind === 'server' ? serverRun : clientRun)(run, req));
  } catch (err) {
    error = err.message;
  }
  const rows = [
    ...results.map((r) => ({ ...r, scored: scoredLabel(req, leg, r.scenario), ...judge(r, baseline) })),
    ...notRun.map((n) => ({ scenario: n.scenario, scored: scoredLabel(req, leg, n.scenario), verdict: 'not-run', reason: n.notRun, failedChecks: [], stale: [] })),
  ];
  const c = counts(rows);
  log(`${run.id}: ${c.pass} pass, ${c.expected} expected failures, ${c.unexpected} unexpected, ${c['not-run']} not run (${((Date.now() - started) / 1000).toFixed(1)} s)${error ? ` — ERROR: ${error.split('\n')[0]}` : ''}`);
  for (const row of rows.filter((r) => r.verdict === 'unexpected')) log(`  FAIL ${row.scenario}: ${[row.clientError, ...row.failedChecks.map((f) => `${f.id}: ${f.message}`)].filter(Boolean).join('; ').slice(0, 300)}`);
  return { id: run.id, title: run.title, direction: run.direction, transport: run.transport, spec: run.spec, rows, ...(error ? { error } : {}) };
}

let SUITE;

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('--list')) {
    for (const r of RUNS) process.stdout.write(`${r.id}\t${r.spec}\t${r.direction}\t${r.transport}\n`);
    return 0;
  }
  const unknown = args.filter((a) => !RUNS.some((r) => r.id === a));
  if (unknown.length > 0) {
    log(`unknown run(s): ${unknown.join(', ')} (see --list)`);
    return 2;
  }
  if (!existsSync(BRIDGE_BIN)) {
    log(`${path.relative(ROOT, BRIDGE_BIN)} is missing: run \`npm run build\` first (npm run conformance does)`);
    return 2;
  }
  SUITE = ensureSuite(log);
  const selected = args.length > 0 ? RUNS.filter((r) => args.includes(r.id)) : RUNS;
  const started = Date.now();
  const runs = [];
  for (const run of selected) runs.push(await execute(run));
  const seconds = Math.round((Date.now() - started) / 1000);
  writeReport({ mdPath: path.join(HERE, 'results.md'), jsonPath: path.join(HERE, 'results.json'), suiteVersion: SUITE_VERSION, runs, partial: args.length > 0, seconds });
  const unexpected = runs.reduce((n, r) => n + counts(r.rows).unexpected + (r.error ? 1 : 0), 0);
  log(`${unexpected === 0 ? 'ok' : `${unexpected} unexpected failure(s)`}; see test/conformance/results.md (${seconds} s)`);
  return unexpected === 0 ? 0 : 1;
}

for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void stopAll().finally(() => process.exit(130)));
process.exitCode = await main().catch(async (err) => {
  log(err.stack ?? String(err));
  return 1;
});
await stopAll();
