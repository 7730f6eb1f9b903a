#!/usr/bin/env node
// The official MCP conformance suite, through the bridge, in both directions
// (issue 5). `npm run conformance` builds the bridge and runs this file:
//   node test/conformance/run.mjs [run-id ...]     all runs, or only those named
//   node test/conformance/run.mjs --list           the run ids
// Each run starts its fixture and the bridge on 127.0.0.1, runs the suite,
// stops everything and judges every scenario as the suite would (runner/
// verdict.mjs) against baseline/<run>.txt. Every scenario of the run's
// requirement set must have run or be listed as skipped. The summary goes to
// results.md / results.json; the exit code is 0 only when every non-pass is
// explained by a baseline line, no baseline line is stale, and the suite's CLI
// ended the way its saved checks say it should.
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { excusesFor, readBaseline, skipped } from './runner/baseline.mjs';
import { completeness } from './runner/completeness.mjs';
import { BRIDGE_BIN, ROOT, fixtureCommand, startBridge, startHttpFixture, stop, stopAll } from './runner/processes.mjs';
import { counts, summary, unexplainedText, writeReport } from './runner/report.mjs';
import { readRequirements, scenariosOf } from './runner/requirements.mjs';
import { SUITE_VERSION, ensureSuite } from './runner/suite-install.mjs';
import { runClientScenario, runServerScenarios } from './runner/suite.mjs';
import { judge } from './runner/verdict.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(ROOT, '.conformance', 'results');
const DRIVER = path.join(HERE, 'runner', 'client-driver.mjs');

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
  { id: 'client-2026-via-stdio-client', kind: 'client', spec: '2026-07-28', driver: 'stdio', transport: 'stdio', direction: 'legacy client (SDK v1) on the stdio face → modern server', title: 'Client scenarios: the suite plays a 2026-07-28 server; an SDK v1 client spawns the bridge with --stdio, as a desktop client does.' },
  { id: 'client-2025-via-stdio-client', kind: 'client', spec: '2025-11-25', driver: 'stdio', transport: 'stdio', direction: 'legacy client (SDK v1) on the stdio face → legacy server', title: 'Client scenarios: the suite plays a 2025-11-25 server; an SDK v1 client spawns the bridge with --stdio, as a desktop client does.' },
  { id: 'client-2025-via-modern-client', kind: 'client', spec: '2025-11-25', driver: 'modern', transport: 'streamable-http', direction: 'modern client (SDK v2) → legacy server', title: 'Client scenarios: the suite plays a 2025-11-25 server; an SDK v2 client reaches it through the bridge.' },
];

const log = (msg) => process.stderr.write(`conformance: ${msg}\n`);

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

/** Client scenarios run this many at a time: each is mostly process start-ups (the suite's CLI, the driver, the bridge). */
const CLIENT_JOBS = Math.max(1, Number(process.env.CONFORMANCE_CLIENT_JOBS ?? 3));
/**
 * Beside the vitest suite (test/setup/vitest-and-conformance.mjs): one thing at a time (a server
 * run, a client scenario), each started only while the machine has a core to spare, so a loaded
 * machine runs conformance after vitest as before. SIGUSR2 says vitest is done: from then on,
 * CLIENT_JOBS at a time with no wait, the current run widened at once.
 */
let beside = Boolean(process.env.CONFORMANCE_BESIDE_VITEST);
let clientJobs = beside ? 1 : CLIENT_JOBS;
const widened = new EventEmitter();
process.on('SIGUSR2', () => {
  if (beside) log(`vitest is done: client scenarios ${CLIENT_JOBS} at a time from now on`);
  beside = false;
  clientJobs = CLIENT_JOBS;
  widened.emit('widen');
});
const CORES = os.availableParallelism?.() ?? os.cpus().length;

/** Beside vitest, resolves once the 1-minute load average is under the core count, or vitest is done (bounded: an hour). */
async function spareCore() {
  for (let i = 0; beside && os.loadavg()[0] >= CORES && i < 3_600; i++) {
    await new Promise((resolve) => {
      const timer = setTimeout(done, 1_000);
      function done() {
        clearTimeout(timer);
        widened.off('widen', done);
        resolve();
      }
      widened.once('widen', done);
    });
  }
}

