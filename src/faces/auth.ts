import { createHash, timingSafeEqual } from 'node:crypto';

/** The realm named in every `WWW-Authenticate` challenge. */
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

/**
 * Checks `Authorization: Bearer <token>` against one configured token. Both
 * sides are hashed first, so `timingSafeEqual` compares equal-length digests
 * and neither the token's bytes nor its length leak through timing.
 */
export class BearerAuth {
  private readonly expected: Buffer;

  constructor(token: string) {
    this.expected = digest(token);
  }

  /** Undefined when the header carries the token; else why not. */
  check(authorization: string | undefined): AuthFailure | undefined {
    if (authorization === undefined || authorization.trim() === '') return 'missing';
    // RFC 9110 §11.1: the scheme is case-insensitive; one or more spaces follow it.
    const m = /^\s*(\S+)\s+(\S+)\s*$/.exec(authorization);
    if (!m || m[1].toLowerCase() !== 'bearer') return 'scheme';
    return timingSafeEqual(digest(m[2]), this.expected) ? undefined : 'invalid';
  }

  /** The `WWW-Authenticate` value for a failure (RFC 6750 §3: `invalid_token` when a token was presented). */
  static challenge(failure: AuthFailure): string {
    return failure === 'invalid' ? `Bearer realm="${AUTH_REALM}", error="invalid_token"` : `Bearer realm="${AUTH_REALM}"`;
  }
}
