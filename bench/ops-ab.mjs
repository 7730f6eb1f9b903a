// Row 2's ops comparison without the row: bridges wrapping server-everything
// over stdio, all started at once and measured in alternating windows (order
// reversed every round), so drift on a shared box hits each alike. Per mode:
// calls/s, CPU per call of the bridge process and of its stdio child apart
// (utime+stime, all threads), latency, and V8's GC from --trace-gc.
//   node bench/ops-ab.mjs [--modes 'off;on;on|OTEL_TRACES_SAMPLER=always_off'] [--c 8] [--warm 6] [--ms 2000] [--rounds 5] [--per-round] [--node-args='<node flags>']
// A mode is off (--no-metrics), metrics (the default) or on (metrics, every
// request traced to an OTLP/HTTP receiver in this process, as row 2), then
// `|NAME=value` for more environment. --per-round prints each window, which
// shows how long the traced bridge takes to reach its steady cost. --node-args
// adds node flags to every bridge (e.g. '--cpu-prof --cpu-prof-dir=/tmp/p': a
// profile per bridge when it stops). Besides CPU of the whole process, the
// bridge's main thread is read alone (/proc/<pid>/task/<pid>/stat).
import http from 'node:http';
import { parseArgs } from 'node:util';
import { loadUndici } from './lib/deps.mjs';
import { CLI_ENTRY } from './lib/paths.mjs';
import { mainThreadCpuSeconds, ownCpuSeconds, syscallCounts, treePids } from './lib/proc-tree.mjs';
import { startProcess } from './lib/spawn.mjs';
import { EVERYTHING_STDIO } from './lib/wrappers.mjs';
import { legacyWorkers } from './lib/workers.mjs';

const BRIDGE_READY = /serving \S+ upstream at (http:\/\/[\d.]+:\d+)\/mcp/;
const GC_LINE = /(Scavenge|Mark-Compact)[^,]*?,\s*([\d.]+)\s*\/\s*[\d.]+\s*ms/;
const log = (line) => process.stderr.write(`[ops-ab] ${line}\n`);

const { values } = parseArgs({
  options: {
    modes: { type: 'string', default: 'off;on' },
    c: { type: 'string', default: '8' },
    warm: { type: 'string', default: '6' },
    ms: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '5' },
    'per-round': { type: 'boolean', default: false },
    'node-args': { type: 'string', default: '' },
  },
});
const c = Number(values.c);
const rounds = Math.min(50, Number(values.rounds));
const windowMs = Math.min(30_000, Number(values.ms));
const undici = await loadUndici(log);
const sink = await otlpSink();

const targets = [];
try {
  for (const mode of values.modes.split(';').map((m) => m.trim()).filter(Boolean)) targets.push(await start(mode));
  for (const t of targets) await run(t, Math.min(60, Number(values.warm)) * 1000, false);
  for (let r = 0; r < rounds; r++) for (const t of r % 2 ? [...targets].reverse() : targets) await run(t, windowMs, true);
  console.table(targets.map(summary));
  log(`${sink.exports} OTLP exports received, ${(sink.bytes / 1e6).toFixed(1)} MB`);
} finally {
  for (const t of targets) {
    await t.workers.close();
    await t.proc.stop();
  }
}

