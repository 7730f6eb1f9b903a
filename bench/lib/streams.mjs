// Long-lived streams the memory and scale rows hold open: a 2026 listen
// (held after its acknowledgement) and a legacy session's standalone GET
// stream. Each resolves once the stream is established and keeps its body
// in `bodies`, which the caller destroys at the end.
import { LEGACY_VERSION, modernRequest } from './mcp-wire.mjs';

const ACK_TIMEOUT_MS = 10_000;
const LISTEN = modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true, resourcesListChanged: true, promptsListChanged: true } });

/** `open()` opens one `subscriptions/listen` on `pool` and resolves after its acknowledgement (digest §1.8); the stream stays open, drained. */
export function listenOpener(pool, pathname, bodies) {
  let id = 0;
  return async () => {
    const r = await pool.request({ path: pathname, method: 'POST', headers: LISTEN.headers, body: LISTEN.body(++id) });
    bodies.push(r.body);
    await new Promise((resolve, reject) => {
      let seen = '';
      let acked = false;
      const timer = setTimeout(() => reject(new Error(`no acknowledgement within ${ACK_TIMEOUT_MS / 1000} s (HTTP ${r.statusCode}): ${seen.slice(0, 200)}`)), ACK_TIMEOUT_MS);
      r.body.on('data', (chunk) => {
        if (acked) return;
        seen = (seen + chunk.toString('utf8')).slice(-65_536);
        if (seen.includes('notifications/subscriptions/acknowledged')) {
          acked = true;
          clearTimeout(timer);
          resolve();
        }
      });
      r.body.on('error', () => undefined);
      r.body.on('end', () => {
        clearTimeout(timer);
        if (!acked) reject(new Error(`listen stream ended without an acknowledgement (HTTP ${r.statusCode}): ${seen.slice(0, 200)}`));
      });
    });
  };
}

/**
 * The standalone GET stream of an open legacy session (digest §4.3): resolves
 * once the bridge answered 200 text/event-stream; the body stays open, drained.
 */
export async function openSessionGet(pool, pathname, sessionId, bodies) {
  const headers = { accept: 'text/event-stream', 'mcp-protocol-version': LEGACY_VERSION, 'mcp-session-id': sessionId };
  const r = await pool.request({ path: pathname, method: 'GET', headers });
  bodies.push(r.body);
  r.body.on('error', () => undefined);
  r.body.on('data', () => undefined);
  const type = String(r.headers['content-type'] ?? '');
  if (r.statusCode !== 200 || !type.includes('text/event-stream')) throw new Error(`GET stream answered HTTP ${r.statusCode} (${type})`);
}
