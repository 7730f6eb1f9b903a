import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * CORS for browser clients (the MCP Inspector's web UI, web apps on the SDK),
 * on only when `--cors-origin` is given. Which origins may call is decided by
 * the one Origin check (`faces/origin.ts`: loopback, `--allow-origin`,
 * `--cors-origin`): an origin it allows gets CORS headers, one it refuses gets
 * 403 on the preflight and on the request alike, so the two never disagree.
 */

/** What a client may send (Fetch standard §3.2.2: the preflight lists what is not CORS-safelisted). */
const ALLOWED_HEADERS = new Set(['content-type', 'authorization', 'mcp-session-id', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'last-event-id', 'accept', 'traceparent', 'tracestate', 'baggage']);
/** `Mcp-Param-*` names are per tool (digest §2.5), so they are matched by prefix. */
const PARAM_PREFIX = 'mcp-param-';
/** What a script may read from a response besides the safelisted headers. */
const EXPOSED = 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate';
const METHODS = 'GET, POST, DELETE, OPTIONS';
/** Seconds a browser may cache a preflight answer. */
const MAX_AGE = '600';

/** The request headers of a preflight that the bridge allows, in the browser's own spelling. */
export function allowedRequestHeaders(requested: string | undefined): string {
  if (!requested) return '';
  const out: string[] = [];
  for (const raw of requested.split(',')) {
    const name = raw.trim();
    const lower = name.toLowerCase();
    if (ALLOWED_HEADERS.has(lower) || (lower.startsWith(PARAM_PREFIX) && lower.length > PARAM_PREFIX.length)) out.push(name);
  }
  return out.join(', ');
}

/** Sets the headers every response to an allowed cross-origin request carries. */
export function addCorsHeaders(res: ServerResponse, origin: string): void {
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('access-control-expose-headers', EXPOSED);
  res.setHeader('vary', 'Origin');
}

/** Whether a request is a CORS preflight (an OPTIONS carrying Access-Control-Request-Method). */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
}

/**
 * Answers a preflight from an allowed origin: 204 with the methods and the
 * requested headers the bridge accepts. Preflights never carry credentials
 * (Fetch §4.8), so this runs before the bearer-token check.
 */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, origin: string): void {
  addCorsHeaders(res, origin);
  const headers: Record<string, string> = {
    'access-control-allow-methods': METHODS,
    'access-control-max-age': MAX_AGE,
    'content-length': '0',
  };
  const allowed = allowedRequestHeaders(req.headers['access-control-request-headers'] as string | undefined);
  if (allowed) headers['access-control-allow-headers'] = allowed;
  // Private Network Access: a page on a public address asking for a loopback bridge asks first.
  if (req.headers['access-control-request-private-network'] === 'true') headers['access-control-allow-private-network'] = 'true';
  res.writeHead(204, headers);
  res.end();
}
