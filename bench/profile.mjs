// Where the bridge's CPU goes in one bench scenario, measured in CPU time.
// V8's --cpu-prof samples wall time, so on an oversubscribed box it blames
// whatever call was running when the bridge lost its core (writev, pipe
// writes); `perf record -e cpu-clock` with --perf-basic-prof does not.
//   node bench/profile.mjs relay|m2l|wrap|headline [--c 8] [--seconds 5] [--warm 3] [--inclusive] [--ops on|off]
// --warm: seconds of load before the recording starts; the traced bridge keeps
// compiling its OpenTelemetry code for several seconds (see README, issue 13).
// --ops on: every request traced and exported over OTLP/HTTP to a receiver in
// this process (as row 2's mcp-bridge-ops-on); --ops off: --no-metrics, no traces.
// --top N shows N frames. --match <regex> (repeatable) adds the share of samples
// with a frame matching it anywhere on the stack (e.g. 'opentelemetry|src/ops/'). --inclusive ranks every frame by the share of samples it appears in (itself
// and everything it called), JS and native alike, instead of the nearest own frame.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadUndici } from './lib/deps.mjs';
import { CLI_ENTRY, SERVERS_DIR } from './lib/paths.mjs';
import { ownCpuSeconds, treeCpuSeconds } from './lib/proc-tree.mjs';
import { startLoopbackNode, startProcess } from './lib/spawn.mjs';
import { EVERYTHING_STDIO, otlpSink } from './lib/wrappers.mjs';
import { legacyWorkers, modernWorkers } from './lib/workers.mjs';

const SCENARIOS = {
  relay: { what: 'row 5: 2026 echo → mcp-bridge → node:http floor', legacy: false, floor: 'floor-echo.mjs' },
  m2l: { what: 'row 6: 2026 echo → mcp-bridge → node:http legacy floor', legacy: false, floor: 'floor-legacy-echo.mjs', epoch: 'initialize' },
  wrap: { what: 'row 2: 2025-06-18 session echo → mcp-bridge → server-everything stdio', legacy: true, floor: false },
  headline: { what: 'row 3: 2026 echo → mcp-bridge → server-everything stdio', legacy: false, floor: false },
};
const BRIDGE_READY = /serving \S+ upstream at (http:\/\/[\d.]+:\d+)\/mcp/;
const log = (line) => process.stderr.write(`[profile] ${line}\n`);

const { values, positionals } = parseArgs({ allowPositionals: true, options: { c: { type: 'string', default: '8' }, seconds: { type: 'string', default: '5' }, warm: { type: 'string', default: '3' }, inclusive: { type: 'boolean', default: false }, ops: { type: 'string' }, top: { type: 'string' }, match: { type: 'string', multiple: true } } });
const scenario = SCENARIOS[positionals[0]];
if (!scenario) {
  log(`usage: node bench/profile.mjs ${Object.keys(SCENARIOS).join('|')} [--c 8] [--seconds 5]`);
  process.exit(2);
}
const c = Number(values.c);
const seconds = Math.min(30, Number(values.seconds));
let hasPerf = true;
try {
  execFileSync('perf', ['--version'], { stdio: 'ignore' });
} catch {
  hasPerf = false;
}
if (!hasPerf) log('perf not found: falling back to node --cpu-prof (wall-time samples; see bench/lib/profile-summary.mjs)');

const dir = mkdtempSync(path.join(tmpdir(), 'mcp-bridge-profile-'));
const undici = await loadUndici(log);
const floor = scenario.floor ? await startLoopbackNode('floor', path.join(SERVERS_DIR, scenario.floor)) : undefined;
const target = floor ? [...(scenario.epoch ? ['--upstream-epoch', scenario.epoch] : []), '--upstream', `${floor.url}/mcp`] : ['--', ...EVERYTHING_STDIO];
const nodeArgs = hasPerf ? ['--perf-basic-prof'] : ['--cpu-prof', '--cpu-prof-dir', dir];
const opsArgs = values.ops === 'off' ? ['--no-metrics'] : [];
const env = values.ops === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: await otlpSink(), OTEL_BSP_SCHEDULE_DELAY: '1000' } : {};
const bridge = await startProcess({ name: 'mcp-bridge', command: process.execPath, args: [...nodeArgs, CLI_ENTRY, '--listen', '127.0.0.1:0', '--log-level', 'warn', ...opsArgs, ...target], env, ready: BRIDGE_READY });
const url = `${bridge.url}/mcp`;
const w = scenario.legacy ? await legacyWorkers(undici, url, c) : modernWorkers(undici, url, c);
const run = async (ms) => {
  const t0 = performance.now();
  let n = 0;
  await Promise.all(w.senders.map(async (send) => {
    while (performance.now() - t0 < ms) {
      await send();
      n++;
    }
  }));
  return n;
};
log(`${scenario.what}, c=${c}: warming up`);
await run(Math.min(60, Number(values.warm)) * 1000);
const perfData = path.join(dir, 'perf.data');
const recorder = hasPerf ? spawn('perf', ['record', '-e', 'cpu-clock', '-F', '999', '-g', '-p', String(bridge.pid), '-o', perfData, '--', 'sleep', String(seconds)], { stdio: 'ignore' }) : undefined;
const cpu0 = treeCpuSeconds(bridge.pid);
const own0 = ownCpuSeconds(bridge.pid);
const calls = await run(seconds * 1000);
const cpuUs = ((treeCpuSeconds(bridge.pid) - cpu0) * 1e6) / calls;
const ownUs = ((ownCpuSeconds(bridge.pid) - own0) * 1e6) / calls;
if (recorder) await new Promise((resolve) => recorder.once('exit', resolve));
await w.close();
await bridge.stop();
await floor?.stop();
log(`${calls} calls in ${seconds} s, bridge tree ${cpuUs.toFixed(0)} µs CPU per call, of which the bridge process ${ownUs.toFixed(0)} µs${values.ops ? ` (ops ${values.ops})` : ''}`);

