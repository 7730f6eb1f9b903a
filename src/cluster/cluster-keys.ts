import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** Smallest accepted `--cluster-secret` (bytes): as strong as the random requestState key it replaces. */
export const MIN_CLUSTER_SECRET_BYTES = 32;

/** How far a forwarded request's timestamp may be from this replica's clock. */
const MAX_SKEW_MS = 60_000;

/**
 * The keys every replica derives from the one shared cluster secret (HKDF-SHA256,
 * one `info` label per use, so no key is ever used for two purposes): the
 * requestState seal, the owner tag in session ids, and the internal route's auth.
 */
export class ClusterKeys {
  /** HMAC key for sealed requestState: the same on every replica, so any of them can read the owner. */
  readonly requestStateKey: Buffer;
  readonly #tagKey: Buffer;
  readonly #routeKey: Buffer;

  constructor(secret: string) {
    if (Buffer.byteLength(secret) < MIN_CLUSTER_SECRET_BYTES) throw new RangeError(`the cluster secret must be at least ${MIN_CLUSTER_SECRET_BYTES} bytes`);
    const derive = (info: string) => Buffer.from(hkdfSync('sha256', secret, 'mcp-bridge cluster', info, 32));
    this.requestStateKey = derive('request-state');
    this.#tagKey = derive('owner-tag');
    this.#routeKey = derive('internal-route');
  }

  /** A replica's short public name, derived from its `--cluster-self` URL (12 hex digits). */
  tagOf(selfUrl: string): string {
    return createHmac('sha256', this.#tagKey).update(selfUrl).digest('hex').slice(0, 12);
  }

  /** The `x-mcp-bridge-cluster` value proving a forwarded request came from a replica: `<ms>.<hmac>`. */
  sign(method: string, url: string, now = Date.now()): string {
    return `${now}.${this.#mac(now, method, url)}`;
  }

  /** Checks a value from sign(): the HMAC (timing-safe) over method and URL, and a timestamp within a minute. */
  verify(value: string | undefined, method: string, url: string, now = Date.now()): boolean {
    if (value === undefined) return false;
    const dot = value.indexOf('.');
    const at = Number(value.slice(0, dot));
    if (dot <= 0 || !Number.isSafeInteger(at) || Math.abs(now - at) > MAX_SKEW_MS) return false;
    const given = Buffer.from(value.slice(dot + 1));
    const expected = Buffer.from(this.#mac(at, method, url));
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  #mac(at: number, method: string, url: string): string {
    return createHmac('sha256', this.#routeKey).update(`${at}\n${method.toUpperCase()}\n${url}`).digest('base64url');
  }
}
