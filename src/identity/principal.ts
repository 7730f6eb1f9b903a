import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Who a request acts for (DESIGN "Identity"). Every piece of per-client state
 * (downstream session, pooled upstream session or child, parked call, listen)
 * belongs to one; two principals never share any of it.
 */
export interface Principal {
  /**
   * What state is keyed by: `jwt:<iss>#<sub>`, `token:<digest>` or
   * `pass:<digest>`. A digest, never a credential, so it may appear in logs.
   */
  readonly id: string;
  /**
   * `--auth pass-through` only: the headers this principal's upstream requests
   * carry (its `Authorization`, and those `--forward-header` names). Secret:
   * never logged, never put in an error.
   */
  readonly upstreamHeaders?: Readonly<Record<string, string>>;
}

/** The principal of a bridge without client authentication (or with a single shared token, for stdio). */
export const NO_PRINCIPAL_ID = '';

/** A short, non-reversible name for a credential: the first 128 bits of its SHA-256, base64url. */
export function credentialDigest(credential: string): string {
  return createHash('sha256').update(credential, 'utf8').digest('base64url').slice(0, 22);
}

const byRequest = new WeakMap<IncomingMessage, Principal>();

/** Records who `req` acts for; the gate calls it once the credentials check out. */
export function bindPrincipal(req: IncomingMessage, principal: Principal): void {
  byRequest.set(req, principal);
}

/** The principal the gate bound to `req`, if the bridge authenticates clients. */
export function principalOf(req: IncomingMessage): Principal | undefined {
  return byRequest.get(req);
}

/** The id state is keyed by ('' without a principal). */
export function principalId(principal: Principal | undefined): string {
  return principal?.id ?? NO_PRINCIPAL_ID;
}
