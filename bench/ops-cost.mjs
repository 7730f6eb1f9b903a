// What the ops layer (src/ops: metrics, traces) adds to one request, in CPU µs,
// without the rest of the bridge: the observed modern handler in front of an
// observed link whose upstream answers at once. Modes, each in a child process
// of its own (the OpenTelemetry API is global per process):
//   off      no metrics, no traces (the wrappers are not installed: the floor)
//   metrics  metrics only (the daemon's default)
//   on       metrics + every request traced and exported over OTLP/HTTP (JSON) to
//            a receiver in the parent process (as row 2's mcp-bridge-ops-on)
//   node bench/ops-cost.mjs [--calls 100000] [--rounds 3] [--modes off,on,base:on] [--base other/dist]
// (after npm run build). `base:<mode>` runs that mode on another build's dist/
// (`--base`, inside this checkout so it finds node_modules), in the same
// alternating rounds: an A/B of a change.
// Bounded: a fixed number of calls per round; a child runs at most 60 s.
import { execFileSync, fork } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '3' }, child: { type: 'string' }, modes: { type: 'string', default: 'off,metrics,on' }, base: { type: 'string' }, dist: { type: 'string' } } });
const calls = Math.min(2_000_000, Number(values.calls));

if (values.child) await child(values.child);
else await parent();

async function parent() {
  let exported = 0;
  const sink = http.createServer((req, res) => {
    req.on('data', (c) => (exported += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise((r) => sink.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${sink.address().port}`;
  const figures = Object.fromEntries(values.modes.split(',').map((m) => [m, []]));
  for (let round = 0; round < Math.min(10, Number(values.rounds)); round++) {
    for (const mode of Object.keys(figures)) {
      const [dist, kind] = mode.startsWith('base:') ? [values.base, mode.slice(5)] : [undefined, mode];
      const env = { ...process.env, ...(kind === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '1000' } : {}) };
      const out = await new Promise((resolve, reject) => {
        const p = fork(fileURLToPath(import.meta.url), ['--child', kind, '--calls', String(calls), ...(dist ? ['--dist', dist] : [])], { env, stdio: ['ignore', 'pipe', 'inherit', 'ipc'], timeout: 60_000 });
        p.once('message', resolve);
        p.once('exit', (code) => (code ? reject(new Error(`${mode} exited ${code}`)) : undefined));
      });
      figures[mode].push(out.cpuUs);
    }
  }
  sink.close();
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const off = figures.off ? median(figures.off) : 0;
  console.log(`ops layer CPU per request${values.base ? ` (base: ${values.base})` : ''}, median of ${Math.min(10, Number(values.rounds))} rounds of ${calls} calls (node ${process.version}, ${execFileSync('nproc').toString().trim()} cores):`);
  for (const [mode, xs] of Object.entries(figures)) {
    console.log(`  ${mode.padEnd(8)} ${median(xs).toFixed(2).padStart(6)} µs${mode === 'off' ? '' : `  (+${(median(xs) - off).toFixed(2)} µs over off)`}   rounds: ${xs.map((x) => x.toFixed(2)).join(' ')}`);
  }
  console.log(`  exported ${(exported / 1024 / 1024).toFixed(1)} MiB of OTLP`);
}

async function child(mode) {
  const dist = values.dist ? pathToFileURL(path.resolve(values.dist)).href : new URL('../dist', import.meta.url).href;
  const { BridgeOps } = await import(`${dist}/src/ops/bridge-ops.js`);
  const { silentLogger } = await import(`${dist}/src/log.js`);
  // Builds since the SDK loads lazily take their tracing from startTracing(); older ones started it themselves.
  const { startTracing } = await import(`${dist}/src/ops/tracing.js`);
  const tracing = await startTracing(process.env);
  const facts = { epoch: 'initialize', transport: 'stdio', protocolVersion: '2025-06-18' };
  const ops = new BridgeOps({ tracing, metrics: mode !== 'off', corsOrigins: [], upstream: { kind: 'command', command: 'none', args: [] }, facts, logger: silentLogger });
  ops.bind({ inflight: () => 0, downstreamSessions: () => ({}), pool: () => undefined, children: () => 1, childRestarts: () => 0, parked: () => 0, listens: () => 0, draining: () => false, crashes: () => undefined });
  const answer = { result: { content: [{ type: 'text', text: 'Echo: hi' }] } };
  const link = { call: (req) => Promise.resolve(answer) };
  ops.observeLink(link);
  const handler = ops.modern({
    handle: (req) => link.call({ method: req.method, params: req.params }).then((o) => ({ jsonrpc: '2.0', id: req.id, ...o })),
    close: async () => undefined,
  });
  const ctx = { signal: new AbortController().signal, notify: () => undefined, transport: 'http', headers: {} };
  const one = (i) => handler.handle({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' }, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } }, ctx);
  // Eight in flight, as row 2's c = 8; each turns the event loop between calls, as socket reads
  // do, so the exporter's timer and HTTP exchanges run (else its queue fills and spans are dropped).
  // The warm-up lets the JIT settle.
  const turn = () => new Promise((r) => setImmediate(r));
  const run = async (n) => {
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < n) {
        await one(next++);
        await turn();
      }
    }));
  };
  await run(Math.min(calls, 50_000));
  const t0 = process.cpuUsage();
  await run(calls);
  const d = process.cpuUsage(t0);
  await ops.close();
  process.send({ cpuUs: (d.user + d.system) / calls });
  process.disconnect();
}
