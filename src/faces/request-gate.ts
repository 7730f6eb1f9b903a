import type { IncomingHttpHeaders } from 'node:http';
import { RpcCode } from '../jsonrpc/codes.js';
import type { RpcErrorBody } from '../jsonrpc/messages.js';
import { BearerAuth } from './auth.js';
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
  /** When set, every request but the open ones needs `Authorization: Bearer <token>`. */
  authToken?: string;
}

const UNAUTHORIZED: Record<'missing' | 'scheme' | 'invalid', string> = {
  missing: 'Unauthorized: this bridge requires an Authorization: Bearer <token> header',
  scheme: 'Unauthorized: only the Bearer authorization scheme is accepted',
  invalid: 'Unauthorized: the bearer token is not valid',
};

/**
 * The checks every HTTP route and WebSocket upgrade passes before anything
 * else, in order: `Host` (421, DNS rebinding), `Origin` (403, digest §2.1),
 * `Authorization` (401 with a `WWW-Authenticate` challenge).
 */
export class RequestGate {
  private readonly auth: BearerAuth | undefined;

  constructor(private readonly opts: RequestGateOptions) {
    this.auth = opts.authToken === undefined ? undefined : new BearerAuth(opts.authToken);
  }

  get requiresAuth(): boolean {
    return this.auth !== undefined;
  }

  /** Undefined when the request may proceed; `open` skips the token (health checks). */
  check(headers: IncomingHttpHeaders, opts: { open?: boolean } = {}): Refusal | undefined {
    const host = headers.host;
    if (!isHostAllowed(host, this.opts.allowHosts, this.opts.listenHost)) {
      return refusal('host', 421, `Misdirected Request: Host ${host} is not allowed (see --allow-host)`);
    }
    const origin = headers.origin;
    if (!isOriginAllowed(origin, this.opts.allowOrigins)) {
      return refusal('origin', 403, `Forbidden: Origin ${origin} is not allowed`);
    }
    if (opts.open || !this.auth) return undefined;
    const failure = this.auth.check(headers.authorization);
    if (failure === undefined) return undefined;
    return refusal('auth', 401, UNAUTHORIZED[failure], { 'www-authenticate': BearerAuth.challenge(failure) });
  }
}

function refusal(reason: Refusal['reason'], status: number, message: string, headers: Record<string, string> = {}): Refusal {
  return { reason, status, error: { code: RpcCode.ServerError, message }, headers };
}
