import type { IncomingHttpHeaders } from 'node:http';
import { credentialDigest } from '../identity/principal.js';
import { bearerToken, oauthChallenge, type AuthVerdict, type ClientAuth, type ResourceUrls } from './auth-verdict.js';

/** `--auth pass-through`: the client's own token goes to the upstream, which decides. */
export interface PassThroughAuthOptions {
  /**
   * The upstream MCP endpoint a bridge resource path (`/mcp`, `/servers/<name>/sse`…)
   * reaches, whose protected-resource metadata the bridge serves as its own.
   */
  upstreamUrlFor(resourcePath: string): string | undefined;
  /** `--forward-header`: other client headers sent upstream too (names, any case). */
  forwardHeaders: string[];
}

/** How long the upstream's metadata is kept before it is read again. */
const METADATA_TTL_MS = 5 * 60_000;

/**
 * The bridge checks no credential itself: a request without one is refused
 * (401 pointing at the bridge's metadata, so an OAuth client can start), one
 * with a token acts as the principal that token names (its digest), and the
 * token travels upstream with that principal's requests only.
 */
export class PassThroughAuth implements ClientAuth {
  readonly mode = 'pass-through' as const;
  private readonly forward: string[];
  readonly #metadata = new Map<string, { at: number; doc: Promise<Record<string, unknown> | undefined> }>();

  constructor(private readonly opts: PassThroughAuthOptions) {
    this.forward = [...new Set(opts.forwardHeaders.map((h) => h.toLowerCase()).filter((h) => h !== 'authorization'))];
  }

  authenticate(headers: IncomingHttpHeaders): AuthVerdict {
    const token = bearerToken(headers.authorization);
    if (token === undefined) return { ok: false, status: 401, message: 'Unauthorized: the upstream requires an OAuth access token (Authorization: Bearer <token>)' };
    if (token === 'scheme') return { ok: false, status: 401, message: 'Unauthorized: only the Bearer authorization scheme is passed through', error: 'invalid_request' };
    const upstreamHeaders: Record<string, string> = { authorization: `Bearer ${token}` };
    for (const name of this.forward) {
      const v = headers[name];
      if (v !== undefined) upstreamHeaders[name] = Array.isArray(v) ? v.join(', ') : v;
    }
    return { ok: true, principal: { id: `pass:${credentialDigest(token)}`, upstreamHeaders } };
  }

  challenge(verdict: Extract<AuthVerdict, { ok: false }>, urls: ResourceUrls): string {
    return oauthChallenge(urls, [], verdict.error);
  }

  /**
   * The upstream's RFC 9728 metadata with the bridge's URL as `resource`: the
   * client asks the upstream's authorization server for a token for the bridge
   * (RFC 8707), which is the URL it connects to and the one its SDK checks.
   */
  async resourceMetadata(resource: string): Promise<Record<string, unknown> | undefined> {
    const upstream = this.opts.upstreamUrlFor(new URL(resource).pathname);
    if (upstream === undefined) return undefined;
    const now = Date.now();
    let cached = this.#metadata.get(upstream);
    if (!cached || now - cached.at > METADATA_TTL_MS) {
      const doc = this.upstreamMetadata(upstream);
      cached = { at: now, doc };
      this.#metadata.set(upstream, cached);
      const forget = () => this.#metadata.get(upstream)?.doc === doc && this.#metadata.delete(upstream);
      doc.then((d) => d === undefined && forget(), forget);
    }
    const doc = await cached.doc;
    return doc === undefined ? undefined : { ...doc, resource };
  }

  /** RFC 9728 §3.1: the path variant first, then the root document. */
  private async upstreamMetadata(upstreamUrl: string): Promise<Record<string, unknown> | undefined> {
    const up = new URL(upstreamUrl);
    const path = up.pathname === '/' ? '' : up.pathname.replace(/\/$/, '');
    const candidates = [...new Set([`/.well-known/oauth-protected-resource${path}`, '/.well-known/oauth-protected-resource'])];
    for (const p of candidates) {
      try {
        const res = await fetch(new URL(p, up), { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
        if (!res.ok) continue;
        const doc = (await res.json()) as unknown;
        if (typeof doc === 'object' && doc !== null && !Array.isArray(doc)) return doc as Record<string, unknown>;
      } catch {
        // next candidate
      }
    }
    return undefined;
  }
}
