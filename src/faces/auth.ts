import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { credentialDigest } from '../identity/principal.js';
import { bearerToken, type AuthVerdict, type ClientAuth } from './auth-verdict.js';

/** The realm named in every `WWW-Authenticate` challenge of the static-token mode. */
export const AUTH_REALM = 'mcp-bridge';

/** RFC 6750 §2.1 `b64token`, at least 16 characters: what `--auth-token` accepts. */
const TOKEN_SYNTAX = /^[A-Za-z0-9\-._~+/]{16,}=*$/;

/** Why a request is not authorized; undefined when it is. */
export type AuthFailure = 'missing' | 'scheme' | 'invalid';

/** Whether `token` can be a bearer token: 16+ characters of the RFC 6750 token alphabet. */
export function isValidAuthToken(token: string): boolean {
  return TOKEN_SYNTAX.test(token);
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

const UNAUTHORIZED: Record<AuthFailure, string> = {
  missing: 'Unauthorized: this bridge requires an Authorization: Bearer <token> header',
  scheme: 'Unauthorized: only the Bearer authorization scheme is accepted',
  invalid: 'Unauthorized: the bearer token is not valid',
};

/**
 * `--auth token`: checks `Authorization: Bearer <token>` against one configured
 * token. Both sides are hashed first, so `timingSafeEqual` compares equal-length
 * digests and neither the token's bytes nor its length leak through timing.
 * Every client holding the token is one principal (the token's digest).
 */
export class BearerAuth implements ClientAuth {
  readonly mode = 'token' as const;
  private readonly expected: Buffer;
  private readonly principal: { id: string };

  constructor(token: string) {
    this.expected = digest(token);
    this.principal = { id: `token:${credentialDigest(token)}` };
  }

  /** Undefined when the header carries the token; else why not. */
  check(authorization: string | undefined): AuthFailure | undefined {
    const token = bearerToken(authorization);
    if (token === undefined) return 'missing';
    if (token === 'scheme') return 'scheme';
    return timingSafeEqual(digest(token), this.expected) ? undefined : 'invalid';
  }

  authenticate(headers: IncomingHttpHeaders): AuthVerdict {
    const failure = this.check(headers.authorization);
    if (failure === undefined) return { ok: true, principal: this.principal };
    return { ok: false, status: 401, message: UNAUTHORIZED[failure], error: failure === 'invalid' ? 'invalid_token' : undefined };
  }

  challenge(verdict: Extract<AuthVerdict, { ok: false }>): string {
    return BearerAuth.challenge(verdict.error === 'invalid_token' ? 'invalid' : 'missing');
  }

  /** The `WWW-Authenticate` value for a failure (RFC 6750 §3: `invalid_token` when a token was presented). */
  static challenge(failure: AuthFailure): string {
    return failure === 'invalid' ? `Bearer realm="${AUTH_REALM}", error="invalid_token"` : `Bearer realm="${AUTH_REALM}"`;
  }
}
