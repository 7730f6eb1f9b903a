import { RpcCode } from '../../src/jsonrpc/codes.js';
import type { RpcErrorBody } from '../../src/jsonrpc/messages.js';

/**
 * Whether a legacy server's error to `resources/read` says that the requested
 * resource does not exist, so the modern answer can carry `data.uri` (digest
 * §1.10, §5.2; SEP-2164: "-32602 with the requested URI in data").
 *
 * Legacy servers say it two ways: the retired `-32002` (2025-11-25 and earlier,
 * always about a missing resource), or `-32602` with a message, which is what
 * SDK v1's McpServer (and so server-everything) sends: "Resource <uri> not
 * found". `-32602` also means bad arguments of every other kind, so it counts
 * only when the message says that the requested URI itself is absent.
 * `-32603` and other codes are the server's own failures and stay as they are.
 */

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The URI itself said to be absent: "Resource <uri> not found" (SDK v1 McpServer),
 * "<uri> does not exist", or "Unknown resource: <uri>" (server-everything's wording),
 * "Resource not found: <uri>". A message that merely mentions the URI near such a
 * phrase ("<uri> links to x://b, which was not found") does not count.
 */
function saysAbsent(message: string, uri: string): boolean {
  const u = escape(uri);
  const q = `['"\`]?`;
  const after = new RegExp(`(?<![^\\s'"\`(:])${q}${u}${q}\\s+(?:was\\s+|is\\s+)?(?:not found|does not exist)\\b`, 'i');
  const before = new RegExp(`\\b(?:unknown resource|no such resource|resource not found)\\s*:?\\s*${q}${u}${q}(?![^\\s'"\`.,;)])`, 'i');
  return after.test(message) || before.test(message);
}

/** The spellings of `uri` a server may have echoed: as sent, and as WHATWG URL serialises it (SDK v1 echoes `new URL(uri)`). */
function spellings(uri: string): string[] {
  try {
    const href = new URL(uri).href;
    return href === uri ? [uri] : [uri, href];
  } catch {
    return [uri];
  }
}

/** The requested URI when `err` is that resource's not-found error, else undefined. */
export function notFoundUri(err: RpcErrorBody, method: string | undefined, params: Record<string, unknown> | undefined): string | undefined {
  const uri = params?.uri;
  if (typeof uri !== 'string') return undefined;
  if (err.code === RpcCode.LegacyResourceNotFound) return uri;
  if (err.code !== RpcCode.InvalidParams || method !== 'resources/read') return undefined;
  return spellings(uri).some((s) => saysAbsent(err.message, s)) ? uri : undefined;
}
