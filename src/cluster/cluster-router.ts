import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { RequestId } from '@modelcontextprotocol/server';
import { RequestStateCodec } from '../../bridges/shared/request-state.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import { errorResponse } from '../jsonrpc/messages.js';
import { inboundText } from '../jsonrpc/verbatim.js';
import { sweptAgent } from '../links/upstream-http.js';
import type { Logger } from '../log.js';
import { ClusterKeys } from './cluster-keys.js';
import { AUTH_HEADER, DRAINING_HEADER, INTERNAL_PREFIX, MODE_HEADER, forwardRequest, type ForwardMode } from './forward-client.js';
import { mintOwnedId, ownerOfId } from './owner-id.js';
import { PeerSet } from './peer-set.js';

export interface ClusterOptions {
  /** `--cluster-self`: how peers reach this replica. */
  self: string;
  /** `--cluster-peers`. */
  peers?: string[];
  /** `--cluster-dns`: a headless Service name, resolved again every `dnsRefreshMs`. */
  dns?: string;
  dnsRefreshMs?: number;
  /** `--cluster-secret` (≥ 32 bytes): authenticates the internal route and derives the requestState key. */
  secret: string;
  /** A peer that does not accept a connection within this long is gone (default 3 s). */
  connectTimeoutMs?: number;
  /** The replicas' `--call-timeout`: a forwarded request whose answer has not started 5 s past it is given up. */
  callTimeoutMs: number;
  logger: Logger;
}

/** What the face knows of its own sessions, so the router can tell "mine" from "someone else's". */
export interface LocalSessions {
  streamable(id: string): boolean;
  sse(id: string): boolean;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 3_000;
/** How long past the call deadline a forwarded answer may take to start before the owner counts as gone. */
const RESPONSE_MARGIN_MS = 5_000;

/**
 * Makes any replica able to serve any request (issue 16). State lives where it
 * was made: a parked MRTR call's owner is sealed into its requestState, a
 * legacy session's into its id. A request for state held elsewhere goes to
 * the owner over the internal route; everything else is served where it
 * lands, except while this replica drains, when new work is handed to a peer.
 * The face calls unwrap() first, then route() (no body) or routePost().
 */
export class ClusterRouter {
  readonly keys: ClusterKeys;
  readonly peers: PeerSet;
  readonly #log: Logger;
  readonly #states: RequestStateCodec;
  readonly #forwarded = new WeakSet<IncomingMessage>();
  // Idle sockets to a peer close after 3–4 s, by the upstream client's sweep: node's agent alone keeps one
  // until just before the peer's 65 s keep-alive hint, so replicas would hold many idle sockets to each other.
  readonly #agent = { http: sweptAgent(http), https: sweptAgent(https) };
  readonly #connectTimeoutMs: number;
  readonly #responseTimeoutMs: number;
  #draining = false;
  #forwarding = 0;

