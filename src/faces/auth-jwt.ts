import type { IncomingHttpHeaders } from 'node:http';
import type { JWTPayload, createRemoteJWKSet } from 'jose';
import { bearerToken, oauthChallenge, type AuthVerdict, type ClientAuth, type ResourceUrls } from './auth-verdict.js';
import { introspect, type IntrospectionOptions } from './auth-introspection.js';

/** `--auth jwt`: the bridge as an OAuth 2.1 resource server (MCP authorization, RFC 9068 access tokens). */
export interface JwtAuthOptions {
  /** `--auth-issuer`: the authorization server; tokens must carry it as `iss`. */
  issuer: string;
  /** `--auth-audience`: tokens must name it in `aud` (RFC 8707: the bridge's resource URL, as a rule). */
  audience: string;
  /** `--auth-jwks-url`; else the `jwks_uri` of the issuer's metadata (RFC 8414). */
  jwksUrl?: string;
  /** `--auth-required-scope` (repeatable): every one must be granted, else 403 insufficient_scope. */
  requiredScopes: string[];
  /** `--auth-introspection-url`: RFC 7662 introspection for tokens that are not JWTs. */
  introspection?: IntrospectionOptions;
  /** Seconds of clock skew allowed on `exp` and `nbf`. */
  clockToleranceSec?: number;
}

/** A token whose `kid` is unknown refetches the JWKS at most this often: a rotated key is picked up, a flood of bogus kids is not a flood of fetches. */
const JWKS_COOLDOWN_MS = 5_000;
const DEFAULT_CLOCK_TOLERANCE_SEC = 30;

type Jwks = ReturnType<typeof createRemoteJWKSet>;
type Jose = typeof import('jose');

/** `jose`, loaded with the first token: a bridge without `--auth jwt` never loads it. */
let joseLoading: Promise<Jose> | undefined;
const loadJose = (): Promise<Jose> => (joseLoading ??= import('jose'));

/**
 * Verifies bearer JWTs with `jose`: signature against the issuer's JWKS, `iss`,
 * `aud`, `exp`/`nbf` with a small skew, then the required scopes. The principal
 * is the token's `sub` (a client-credentials token names its client there).
 */
export class JwtAuth implements ClientAuth {
  readonly mode = 'jwt' as const;
  #jwks: Promise<Jwks> | undefined;

  constructor(private readonly opts: JwtAuthOptions) {}

