import type { IncomingMessage, ServerResponse } from 'node:http';
import { RpcCode } from '../jsonrpc/codes.js';
import type { Logger } from '../log.js';
import type { ClientAuth } from './auth-verdict.js';
import { writeJsonError } from './modern-post.js';
import { RESOURCE_METADATA_PATH, requestOrigin } from './request-gate.js';

/** Whether a (lower-cased) route path asks for protected-resource metadata, root or path variant. */
export function isResourceMetadataPath(path: string): boolean {
  return path === RESOURCE_METADATA_PATH || path.startsWith(`${RESOURCE_METADATA_PATH}/`);
}

/**
 * GET `/.well-known/oauth-protected-resource[/<path>]` (RFC 9728 §3): the
 * resource is the bridge URL of `<path>` (the path variant a client derives
 * from the URL it connects to), or the bridge's root. 404 when the mode
 * publishes none.
 */
export async function serveResourceMetadata(auth: ClientAuth | undefined, req: IncomingMessage, res: ServerResponse, path: string, logger: Logger): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return writeJsonError(res, 405, null, { code: RpcCode.ServerError, message: 'Method not allowed.' }, { allow: 'GET' });
  const suffix = path.slice(RESOURCE_METADATA_PATH.length);
  const resource = `${requestOrigin(req)}${suffix === '' ? '/' : originalCase(req, suffix)}`;
  let doc: Record<string, unknown> | undefined;
  try {
    doc = await auth?.resourceMetadata?.(resource);
  } catch (err) {
    logger.warn('http.resource_metadata_failed', { err });
  }
  if (doc === undefined) return writeJsonError(res, 404, null, { code: RpcCode.ServerError, message: 'Not Found: this bridge publishes no protected-resource metadata' });
  const body = JSON.stringify(doc);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'cache-control': 'max-age=300' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Route paths are lower-cased; the resource keeps the case the client wrote (server names may differ by case). */
function originalCase(req: IncomingMessage, lowered: string): string {
  const raw = (req.url ?? '').split('?')[0].replace(/\/$/, '');
  return raw.slice(raw.length - lowered.length) || lowered;
}
