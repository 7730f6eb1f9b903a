// Row 1 (modern-to-modern relay in front of an SDK v2 server) and row 5 (the
// floor: a bare node:http echo server): the same server hit directly, through
// mcp-bridge, and through a bare node:http relay (servers/bare-relay.mjs: what
// any Node hop costs here, the figure issue 17's targets are set against), in
// alternating rounds of the same run. Row 6: modern-to-legacy against the same
// bare relay, each in front of a bare node:http echo of its own epoch.
import path from 'node:path';
import { measureRow } from '../lib/cells.mjs';
import { SERVERS_DIR } from '../lib/paths.mjs';
import { startLoopbackNode, startMcpBridge } from '../lib/spawn.mjs';
import { modernWorkers } from '../lib/workers.mjs';

async function directAndBridged(ctx, { row, entry, serverLabel }) {
  const server = await startLoopbackNode(serverLabel, path.join(SERVERS_DIR, entry));
  let bridge;
  let bare;
  try {
    const upstream = `${server.url}/mcp`;
    bridge = await startMcpBridge(upstream, { cpuProfDir: ctx.cpuProfDir });
    bare = await startLoopbackNode('bare node:http relay', path.join(SERVERS_DIR, 'bare-relay.mjs'), [upstream]);
    const targets = [
      { id: 'direct', label: `${serverLabel} direct`, roots: () => [server.pid], workers: async (c) => modernWorkers(ctx.undici, upstream, c) },
      {
        id: 'mcp-bridge',
        label: `mcp-bridge → ${serverLabel}`,
        // The tree under test is the bridge; the server's CPU is shown beside it.
        roots: () => [bridge.pid],
        upstreamRoots: () => [server.pid],
        workers: async (c) => modernWorkers(ctx.undici, `${bridge.url}/mcp`, c),
      },
      {
        id: 'bare-relay',
        label: `bare node:http relay → ${serverLabel} (context)`,
        roots: () => [bare.pid],
        upstreamRoots: () => [server.pid],
        workers: async (c) => modernWorkers(ctx.undici, `${bare.url}/mcp`, c),
      },
    ];
    return await measureRow({ row, targets, concurrencies: ctx.concurrencies, plan: ctx.plan, log: ctx.log });
  } finally {
    await bare?.stop();
    await bridge?.stop();
    await server.stop();
  }
}

/** Row 1: mcp-bridge relaying 2026-07-28 to an SDK v2 server, against that server directly. */
export function rowRelay(ctx) {
  return directAndBridged(ctx, { row: 1, entry: 'sdk-v2-echo.mjs', serverLabel: 'SDK v2 server' });
}

/** Row 5: the same relay in front of a bare node:http echo: what a Node hop can approach. */
export function rowFloor(ctx) {
  return directAndBridged(ctx, { row: 5, entry: 'floor-echo.mjs', serverLabel: 'node:http floor' });
}

/**
 * Row 6: 2026 echo → mcp-bridge → a bare node:http 2025-06-18 echo with
 * sessions (servers/floor-legacy-echo.mjs), beside the bare relay → the bare
 * 2026 echo: both upstreams are the least a Node server does, so the ratio is
 * what translating costs over relaying.
 */
export async function rowModernToLegacy(ctx) {
  const legacy = await startLoopbackNode('node:http legacy floor', path.join(SERVERS_DIR, 'floor-legacy-echo.mjs'));
  let modern;
  let bridge;
  let bare;
  try {
    modern = await startLoopbackNode('node:http floor', path.join(SERVERS_DIR, 'floor-echo.mjs'));
    bridge = await startMcpBridge(`${legacy.url}/mcp`, { cpuProfDir: ctx.cpuProfDir, extraArgs: ['--upstream-epoch', 'initialize'] });
    bare = await startLoopbackNode('bare node:http relay', path.join(SERVERS_DIR, 'bare-relay.mjs'), [`${modern.url}/mcp`]);
    const targets = [
      {
        id: 'mcp-bridge',
        label: 'mcp-bridge → node:http legacy floor (2025-06-18)',
        roots: () => [bridge.pid],
        upstreamRoots: () => [legacy.pid],
        workers: async (c) => modernWorkers(ctx.undici, `${bridge.url}/mcp`, c),
      },
      {
        id: 'bare-relay',
        label: 'bare node:http relay → node:http floor (2026)',
        roots: () => [bare.pid],
        upstreamRoots: () => [modern.pid],
        workers: async (c) => modernWorkers(ctx.undici, `${bare.url}/mcp`, c),
      },
    ];
    return await measureRow({ row: 6, targets, concurrencies: ctx.concurrencies, plan: ctx.plan, log: ctx.log });
  } finally {
    await bare?.stop();
    await bridge?.stop();
    await modern?.stop();
    await legacy.stop();
  }
}
