import type { IncomingMessage } from 'node:http';
import { RpcCode } from '../jsonrpc/codes.js';
import { withInboundText } from '../jsonrpc/verbatim.js';
import type { RpcErrorBody } from '../jsonrpc/messages.js';
import { DEFAULT_MAX_JSON_DEPTH, parseInboundJson } from './inbound-json.js';

/** A parsed JSON body, or the whole-reply error that refuses it. */
export type BodyOutcome = { ok: true; body: unknown } | { ok: false; status: number; error: RpcErrorBody };

/** `application/json` or a `+json` media type, parameters (charset) ignored. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

function tooLarge(max: number): BodyOutcome {
  return { ok: false, status: 413, error: { code: RpcCode.ServerError, message: `Payload Too Large: the body exceeds ${max} bytes` } };
}

/**
 * Reads one POST body: 415 unless JSON, 413 past `maxBytes` (checked on
 * Content-Length first, then while streaming), 400 -32700 when it does not
 * parse ([SDK] statuses, digest §2.6), 400 -32600 when it nests deeper than
 * `maxDepth` or carries a numeric id not written as an integer (inbound-json).
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number, maxDepth: number = DEFAULT_MAX_JSON_DEPTH): Promise<BodyOutcome> {
  if (!isJsonMediaType(req.headers['content-type'])) {
    return { ok: false, status: 415, error: { code: RpcCode.ServerError, message: 'Unsupported Media Type: Content-Type must be application/json' } };
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return tooLarge(maxBytes);
  const read = req.readableEnded ? alreadyParsed(req) : await collect(req, maxBytes);
  if (read === 'too-large') return tooLarge(maxBytes);
  if (read instanceof Error) {
    return { ok: false, status: 400, error: { code: RpcCode.ServerError, message: `Bad Request: could not read the body (${read.message})` } };
  }
  const text = read.toString('utf8');
  const parsed = parseInboundJson(text, maxDepth, 'Parse error: the body is not valid JSON');
  // A relay that sends the request on unchanged can send these bytes (jsonrpc/verbatim.ts).
  return parsed.ok ? { ok: true, body: withInboundText(parsed.body, text) } : { ok: false, status: 400, error: parsed.error };
}

/**
 * Collects the body without destroying the request when it is too large: the
 * rest is drained so the 413 can still be written on the same connection.
 */
function collect(req: IncomingMessage, maxBytes: number): Promise<Buffer | Error | 'too-large'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // Every listener goes once the body is read: a request that stays open (a listen) must not keep its body alive.
    const settle = (outcome: Buffer | Error | 'too-large'): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', settle);
      req.off('close', onClose);
      // An error after the body (a reset connection) is the response's business, not a crash.
      req.on('error', ignore);
      resolve(outcome);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      settle('too-large');
      req.resume();
    };
    const onEnd = (): void => settle(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    // Only a close before the end is an error (and only then is one built).
    const onClose = (): void => settle(new Error('the connection closed before the body ended'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', settle);
    req.on('close', onClose);
  });
}

function ignore(): void {}

/**
 * The body a framework in front already read and parsed (express.json() in an
 * app that embeds the bridge): its JSON again, so the same limits, depth check
 * and id rules apply. A stream read by anything else is an error, not an empty body.
 */
function alreadyParsed(req: IncomingMessage): Buffer | Error {
  const body = (req as IncomingMessage & { body?: unknown }).body;
  if (body === undefined) return new Error('the body was already read by something in front of the bridge');
  return Buffer.from(JSON.stringify(body), 'utf8');
}
