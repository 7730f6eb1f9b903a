// The bridges that put server-everything's stdio on Streamable HTTP, each
// started on 127.0.0.1 with a port the OS picks. Peers bind all interfaces by
// default: mcp-proxy gets `--host 127.0.0.1`; supergateway has no host flag, so
// it runs under the loopback preload, which rewrites its listen() too.
import { EVERYTHING_ENTRY } from './paths.mjs';
import { nodeFlags, startLoopbackNode, startMcpBridge } from './spawn.mjs';

/** The stdio server every wrapper runs: [command, ...args]. */
export const EVERYTHING_STDIO = [process.execPath, EVERYTHING_ENTRY, 'stdio'];

/** Labels of the row-2 wrappers, in table order. */
export const WRAPPERS = {
  'mcp-bridge': 'mcp-bridge',
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
