// Load-generator workers: one undici Client (one keep-alive connection) per
// worker, sending prepared requests. Legacy workers open their session once,
// on their own connection, before the clock starts.
import { ECHO_EXPECT, legacyEcho, modernEcho, openLegacySession } from './mcp-wire.mjs';

/** How many sessions open at once while a cell is prepared (supergateway spawns a child for each). */
const OPEN_PARALLEL = 8;

function clientFor(undici, origin) {
  return new undici.Client(origin, { pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 60_000, bodyTimeout: 60_000, connect: { timeout: 10_000 } });
}

async function expectEcho(res) {
  const text = await res.body.text();
  if (res.statusCode !== 200 || !text.includes(ECHO_EXPECT)) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
}

function closeAll(clients) {
  return Promise.all(clients.map((c) => c.destroy().catch(() => undefined)));
}

/** `c` workers sending the modern (2026-07-28) echo to `url` (…/mcp). */
export function modernWorkers(undici, url, c) {
  const { origin, pathname } = new URL(url);
  const req = modernEcho();
  const clients = Array.from({ length: c }, () => clientFor(undici, origin));
  const senders = clients.map((client, i) => {
    let seq = i * 10_000_000;
    return async () => expectEcho(await client.request({ path: pathname, method: 'POST', headers: req.headers, body: req.body(++seq) }));
  });
  return { senders, close: () => closeAll(clients), sessionMs: [] };
}

/**
 * `c` workers on legacy Streamable HTTP sessions at `url`: each opens one
 * (initialize + initialized) and then sends the legacy echo in it.
 */
export async function legacyWorkers(undici, url, c) {
  const { origin, pathname } = new URL(url);
  const req = legacyEcho();
  const clients = Array.from({ length: c }, () => clientFor(undici, origin));
  const sessions = new Array(c);
  try {
    for (let i = 0; i < c; i += OPEN_PARALLEL) {
      const batch = clients.slice(i, i + OPEN_PARALLEL);
      const opened = await Promise.all(batch.map((client) => openLegacySession(client, pathname)));
      opened.forEach((s, k) => (sessions[i + k] = s));
    }
  } catch (err) {
    await closeAll(clients);
    throw err;
  }
  const senders = clients.map((client, i) => {
    let seq = i * 10_000_000;
    const headers = req.headers(sessions[i].sessionId);
    return async () => expectEcho(await client.request({ path: pathname, method: 'POST', headers, body: req.body(++seq) }));
  });
  // DELETE ends each session (digest §4.3), so a wrapper's per-session children do not outlive the cell.
  const close = async () => {
    await Promise.all(
      clients.map((client, i) =>
        sessions[i].sessionId === undefined
          ? undefined
          : client
              .request({ path: pathname, method: 'DELETE', headers: req.headers(sessions[i].sessionId), headersTimeout: 5_000, bodyTimeout: 5_000 })
              .then((r) => r.body.dump())
              .catch(() => undefined),
      ),
    );
    await closeAll(clients);
  };
  return { senders, close, sessionMs: sessions.map((s) => s.ms) };
}

/** Wall times (ms) of `n` legacy sessions opened one after another, each on a fresh connection. */
export async function sessionOpenTimes(undici, url, n) {
  const { origin, pathname } = new URL(url);
  const out = [];
  for (let i = 0; i < n; i++) {
    const client = clientFor(undici, origin);
    try {
      out.push((await openLegacySession(client, pathname)).ms);
    } finally {
      await client.destroy().catch(() => undefined);
    }
  }
  return out;
}
