import { RpcCode } from '../jsonrpc/codes.js';
import type { RpcErrorBody } from '../jsonrpc/messages.js';
import { exceedsJsonDepth } from './json-depth.js';

/** How deep a client message may nest unless told otherwise (`--max-json-depth`). */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/** One client message (HTTP body, WebSocket frame, stdio line) parsed, or the JSON-RPC error that refuses it. */
export type InboundJson = { ok: true; body: unknown } | { ok: false; error: RpcErrorBody };

type Obj = Record<string, unknown>;

/**
 * Why a numeric id cannot be relayed exactly, or undefined. `JSON.parse` rounds
 * integers past 2^53 (9007199254740993 arrives as …992), so such an id could
 * come back as another request's id; the bridge refuses it instead of guessing.
 * Fractions are refused too: the SDKs accept only integer numeric ids.
 * Strings are kept byte-exact, and "1" and 1 stay two different ids.
 */
export function idProblem(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const id = (message as Obj).id;
  if (typeof id !== 'number' || Number.isSafeInteger(id)) return undefined;
  return `Invalid Request: a numeric id must be an integer within ±(2^53−1) (got ${id}); send larger or fractional ids as strings`;
}

/**
 * Steps, in order: (1) nesting past `maxDepth` → -32600, before parsing;
 * (2) not JSON → -32700; (3) a numeric id that JSON numbers cannot carry
 * exactly, on the message or any batch element → -32600. Each face keeps
 * its own wording of the -32700 message.
 */
export function parseInboundJson(text: string, maxDepth: number = DEFAULT_MAX_JSON_DEPTH, parseErrorMessage = 'Parse error: not valid JSON'): InboundJson {
  if (exceedsJsonDepth(text, maxDepth)) {
    return { ok: false, error: { code: RpcCode.InvalidRequest, message: `Invalid Request: JSON nested deeper than ${maxDepth} levels (see --max-json-depth)` } };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, error: { code: RpcCode.ParseError, message: parseErrorMessage } };
  }
  const problem = Array.isArray(body) ? body.map(idProblem).find((p) => p !== undefined) : idProblem(body);
  if (problem) return { ok: false, error: { code: RpcCode.InvalidRequest, message: problem } };
  return { ok: true, body };
}
