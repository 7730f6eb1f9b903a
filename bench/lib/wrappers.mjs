// The bridges that put server-everything's stdio on Streamable HTTP, each
// started on 127.0.0.1 with a port the OS picks. Peers bind all interfaces by
// default: mcp-proxy gets `--host 127.0.0.1`; supergateway has no host flag, so
// it runs under the loopback preload, which rewrites its listen() too.
import http from 'node:http';
import { EVERYTHING_ENTRY } from './paths.mjs';
import { nodeFlags, startLoopbackNode, startMcpBridge } from './spawn.mjs';

/** The stdio server every wrapper runs: [command, ...args]. */
export const EVERYTHING_STDIO = [process.execPath, EVERYTHING_ENTRY, 'stdio'];

/** Labels of the row-2 wrappers, in table order. */
export const WRAPPERS = {
  'mcp-bridge': 'mcp-bridge',
  // Issue 13: what metrics and tracing cost (default: metrics on, traces off).
  'mcp-bridge-ops-off': 'mcp-bridge --no-metrics, no traces',
  'mcp-bridge-ops-on': 'mcp-bridge metrics + traces (OTLP)',
  'supergateway-stateful': 'supergateway 4.0.0 stateful',
  'supergateway-stateless': 'supergateway 4.0.0 stateless',
  'mcp-proxy': 'mcp-proxy 6.7.19',
};

/** Starts wrapper `kind` in front of server-everything stdio; resolves with `{ proc, mcpUrl }`. `inspect` opens an inspector on its root process. */
export async function startWrapper(kind, { peers, cpuProfDir, inspect, bridgeArgs = [] } = {}) {
  if (kind === 'mcp-bridge') {
    const proc = await startMcpBridge(EVERYTHING_STDIO, { cpuProfDir, inspect, extraArgs: bridgeArgs });
    return { proc, mcpUrl: `${proc.url}/mcp` };
  }
  if (kind === 'mcp-bridge-ops-off') {
    const proc = await startMcpBridge(EVERYTHING_STDIO, { cpuProfDir, inspect, extraArgs: ['--no-metrics', ...bridgeArgs] });
    return { proc, mcpUrl: `${proc.url}/mcp` };
  }
  if (kind === 'mcp-bridge-ops-on') {
    // Every span is exported (the SDK's default sampler) to a receiver in the bench process that drops them.
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: await otlpSink(), OTEL_BSP_SCHEDULE_DELAY: '1000' };
    const proc = await startMcpBridge(EVERYTHING_STDIO, { cpuProfDir, inspect, extraArgs: bridgeArgs, env });
    return { proc, mcpUrl: `${proc.url}/mcp` };
  }
  if (kind === 'supergateway-stateful' || kind === 'supergateway-stateless') {
    // supergateway runs --stdio through a shell (sh + node: two processes per child).
    const args = ['--stdio', EVERYTHING_STDIO.map((a) => JSON.stringify(a)).join(' '), '--outputTransport', 'streamableHttp', '--port', '0', '--logLevel', 'none'];
    if (kind === 'supergateway-stateful') args.push('--stateful');
    const proc = await startLoopbackNode(kind, peers.supergateway, args, {}, nodeFlags({ inspect }));
    return { proc, mcpUrl: `${proc.url}/mcp` };
  }
  if (kind === 'mcp-proxy') {
    const args = ['--host', '127.0.0.1', '--port', '0', '--server', 'stream', '--', ...EVERYTHING_STDIO];
    const proc = await startLoopbackNode(kind, peers['mcp-proxy'], args, {}, nodeFlags({ inspect }));
    return { proc, mcpUrl: `${proc.url}/mcp` };
  }
  throw new Error(`unknown wrapper ${kind}`);
}

let sink;

/** An OTLP/HTTP receiver on 127.0.0.1 that reads each export and answers 200 (started once, never keeps the run alive). */
export function otlpSink() {
  sink ??= new Promise((resolve) => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      resolve(`http://127.0.0.1:${server.address().port}`);
    });
  });
  return sink;
}
