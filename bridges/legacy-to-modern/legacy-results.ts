import { RpcCode } from '../../src/jsonrpc/codes.js';
import type { RpcOutcome } from '../../src/jsonrpc/messages.js';

/**
 * What a legacy client may see of a modern outcome (digest §5.2): results lose
 * the 2026-only `resultType`, `ttlMs` and `cacheScope`; `input_required` and
 * other non-`complete` result types never reach it; the modern-only error codes
 * -32020/-32021/-32022 are never shown raw.
 */

type Obj = Record<string, unknown>;

/** The 2026 codes a legacy client does not know (digest §1.10). */
const MODERN_ONLY_CODES: ReadonlySet<number> = new Set([
  RpcCode.HeaderMismatch,
  RpcCode.MissingRequiredClientCapability,
  RpcCode.UnsupportedProtocolVersion,
]);

/** Result keys that exist only in 2026 (digest §1.6). */
const MODERN_RESULT_KEYS = ['resultType', 'ttlMs', 'cacheScope'] as const;

/**
 * A request that cannot be fulfilled, the way the SDK's legacy shim says it:
 * an `isError` tool result for `tools/call`, a -32603 for anything else
 * (digest §5.3 case B step 4).
 */
export function legacyFailure(method: string, message: string, data?: unknown): RpcOutcome {
  if (method === 'tools/call') return { result: { content: [{ type: 'text', text: message }], isError: true } };
  return { error: data === undefined ? { code: RpcCode.InternalError, message } : { code: RpcCode.InternalError, message, data } };
}

/** A complete result without the 2026-only keys. */
export function stripModernResultKeys(result: Obj): Obj {
  const out: Obj = { ...result };
  for (const k of MODERN_RESULT_KEYS) delete out[k];
  return out;
}

/**
 * The outcome a legacy client receives for a final (non-`input_required`)
 * upstream outcome of `method`. A -32021 on `tools/call` becomes an `isError`
 * result; the other modern-only codes become -32603 with the server's message
 * and the original error in `data.upstreamError`.
 */
export function toLegacyOutcome(method: string, outcome: RpcOutcome): RpcOutcome {
  if ('error' in outcome) {
    const { code, message } = outcome.error;
    if (!MODERN_ONLY_CODES.has(code)) return outcome;
    const text = `upstream refused ${method}: ${message} (${code})`;
    if (code === RpcCode.MissingRequiredClientCapability) return legacyFailure(method, text, { upstreamError: outcome.error });
    return { error: { code: RpcCode.InternalError, message: text, data: { upstreamError: outcome.error } } };
  }
  const type = outcome.result.resultType;
  if (type === undefined || type === 'complete') return { result: stripModernResultKeys(outcome.result) };
  return {
    error: {
      code: RpcCode.InternalError,
      message: `upstream answered ${method} with resultType ${JSON.stringify(type)}, which mcp-bridge cannot relay to a legacy client`,
    },
  };
}
