import { RpcCode } from '../jsonrpc/codes.js';
import { isNotification, isRequest, isResponse, type RpcErrorBody } from '../jsonrpc/messages.js';
import { isModernVersion } from '../epochs/versions.js';
import { hasEnvelopeClaim } from './modern-validation.js';

/** Where one parsed POST /mcp body goes, or the error that answers it. */
export type PostRoute = { route: 'legacy' } | { route: 'modern' } | { route: 'reject'; status: number; error: RpcErrorBody };

function invalid(message: string): PostRoute {
  return { route: 'reject', status: 400, error: { code: RpcCode.InvalidRequest, message } };
}

/**
 * Era detection on the dual-era endpoint (digest §2.8), body first: the
 * `_meta` protocolVersion claim makes a message modern; `initialize`, batches,
 * posted responses and claim-less requests are legacy. A claim-less message
 * on a live legacy session stays legacy whatever its headers say. `headers`
 * has lower-cased names.
 */
export function classifyPost(body: unknown, headers: Record<string, string | undefined>, isLegacySession: (id: string) => boolean): PostRoute {
  const sessionId = headers['mcp-session-id'];
  const headerVersion = headers['mcp-protocol-version'];
  const headerIsModern = headerVersion !== undefined && isModernVersion(headerVersion);

  if (Array.isArray(body)) {
    if (body.length === 0) return invalid('Invalid Request: empty JSON-RPC batch');
    // 2026 has no batches; a modern element cannot hide inside a legacy batch (digest §2.8).
    if (body.some(hasEnvelopeClaim)) return invalid('Invalid Request: JSON-RPC batches may not contain requests for protocol revision 2026-07-28');
    return { route: 'legacy' };
  }
  if (hasEnvelopeClaim(body)) return { route: 'modern' };
  if (sessionId !== undefined && isLegacySession(sessionId)) return { route: 'legacy' };
  if (isResponse(body)) {
    // Clients answer server→client requests only inside a 2025 session (digest §2.4 [SDK]).
    return sessionId === undefined ? invalid('Invalid Request: JSON-RPC responses cannot be posted without a session') : { route: 'legacy' };
  }
  if (isRequest(body) && body.method === 'initialize') {
    if (headerIsModern) {
      return {
        route: 'reject',
        status: 400,
        error: {
          code: RpcCode.HeaderMismatch,
          message: `Header mismatch: initialize (the legacy handshake) was sent with MCP-Protocol-Version ${headerVersion}`,
          data: { mismatch: { header: 'MCP-Protocol-Version', headerValue: headerVersion, body: 'initialize' } },
        },
      };
    }
    return { route: 'legacy' };
  }
  // A modern header on a claim-less body is a modern client that forgot the envelope: the ladder says -32602.
  if (headerIsModern) return { route: 'modern' };
  // Not a JSON-RPC message at all and no session to own it: the modern ladder answers -32600.
  if (!isRequest(body) && !isNotification(body) && sessionId === undefined) return { route: 'modern' };
  return { route: 'legacy' };
}
