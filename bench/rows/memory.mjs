// Row 4: memory added per idle legacy session, per parked MRTR call and per
// open listen stream. Each measurement warms the target with a few of the same
// first, then adds N more in batches, reading RSS/PSS of the whole process tree
// after each; the figure is the slope (KiB per item).
import path from 'node:path';
import { modernRequest, openLegacySession } from '../lib/mcp-wire.mjs';
import { EVERYTHING_ENTRY, SERVERS_DIR } from '../lib/paths.mjs';
import { treeMemory } from '../lib/proc-tree.mjs';
import { listenOpener, openSessionGet } from '../lib/streams.mjs';
import { connectInspector, inspectorUrl } from '../lib/inspector.mjs';
import { knownBridgeFlags, nodeFlags, startLoopbackNode, startMcpBridge } from '../lib/spawn.mjs';
import { EVERYTHING_STDIO, startWrapper, WRAPPERS } from '../lib/wrappers.mjs';

/** How many of each (the issue asks for 1,000); supergateway spawns two processes per session, so it gets few. */
const COUNTS = {
  full: { n: 1000, warm: 50, supergatewayN: 8, supergatewayWarm: 2, stdioParked: 4, listenWarm: 20 },
  quick: { n: 150, warm: 20, supergatewayN: 2, supergatewayWarm: 1, stdioParked: 2, listenWarm: 20 },
};
/** BENCH_MEMORY_N=5000: more items per measurement, where a fixed cost (V8 growing its young generation) weighs less per item. */
const N_OVERRIDE = Number(process.env.BENCH_MEMORY_N) > 0 ? Math.floor(Number(process.env.BENCH_MEMORY_N)) : undefined;
if (N_OVERRIDE) for (const c of Object.values(COUNTS)) c.n = N_OVERRIDE;
/** mcp-bridge refuses items past its limits (1000 each by default); a measurement needs warm + n. */
const BRIDGE_ROOM = () => {
  const room = String(Math.max(2000, (N_OVERRIDE ?? 0) + 1000));
  return knownBridgeFlags([
    ['--max-sessions', room],
    ['--max-parked', room],
    ['--max-listens', room],
  ]);
};
const SETTLE_MS = 1_000;
const OPEN_PARALLEL = 16;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Least-squares slope of y over x. */
function slope(points, key) {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.count, 0) / n;
  const my = points.reduce((a, p) => a + p[key], 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.count - mx) * (p[key] - my);
    den += (p.count - mx) ** 2;
  }
  return den > 0 ? num / den : NaN;
}

/**
 * Memory added per item: `addOne()` opens one more item on the target. The
 * tree is read after every batch and the figure is the slope over those
 * readings, which a garbage collection landing at the end moves less than a
 * two-point difference would.
 */
async function perItem({ proc, warm, n, addOne }) {
  const root = proc.pid;
  const url = inspectorUrl(proc.tail());
  const inspector = url ? await connectInspector(url) : undefined;
  const batch = async (count) => Promise.all(Array.from({ length: count }, () => addOne()));
  for (let i = 0; i < warm; i += OPEN_PARALLEL) await batch(Math.min(OPEN_PARALLEL, warm - i));
  await sleep(SETTLE_MS);
  const heapBefore = await inspector?.liveHeapKiB();
  const before = treeMemory(root);
  const points = [{ count: 0, ...before }];
  const step = Math.max(1, Math.min(OPEN_PARALLEL, Math.ceil(n / 8)));
  for (let i = 0; i < n; i += step) {
    const count = Math.min(step, n - i);
    await batch(count);
    points.push({ count: i + count, ...treeMemory(root) });
  }
  await sleep(SETTLE_MS);
  const after = treeMemory(root);
  points.push({ count: n, ...after });
  const heapAfter = await inspector?.liveHeapKiB();
  inspector?.close();
  return {
    n,
    rssKiBPer: slope(points, 'rssKiB'),
    pssKiBPer: slope(points, 'pssKiB'),
    // Of the root process only, after a full GC: what it holds per item.
    liveHeapKiBPer: inspector ? (heapAfter - heapBefore) / n : undefined,
    processesPer: (after.processes - before.processes) / n,
    before,
    after,
  };
}

async function idleSessions(ctx, kind) {
  const counts = COUNTS[ctx.mode];
  const sg = kind.startsWith('supergateway');
  const w = await startWrapper(kind, { ...ctx, inspect: true, bridgeArgs: BRIDGE_ROOM() });
  const { origin, pathname } = new URL(w.mcpUrl);
  const pool = new ctx.undici.Pool(origin, { connections: OPEN_PARALLEL, headersTimeout: 60_000 });
  try {
    const addOne = () => openLegacySession(pool, pathname);
    const m = await perItem({ proc: w.proc, warm: sg ? counts.supergatewayWarm : counts.warm, n: sg ? counts.supergatewayN : counts.n, addOne });
    return { row: 4, kind: 'idle-session', target: kind, label: WRAPPERS[kind], ...m };
  } finally {
    await pool.destroy().catch(() => undefined);
    await w.proc.stop();
  }
}

