// What a log call costs: the bridge's own logger (src/log.ts) against pino
// writing the same JSON lines (issue 13: "consider pino if it costs no
// throughput"). Each item runs in a child process of its own whose stderr is
// /dev/null, so both write through the same kind of descriptor:
//   line     an info line with three fields, one nested (what a session open writes)
//   dropped  a debug call at the default level, info: what every request pays
//            (the per-request lines are debug; nothing is written)
//   child    an info line through a child logger with two base fields
// pino runs with the bridge's line shape (`t`, `level` as a name, `event`),
// once with a synchronous destination (as src/log.ts writes) and once with
// sonic-boom's buffered one (pino's fast path: lines may be lost on a crash).
//   node bench/logger-cost.mjs [--lines 100000] [--rounds 3]   (after npm run build)
// pino is installed on first use into bench/.deps/logger/ (git-ignored).
// Bounded: a fixed count per item and round; each child runs at most 60 s.
import { fork } from 'node:child_process';
import { openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadLoggerDeps } from './lib/deps.mjs';

const { values } = parseArgs({ options: { lines: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '3' }, child: { type: 'string' }, item: { type: 'string' } } });
const lines = Math.min(1_000_000, Number(values.lines));
const LOGGERS = ['mcp-bridge', 'pino-sync', 'pino-buffered'];
const ITEMS = { line: lines, dropped: lines * 20, child: lines };

if (values.child) await child(values.child, values.item);
else await parent();

async function parent() {
  await loadLoggerDeps((l) => process.stderr.write(`[logger-cost] ${l}\n`));
  const figures = {};
  for (let round = 0; round < Math.min(10, Number(values.rounds)); round++) {
    for (const item of Object.keys(ITEMS)) {
      for (const logger of LOGGERS) {
        const devNull = openSync('/dev/null', 'w');
        const out = await new Promise((resolve, reject) => {
          const p = fork(fileURLToPath(import.meta.url), ['--child', logger, '--item', item, '--lines', String(lines)], { stdio: ['ignore', 'inherit', devNull, 'ipc'], timeout: 60_000 });
          p.once('message', resolve);
          p.once('exit', (code) => (code ? reject(new Error(`${logger} ${item} exited ${code}`)) : undefined));
        });
        ((figures[item] ??= {})[logger] ??= []).push(out.ns);
      }
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`CPU per call (ns), median of ${Math.min(10, Number(values.rounds))} rounds (node ${process.version}):`);
  console.log(`| item | calls | ${LOGGERS.join(' | ')} |`);
  console.log(`|---|---:|${LOGGERS.map(() => '---:').join('|')}|`);
  for (const [item, by] of Object.entries(figures)) console.log(`| ${item} | ${ITEMS[item]} | ${LOGGERS.map((l) => median(by[l]).toFixed(0)).join(' | ')} |`);
}

async function makeLogger(kind) {
  if (kind === 'mcp-bridge') {
    const { createLogger } = await import('../dist/src/log.js');
    // As the daemon builds it: JSON (stderr is not a terminal), no configured secrets.
    return createLogger('info', {}, undefined, [], 'json');
  }
  const { pino } = await loadLoggerDeps(() => undefined);
  const destination = pino.destination({ dest: 2, sync: kind === 'pino-sync', minLength: kind === 'pino-sync' ? 0 : 4096 });
  const p = pino(
    {
      level: 'info',
      base: undefined,
      messageKey: 'event',
      timestamp: () => `,"t":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  // The bridge's call shape (event, fields) on pino's (fields, message).
  const wrap = (l) => ({
    debug: (e, f) => l.debug(f, e),
    info: (e, f) => l.info(f, e),
    child: (fields) => wrap(l.child(fields)),
    flush: () => destination.flushSync(),
  });
  return wrap(p);
}

async function child(kind, item) {
  const log = await makeLogger(kind);
  const n = ITEMS[item];
  const clientInfo = { name: 'bench-client', version: '1.0.0' };
  const target = item === 'child' ? log.child({ side: 'face', transport: 'streamable-http' }) : log;
  const run = (count) => {
    if (item === 'dropped') for (let i = 0; i < count; i++) target.debug('legacy.response.unmatched', { id: i });
    else for (let i = 0; i < count; i++) target.info('l2l.session_opened', { requested: '2025-06-18', protocolVersion: '2025-06-18', clientInfo });
  };
  run(Math.min(n, 20_000));
  const t0 = process.cpuUsage();
  run(n);
  log.flush?.();
  const d = process.cpuUsage(t0);
  process.send({ ns: ((d.user + d.system) * 1000) / n });
  process.disconnect();
}
