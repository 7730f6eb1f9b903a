// One bench item (issue 14): what mounting the bridge in an express 5 app costs
// per call against the same bridge as a bare node:http listener. 2026 echo
// calls to the SDK v2 echo server through each host, c = 8 keep-alive
// connections, rounds alternating between targets; CPU per call is the host
// process's utime+stime over the calls it answered (/proc/<pid>/stat).
//   npm run build && node bench/embed-express.mjs [--seconds 2] [--rounds 3]
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ECHO_EXPECT, modernEcho } from './lib/mcp-wire.mjs';
import { SERVERS_DIR } from './lib/paths.mjs';
import { ownCpuSeconds } from './lib/proc-tree.mjs';
import { startLoopbackNode, startMcpBridge, stopAll } from './lib/spawn.mjs';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '2' }, rounds: { type: 'string', default: '3' }, c: { type: 'string', default: '8' } } });
const sliceMs = Number(values.seconds) * 1000;
const rounds = Number(values.rounds);
const concurrency = Number(values.c);
const MAX_CALLS = 200_000;
const log = (line) => process.stderr.write(`[bench:embed] ${line}\n`);

/** Closed loop: `concurrency` workers, each with its own keep-alive connection, for `ms`; every answer checked. */
async function slice(url, ms, route = '/tools/mcp') {
  const echo = modernEcho();
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(route, url);
  let calls = 0;
  let id = 0;
  const deadline = Date.now() + ms;
  const one = () =>
    new Promise((resolve, reject) => {
      const body = echo.body(++id);
      const req = http.request(target, { method: 'POST', agent, headers: { ...echo.headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c) => (text += c)).on('end', () => (text.includes(ECHO_EXPECT) ? resolve() : reject(new Error(`bad answer ${res.statusCode}: ${text.slice(0, 200)}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  const worker = async () => {
    while (Date.now() < deadline && calls < MAX_CALLS) {
      await one();
      calls++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  agent.destroy();
  return calls;
}

const upstream = await startLoopbackNode('sdk-v2-echo', path.join(SERVERS_DIR, 'sdk-v2-echo.mjs'));
// The daemon (the built CLI, its own node:http face at /mcp) is context: embedding on node:http should cost what it does.
const modes = ['daemon', 'node-http', 'express', 'express-json'];
const routeOf = (mode) => (mode === 'daemon' ? '/mcp' : '/tools/mcp');
const hosts = {};
try {
  for (const mode of modes) {
    hosts[mode] = mode === 'daemon' ? await startMcpBridge(`${upstream.url}/mcp`) : await startLoopbackNode(`embed-${mode}`, path.join(SERVERS_DIR, 'embed-host.mjs'), [mode, `${upstream.url}/mcp`]);
  }
  for (const mode of modes) await slice(hosts[mode].url, 500, routeOf(mode)); // warm-up: JIT, keep-alive agents
  const totals = Object.fromEntries(modes.map((m) => [m, { calls: 0, cpu: 0 }]));
  for (let r = 0; r < rounds; r++) {
    for (const mode of r % 2 === 0 ? modes : [...modes].reverse()) {
      const before = ownCpuSeconds(hosts[mode].pid);
      const calls = await slice(hosts[mode].url, sliceMs, routeOf(mode));
      totals[mode].cpu += ownCpuSeconds(hosts[mode].pid) - before;
      totals[mode].calls += calls;
    }
  }
  const us = (m) => (totals[m].cpu / totals[m].calls) * 1e6;
  const rows = modes.map((m) => ({ target: m, calls: totals[m].calls, callsPerSecond: Math.round(totals[m].calls / ((rounds * sliceMs) / 1000)), cpuUsPerCall: Math.round(us(m)), vsNodeHttpUs: Math.round(us(m) - us('node-http')) }));
  process.stdout.write(`| host (c = ${concurrency}) | calls/s | host CPU per call | vs node:http |\n|---|---|---|---|\n`);
  for (const r of rows) process.stdout.write(`| ${r.target} | ${r.callsPerSecond} | ${r.cpuUsPerCall} µs | ${r.vsNodeHttpUs >= 0 ? '+' : ''}${r.vsNodeHttpUs} µs |\n`);
  process.stdout.write(JSON.stringify({ concurrency, sliceMs, rounds, rows }) + '\n');
} finally {
  await stopAll();
}