/**
 * Idle legacy sessions through mcp-bridge, each with its standalone GET stream
 * open on a connection of its own (issue 17): what a client that listens for
 * server messages between calls costs, beside the idle session without one and
 * a bare node:http SSE response (the `listen` floor).
 */
async function idleSessionsWithGet(ctx) {
  const counts = COUNTS[ctx.mode];
  const w = await startWrapper('mcp-bridge', { ...ctx, inspect: true, bridgeArgs: BRIDGE_ROOM() });
  const { origin, pathname } = new URL(w.mcpUrl);
  const pool = new ctx.undici.Pool(origin, { connections: OPEN_PARALLEL, headersTimeout: 60_000 });
  const streams = new ctx.undici.Pool(origin, { connections: counts.warm + counts.n + 8, headersTimeout: 60_000, bodyTimeout: 0 });
  const bodies = [];
  try {
    const addOne = async () => openSessionGet(streams, pathname, (await openLegacySession(pool, pathname)).sessionId, bodies);
    const m = await perItem({ proc: w.proc, warm: counts.warm, n: counts.n, addOne });
    return { row: 4, kind: 'idle-session-get', target: 'mcp-bridge', label: 'mcp-bridge, session + its GET stream', ...m };
  } finally {
    for (const b of bodies) b.destroy();
    await streams.destroy().catch(() => undefined);
    await pool.destroy().catch(() => undefined);
    await w.proc.stop();
  }
}

/** Parks one call on `origin` per `park()`: a 2026 tools/call that needs elicitation, answered `input_required`. */
function parker(ctx, mcpUrl) {
  const { origin, pathname } = new URL(mcpUrl);
  const client = new ctx.undici.Pool(origin, { connections: OPEN_PARALLEL, headersTimeout: 60_000 });
  const req = modernRequest('tools/call', { name: 'trigger-elicitation-request', arguments: {} }, { elicitation: {} });
  let id = 0;
  const park = async () => {
    const r = await client.request({ path: pathname, method: 'POST', headers: req.headers, body: req.body(++id) });
    const text = await r.body.text();
    if (!text.includes('"input_required"')) throw new Error(`expected input_required, got HTTP ${r.statusCode}: ${text.slice(0, 200)}`);
  };
  return { park, close: () => client.destroy().catch(() => undefined) };
}

/**
 * Parked MRTR calls. Over Streamable HTTP the upstream correlates server
 * requests, so parked calls share upstream sessions: this is the bridge's own
 * cost per call. Over stdio each call that may need input holds a session,
 * that is a child, alone (DESIGN "Correlating…"), so a few show what that costs.
 */
async function parkedCalls(ctx, via) {
  const counts = COUNTS[ctx.mode];
  const upstream = via === 'http' ? await startLoopbackNode('server-everything (streamableHttp)', EVERYTHING_ENTRY, ['streamableHttp'], { PORT: '0' }) : undefined;
  let bridge;
  let client;
  try {
    bridge = await startMcpBridge(upstream ? `${upstream.url}/mcp` : EVERYTHING_STDIO, { cpuProfDir: ctx.cpuProfDir, inspect: true, extraArgs: BRIDGE_ROOM() });
    client = parker(ctx, `${bridge.url}/mcp`);
    const upBefore = upstream ? treeMemory(upstream.pid) : undefined;
    // stdio: within the default --pool-max (8), since a ninth parked call would wait for a child.
    const [warm, n] = via === 'http' ? [counts.warm, counts.n] : [1, counts.stdioParked];
    const m = await perItem({ proc: bridge, warm, n, addOne: client.park });
    const out = { row: 4, kind: 'parked-call', target: via === 'http' ? 'mcp-bridge' : 'mcp-bridge-stdio', label: via === 'http' ? 'mcp-bridge → server-everything (Streamable HTTP)' : 'mcp-bridge → server-everything (stdio, context)', ...m };
    if (upBefore) out.upstreamRssKiBPer = (treeMemory(upstream.pid).rssKiB - upBefore.rssKiB) / (warm + n);
    return out;
  } finally {
    await client?.close();
    await bridge?.stop();
    await upstream?.stop();
  }
}

/**
 * The floor of a parked call (context): a bare node:http relay holding, per
 * call, the open upstream exchange a parked call keeps for its final result,
 * and nothing else (servers/park-floor.mjs, in front of sse-floor.mjs).
 */
