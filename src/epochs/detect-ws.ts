import WebSocket from 'ws';
import type { AuthChallenge, UpstreamAuth, UpstreamFacts } from '../contracts/upstream.js';
import { BridgeError } from '../errors.js';
import type { Logger } from '../log.js';
import { HTTP_PROBE_TIMEOUT_MS } from './http-observe.js';
import { initializeProbe } from './probe-requests.js';
import { factsFromInitialize } from './upstream-facts.js';

type Obj = Record<string, unknown>;

const INIT_ID = 'mcp-bridge-ws-probe-1';

/**
 * Reads an initialize-era WebSocket server's facts: connect with subprotocol
 * `mcp`, send `initialize`, wait for its result, close. WebSocket MCP exists
 * only in the initialize epoch, so there is no epoch to detect.
 */
export async function detectWs(url: string, headers: Record<string, string>, opts: { logger: Logger; timeoutMs?: number; auth?: UpstreamAuth }): Promise<UpstreamFacts> {
  const auth = opts.auth;
  if (!auth) return detectWsOnce(url, headers, opts);
  // OAuth: an upgrade refused with a challenge runs the flow, then the probe runs again with the token.
  const tries = { unauthorized: 0, stepUps: 0 };
  for (;;) {
    const sent = await auth.header();
    try {
      return await detectWsOnce(url, sent === undefined ? headers : { ...headers, authorization: sent }, opts);
    } catch (err) {
      const challenge = (err as { challenge?: AuthChallenge }).challenge;
      if (!challenge || !(await auth.challenged(challenge, sent, tries))) throw err;
    }
  }
}

function detectWsOnce(url: string, headers: Record<string, string>, opts: { logger: Logger; timeoutMs?: number }): Promise<UpstreamFacts> {
  const timeoutMs = opts.timeoutMs ?? HTTP_PROBE_TIMEOUT_MS;
  return new Promise<UpstreamFacts>((resolve, reject) => {
    const ws = new WebSocket(url, 'mcp', { headers, handshakeTimeout: timeoutMs });
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ws.removeAllListeners('message');
      ws.on('error', () => undefined);
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(1000);
      fn();
    };
    const unreachable = (why: string) => finish(() => reject(new BridgeError('BRIDGE_ERR_UPSTREAM_UNREACHABLE', `cannot reach ${url}: ${why}`)));
    const notMcp = (why: string) => finish(() => reject(new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', `${url} ${why}; it does not look like an MCP WebSocket server`)));
    const timer = setTimeout(() => notMcp(`did not answer initialize within ${timeoutMs} ms`), timeoutMs);

    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      const www = res.headers['www-authenticate'];
      if (status === 401 || status === 403) {
        const err = new BridgeError('BRIDGE_ERR_UPSTREAM_UNREACHABLE', `${url} answered the WebSocket upgrade with HTTP ${status}: it needs credentials`);
        Object.assign(err, { challenge: { status, wwwAuthenticate: typeof www === 'string' ? www : undefined } });
        return finish(() => reject(err));
      }
      notMcp(`answered the WebSocket upgrade with HTTP ${status}`);
    });
    ws.on('error', (err: Error & { code?: string }) => unreachable(err.code ?? err.message));
    ws.on('close', (code) => notMcp(`closed the connection (code ${code}) before answering initialize`));
    ws.on('open', () => {
      opts.logger.debug('probe.ws.open', { protocol: ws.protocol });
      ws.send(JSON.stringify(initializeProbe(INIT_ID)));
    });
    ws.on('message', (data) => {
      let msg: Obj;
      try {
        msg = JSON.parse(String(data)) as Obj;
      } catch {
        return;
      }
      if (msg.id !== INIT_ID) return;
      const result = msg.result as Obj | undefined;
      if (result && typeof result.protocolVersion === 'string') return finish(() => resolve(factsFromInitialize(result, 'initialize', 'ws')));
      const err = msg.error as { code?: number; message?: string } | undefined;
      notMcp(`refused initialize${err ? ` with ${err.code} '${err.message ?? ''}'` : ''}`);
    });
  });
}
