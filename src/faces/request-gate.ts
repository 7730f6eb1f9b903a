import type { IncomingMessage } from 'node:http';
import { RpcCode } from '../jsonrpc/codes.js';
import type { RpcErrorBody } from '../jsonrpc/messages.js';
import { bindPrincipal } from '../identity/principal.js';
import { BearerAuth } from './auth.js';
import type { AuthVerdict, ClientAuth } from './auth-verdict.js';
import { isHostAllowed } from './host-check.js';
import { isOriginAllowed } from './origin.js';

/** A whole-reply refusal: status, JSON-RPC error (sent with id null) and extra response headers. */
export interface Refusal {
  status: number;
  error: RpcErrorBody;
  headers: Record<string, string>;
  /** A short name for logs: 'host', 'origin', 'auth'. */
  reason: 'host' | 'origin' | 'auth';
}

export interface RequestGateOptions {
  allowOrigins: string[];
  allowHosts: string[];
  /** The listen host; a client that names it in `Host` is served. */
  listenHost?: string;
  /** When set, every request but the open ones needs `Authorization: Bearer <token>` (`--auth token`). */
  authToken?: string;
  /** Client authentication (`--auth jwt`, `--auth pass-through`, or token); wins over `authToken`. */
  auth?: ClientAuth;
}

/** What a face unit runs on each request the app did not gate itself (WebSocket upgrades). */
export type GateCheck = (req: IncomingMessage) => Refusal | undefined | Promise<Refusal | undefined>;

/** RFC 9728 §3: where a protected resource publishes its metadata (a path may follow). */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/**
 * The checks every HTTP route and WebSocket upgrade passes before anything
 * else, in order: `Host` (421, DNS rebinding), `Origin` (403, digest §2.1),
 * credentials (401/403 with a `WWW-Authenticate` challenge). On success the
 * request's principal is bound to it (identity/principal.ts).
 */
export class RequestGate {
  readonly auth: ClientAuth | undefined;

  constructor(private readonly opts: RequestGateOptions) {
    this.auth = opts.auth ?? (opts.authToken === undefined ? undefined : new BearerAuth(opts.authToken));
  }

  get requiresAuth(): boolean {
    return this.auth !== undefined;
  }

  /**
   * Undefined when the request may proceed; `open` skips the credentials
   * (health checks, the resource metadata). A promise only when the mode
   * must fetch or verify (JWT): a static token answers at once.
   */
  check(req: IncomingMessage, opts: { open?: boolean } = {}): Refusal | undefined | Promise<Refusal | undefined> {
    const headers = req.headers;
    const host = headers.host;
    if (!isHostAllowed(host, this.opts.allowHosts, this.opts.listenHost)) {
      return refusal('host', 421, `Misdirected Request: Host ${host} is not allowed (see --allow-host)`);
    }
    const origin = headers.origin;
    if (!isOriginAllowed(origin, this.opts.allowOrigins)) {
      return refusal('origin', 403, `Forbidden: Origin ${origin} is not allowed`);
    }
    if (opts.open || !this.auth) return undefined;
    const verdict = this.auth.authenticate(headers);
    return verdict instanceof Promise ? verdict.then((v) => this.settle(req, v), () => this.settle(req, { ok: false, status: 401, message: 'Unauthorized: the token could not be checked', error: 'invalid_token' })) : this.settle(req, verdict);
  }

  private settle(req: IncomingMessage, verdict: AuthVerdict): Refusal | undefined {
    if (verdict.ok) {
      bindPrincipal(req, verdict.principal);
      return undefined;
    }
    const challenge = this.auth!.challenge(verdict, { metadataUrl: resourceMetadataUrl(req) });
    return refusal('auth', verdict.status, verdict.message, { 'www-authenticate': challenge });
  }
}

/** The origin clients reached the bridge at, from `Host` (the gate has checked it). */
export function requestOrigin(req: IncomingMessage): string {
  return `http://${req.headers.host ?? '127.0.0.1'}`;
}

/** RFC 9728 §3.1 path variant: the metadata URL for the resource at this request's path. */
export function resourceMetadataUrl(req: IncomingMessage): string {
  let path = (req.url ?? '/').split('?')[0];
  if (!path.startsWith('/')) path = '/';
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return `${requestOrigin(req)}${RESOURCE_METADATA_PATH}${path === '/' ? '' : path}`;
}

function refusal(reason: Refusal['reason'], status: number, message: string, headers: Record<string, string> = {}): Refusal {
  return { reason, status, error: { code: RpcCode.ServerError, message }, headers };
}
