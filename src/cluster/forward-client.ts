import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { ClusterKeys } from './cluster-keys.js';

/** Prefix of the internal route: `<peer>/.cluster/<the original path and query>`. */
export const INTERNAL_PREFIX = '/.cluster';
/** Proof that a request on the internal route comes from a replica (ClusterKeys.sign); never logged. */
export const AUTH_HEADER = 'x-mcp-bridge-cluster';
/** `owner`: the receiver holds the state; `any`: new work a draining replica hands on. */
export const MODE_HEADER = 'x-mcp-bridge-forward';
/** Set on the 503 of a draining replica asked to take new work, so the sender tries the next one. */
export const DRAINING_HEADER = 'x-mcp-bridge-draining';

export type ForwardMode = 'owner' | 'any';

/** How a forward ended: relayed (the client has its answer), or not started, with why. */
export type ForwardOutcome = { relayed: true } | { relayed: false; reason: 'unreachable' | 'draining'; err?: Error };

export interface ForwardRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** Base URL of the replica to ask. */
  base: string;
  mode: ForwardMode;
  /** The request body already read (re-sent as is); absent: `req` itself is piped. */
  body?: Buffer;
  keys: ClusterKeys;
  agent: { http: http.Agent; https: https.Agent };
  /** The replica must accept the connection within this long, or it counts as gone. */
  connectTimeoutMs: number;
  /** ...and start its answer within this long (the call's own deadline and a margin): a frozen owner is gone too. */
  responseTimeoutMs: number;
  /** Called when the replica's answer breaks after its headers were relayed: a last word for the client, if any. */
  onBroken?: (res: ServerResponse) => void;
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) and our own, never copied across. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-connection', AUTH_HEADER, MODE_HEADER, DRAINING_HEADER]);

function copyHeaders(from: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(from)) if (v !== undefined && !HOP.has(k)) out[k] = v;
  return out;
}

/**
 * Sends one client request to another replica over the internal route and
 * relays its answer unchanged, SSE included, as it arrives. The client
 * closing its side aborts the forward, which the owner sees as its own client
 * leaving (the cancel of a local call). Resolves once the answer is relayed
 * or it is clear the replica cannot give one.
 */
export function forwardRequest(f: ForwardRequest): Promise<ForwardOutcome> {
  const path = `${INTERNAL_PREFIX}${f.req.url ?? '/'}`;
  const method = f.req.method ?? 'GET';
  const headers = copyHeaders(f.req.headers);
  headers[AUTH_HEADER] = f.keys.sign(method, path);
  headers[MODE_HEADER] = f.mode;
  if (f.body !== undefined) headers['content-length'] = String(f.body.length);
  const target = new URL(path, f.base);
  const lib = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (o: ForwardOutcome) => {
      if (!settled) {
        settled = true;
        resolve(o);
      }
    };
    const out = lib.request(target, { method, headers, agent: target.protocol === 'https:' ? f.agent.https : f.agent.http });
    out.setNoDelay(true);
    const connectTimer = setTimeout(() => out.destroy(new Error(`no connection within ${f.connectTimeoutMs} ms`)), f.connectTimeoutMs);
    const responseTimer = setTimeout(() => out.destroy(new Error(`no answer within ${f.responseTimeoutMs} ms`)), f.responseTimeoutMs);
    out.on('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connectTimer);
      else socket.once('connect', () => clearTimeout(connectTimer));
    });
    // The client left: abort the forward, so the owner cancels the call as it would for a local client.
    const onClientClose = () => {
      if (!f.res.writableFinished) out.destroy();
    };
    f.res.once('close', onClientClose);
    out.on('error', (err) => {
      clearTimeout(connectTimer);
      clearTimeout(responseTimer);
      if (!settled) return settle({ relayed: false, reason: 'unreachable', err });
    });
    out.on('response', (up) => {
      clearTimeout(connectTimer);
      clearTimeout(responseTimer);
      if (f.mode === 'any' && up.statusCode === 503 && up.headers[DRAINING_HEADER] !== undefined) {
        up.resume();
        f.res.off('close', onClientClose);
        return settle({ relayed: false, reason: 'draining' });
      }
      settle({ relayed: true });
      f.res.writeHead(up.statusCode ?? 502, copyHeaders(up.headers));
      // A stream's headers go at once (the client learns it is SSE); a JSON answer leaves in one write with its body.
      if (String(up.headers['content-type'] ?? '').includes('text/event-stream')) f.res.flushHeaders();
      up.pipe(f.res);
      up.on('error', () => undefined);
      // Cut before its end (the owner died mid-stream): say so if the caller can, then end.
      up.on('close', () => {
        if (f.res.writableEnded) return;
        if (!up.complete) f.onBroken?.(f.res);
        f.res.end();
      });
    });
    if (f.body !== undefined) out.end(f.body);
    else f.req.pipe(out);
  });
}