  async authenticate(headers: IncomingHttpHeaders): Promise<AuthVerdict> {
    const token = bearerToken(headers.authorization);
    if (token === undefined) return { ok: false, status: 401, message: 'Unauthorized: this bridge requires an OAuth access token (Authorization: Bearer <token>)' };
    if (token === 'scheme') return { ok: false, status: 401, message: 'Unauthorized: only the Bearer authorization scheme is accepted', error: 'invalid_request' };
    const jose = await loadJose();
    if (!looksLikeJws(jose, token)) {
      if (!this.opts.introspection) return invalid('the bearer token is not a JWT');
      const claims = await introspect(this.opts.introspection, token);
      if (!claims.ok) return invalid(claims.reason);
      return this.admit(claims.payload);
    }
    let payload: JWTPayload;
    try {
      const jwks = await this.jwks(jose);
      ({ payload } = await jose.jwtVerify(token, jwks, {
        issuer: this.opts.issuer,
        audience: this.opts.audience,
        clockTolerance: this.opts.clockToleranceSec ?? DEFAULT_CLOCK_TOLERANCE_SEC,
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      // A JWKS that cannot be fetched is our failure to check, but still no access for the token.
      if (err instanceof JwksUnavailable) return invalid(err.message);
      return invalid(reasonOf(jose, err));
    }
    return this.admit(payload);
  }

  challenge(verdict: Extract<AuthVerdict, { ok: false }>, urls: ResourceUrls): string {
    return oauthChallenge(urls, this.opts.requiredScopes, verdict.error, verdict.error ? verdict.message.replace(/^[^:]*: /, '') : undefined);
  }

  async resourceMetadata(resource: string): Promise<Record<string, unknown>> {
    const doc: Record<string, unknown> = { resource, authorization_servers: [this.opts.issuer], bearer_methods_supported: ['header'] };
    if (this.opts.requiredScopes.length > 0) doc.scopes_supported = this.opts.requiredScopes;
    return doc;
  }

  /** Checks the claims every mode of token shares (introspected ones were not seen by jwtVerify). */
  private admit(payload: JWTPayload): AuthVerdict {
    const sub = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : typeof payload.client_id === 'string' ? payload.client_id : undefined;
    if (sub === undefined) return invalid('the token names no subject (sub)');
    const granted = grantedScopes(payload);
    const missing = this.opts.requiredScopes.filter((s) => !granted.has(s));
    if (missing.length > 0) {
      return { ok: false, status: 403, message: `Forbidden: the token lacks the scope ${missing.join(' ')}`, error: 'insufficient_scope' };
    }
    return { ok: true, principal: { id: `jwt:${sub}` } };
  }

  private jwks(jose: Jose): Promise<Jwks> {
    this.#jwks ??= this.jwksUrl().then(
      (url) => jose.createRemoteJWKSet(url, { cooldownDuration: JWKS_COOLDOWN_MS }),
      (err: unknown) => {
        this.#jwks = undefined; // try the metadata again with the next token
        throw err;
      },
    );
    return this.#jwks;
  }

  /** RFC 8414 §3: the metadata is at the issuer with `/.well-known/oauth-authorization-server` inserted, else OIDC discovery. */
  private async jwksUrl(): Promise<URL> {
    if (this.opts.jwksUrl !== undefined) return new URL(this.opts.jwksUrl);
    const issuer = new URL(this.opts.issuer);
    const path = issuer.pathname === '/' ? '' : issuer.pathname.replace(/\/$/, '');
    const candidates = [new URL(`/.well-known/oauth-authorization-server${path}`, issuer), new URL(`${issuer.href.replace(/\/$/, '')}/.well-known/openid-configuration`)];
    for (const url of candidates) {
      try {
        const res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
        if (!res.ok) continue;
        const meta = (await res.json()) as { jwks_uri?: unknown };
        if (typeof meta.jwks_uri === 'string') return new URL(meta.jwks_uri);
      } catch {
        // next candidate
      }
    }
    throw new JwksUnavailable(`the issuer's metadata (and so its jwks_uri) could not be read; set --auth-jwks-url`);
  }
}

class JwksUnavailable extends Error {}

function invalid(reason: string): AuthVerdict {
  return { ok: false, status: 401, message: `Unauthorized: ${reason}`, error: 'invalid_token' };
}

/** A compact JWS has three dot-separated parts and a decodable protected header. */
function looksLikeJws(jose: Jose, token: string): boolean {
  if (token.split('.').length !== 3) return false;
  try {
    jose.decodeProtectedHeader(token);
    return true;
  } catch {
    return false;
  }
}

/** RFC 9068 §2.2.3 `scope` (space-separated), or the `scp` array some servers use. */
function grantedScopes(payload: JWTPayload): Set<string> {
  const out = new Set<string>();
  if (typeof payload.scope === 'string') for (const s of payload.scope.split(' ')) if (s) out.add(s);
  if (Array.isArray(payload.scp)) for (const s of payload.scp) if (typeof s === 'string') out.add(s);
  return out;
}

/** A short reason for each way jose refuses a token; the token itself never appears. */
function reasonOf({ errors }: Jose, err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return 'the token is not yet valid';
    if (err.claim === 'iss') return 'the token was issued by another issuer';
    if (err.claim === 'aud') return 'the token is for another audience';
    return `the token's ${err.claim} claim is not valid`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the token signature does not verify';
  if (err instanceof errors.JWKSNoMatchingKey) return 'the token is signed with a key the issuer does not publish';
  if (err instanceof errors.JWKSMultipleMatchingKeys) return 'the token names a key the issuer publishes more than once';
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return 'the token uses an unsupported algorithm';
  if (err instanceof errors.JWKSTimeout || (err instanceof Error && err.name === 'TypeError')) return "the issuer's keys could not be fetched";
  return 'the token is not valid';
}
