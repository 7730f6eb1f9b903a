// `npm run bench` (issue 7): every row in one run on this machine, all traffic
// on 127.0.0.1, every loop bounded; writes bench/results/latest.{md,json}.
//   node bench/run.mjs [--quick] [--rows 1,2,3,4,5,6,7] [--profile]
// Also renders the charts (bench/lib/charts.mjs) as SVG files beside them.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadUndici, peerEntries, TOOL_VERSIONS } from './lib/deps.mjs';
import { CLI_ENTRY, RESULTS_DIR } from './lib/paths.mjs';
import { profileText } from './lib/profile-summary.mjs';
import { writeCharts } from './lib/charts.mjs';
import { addRatios, evaluateTargets, markdown } from './lib/report.mjs';
import { stopAll } from './lib/spawn.mjs';
import { rowHeadline } from './rows/headline.mjs';
import { rowMemory } from './rows/memory.mjs';
import { rowFloor, rowModernToLegacy, rowRelay } from './rows/relay-rows.mjs';
import { rowScale } from './rows/scale.mjs';
import { rowWrapStdio } from './rows/wrap-stdio.mjs';

/** Time per cell. full: about 10 minutes in all on 2 cores; quick: about 2 minutes. */
// Warm-up goes on in settle slices (at most maxSettleSlices) while a target still spawns or boots children.
const PLANS = {
  full: { warmupMs: 1_000, coldWarmupMs: 6_000, measureMs: 4_500, rounds: 3, maxCalls: 100_000, settleSliceMs: 400, maxSettleSlices: 20 },
  quick: { warmupMs: 200, measureMs: 800, rounds: 2, maxCalls: 50_000, settleSliceMs: 200, maxSettleSlices: 10 },
};
/** quick checks the harness: c=64 (64 supergateway children, one slow cold start per stateless call) is left to the full run. */
const CONCURRENCIES = { full: [1, 8, 64], quick: [1, 8] };
/** A run that is not done by then stops itself. */
const RUN_LIMIT_MS = { full: 16 * 60_000, quick: 5 * 60_000 };

const ROWS = { 1: rowRelay, 2: rowWrapStdio, 3: rowHeadline, 4: rowMemory, 5: rowFloor, 6: rowModernToLegacy, 7: rowScale };

const log = (line) => process.stderr.write(`[bench] ${line}\n`);

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rows: { type: 'string', default: '1,2,3,4,5,6,7' },
    profile: { type: 'boolean', default: false },
  },
});
const mode = values.quick ? 'quick' : 'full';
const rows = values.rows.split(',').map((r) => Number(r.trim())).filter((r) => ROWS[r]);
if (!existsSync(CLI_ENTRY)) {
  log(`${path.relative(process.cwd(), CLI_ENTRY)} is missing: run \`npm run build\` first (npm run bench does).`);
  process.exit(2);
}

const started = Date.now();
const meta = {
  mode,
  date: new Date().toISOString(),
  cpu: cpus()[0]?.model ?? 'unknown CPU',
  cores: cpus().length,
  node: process.versions.node,
  loadavg: loadavg().map((x) => x.toFixed(2)).join(' '),
  plan: PLANS[mode],
  concurrencies: CONCURRENCIES[mode],
  rows,
  tools: TOOL_VERSIONS,
};

const limit = setTimeout(() => {
  log(`run limit of ${RUN_LIMIT_MS[mode] / 1000} s reached: stopping`);
  void stopAll().finally(() => process.exit(1));
}, RUN_LIMIT_MS[mode]);
limit.unref();
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void stopAll().finally(() => process.exit(130)));

const undici = await loadUndici(log);
const peers = rows.some((r) => r === 2 || r === 3 || r === 4) ? peerEntries(log) : {};
const cpuProfDir = values.profile ? path.join(RESULTS_DIR, 'profiles', meta.date.replace(/[:.]/g, '-')) : undefined;
if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
const ctx = { undici, peers, mode, plan: PLANS[mode], concurrencies: CONCURRENCIES[mode], log, cpuProfDir };

const cells = [];
try {
  for (const r of rows) {
    log(`row ${r} …`);
    try {
      cells.push(...(await ROWS[r](ctx)));
    } catch (err) {
      // One row failing (a peer that will not start, say) leaves the others' figures standing.
      log(`row ${r} failed: ${err.stack ?? err}`);
      cells.push({ row: r, kind: 'row-failed', target: 'row', label: `row ${r}`, failed: String(err.message ?? err).slice(0, 300) });
      await stopAll();
    }
  }
} finally {
  await stopAll();
}

addRatios(cells);
const targets = evaluateTargets(cells);
meta.seconds = (Date.now() - started) / 1000;
mkdirSync(RESULTS_DIR, { recursive: true });
writeFileSync(path.join(RESULTS_DIR, 'latest.json'), JSON.stringify({ meta, cells, targets }, null, 2) + '\n');
writeFileSync(path.join(RESULTS_DIR, 'latest.md'), markdown({ meta, cells, targets }));
for (const file of await writeCharts({ meta, cells }, RESULTS_DIR)) log(`chart ${path.relative(process.cwd(), file)}`);
if (cpuProfDir) {
  for (const file of readdirSync(cpuProfDir).filter((x) => x.endsWith('.cpuprofile'))) {
    const text = profileText(path.join(cpuProfDir, file));
    writeFileSync(path.join(cpuProfDir, file.replace(/\.cpuprofile$/, '.txt')), text + '\n');
  }
  log(`profiles and their summaries: ${path.relative(process.cwd(), cpuProfDir)}/`);
}
for (const t of targets) log(`${t.met === undefined ? 'not measured' : t.met ? 'met   ' : 'MISSED'}  ${t.text}`);
log(`wrote ${path.relative(process.cwd(), path.join(RESULTS_DIR, 'latest.md'))} and latest.json in ${meta.seconds.toFixed(0)} s`);
clearTimeout(limit);