async function parkedFloor(ctx) {
  const counts = COUNTS[ctx.mode];
  const upstream = await startLoopbackNode('sse-floor', path.join(SERVERS_DIR, 'sse-floor.mjs'));
  let floor;
  let client;
  try {
    floor = await startLoopbackNode('park-floor', path.join(SERVERS_DIR, 'park-floor.mjs'), [`${upstream.url}/mcp`], {}, nodeFlags({ inspect: true }));
    client = parker(ctx, `${floor.url}/mcp`);
    const m = await perItem({ proc: floor, warm: counts.warm, n: counts.n, addOne: client.park });
    return { row: 4, kind: 'parked-call', target: 'floor', label: 'bare node:http relay holding the upstream exchange (floor, context)', ...m };
  } finally {
    await client?.close();
    await floor?.stop();
    await upstream.stop();
  }
}

const LISTEN_LABELS = { 'mcp-bridge': 'mcp-bridge (2026 → stdio)', 'mcp-proxy': 'mcp-proxy --modern', floor: 'bare node:http SSE (floor, context)' };

async function startSseFloor() {
  const proc = await startLoopbackNode('sse-floor', path.join(SERVERS_DIR, 'sse-floor.mjs'), [], {}, nodeFlags({ inspect: true }));
  return { proc, mcpUrl: `${proc.url}/mcp` };
}

/** Open `subscriptions/listen` streams, each on its own connection, held after the acknowledgement. */
async function listens(ctx, kind) {
  const counts = COUNTS[ctx.mode];
  const w = kind === 'floor' ? await startSseFloor() : await startWrapper(kind, { ...ctx, inspect: true, bridgeArgs: BRIDGE_ROOM() });
  const { origin, pathname } = new URL(w.mcpUrl);
  // The SDK's listen limit (1024 open, digest §1.8) bounds mcp-proxy: warm + n stays under it.
  const total = counts.listenWarm + counts.n;
  const pool = new ctx.undici.Pool(origin, { connections: total + 8, headersTimeout: 60_000, bodyTimeout: 0 });
  const bodies = [];
  const listen = listenOpener(pool, pathname, bodies);
  try {
    const m = await perItem({ proc: w.proc, warm: counts.listenWarm, n: counts.n, addOne: listen });
    return { row: 4, kind: 'listen', target: kind, label: LISTEN_LABELS[kind], ...m };
  } finally {
    for (const b of bodies) b.destroy();
    await pool.destroy().catch(() => undefined);
    await w.proc.stop();
  }
}

/** All of row 4; a failing measurement is recorded and the rest go on. */
export async function rowMemory(ctx) {
  const jobs = [
    ['idle-session', 'mcp-bridge', () => idleSessions(ctx, 'mcp-bridge')],
    ['idle-session', 'mcp-proxy', () => idleSessions(ctx, 'mcp-proxy')],
    ['idle-session', 'supergateway-stateful', () => idleSessions(ctx, 'supergateway-stateful')],
    ['idle-session-get', 'mcp-bridge', () => idleSessionsWithGet(ctx)],
    ['parked-call', 'mcp-bridge', () => parkedCalls(ctx, 'http')],
    ['parked-call', 'mcp-bridge-stdio', () => parkedCalls(ctx, 'stdio')],
    ['parked-call', 'floor', () => parkedFloor(ctx)],
    ['listen', 'mcp-bridge', () => listens(ctx, 'mcp-bridge')],
    ['listen', 'mcp-proxy', () => listens(ctx, 'mcp-proxy')],
    ['listen', 'floor', () => listens(ctx, 'floor')],
  ];
  // BENCH_MEMORY_ONLY=parked-call:mcp-bridge,listen:floor measures just those (while working on one of them).
  const only = process.env.BENCH_MEMORY_ONLY?.split(',').map((s) => s.trim());
  const out = [];
  for (const [kind, target, run] of jobs) {
    if (only && !only.includes(`${kind}:${target}`)) continue;
    try {
      const m = await run();
      const heap = m.liveHeapKiBPer === undefined ? '' : `, +${m.liveHeapKiBPer.toFixed(1)} KiB live heap`;
      ctx.log(`row 4 ${kind.padEnd(12)} ${m.label.padEnd(44)} +${m.rssKiBPer.toFixed(1)} KiB RSS, +${m.pssKiBPer.toFixed(1)} KiB PSS${heap}, +${m.processesPer.toFixed(2)} processes per item (n=${m.n})`);
      out.push(m);
    } catch (err) {
      ctx.log(`row 4 ${kind} ${target}: failed: ${err.message}`);
      out.push({ row: 4, kind, target, label: target, failed: err.message.slice(0, 300) });
    }
  }
  return out;
}
