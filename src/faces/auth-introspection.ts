import type { JWTPayload } from 'jose';

/** RFC 7662 token introspection, for opaque tokens in `--auth jwt`. */
export interface IntrospectionOptions {
  url: string;
  /** The bridge's credentials at the introspection endpoint (RFC 7662 §2.1 requires some); HTTP Basic. */
  clientId?: string;
  clientSecret?: string;
  /** Tokens must carry these (`iss` when the answer names one; `aud` always). */
  issuer: string;
  audience: string;
}

export type Introspected = { ok: true; payload: JWTPayload } | { ok: false; reason: string };

/**
 * RFC 7662 §2: POST `token=<token>` as a form, read `active` and the claims.
 * An inactive token, a foreign `iss` or `aud`, or an endpoint that cannot
 * answer all refuse the token.
 */
export async function introspect(opts: IntrospectionOptions, token: string): Promise<Introspected> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (opts.clientId !== undefined) {
    // RFC 6749 §2.3.1: both parts form-encoded before Basic.
    const pair = `${encodeURIComponent(opts.clientId)}:${encodeURIComponent(opts.clientSecret ?? '')}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  }
  let answer: Record<string, unknown>;
  try {
    const res = await fetch(opts.url, { method: 'POST', headers, body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(), signal: AbortSignal.timeout(10_000) });
    if (!res.ok) return { ok: false, reason: `the introspection endpoint answered ${res.status}` };
    answer = (await res.json()) as Record<string, unknown>;
  } catch {
    return { ok: false, reason: 'the introspection endpoint could not be reached' };
  }
  if (answer.active !== true) return { ok: false, reason: 'the token is not active' };
  const now = Math.floor(Date.now() / 1000);
  if (typeof answer.exp === 'number' && answer.exp < now) return { ok: false, reason: 'the token has expired' };
  if (typeof answer.iss === 'string' && answer.iss !== opts.issuer) return { ok: false, reason: 'the token was issued by another issuer' };
  const aud = typeof answer.aud === 'string' ? [answer.aud] : Array.isArray(answer.aud) ? answer.aud : undefined;
  // A token that names no audience is not known to be for this resource: refused like a foreign one.
  if (aud === undefined || !aud.includes(opts.audience)) return { ok: false, reason: 'the token is for another audience' };
  return { ok: true, payload: answer as JWTPayload };
}
