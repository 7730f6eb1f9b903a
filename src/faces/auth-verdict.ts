import type { IncomingHttpHeaders } from 'node:http';
import type { Principal } from '../identity/principal.js';

/** The modes of client authentication toward the bridge (`--auth`). */
export const CLIENT_AUTH_MODES = ['none', 'token', 'jwt', 'pass-through'] as const;
export type ClientAuthMode = (typeof CLIENT_AUTH_MODES)[number];

/** RFC 6750 §3.1 error codes a challenge may carry. */
export type BearerError = 'invalid_token' | 'insufficient_scope' | 'invalid_request';

/** What checking a request's credentials decided. */
export type AuthVerdict =
  | { ok: true; principal: Principal }
  | {
      ok: false;
      /** 401: no or bad credentials; 403: valid, but without the required scope (RFC 6750 §3.1). */
      status: 401 | 403;
      /** Text for the JSON-RPC error body; never contains the token. */
      message: string;
      error?: BearerError;
    };

/** Where the request came in, for the `resource_metadata` of a challenge and the `resource` of the metadata. */
export interface ResourceUrls {
  /** The bridge's protected-resource metadata URL for this request's path (RFC 9728 §3.1 path variant). */
  metadataUrl: string;
}

/** One way to authenticate clients; the gate runs it after Host and Origin. */
export interface ClientAuth {
  readonly mode: Exclude<ClientAuthMode, 'none'>;
  /** Synchronous when it can be (a static token): the hot path builds no promise. */
  authenticate(headers: IncomingHttpHeaders): AuthVerdict | Promise<AuthVerdict>;
  /** The `WWW-Authenticate` value for a refusal. */
  challenge(verdict: Extract<AuthVerdict, { ok: false }>, urls: ResourceUrls): string;
  /**
   * The RFC 9728 protected-resource metadata served at
   * `/.well-known/oauth-protected-resource[/path]`, with `resource` the bridge's
   * own URL; undefined when the mode has none (a static token).
   */
  resourceMetadata?(resource: string): Promise<Record<string, unknown> | undefined>;
}

/** `Authorization: Bearer <token>` → the token; undefined when absent, 'scheme' when another scheme or malformed. */
export function bearerToken(authorization: string | string[] | undefined): string | 'scheme' | undefined {
  const value = Array.isArray(authorization) ? authorization[0] : authorization;
  if (value === undefined || value.trim() === '') return undefined;
  // RFC 9110 §11.1: the scheme is case-insensitive; one or more spaces follow it.
  const m = /^\s*(\S+)\s+(\S+)\s*$/.exec(value);
  if (!m || m[1].toLowerCase() !== 'bearer') return 'scheme';
  return m[2];
}

/** A quoted-string value for a challenge parameter (RFC 9110 §5.6.4). */
export function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** `Bearer resource_metadata="…"[, scope="…"][, error="…"]` (RFC 9728 §5.1, RFC 6750 §3). */
export function oauthChallenge(urls: ResourceUrls, scopes: readonly string[], error: BearerError | undefined, description?: string): string {
  const parts = [`resource_metadata=${quoted(urls.metadataUrl)}`];
  if (scopes.length > 0) parts.push(`scope=${quoted(scopes.join(' '))}`);
  if (error !== undefined) parts.push(`error=${quoted(error)}`);
  if (description !== undefined && error !== undefined) parts.push(`error_description=${quoted(description)}`);
  return `Bearer ${parts.join(', ')}`;
}
