import type { Implementation } from '@modelcontextprotocol/server';
import { MODERN_VERSIONS } from '../../src/epochs/versions.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import type { RpcErrorBody } from '../../src/jsonrpc/messages.js';
import { META } from './modern-envelope.js';
import { notFoundUri } from './resource-not-found.js';

/**
 * Legacy results and errors as a 2026-07-28 client must see them (digest §1.6,
 * §1.10, §5.2): `resultType` on every result, `ttlMs` + `cacheScope` on the
 * cacheable ones, server identity in result `_meta`, retired codes rewritten.
 */

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The safe cache defaults (digest §5.2; the SDK's own defaults). */
export const CACHE_DEFAULTS = { ttlMs: 0, cacheScope: 'private' } as const;

/** 2025-11-25 `Tool.execution` is a tasks field 2026 core does not have (digest §1.11, §5.7). */
function stripToolExecution(result: Obj): Obj {
  if (!Array.isArray(result.tools)) return result;
  return {
    ...result,
    tools: result.tools.map((t: unknown) => {
      if (!isObj(t) || !('execution' in t)) return t;
      const { execution: _dropped, ...rest } = t;
      return rest;
    }),
  };
}

/** Per-method fix-ups of a legacy result before the common shaping. */
const RESULT_FIXUPS: Partial<Record<string, (r: Obj) => Obj>> = {
  'tools/list': stripToolExecution,
};

export interface ShapeOptions {
  method: string;
  /** discover, list and read results carry ttlMs + cacheScope (digest §1.6). */
  cacheable: boolean;
  serverInfo: Implementation;
}

/** A complete modern result from a legacy one; fields the bridge does not know pass through. */
export function shapeResult(result: Obj, opts: ShapeOptions): Obj {
  const fixed = RESULT_FIXUPS[opts.method]?.(result) ?? result;
  const meta = isObj(fixed._meta) ? fixed._meta : {};
  // resultType first, then set again: a spread copy given more keys afterwards outlives the young GC
  // on this V8 (src/links/upstream-http.ts, options); a literal with a key before the spread does not.
  const out: Obj = { resultType: 'complete', ...fixed };
  out.resultType = 'complete';
  if (opts.cacheable) {
    if (typeof out.ttlMs !== 'number') out.ttlMs = CACHE_DEFAULTS.ttlMs;
    if (out.cacheScope !== 'public' && out.cacheScope !== 'private') out.cacheScope = CACHE_DEFAULTS.cacheScope;
  }
  out._meta = { [META.serverInfo]: opts.serverInfo, ...meta };
  return out;
}

/** A legacy "Unsupported protocol version" refusal (digest §4.1 example). */
function isUnsupportedVersion(err: RpcErrorBody): boolean {
  return (err.code === RpcCode.InvalidParams || err.code === RpcCode.ServerError) && /unsupported protocol version/i.test(err.message);
}

/**
 * A legacy error as a modern one: a not-found of the requested resource →
 * `-32602` with `data.uri` (`-32002` is retired, digest §1.10; which errors
 * count: resource-not-found.ts), a legacy version refusal → `-32022` with the
 * bridge's modern versions (digest §5.1). Other errors pass through.
 */
export function shapeError(err: RpcErrorBody, context: { method?: string; params?: Obj; requestedVersion?: string }): RpcErrorBody {
  const uri = notFoundUri(err, context.method, context.params);
  if (uri !== undefined) {
    const data = isObj(err.data) ? err.data : err.data === undefined ? {} : { upstream: err.data };
    return { code: RpcCode.InvalidParams, message: err.message, data: data.uri === undefined ? { ...data, uri } : data };
  }
  if (err.code === RpcCode.LegacyResourceNotFound) {
    // A -32002 without a requested URI to name (not a resources/read): still never emitted in 2026.
    return { code: RpcCode.InvalidParams, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) };
  }
  if (isUnsupportedVersion(err)) {
    const data: Obj = { supported: [...MODERN_VERSIONS] };
    if (context.requestedVersion !== undefined) data.requested = context.requestedVersion;
    return { code: RpcCode.UnsupportedProtocolVersion, message: `Unsupported protocol version (upstream: ${err.message})`, data };
  }
  return err;
}