async function start(mode) {
  const [base, ...extra] = mode.split('|');
  const env = base === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_BSP_SCHEDULE_DELAY: '1000' } : {};
  for (const kv of extra) {
    const eq = kv.indexOf('=');
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const flags = base === 'off' ? ['--no-metrics'] : [];
  // --trace-gc writes to stdout, which a --listen bridge leaves unused.
  const args = ['--trace-gc', ...values['node-args'].split(' ').filter(Boolean), CLI_ENTRY, '--listen', '127.0.0.1:0', '--log-level', 'warn', ...flags, '--', ...EVERYTHING_STDIO];
  const proc = await startProcess({ name: mode, command: process.execPath, args, env, ready: BRIDGE_READY });
  const gc = { scavenges: 0, scavengeMs: 0, marks: 0, markMs: 0 };
  proc.child.stdout.on('data', (text) => {
    for (const line of String(text).split('\n')) {
      const m = GC_LINE.exec(line);
      if (!m) continue;
      if (m[1] === 'Scavenge') {
        gc.scavenges++;
        gc.scavengeMs += Number(m[2]);
      } else {
        gc.marks++;
        gc.markMs += Number(m[2]);
      }
    }
  });
  const workers = await legacyWorkers(undici, `${proc.url}/mcp`, c);
  const child = treePids(proc.pid).find((pid) => pid !== proc.pid);
  return { mode, proc, child, workers, gc, total: { calls: 0, ms: 0, own: 0, main: 0, child: 0, scavenges: 0, scavengeMs: 0, marks: 0, markMs: 0, bridgeSyscalls: 0, childSyscalls: 0, latencies: [] } };
}

async function run(t, ms, record) {
  const own0 = ownCpuSeconds(t.proc.pid);
  const main0 = mainThreadCpuSeconds(t.proc.pid);
  const child0 = ownCpuSeconds(t.child);
  const io0 = [syscallCounts(t.proc.pid), syscallCounts(t.child)];
  const gc0 = { ...t.gc };
  const latencies = [];
  const t0 = performance.now();
  await Promise.all(
    t.workers.senders.map(async (send) => {
      while (performance.now() - t0 < ms) {
        const s = performance.now();
        await send();
        latencies.push(performance.now() - s);
      }
    }),
  );
  if (!record) return;
  const calls = latencies.length;
  const own = ownCpuSeconds(t.proc.pid) - own0;
  const x = t.total;
  x.calls += calls;
  x.ms += performance.now() - t0;
  x.own += own;
  x.main += mainThreadCpuSeconds(t.proc.pid) - main0;
  x.child += ownCpuSeconds(t.child) - child0;
  const io1 = [syscallCounts(t.proc.pid), syscallCounts(t.child)];
  x.bridgeSyscalls += io1[0].reads + io1[0].writes - io0[0].reads - io0[0].writes;
  x.childSyscalls += io1[1].reads + io1[1].writes - io0[1].reads - io0[1].writes;
  for (const k of ['scavenges', 'scavengeMs', 'marks', 'markMs']) x[k] += t.gc[k] - gc0[k];
  x.latencies.push(...latencies);
  if (values['per-round']) log(`${t.mode}: ${calls} calls, bridge ${Math.round((own * 1e6) / calls)} µs/call`);
}

function summary(t) {
  const x = t.total;
  const lat = x.latencies.sort((a, b) => a - b);
  const q = (p) => lat[Math.floor(p * (lat.length - 1))]?.toFixed(1);
  const perCall = (v) => Math.round((v * 1e6) / x.calls);
  return {
    mode: t.mode,
    'calls/s': Math.round(x.calls / (x.ms / 1000)),
    'bridge µs/call': perCall(x.own),
    'main thread µs/call': perCall(x.main),
    'child µs/call': perCall(x.child),
    'p50 ms': q(0.5),
    'p99 ms': q(0.99),
    'scavenges /1k calls': ((x.scavenges * 1000) / x.calls).toFixed(1),
    'GC µs/call': (((x.scavengeMs + x.markMs) * 1000) / x.calls).toFixed(1),
    // Read/write system calls per call: fewer means more requests share one write (stdio-process flush).
    'bridge r+w /call': (x.bridgeSyscalls / x.calls).toFixed(2),
    'child r+w /call': (x.childSyscalls / x.calls).toFixed(2),
  };
}

/** An OTLP/HTTP receiver on 127.0.0.1 that counts and drops each export (as row 2's). */
function otlpSink() {
  return new Promise((resolve) => {
    const out = { url: '', exports: 0, bytes: 0 };
    const server = http.createServer((req, res) => {
      out.exports++;
      req.on('data', (d) => (out.bytes += d.length));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      out.url = `http://127.0.0.1:${server.address().port}`;
      resolve(out);
    });
  });
}
