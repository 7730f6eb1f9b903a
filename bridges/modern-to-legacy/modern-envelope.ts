import type { Implementation, JSONRPCRequest, RequestId } from '@modelcontextprotocol/server';
import { RpcError } from '../../src/errors.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import { TRACE_CONTEXT, carryTraceContext } from '../../src/ops/tracing.js';

/**
 * What one modern request says about its client (digest §1.2), and the params
 * it becomes upstream: the per-request envelope keys and the MRTR retry fields
 * are the bridge's to consume; everything else (progressToken, traceparent,
 * unknown keys) passes through untouched.
 */

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/** digest §1.9, most verbose first. */
export const LOGGING_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LoggingLevel = (typeof LOGGING_LEVELS)[number];

/** The envelope keys that describe the client and mean nothing to a legacy server. */
const ENVELOPE_KEYS = new Set<string>([META.protocolVersion, META.clientCapabilities, META.clientInfo, META.logLevel]);
/**
 * Params that never go upstream: the MRTR retry fields (digest §1.7), and
 * `task`, since the bridge declares no tasks capability on either side and a
 * legacy server must not see a task-augmented request (digest §5.7).
 */
const BRIDGE_ONLY_KEYS = new Set(['inputResponses', 'requestState', 'task']);

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The parsed client side of one modern request. */
export interface ModernEnvelope {
  protocolVersion?: string;
  clientCapabilities: Obj;
  clientInfo?: Implementation;
  logLevel?: LoggingLevel;
  progressToken?: RequestId;
  params: Obj;
}

/** Reads the envelope; an invalid logLevel is -32602 (digest §1.9 SHOULD). */
export function readEnvelope(req: JSONRPCRequest): ModernEnvelope {
  const params = isObj(req.params) ? (req.params as Obj) : {};
  const meta = isObj(params._meta) ? params._meta : {};
  const level = meta[META.logLevel];
  if (level !== undefined && !(LOGGING_LEVELS as readonly unknown[]).includes(level)) {
    throw new RpcError(RpcCode.InvalidParams, `_meta["${META.logLevel}"] must be one of ${LOGGING_LEVELS.join(', ')}`, { data: { logLevel: level } });
  }
  const info = meta[META.clientInfo];
  const token = meta.progressToken;
  return {
    protocolVersion: typeof meta[META.protocolVersion] === 'string' ? (meta[META.protocolVersion] as string) : undefined,
    clientCapabilities: isObj(meta[META.clientCapabilities]) ? (meta[META.clientCapabilities] as Obj) : {},
    clientInfo: isObj(info) && typeof info.name === 'string' && typeof info.version === 'string' ? (info as Implementation) : undefined,
    logLevel: level as LoggingLevel | undefined,
    progressToken: typeof token === 'string' || typeof token === 'number' ? token : undefined,
    params,
  };
}

/** The params sent upstream: envelope keys, retry fields and `task` removed, an emptied `_meta` dropped. */
export function upstreamParams(params: Obj): Obj | undefined {
  const out: Obj = {};
  for (const [k, v] of Object.entries(params)) {
    if (BRIDGE_ONLY_KEYS.has(k)) continue;
    if (k === '_meta' && isObj(v)) {
      const meta: Obj = {};
      for (const [mk, mv] of Object.entries(v)) if (!ENVELOPE_KEYS.has(mk)) meta[mk] = mv;
      if (Object.keys(meta).length > 0) out._meta = meta;
      continue;
    }
    out[k] = v;
  }
  // With tracing on, the request's span context rides on params (src/ops/tracing.ts); keep it, even on empty params.
  carryTraceContext(params, out);
  return Object.keys(out).length > 0 || TRACE_CONTEXT in out ? out : undefined;
}

/** True when `level` is at least as severe as `threshold` (digest §1.9: "at or above that level"). */
export function levelAdmits(threshold: LoggingLevel, level: unknown): boolean {
  const i = LOGGING_LEVELS.indexOf(level as LoggingLevel);
  return i >= 0 && i >= LOGGING_LEVELS.indexOf(threshold);
}

/** The more verbose of two levels (undefined counts as "no logs wanted"). */
export function moreVerbose(a: LoggingLevel | undefined, b: LoggingLevel | undefined): LoggingLevel | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return LOGGING_LEVELS.indexOf(a) <= LOGGING_LEVELS.indexOf(b) ? a : b;
}
