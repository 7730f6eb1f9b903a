// Scale-out figures for the README (issue 16), small and bounded, on loopback:
//  1. calls/s of stateless 2026-07-28 `tools/call echo` through HAProxy in front of one replica, then three;
//  2. the added latency of an MRTR retry that lands on another replica and is forwarded to the owner.
// Usage: npm run build && node bench/cluster-figures.mjs [seconds per round=6] [concurrency=16] [retries of each kind=40]
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { modernRequestHeaders } from '../dist/src/wire/modern-headers.js';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const CLI = new URL('../dist/bin/mcp-bridge.js', import.meta.url).pathname;
const SECRET = 'bench-cluster-secret-0123456789abcdef-0123456789';
const V = '2026-07-28';
const [SECONDS, CONCURRENCY, RETRIES] = [Number(process.argv[2] ?? 6), Number(process.argv[3] ?? 16), Number(process.argv[4] ?? 40)];
const MAX_CALLS = 200_000;

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

function startReplica(port, ports) {
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [CLI, '--listen', `127.0.0.1:${port}`, '--log-level', 'warn', '--cluster-self', url,
    '--cluster-peers', ports.map((p) => `http://127.0.0.1:${p}`).join(','), '--cluster-secret', SECRET, '--cluster-handoff', '0',
    '--', process.execPath, EVERYTHING, 'stdio'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica ${port} did not start: ${err}`)), 30_000);
    child.stderr.setEncoding('utf8').on('data', (c) => {
      err += c;
      if (err.includes('serving')) {
        clearTimeout(timer);
        resolve({ url, child });
      }
    });
  });
}

async function startHaproxy(ports) {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-bridge-bench-haproxy-'));
  const cfg = path.join(dir, 'haproxy.cfg');
  writeFileSync(cfg, ['global', '  maxconn 4000', 'defaults', '  mode http', '  timeout connect 2s', '  timeout client 60s', '  timeout server 60s',
    'frontend mcp', `  bind 127.0.0.1:${port}`, '  default_backend bridges', 'backend bridges', '  balance roundrobin',
    ...ports.map((p, i) => `  server b${i} 127.0.0.1:${p}`), ''].join('\n'));
  const child = spawn('haproxy', ['-db', '-f', cfg], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, close: () => { child.kill('SIGTERM'); rmSync(dir, { recursive: true, force: true }); } };
}

const meta = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };

async function load(url) {
  const params = { name: 'echo', arguments: { message: 'hi' }, _meta: meta };
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...modernRequestHeaders({ method: 'tools/call', params }, V) };
  const until = performance.now() + SECONDS * 1000;
  let ok = 0;
  let failed = 0;
  let id = 0;
  const worker = async () => {
    while (performance.now() < until && ok + failed < MAX_CALLS) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params });
      const res = await fetch(`${url}/mcp`, { method: 'POST', headers, body }).catch(() => undefined);
      const text = res ? await res.text() : '';
      if (text.includes('Echo: hi')) ok++;
      else failed++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { callsPerSecond: Math.round(ok / ((performance.now() - started) / 1000)), ok, failed };
}

/**
 * Elicitation calls on replica `home`, their retries sent alternately to `home` itself and to `other`
 * (which forwards them to `home`), so both kinds see the same machine at the same moments.
 */
async function retryLatency(home, other) {
  const timings = { local: [], forwarded: [] };
  let retries = 0;
  let measuring = false;
  const client = new Client({ name: 'bench', version: '1' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: V } } });
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'bench', check: true } }));
  const timedFetch = async (input, init) => {
    const isRetry = typeof init?.body === 'string' && init.body.includes('"requestState"');
    const kind = isRetry && retries++ % 2 === 1 ? 'forwarded' : 'local';
    const target = kind === 'forwarded' ? String(input).replace(home, other) : input;
    const t = performance.now();
    const res = await fetch(target, init);
    const body = await res.arrayBuffer();
    if (isRetry && measuring) timings[kind].push(performance.now() - t);
    return new Response(body, { status: res.status, headers: res.headers });
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${home}/mcp`), { fetch: timedFetch }));
  for (let i = 0; i < 6; i++) await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }); // warm up: children, connections
  measuring = true;
  for (let i = 0; i < 2 * RETRIES; i++) await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
  await client.close();
  const summary = (list) => {
    list.sort((a, b) => a - b);
    const q = (p) => Math.round(list[Math.min(list.length - 1, Math.floor(p * list.length))] * 100) / 100;
    return { median: q(0.5), p90: q(0.9), n: list.length };
  };
  return { local: summary(timings.local), forwarded: summary(timings.forwarded) };
}

const stopAll = (replicas) => Promise.all(replicas.map(({ child }) => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); })));

const haproxyVersion = execFileSync('haproxy', ['-v']).toString().split('\n')[0];
const figures = { machine: `${os.cpus().length} cores, ${os.cpus()[0]?.model}`, node: process.version, haproxy: haproxyVersion, seconds: SECONDS, concurrency: CONCURRENCY };

// Both set-ups run side by side and are loaded in turn, round after round, so a shared machine's
// swings in load fall on both alike; each figure is the median of its rounds.
const ROUNDS = 3;
const onePorts = [await freePort()];
const threePorts = [await freePort(), await freePort(), await freePort()];
const one = await Promise.all(onePorts.map((p) => startReplica(p, onePorts)));
const three = await Promise.all(threePorts.map((p) => startReplica(p, threePorts)));
const lbOne = await startHaproxy(onePorts);
const lbThree = await startHaproxy(threePorts);
await load(lbOne.url); // warm-up passes: children spawned, JIT warm
await load(lbThree.url);
const rounds = { oneReplica: [], threeReplicas: [] };
for (let i = 0; i < ROUNDS; i++) {
  rounds.oneReplica.push(await load(lbOne.url));
  rounds.threeReplicas.push(await load(lbThree.url));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [k, list] of Object.entries(rounds)) {
  figures[k] = { callsPerSecond: median(list.map((r) => r.callsPerSecond)), rounds: list.map((r) => r.callsPerSecond), failed: list.reduce((n, r) => n + r.failed, 0) };
}
figures.retry = await retryLatency(three[0].url, three[1].url);
figures.addedMedianMs = Math.round((figures.retry.forwarded.median - figures.retry.local.median) * 100) / 100;
lbOne.close();
lbThree.close();
await stopAll([...one, ...three]);
process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
