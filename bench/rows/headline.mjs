// Row 3, the headline path: stateless 2026-07-28 requests → mcp-bridge →
// server-everything over stdio (a legacy server). mcp-proxy's own 2026 leg
// (`--modern`, on by default) runs beside it for context. Then one MRTR round
// end to end with the SDK v2 client: its elicitation handler answers at once.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { measureRow } from '../lib/cells.mjs';
import { percentile } from '../lib/load.mjs';
import { ECHO_EXPECT, ECHO_MESSAGE, MODERN_VERSION } from '../lib/mcp-wire.mjs';
import { startWrapper } from '../lib/wrappers.mjs';
import { modernWorkers } from '../lib/workers.mjs';

/** SDK-client calls per kind in the MRTR measurement. */
const MRTR_CALLS = { full: 60, quick: 10 };

export async function rowHeadline(ctx) {
  const bridge = await startWrapper('mcp-bridge', ctx);
  let proxy;
  try {
    proxy = await startWrapper('mcp-proxy', ctx);
    const targets = [
      { id: 'mcp-bridge', label: 'mcp-bridge (2026 → stdio)', roots: () => [bridge.proc.pid], workers: async (c) => modernWorkers(ctx.undici, bridge.mcpUrl, c) },
      { id: 'mcp-proxy-modern', label: 'mcp-proxy --modern (context)', roots: () => [proxy.proc.pid], workers: async (c) => modernWorkers(ctx.undici, proxy.mcpUrl, c) },
    ];
    const cells = await measureRow({ row: 3, targets, concurrencies: ctx.concurrencies, plan: ctx.plan, log: ctx.log });
    const mrtr = await mrtrRound(bridge.mcpUrl, MRTR_CALLS[ctx.mode]);
    ctx.log(`row 3 MRTR (SDK v2 client, elicitation): p50 ${mrtr.elicit.p50Ms.toFixed(2)} ms, p99 ${mrtr.elicit.p99Ms.toFixed(2)} ms; plain echo p50 ${mrtr.echo.p50Ms.toFixed(2)} ms`);
    cells.push({ row: 3, target: 'mcp-bridge', label: 'MRTR round, SDK v2 client', kind: 'mrtr', ...mrtr });
    return cells;
  } finally {
    await proxy?.proc.stop();
    await bridge.proc.stop();
  }
}

function summarize(ms) {
  const sorted = Float64Array.from(ms).sort();
  return { n: sorted.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) };
}

/**
 * Wall time of `callTool` on server-everything's trigger-elicitation-request
 * through the bridge: input_required, the client's handler, the retry with
 * inputResponses, the final result. Plain echo calls run alternately as the
 * baseline of the same client.
 */
async function mrtrRound(mcpUrl, n) {
  const client = new Client(
    { name: 'mcp-bridge-bench', version: '1.0.0' },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: MODERN_VERSION } } },
  );
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Bench', check: true } }));
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  const elicit = [];
  const echo = [];
  try {
    // Two of each untimed: the first MRTR call leases and initializes an upstream session.
    for (let i = -2; i < n; i++) {
      let t0 = performance.now();
      const r = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
      if (i >= 0) elicit.push(performance.now() - t0);
      if (!JSON.stringify(r.content).includes('Bench')) throw new Error(`MRTR call did not complete: ${JSON.stringify(r).slice(0, 200)}`);
      t0 = performance.now();
      const e = await client.callTool({ name: 'echo', arguments: { message: ECHO_MESSAGE } });
      if (i >= 0) echo.push(performance.now() - t0);
      if (!JSON.stringify(e.content).includes(ECHO_EXPECT)) throw new Error('echo failed');
    }
  } finally {
    await client.close().catch(() => undefined);
  }
  return { elicit: summarize(elicit), echo: summarize(echo) };
}