if (hasPerf) {
  const script = execFileSync('perf', ['script', '-i', perfData], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] });
  const top = values.top ? Number(values.top) : undefined;
  process.stdout.write(values.inclusive ? inclusiveFrames(script, top ?? 60) : nearestFrames(script, top ?? 30));
  for (const m of values.match ?? []) process.stdout.write(matching(script, new RegExp(m), calls, seconds));
} else {
  const { readdirSync } = await import('node:fs');
  const { profileText } = await import('./lib/profile-summary.mjs');
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) process.stdout.write(profileText(path.join(dir, f)) + '\n');
}
rmSync(dir, { recursive: true, force: true });


/** Per sample, the nearest frame of this project (or a dependency): its own work plus the runtime work it causes. */
function nearestFrames(text, top) {
  const clean = (frame) => cleanFrame(frame).replace(/JS:[*^~]?/, '');
  const counts = new Map();
  const where = new Map();
  let total = 0;
  for (const frames of stacks(text)) {
    total += 1;
    const own = frames.find((f) => f.includes('/dist/') || f.includes('node_modules'));
    const key = own ? clean(own) : '(node and kernel only: HTTP parsing, sockets, event loop, GC)';
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const leaf = frames[0].includes('[kernel.kallsyms]') ? 'kernel' : frames[0].includes('JS:') ? 'JIT code' : 'node runtime (V8, libuv, C++)';
    where.set(leaf, (where.get(leaf) ?? 0) + 1);
  }
  const leaves = [...where].map(([k, n]) => `${k} ${share(n, total).trim()}`).join(', ');
  return ranked(counts, total, top, [`${total} CPU-time samples; leaf: ${leaves}`, 'nearest project/dependency frame:']);
}

/** The share of samples with a frame matching `re` anywhere on the stack, and what that is per call. */
function matching(text, re, calls, seconds) {
  let total = 0;
  let hits = 0;
  for (const frames of stacks(text)) {
    total += 1;
    if (frames.some((f) => re.test(f))) hits += 1;
  }
  // perf samples at 999 Hz of CPU time: a sample is about 1 ms of it.
  return `${share(hits, total)}  of samples match /${re.source}/ (about ${((hits / 999 / calls) * 1e6).toFixed(1)} µs CPU per call of ${calls} in ${seconds} s)\n`;
}

/** Per frame, the share of samples whose stack holds it anywhere: what it and its callees cost. */
function inclusiveFrames(text, top) {
  const clean = (frame) => cleanFrame(frame).replace(/ \(\/.*\)$/, '');
  const counts = new Map();
  let total = 0;
  for (const frames of stacks(text)) {
    total += 1;
    for (const f of new Set(frames.map(clean))) counts.set(f, (counts.get(f) ?? 0) + 1);
  }
  return ranked(counts, total, top, [`${total} CPU-time samples; share of samples each frame appears in:`]);
}

/** The frames of each sample of `perf script` output, leaf first. */
function* stacks(text) {
  for (const sample of text.split('\n\n')) {
    const frames = sample.split('\n').slice(1).map((l) => l.trim()).filter(Boolean);
    if (frames.length > 0) yield frames;
  }
}

/** A perf frame without its address, offset and this project's dist/ or node_modules/ prefix. */
function cleanFrame(frame) {
  return frame
    .replace(/^[0-9a-f]+ /, '')
    .replace(/\+0x[0-9a-f]+ \(.*\)$/, '')
    .replace(`file://${path.resolve(CLI_ENTRY, '../../..')}/dist/`, '')
    .replace(/\/.*node_modules\//, '');
}

function share(n, total) {
  return `${((100 * n) / total).toFixed(1).padStart(5)}%`;
}

function ranked(counts, total, top, head) {
  const lines = [...head];
  for (const [k, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${share(n, total)}  ${k}`);
  return lines.join('\n') + '\n';
}