  constructor(opts: ClusterOptions) {
    this.keys = new ClusterKeys(opts.secret);
    this.#log = opts.logger.child({ cluster: true });
    this.peers = new PeerSet({ self: opts.self, peers: opts.peers, dns: opts.dns, refreshMs: opts.dnsRefreshMs, keys: this.keys, logger: this.#log });
    this.#states = new RequestStateCodec({ key: this.keys.requestStateKey, ttlMs: 1, instanceId: this.peers.selfTag });
    this.#connectTimeoutMs = opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.#responseTimeoutMs = opts.callTimeoutMs + RESPONSE_MARGIN_MS;
  }

  /** This replica's name in requestState and session ids. */
  get instanceId(): string {
    return this.peers.selfTag;
  }

  get requestStateKey(): Buffer {
    return this.keys.requestStateKey;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Requests being relayed to a peer right now (a stopping replica lets them finish within its grace). */
  get forwarding(): number {
    return this.#forwarding;
  }

  start(): Promise<void> {
    return this.peers.start();
  }

  /** A new legacy session's id, naming this replica. */
  mintSessionId(): string {
    return mintOwnedId(this.instanceId);
  }

  /** Starts handing new work to peers; state this replica holds is still served here. */
  drain(): void {
    this.#draining = true;
  }

  close(): void {
    this.peers.stop();
    this.#agent.http.destroy();
    this.#agent.https.destroy();
  }

  /**
   * Step one for every request: one on the internal route has its proof checked
   * (a bad one: 'refused', answered like any unknown path) and its URL restored,
   * and is then served here whatever route() would say. A draining replica
   * refuses new work handed on by a peer, so that peer tries another.
   */
  unwrap(req: IncomingMessage, res: ServerResponse): 'public' | 'forwarded' | 'refused' | 'answered' {
    const url = req.url ?? '/';
    if (!url.startsWith(`${INTERNAL_PREFIX}/`)) return 'public';
    if (!this.keys.verify(header(req, AUTH_HEADER), req.method ?? 'GET', url)) {
      this.#log.warn('cluster.refused', { method: req.method, reason: 'internal route without a valid proof' });
      return 'refused';
    }
    req.url = url.slice(INTERNAL_PREFIX.length);
    this.#forwarded.add(req);
    if (this.#draining && header(req, MODE_HEADER) === 'any') {
      res.writeHead(503, { 'content-type': 'application/json', [DRAINING_HEADER]: '1', 'retry-after': '1' });
      res.end(JSON.stringify(errorResponse(null, { code: RpcCode.ServerError, message: 'Service Unavailable: this replica is draining' })));
      return 'answered';
    }
    return 'forwarded';
  }

  /** Requests whose body the face does not read first: GET/DELETE /mcp, GET /sse, POST /messages, /healthz. True: answered here. */
  route(req: IncomingMessage, res: ServerResponse, path: string, local: LocalSessions): boolean {
    if (this.#forwarded.has(req)) return false;
    if (path === '/healthz' && this.#draining) {
      // What a readiness check reads: stop sending here (a liveness check should not use this path while draining).
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end(JSON.stringify({ status: 'draining' }));
      return true;
    }
    if (path === '/mcp' && (req.method === 'GET' || req.method === 'DELETE')) {
      const sid = header(req, 'mcp-session-id');
      return sid !== undefined && !local.streamable(sid) && this.#toSessionOwner(req, res, sid);
    }
    if (path === '/messages' && req.method === 'POST') {
      const sid = new URL(req.url ?? '/', 'http://localhost').searchParams.get('sessionId');
      return sid !== null && !local.sse(sid) && this.#toSessionOwner(req, res, sid);
    }
    if (path === '/sse' && req.method === 'GET' && this.#draining) return this.#toAnyPeer(req, res, undefined);
    return false;
  }

  /** POST /mcp once parsed and classified. True: answered here (forwarded, or the owner is gone). */
  routePost(req: IncomingMessage, res: ServerResponse, body: unknown, route: 'modern' | 'legacy', local: LocalSessions): boolean {
    if (this.#forwarded.has(req)) return false;
    if (route === 'legacy') {
      const sid = header(req, 'mcp-session-id');
      if (sid !== undefined && !local.streamable(sid)) return this.#toSessionOwner(req, res, sid, body);
      return sid === undefined && this.#draining && this.#toAnyPeer(req, res, body);
    }
    const state = requestStateOf(body);
    const owner = state === undefined ? undefined : this.#states.issuer(state);
    if (owner !== undefined && owner !== this.instanceId) {
      void this.#toStateOwner(req, res, body, owner);
      return true;
    }
    // A retry of a call parked here stays; a fresh call, a listen or a bad state is new work.
    return owner === undefined && this.#draining && this.#toAnyPeer(req, res, body);
  }

  #toSessionOwner(req: IncomingMessage, res: ServerResponse, sid: string, body?: unknown): boolean {
    const tag = ownerOfId(sid);
    if (tag === undefined || tag === this.instanceId) return false; // not ours to route: the face answers 404 itself
    void (async () => {
      const gone = () => {
        if (!res.headersSent) writeError(res, 404, null, RpcCode.SessionNotFound, 'Session not found: the bridge instance holding it is gone; initialize a new session');
      };
      const base = await this.peers.urlOf(tag);
      if (base === undefined) return gone();
      const out = await this.#forward(req, res, base, 'owner', body);
      if (!out) gone();
    })().catch((err: unknown) => this.#failed(res, err));
    return true;
  }

  async #toStateOwner(req: IncomingMessage, res: ServerResponse, body: unknown, owner: string): Promise<void> {
    const id = (body as { id?: RequestId }).id ?? null;
    const gone = () =>
      writeError(res, 200, id, RpcCode.InvalidParams, `requestState expired: bridge instance ${owner}, which held the parked call, is gone (it stopped or restarted); start the request again without requestState`, { requestState: 'expired', instance: owner });
    try {
      const base = await this.peers.urlOf(owner);
      if (base === undefined) return gone();
      const relayed = await this.#forward(req, res, base, 'owner', body, (r) => {
        // The owner died mid-answer: on an SSE reply the client still gets one answer for its id.
        if (String(r.getHeader('content-type') ?? '').includes('text/event-stream')) {
          const e = errorResponse(id, { code: RpcCode.InvalidParams, message: `requestState expired: bridge instance ${owner} went away while answering; start the request again without requestState`, data: { requestState: 'expired', instance: owner } });
          r.write(`event: message\ndata: ${stringifyJsonRpc(e)}\n\n`);
        }
      });
      if (!relayed) gone();
    } catch (err) {
      this.#failed(res, err);
    }
  }

  /** New work while draining: the first peer that takes it; none does, it is served here after all. */
  #toAnyPeer(req: IncomingMessage, res: ServerResponse, body: unknown): boolean {
    const peers = this.peers.others();
    if (peers.length === 0) return false;
    void (async () => {
      for (const base of peers) if (await this.#forward(req, res, base, 'any', body)) return;
      writeError(res, 503, null, RpcCode.ServerError, 'Service Unavailable: this replica is draining and no peer took the request', undefined, { 'retry-after': '1' });
    })().catch((err: unknown) => this.#failed(res, err));
    return true;
  }

  async #forward(req: IncomingMessage, res: ServerResponse, base: string, mode: ForwardMode, body: unknown, onBroken?: (res: ServerResponse) => void): Promise<boolean> {
    const started = performance.now();
    this.#forwarding++;
    res.once('close', () => this.#forwarding--);
    const out = await forwardRequest({
      req, res, base, mode, keys: this.keys, agent: this.#agent, connectTimeoutMs: this.#connectTimeoutMs, responseTimeoutMs: this.#responseTimeoutMs, onBroken,
      body: body === undefined ? undefined : Buffer.from(forwardedText(body)),
    });
    if (out.relayed) this.#log.debug('cluster.forwarded', { method: req.method, mode, peer: base, ms: Math.round(performance.now() - started) });
    else this.#log.info('cluster.forward_failed', { method: req.method, mode, peer: base, reason: out.reason, err: out.err?.message });
    return out.relayed;
  }

  #failed(res: ServerResponse, err: unknown): void {
    this.#log.error('cluster.route_failed', { err });
    writeError(res, 500, null, RpcCode.InternalError, 'Internal error');
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function requestStateOf(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const params = (body as { params?: unknown }).params;
  return typeof params === 'object' && params !== null ? (params as { requestState?: unknown }).requestState : undefined;
}

function writeError(res: ServerResponse, status: number, id: RequestId | null, code: number, message: string, data?: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(stringifyJsonRpc(errorResponse(id, data === undefined ? { code, message } : { code, message, data })));
}

/** The client's own bytes when the face kept them, else the body written with exact ids. */
function forwardedText(body: unknown): string {
  return (typeof body === 'object' && body !== null ? inboundText(body) : undefined) ?? stringifyJsonRpc(body);
}
