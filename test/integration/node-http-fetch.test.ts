import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeHttpFetch } from '../../src/links/node-http-fetch.js';

/** nodeHttpFetch against a real node:http server on 127.0.0.1:0. */

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  socket: object;
}

let server: http.Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(handler: (seen: Seen, res: http.ServerResponse) => void): Promise<{ base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), socket: req.socket };
      seen.push(s);
      handler(s, res);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('nodeHttpFetch', () => {
  it('POSTs a string body with plain or Headers headers and reads a JSON reply', async () => {
    const { base, seen } = await serve((_s, res) => res.writeHead(201, { 'content-type': 'application/json', 'x-reply': 'yes' }).end('{"ok":true}'));
    const a = await nodeHttpFetch(`${base}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: '{"a":1}' });
    const b = await nodeHttpFetch(new URL(`${base}/mcp`), { method: 'POST', headers: new Headers({ 'mcp-method': 'tools/call' }), body: new TextEncoder().encode('é') });
    expect([a.status, a.ok, a.headers.get('x-reply'), await a.json()]).toEqual([201, true, 'yes', { ok: true }]);
    expect(await b.text()).toBe('{"ok":true}');
    expect(seen.map((s) => [s.method, s.url, s.body, s.headers['content-length']])).toEqual([
      ['POST', '/mcp', '{"a":1}', '7'],
      ['POST', '/mcp', 'é', '2'],
    ]);
    expect([seen[0].headers['content-type'], seen[0].headers.accept, seen[1].headers['mcp-method']]).toEqual(['application/json', 'application/json, text/event-stream', 'tools/call']);
  });

  it('a whole JSON body reads once like fetch, through text(), json(), arrayBuffer(), body or a clone', async () => {
    const { base } = await serve((_s, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"n":"é"}'));
    const post = () => nodeHttpFetch(base, { method: 'POST', body: '{}' });
    const a = await post();
    expect([a.bodyUsed, await a.text(), a.bodyUsed]).toEqual([false, '{"n":"é"}', true]);
    await expect(a.text()).rejects.toBeInstanceOf(TypeError);
    expect(() => a.clone()).toThrow(TypeError);
    const b = await post();
    expect(new TextDecoder().decode(await b.arrayBuffer())).toBe('{"n":"é"}');
    const c = await post();
    const copy = c.clone();
    expect(await new Response(c.body).text()).toBe('{"n":"é"}');
    expect(c.bodyUsed).toBe(true);
    await expect(c.json()).rejects.toBeInstanceOf(TypeError);
    expect(await copy.json()).toEqual({ n: 'é' });
  });

  it('reuses one keep-alive connection for sequential calls', async () => {
    const { base, seen } = await serve((_s, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    for (let i = 0; i < 3; i++) await (await nodeHttpFetch(base, { method: 'POST', body: '{}' })).text();
    expect(new Set(seen.map((s) => s.socket)).size).toBe(1);
  });

  it('streams an event-stream body before the server ends it', async () => {
    let finish: (() => void) | undefined;
    const { base } = await serve((_s, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      finish = () => res.end('data: two\n\n');
    });
    const res = await nodeHttpFetch(base, { method: 'POST', body: '{}' });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value!).toString('utf8')).toBe('data: one\n\n');
    finish!();
    let rest = '';
    for (let i = 0; i < 10; i++) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += Buffer.from(value).toString('utf8');
    }
    expect(rest).toBe('data: two\n\n');
  });

  it('aborting errors an open stream, and rejects with the reason before a response', async () => {
    const { base } = await serve((s, res) => {
      if (s.url === '/stream') res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': hi\n\n');
    });
    const ac = new AbortController();
    const res = await nodeHttpFetch(`${base}/stream`, { method: 'POST', body: '{}', signal: ac.signal });
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort(new Error('client went away'));
    await expect(reader.read()).rejects.toBeDefined();
    const early = new AbortController();
    const pending = nodeHttpFetch(`${base}/never`, { method: 'POST', body: '{}', signal: early.signal });
    early.abort(new Error('cancelled early'));
    await expect(pending).rejects.toThrow('cancelled early');
  });

  it('rejects an unreachable upstream like fetch: TypeError with the socket error as cause', async () => {
    const { base } = await serve(() => undefined);
    server!.closeAllConnections();
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    const err = await nodeHttpFetch(base, { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
  });

  it('follows 307 with method and body, and turns 303 into a GET without body', async () => {
    const { base, seen } = await serve((s, res) => {
      if (s.url === '/a') res.writeHead(307, { location: '/b' }).end();
      else if (s.url === '/c') res.writeHead(303, { location: '/d' }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ at: s.url }));
    });
    expect(await (await nodeHttpFetch(`${base}/a`, { method: 'POST', body: 'x' })).json()).toEqual({ at: '/b' });
    expect(await (await nodeHttpFetch(`${base}/c`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'y' })).json()).toEqual({ at: '/d' });
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['POST', '/a', 'x'],
      ['POST', '/b', 'x'],
      ['POST', '/c', 'y'],
      ['GET', '/d', ''],
    ]);
  });

  it('gives 202 and 204 replies the bodies fetch gives them', async () => {
    const { base } = await serve((s, res) => (s.url === '/accepted' ? res.writeHead(202).end() : res.writeHead(204).end()));
    const accepted = await nodeHttpFetch(`${base}/accepted`, { method: 'POST', body: '{}' });
    const empty = await nodeHttpFetch(`${base}/empty`, { method: 'DELETE' });
    expect([accepted.status, await accepted.text()]).toEqual([202, '']);
    expect([empty.status, empty.body]).toEqual([204, null]);
  });

  it('hands a Request object to the global fetch unchanged', async () => {
    const { base, seen } = await serve((_s, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"via":"global"}'));
    const res = await nodeHttpFetch(new Request(`${base}/r`, { method: 'POST', body: 'z' }));
    expect(await res.json()).toEqual({ via: 'global' });
    expect(seen.map((s) => [s.method, s.body])).toEqual([['POST', 'z']]);
  });
});
