import { RpcCode } from '../jsonrpc/codes.js';
import { IdLiteralError, parseJsonRpc } from '../jsonrpc/id-codec.js';
import type { RpcErrorBody } from '../jsonrpc/messages.js';
import { exceedsJsonDepth } from './json-depth.js';

/** How deep a client message may nest unless told otherwise (`--max-json-depth`). */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/** One client message (HTTP body, WebSocket frame, stdio line) parsed, or the JSON-RPC error that refuses it. */
export type InboundJson = { ok: true; body: unknown } | { ok: false; error: RpcErrorBody };

/**
 * Steps, in order: (1) nesting past `maxDepth` → -32600, before parsing;
 * (2) not JSON → -32700; (3) a numeric id not written as an integer (`1.5`,
 * `1.0`, `1e3`, `-0`), on the message or any batch element → -32600, since it
 * could not be answered byte-identical (id-codec.ts). Integer ids of any size
 * are kept exact. Each face keeps its own wording of the -32700 message.
 */
export function parseInboundJson(text: string, maxDepth: number = DEFAULT_MAX_JSON_DEPTH, parseErrorMessage = 'Parse error: not valid JSON'): InboundJson {
  if (exceedsJsonDepth(text, maxDepth)) {
    return { ok: false, error: { code: RpcCode.InvalidRequest, message: `Invalid Request: JSON nested deeper than ${maxDepth} levels (see --max-json-depth)` } };
  }
  try {
    return { ok: true, body: parseJsonRpc(text, true) };
  } catch (err) {
    if (err instanceof IdLiteralError) return { ok: false, error: { code: RpcCode.InvalidRequest, message: err.message } };
    return { ok: false, error: { code: RpcCode.ParseError, message: parseErrorMessage } };
  }
}