/** `--suite all` leaves extensions out: those the requirement set names run one by one, unless skipped. */
async function serverRun(run, expected, skip) {
  const extra = expected.filter((e) => e.requirement === 'not_scored: extension' && !skip.has(e.scenario)).map((e) => e.scenario);
  const target = await startTarget(run);
  try {
    return await runServerScenarios({ url: target.url, spec: run.spec, outDir: path.join(OUT, run.id), extra });
  } finally {
    for (const p of target.procs) await stop(p);
  }
}

async function clientRun(run, expected, skip) {
  const command = `"${process.execPath}" "${DRIVER}" ${run.driver}`;
  const queue = expected.filter(({ scenario }) => !skip.has(scenario));
  const results = new Array(queue.length);
  let next = 0;
  let active = 0;
  const worker = async () => {
    active++;
    try {
      while (next < queue.length) {
        await spareCore();
        if (next >= queue.length) break;
        const i = next++;
        const { scenario, requirement } = queue[i];
        // A not-scored scenario (an extension) is on no spec timeline: the suite runs it only when forced.
        const force = requirement !== 'required';
        results[i] = await runClientScenario({ scenario, spec: run.spec, command, force, outDir: path.join(OUT, run.id, scenario.replace(/\//g, '_')) });
      }
    } finally {
      active--;
    }
  };
  const workers = [];
  const grow = () => {
    while (active < clientJobs && next < queue.length) workers.push(worker());
  };
  grow();
  widened.on('widen', grow);
  try {
    // Workers added while waiting are waited for too.
    for (let seen = -1; seen !== workers.length; ) {
      seen = workers.length;
      await Promise.all(workers);
    }
  } finally {
    widened.off('widen', grow);
  }
  return { results, errors: [] };
}

/** Runs one run and judges every scenario; never throws (a broken run is a row of errors). */
async function execute(run) {
  // Beside vitest a server run is one thing at a time: it waits for a spare core before its clock starts.
  if (run.kind === 'server') await spareCore();
  const started = Date.now();
  const errors = [];
  let entries = [];
  let results = [];
  let expected = [];
  try {
    entries = readBaseline(path.join(HERE, 'baseline', `${run.id}.txt`));
    expected = scenariosOf(readRequirements(SUITE.requirements(run.spec)), run.kind);
    const out = await (run.kind === 'server' ? serverRun : clientRun)(run, expected, skipped(entries));
    results = out.results;
    errors.push(...out.errors);
  } catch (err) {
    errors.push(err.message);
  }
  const requirementOf = new Map(expected.map((e) => [e.scenario, e.requirement]));
  const skip = skipped(entries);
  const rows = results.map((r) => ({
    scenario: r.scenario,
    requirement: requirementOf.get(r.scenario) ?? 'not in the requirement set',
    checks: r.checks.length,
    ...judge(r, excusesFor(entries, r.scenario)),
  }));
  for (const [scenario, reason] of skip) {
    if (!results.some((r) => r.scenario === scenario) && requirementOf.has(scenario)) rows.push({ scenario, requirement: requirementOf.get(scenario), verdict: 'not-run', reason, ok: true });
  }
  const { missing, unknown } = completeness({ required: expected.map((e) => e.scenario), ran: results.map((r) => r.scenario), entries });
  for (const scenario of missing) rows.push({ scenario, requirement: requirementOf.get(scenario), verdict: 'missing', ok: false });
  for (const e of unknown) errors.push(`baseline/${run.id}.txt:${e.line}: ${e.scenario} is neither in the ${run.spec} requirement set nor run`);
  const c = counts(rows);
  log(`${run.id}: ${summary(c)} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  for (const row of rows.filter((r) => !r.ok)) log(`  ${row.verdict.toUpperCase()} ${row.scenario}: ${unexplainedText(row).slice(0, 300)}`);
  for (const e of errors) log(`  ERROR ${e.split('\n')[0]}`);
  return { id: run.id, title: run.title, direction: run.direction, transport: run.transport, spec: run.spec, rows, errors };
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
  const unexplained = runs.reduce((n, r) => n + counts(r.rows).unexplained + r.errors.length, 0);
  log(`${unexplained === 0 ? 'ok: every non-pass is explained by its baseline' : `${unexplained} unexplained result(s) or error(s)`}; see test/conformance/results.md (${seconds} s)`);
  return unexplained === 0 ? 0 : 1;
}

for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void stopAll().finally(() => process.exit(130)));
process.exitCode = await main().catch(async (err) => {
  log(err.stack ?? String(err));
  return 1;
});
await stopAll();
