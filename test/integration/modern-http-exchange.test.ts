import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { lineLimitedFetch } from '../../src/links/line-limited-fetch.js';
import { postModernRequest } from '../../src/links/modern-http-exchange.js';
import { nodeHttpFetch } from '../../src/links/node-http-fetch.js';
import { silentLogger } from '../../src/log.js';

/** postModernRequest against a real node:http server that leaves its SSE reply open after the final response. */

let server: http.Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Answers every POST with an SSE event carrying the response, then keeps the stream open; `closed` settles when the client lets go. */
async function openEndedSse(): Promise<{ url: string; closed: Promise<void> }> {
  let onClosed!: () => void;
  const closed = new Promise<void>((resolve) => (onClosed = resolve));
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const { id } = JSON.parse(body) as { id: number };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { ok: true } })}\n\n`);
      res.on('close', onClosed);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, closed };
}

describe('postModernRequest on an SSE reply', () => {
  it.each([
    ['the global fetch', globalThis.fetch],
    ['the daemon fetch (node:http, line-limited)', lineLimitedFetch(1024 * 1024, nodeHttpFetch)],
  ])('with %s, resolves at the final response and cancels the stream left open after it', async (_name, fetchFn) => {
    const { url, closed } = await openEndedSse();
    const outcome = await postModernRequest({
      url,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo' } },
      signal: new AbortController().signal,
      logger: silentLogger,
      fetch: fetchFn,
    });
    expect(outcome).toEqual({ result: { ok: true } });
    const timedOut = Symbol('timed out');
    const seen = await Promise.race([closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r(timedOut), 2_000))]);
    expect(seen).toBe('closed');
  });
});
