// Two builds of the bridge side by side with the bare node:http relay, in one
// run: rows 5 and 6 (2026 echo in front of the node:http floors), each target
// measured in alternating slices so drift in the machine's load hits all alike.
//   node bench/build-ab.mjs <other build's dist/bin/mcp-bridge.js> [c=8] [rounds=5]
// e.g. git worktree add /tmp/base HEAD~1 && (cd /tmp/base && npm ci && npm run build)
import { loadavg } from 'node:os';
import path from 'node:path';
import { loadUndici } from './lib/deps.mjs';
import { CLI_ENTRY, SERVERS_DIR } from './lib/paths.mjs';
import { treeCpuSeconds } from './lib/proc-tree.mjs';
import { startLoopbackNode, startProcess } from './lib/spawn.mjs';
import { modernWorkers } from './lib/workers.mjs';
const BASE = process.argv[2];
if (!BASE) {
  process.stderr.write('usage: node bench/build-ab.mjs <other build\'s dist/bin/mcp-bridge.js> [c=8] [rounds=5]\n');
  process.exit(2);
}
const C = Number(process.argv[3] ?? 8);
const ROUNDS = Math.min(20, Number(process.argv[4] ?? 5));
const SLICE_MS = 2000;
const undici = await loadUndici(() => {});
const floor = await startLoopbackNode('floor', path.join(SERVERS_DIR, 'floor-echo.mjs'));
const lfloor = await startLoopbackNode('lfloor', path.join(SERVERS_DIR, 'floor-legacy-echo.mjs'));
const READY = /serving \S+ upstream at (http:\/\/[\d.]+:\d+)\/mcp/;
const bridge = (name, cli, up, epoch) => startProcess({ name, command: process.execPath, args: [cli, '--listen', '127.0.0.1:0', '--log-level', 'warn', ...(epoch ? ['--upstream-epoch', epoch] : []), '--upstream', up], ready: READY });
const NEW = CLI_ENTRY;
const targets = [
  ['relay (bare)', await startLoopbackNode('relay', path.join(SERVERS_DIR, 'bare-relay.mjs'), [`${floor.url}/mcp`])],
  ['row 5 other', await bridge('b5', BASE, `${floor.url}/mcp`)],
  ['row 5 this', await bridge('n5', NEW, `${floor.url}/mcp`)],
  ['row 6 other', await bridge('b6', BASE, `${lfloor.url}/mcp`, 'initialize')],
  ['row 6 this', await bridge('n6', NEW, `${lfloor.url}/mcp`, 'initialize')],
];
const run = async (w, ms) => { const t0 = performance.now(); let n = 0; const lat = []; await Promise.all(w.senders.map(async (s) => { while (performance.now() - t0 < ms) { const a = performance.now(); await s(); lat.push(performance.now() - a); n++; } })); return { n, lat }; };
const ws = targets.map(([, t]) => modernWorkers(undici, `${t.url}/mcp`, C));
// A fresh process compiles its hot paths first (bench/README, Cells).
for (const w of ws) await run(w, 4000);
const acc = targets.map(() => ({ n: 0, cpu: 0, ms: 0, lat: [] }));
for (let r = 0; r < ROUNDS; r++) for (let i = 0; i < targets.length; i++) {
  const pid = targets[i][1].pid; const c0 = treeCpuSeconds(pid); const t0 = performance.now();
  const { n, lat } = await run(ws[i], SLICE_MS);
  acc[i].n += n; acc[i].cpu += treeCpuSeconds(pid) - c0; acc[i].ms += performance.now() - t0; acc[i].lat.push(...lat);
}
const p50 = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const relay = acc[0]; const rc = (relay.cpu * 1e6) / relay.n, rr = relay.n / relay.ms * 1000, rp = p50(relay.lat);
console.log(`c=${C}, ${ROUNDS} rounds of ${SLICE_MS} ms slices, load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
for (let i = 0; i < targets.length; i++) {
  const a = acc[i]; const cpu = (a.cpu * 1e6) / a.n, rate = a.n / a.ms * 1000, p = p50(a.lat);
  console.log(`${targets[i][0].padEnd(14)} ${rate.toFixed(0).padStart(6)} calls/s  ${cpu.toFixed(0).padStart(4)} µs/call  p50 ${p.toFixed(2)} ms   vs relay: CPU ${(cpu / rc).toFixed(2)}×, calls/s ${(rate / rr).toFixed(2)}×, p50 ${(p / rp).toFixed(2)}×`);
}
for (const w of ws) await w.close();
for (const [, t] of targets) await t.stop();
await floor.stop(); await lfloor.stop();
process.exit(0);
