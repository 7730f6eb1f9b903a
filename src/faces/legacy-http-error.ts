import type { ServerResponse } from 'node:http';
import { errorResponse } from '../jsonrpc/messages.js';

/**
 * Ends an HTTP exchange with a transport-level refusal: the status plus a
 * JSON-RPC error body with id null, the shape SDK servers answer with (digest §4.3).
 */
export function legacyHttpError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(errorResponse(null, { code, message })));
}
