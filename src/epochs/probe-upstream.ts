import type { UpstreamAuth, UpstreamFacts } from '../contracts/upstream.js';
import type { UpstreamTarget } from '../daemon/options.js';
import { BridgeError } from '../errors.js';
import type { Logger } from '../log.js';
import { detectHttp } from './detect-http.js';
import { detectStdio } from './detect-stdio.js';
import { detectWs } from './detect-ws.js';

export type ProbeTarget = UpstreamTarget;

export interface ProbeOptions {
  logger: Logger;
  /** How long a stdio server gets to answer `server/discover` (default 3000). */
  timeoutMs?: number;
  /** Anything but `auto` skips the epoch decision; that epoch's handshake still runs to read the facts. */
  epoch?: 'auto' | 'modern' | 'initialize' | 'http+sse';
  /** OAuth toward the upstream: the HTTP legs go through `fetch` (authorized), the WebSocket handshake asks `auth`. */
  fetch?: typeof fetch;
  auth?: UpstreamAuth;
}

/**
 * Detects the epoch and gathers facts; throws BridgeError BRIDGE_ERR_UPSTREAM_UNREACHABLE
 * or BRIDGE_ERR_UPSTREAM_NOT_MCP with a message a user understands.
 */
export async function probeUpstream(target: UpstreamTarget, opts: ProbeOptions): Promise<UpstreamFacts> {
  const epoch = opts.epoch ?? 'auto';
  const started = Date.now();
  const facts = await detect(target, epoch, opts);
  opts.logger.info('upstream.probed', { epoch: facts.epoch, transport: facts.transport, protocolVersion: facts.protocolVersion, server: facts.serverInfo?.name, ms: Date.now() - started });
  return facts;
}

function detect(target: UpstreamTarget, epoch: NonNullable<ProbeOptions['epoch']>, opts: ProbeOptions): Promise<UpstreamFacts> {
  if (target.kind === 'command') {
    if (epoch === 'http+sse') throw new BridgeError('BRIDGE_ERR_USAGE', 'a command upstream speaks stdio; the http+sse epoch needs an --upstream URL');
    return detectStdio(target, { logger: opts.logger, timeoutMs: opts.timeoutMs, epoch });
  }
  let scheme: string;
  try {
    scheme = new URL(target.url).protocol;
  } catch {
    throw new BridgeError('BRIDGE_ERR_USAGE', `'${target.url}' is not a URL`);
  }
  if (scheme === 'ws:' || scheme === 'wss:') {
    // WebSocket MCP exists only in the initialize epoch.
    if (epoch === 'modern' || epoch === 'http+sse') throw new BridgeError('BRIDGE_ERR_USAGE', `a ${scheme}// upstream speaks the initialize epoch, not ${epoch}`);
    return detectWs(target.url, target.headers, { logger: opts.logger, auth: opts.auth });
  }
  if (scheme === 'http:' || scheme === 'https:') return detectHttp(target.url, target.headers, { logger: opts.logger, epoch, fetch: opts.fetch });
  throw new BridgeError('BRIDGE_ERR_USAGE', `unsupported upstream URL scheme '${scheme}' (use http, https, ws or wss)`);
}
