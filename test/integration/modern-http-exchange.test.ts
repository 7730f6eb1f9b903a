import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postModernRequest } from '../../src/links/modern-http-exchange.js';
import { UpstreamTarget } from '../../src/links/upstream-http.js';
import { silentLogger } from '../../src/log.js';

/** postModernRequest against a real node:http server that leaves its SSE reply open after the final response. */

let server: http.Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Answers every POST with an SSE event carrying the response (after `before`; none unless `answer`), then keeps the stream open; `closed` settles when the client lets go. */
async function openEndedSse({ before = '', answer = true } = {}): Promise<{ url: string; closed: Promise<void> }> {
  let onClosed!: () => void;
  const closed = new Promise<void>((resolve) => (onClosed = resolve));
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const { id } = JSON.parse(body) as { id: number };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (before !== '') res.write(before);
      if (answer) res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { ok: true } })}\n\n`);
      res.on('close', onClosed);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, closed };
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function closesWithin(closed: Promise<void>, ms: number): Promise<boolean> {
  return Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
}

describe('postModernRequest on an SSE reply', () => {
  it('resolves at the final response and closes the stream left open after it', async () => {
    const { url, closed } = await openEndedSse();
    const outcome = await postModernRequest({
      target: new UpstreamTarget(url),
      headers: { ...HEADERS },
      body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo' } },
      logger: silentLogger,
    });
    expect(outcome).toEqual({ result: { ok: true } });
    expect(await closesWithin(closed, 2_000)).toBe(true);
  });

  it('a line past maxLineBytes fails the call with an error naming the bound, and closes the stream', async () => {
    const { url, closed } = await openEndedSse({ before: `: ${'x'.repeat(5_000)}\n` });
    const outcome = await postModernRequest({
      target: new UpstreamTarget(url),
      headers: { ...HEADERS },
      body: { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo' } },
      logger: silentLogger,
      maxLineBytes: 1024,
    });
    expect('error' in outcome && outcome.error.message).toMatch(/upstream stream failed during tools\/call: .*exceeds 1024 bytes/);
    expect(await closesWithin(closed, 2_000)).toBe(true);
  });

  it('aborting mid-stream resolves with the reason and closes the stream', async () => {
    const { url, closed } = await openEndedSse({ answer: false });
    const ac = new AbortController();
    const outcome = postModernRequest({
      target: new UpstreamTarget(url),
      headers: { ...HEADERS },
      body: { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'echo' } },
      signal: ac.signal,
      logger: silentLogger,
    });
    setTimeout(() => ac.abort(new Error('client went away')), 50);
    expect(await outcome).toEqual({ error: { code: -32603, message: 'client went away' } });
    expect(await closesWithin(closed, 2_000)).toBe(true);
  });
});
