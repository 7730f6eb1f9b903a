import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The sealed `requestState` a bridge hands a modern client when it parks an
 * upstream call (digest §1.7 server rules, §5.3 case A step 2). The client
 * echoes it byte-exact; the bridge must treat it as attacker-controlled, so it
 * is HMAC-SHA256 sealed and bound to this instance, the method, a digest of
 * the params and an expiry. Signed, not encrypted: it carries no secrets.
 *
 * Wire shape: `mb1.<b64url(JSON body)>.<b64url(HMAC(key, "mb1." + body))>`.
 */

/** Why an echoed requestState was refused; each reads as its own -32602 message. */
export type RequestStateFailure = 'tampered' | 'expired' | 'foreign' | 'method' | 'params' | 'principal';

export type RequestStateVerdict =
  | { ok: true; ref: string; extra?: Record<string, unknown> }
  | { ok: false; reason: RequestStateFailure; message: string };

export interface RequestStateCodecOptions {
  /** HMAC key (UTF-8 when a string). Random per start when absent: only this process can open its states. */
  key?: string | Uint8Array;
  ttlMs: number;
  /** Names the process that holds the parked calls (digest §5.3 step 5). */
  instanceId: string;
  /** Clock, for tests. */
  now?: () => number;
}

interface SealedBody {
  /** instance */ i: string;
  /** reference to the parked call */ r: string;
  /** method */ m: string;
  /** params digest */ d: string;
  /** expiry, epoch ms */ x: number;
  /** extra claims the caller wants back */ e?: Record<string, unknown>;
  /** the principal it was issued to (absent: none); the spec says requestState SHOULD be bound to it */ p?: string;
}

const PREFIX = 'mb1';

/** Params that do not take part in the digest: the envelope and the MRTR retry fields (digest §1.7). */
const UNBOUND_PARAMS = new Set(['_meta', 'inputResponses', 'requestState']);

/** JSON with object keys sorted at every depth, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** SHA-256 of the params that identify a request, ignoring `_meta`, `inputResponses` and `requestState`. */
export function paramsDigest(params: Record<string, unknown> | undefined): string {
  const bound: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params ?? {})) if (!UNBOUND_PARAMS.has(k)) bound[k] = v;
  return createHash('sha256').update(canonicalJson(bound)).digest('base64url');
}

/** Seals and opens requestState values for one bridge instance. */
export class RequestStateCodec {
  readonly instanceId: string;
  readonly ttlMs: number;
  readonly #key: Buffer;
  readonly #now: () => number;

  constructor(opts: RequestStateCodecOptions) {
    this.instanceId = opts.instanceId;
    this.ttlMs = opts.ttlMs;
    this.#key = opts.key === undefined ? randomBytes(32) : Buffer.from(opts.key);
    if (this.#key.length === 0) throw new RangeError('requestState key must not be empty');
    this.#now = opts.now ?? Date.now;
  }

  /** A sealed state naming `ref`, valid for `ttlMs` and only for this method and these params. */
  seal(ref: string, method: string, params: Record<string, unknown> | undefined, extra?: Record<string, unknown>, principal?: string): string {
    const body: SealedBody = { i: this.instanceId, r: ref, m: method, d: paramsDigest(params), x: this.#now() + this.ttlMs };
    if (extra !== undefined) body.e = extra;
    if (principal) body.p = principal;
    const encoded = Buffer.from(JSON.stringify(body)).toString('base64url');
    return `${PREFIX}.${encoded}.${this.#mac(encoded).toString('base64url')}`;
  }

  /**
   * Checks an echoed state, in this order: shape, seal (a state whose seal fails
   * but that names another instance is reported `foreign`, since only that
   * instance could verify it), instance, principal (another principal's state
   * reads as one that names no parked call), expiry, method, params digest.
   */
  open(state: unknown, method: string, params: Record<string, unknown> | undefined, principal?: string): RequestStateVerdict {
    const tampered = (why: string): RequestStateVerdict => ({ ok: false, reason: 'tampered', message: `requestState is tampered: ${why}` });
    if (typeof state !== 'string') return tampered('it is not a string');
    const parts = state.split('.');
    if (parts.length !== 3 || parts[0] !== PREFIX) return tampered('it is not a state this bridge issued');
    const body = decodeBody(parts[1]);
    if (!body) return tampered('its body does not decode');
    const foreign: RequestStateVerdict = {
      ok: false,
      reason: 'foreign',
      message: `requestState is foreign: it was issued by bridge instance ${JSON.stringify(body.i)}, not ${JSON.stringify(this.instanceId)}; retry against that instance or start the request again`,
    };
    const given = Buffer.from(parts[2], 'base64url');
    const expected = this.#mac(parts[1]);
    const sealOk = given.length === expected.length && timingSafeEqual(given, expected);
    if (!sealOk) return body.i === this.instanceId ? tampered('its seal does not verify') : foreign;
    if (body.i !== this.instanceId) return foreign;
    if ((body.p ?? '') !== (principal ?? '')) {
      return { ok: false, reason: 'principal', message: 'requestState expired: the call it names is no longer parked (it reached its time-to-live, was cancelled, or was already resumed); start the request again without it' };
    }
    if (this.#now() > body.x) {
      return { ok: false, reason: 'expired', message: `requestState expired ${this.#now() - body.x} ms ago (time-to-live ${this.ttlMs} ms); start the request again without it` };
    }
    if (body.m !== method) {
      return { ok: false, reason: 'method', message: `requestState was issued for ${body.m}, not ${method}` };
    }
    if (body.d !== paramsDigest(params)) {
      return { ok: false, reason: 'params', message: 'requestState was issued for different params: a retry must repeat the original params' };
    }
    return body.e === undefined ? { ok: true, ref: body.r } : { ok: true, ref: body.r, extra: body.e };
  }

  /**
   * The instance a state names, when its seal verifies under this codec's key
   * (replicas of a cluster share the key, so each can tell whose state it is);
   * undefined for anything else, which open() then refuses in its own words.
   */
  issuer(state: unknown): string | undefined {
    if (typeof state !== 'string') return undefined;
    const parts = state.split('.');
    if (parts.length !== 3 || parts[0] !== PREFIX) return undefined;
    const body = decodeBody(parts[1]);
    const given = Buffer.from(parts[2], 'base64url');
    const expected = this.#mac(parts[1]);
    return body && given.length === expected.length && timingSafeEqual(given, expected) ? body.i : undefined;
  }

  #mac(encodedBody: string): Buffer {
    return createHmac('sha256', this.#key).update(`${PREFIX}.${encodedBody}`).digest();
  }
}

function decodeBody(encoded: string): SealedBody | undefined {
  try {
    const v = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Partial<SealedBody>;
    const ok =
      typeof v === 'object' && v !== null &&
      typeof v.i === 'string' && typeof v.r === 'string' && typeof v.m === 'string' &&
      typeof v.d === 'string' && typeof v.x === 'number' &&
      (v.e === undefined || (typeof v.e === 'object' && v.e !== null && !Array.isArray(v.e))) &&
      (v.p === undefined || typeof v.p === 'string');
    return ok ? (v as SealedBody) : undefined;
  } catch {
    return undefined;
  }
}
