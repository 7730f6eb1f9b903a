// Prepared MCP requests: bodies and headers built once, only the JSON-RPC id
// changes per call, so the load generator spends next to nothing per request.

export const MODERN_VERSION = '2026-07-28';
/** The legacy version every row-2 client speaks (all peers know it). */
export const LEGACY_VERSION = '2025-06-18';
export const ECHO_MESSAGE = 'hello from mcp-bridge bench';
/** What every echo tool in the bench answers contains. */
export const ECHO_EXPECT = `Echo: ${ECHO_MESSAGE}`;

const CLIENT_INFO = { name: 'mcp-bridge-bench', version: '1.0.0' };
const ACCEPT = 'application/json, text/event-stream';

/** The 2026-07-28 per-request envelope (digest §1.2). */
export function modernMeta(clientCapabilities = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientCapabilities': clientCapabilities,
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
  };
}

/** A body whose id is spliced in: `make(id)` returns the bytes to POST. */
function template(message) {
  const marker = '"__BENCH_ID__"';
  const text = JSON.stringify({ jsonrpc: '2.0', id: '__BENCH_ID__', ...message });
  const at = text.indexOf(marker);
  const head = text.slice(0, at);
  const tail = text.slice(at + marker.length);
  return (id) => head + id + tail;
}

/** A modern request with its standard headers (digest §2.5): Mcp-Method, Mcp-Name, MCP-Protocol-Version. */
export function modernRequest(method, params = {}, clientCapabilities = {}) {
  const headers = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method };
  const name = method === 'resources/read' ? params.uri : params.name;
  if (name !== undefined) headers['mcp-name'] = String(name);
  return { headers, body: template({ method, params: { ...params, _meta: modernMeta(clientCapabilities) } }) };
}

/** The modern echo call every modern row sends. */
export function modernEcho() {
  return modernRequest('tools/call', { name: 'echo', arguments: { message: ECHO_MESSAGE } });
}

/** A legacy (initialize-era) request; its headers depend on the session. */
export function legacyRequest(method, params) {
  const body = template(params === undefined ? { method } : { method, params });
  const headers = (sessionId) => {
    const h = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': LEGACY_VERSION };
    if (sessionId) h['mcp-session-id'] = sessionId;
    return h;
  };
  return { headers, body };
}

/** The legacy echo call of row 2. */
export function legacyEcho() {
  return legacyRequest('tools/call', { name: 'echo', arguments: { message: ECHO_MESSAGE } });
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
});
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });

/**
 * Opens one legacy Streamable HTTP session on an undici Client (digest §4.3):
 * initialize, then notifications/initialized. Resolves with the session id
 * (undefined for a stateless server) and the wall time of both steps.
 */
export async function openLegacySession(client, path) {
  const started = performance.now();
  const init = await client.request({ path, method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT }, body: INITIALIZE });
  const text = await init.body.text();
  if (init.statusCode !== 200 || !text.includes('"protocolVersion"')) throw new Error(`initialize answered ${init.statusCode}: ${text.slice(0, 200)}`);
  const sessionId = init.headers['mcp-session-id'];
  const headers = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': LEGACY_VERSION };
  if (typeof sessionId === 'string') headers['mcp-session-id'] = sessionId;
  const note = await client.request({ path, method: 'POST', headers, body: INITIALIZED });
  await note.body.text();
  if (note.statusCode !== 202 && note.statusCode !== 200) throw new Error(`notifications/initialized answered ${note.statusCode}`);
  return { sessionId: typeof sessionId === 'string' ? sessionId : undefined, ms: performance.now() - started };
}
