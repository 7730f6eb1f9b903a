import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { exchange, readWhole, sweptAgent, UpstreamTarget } from '../../src/links/upstream-http.js';

/** The upstream client's request head (headers sent as a list, issue 17) and its idle-socket sweep, against a real node:http server. */

interface Seen {
  headers: http.IncomingHttpHeaders;
  raw: string[];
  body: string;
  socket: Socket;
}

let server: http.Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ headers: req.headers, raw: req.rawHeaders, body: Buffer.concat(chunks).toString('utf8'), socket: req.socket });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  // node's own 5 s would race the client's sweep; the test is about the client closing first.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, seen };
}

async function send(target: UpstreamTarget, headers: Record<string, string>, body?: string): Promise<void> {
  await readWhole(await exchange(target, { method: body === undefined ? 'GET' : 'POST', headers, body }));
}

describe('upstream-http', () => {
  it('sends Host, Content-Length and the headers given, each once', async () => {
    const { port, seen } = await serve();
    await send(new UpstreamTarget(`http://127.0.0.1:${port}/mcp`), { 'content-type': 'application/json', 'mcp-method': 'tools/call' }, '{"a":"é"}');
    const [s] = seen;
    expect(s.headers.host).toBe(`127.0.0.1:${port}`);
    expect(s.headers['content-length']).toBe(String(Buffer.byteLength('{"a":"é"}')));
    expect(s.headers['mcp-method']).toBe('tools/call');
    expect(s.body).toBe('{"a":"é"}');
    const names = s.raw.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    expect(new Set(names).size).toBe(names.length);
  });

  it('the body length wins over a content-length the caller passed; a Host the caller set is kept', async () => {
    const { port, seen } = await serve();
    await send(new UpstreamTarget(`http://127.0.0.1:${port}/mcp`), { 'content-length': '999', host: 'example.test' }, 'xyz');
    expect(seen[0].headers['content-length']).toBe('3');
    expect(seen[0].headers.host).toBe('example.test');
  });

  it('credentials in the URL become Basic authorization, unless the caller sends its own', async () => {
    const { port, seen } = await serve();
    const target = new UpstreamTarget(`http://us%40er:p%3Ass@127.0.0.1:${port}/mcp`);
    await send(target, {});
    await send(target, { authorization: 'Bearer t' });
    expect(seen[0].headers.authorization).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
    expect(seen[1].headers.authorization).toBe('Bearer t');
  });

  it('refuses a header value with CR/LF before anything is sent', async () => {
    const { port, seen } = await serve();
    await expect(send(new UpstreamTarget(`http://127.0.0.1:${port}/mcp`), { 'x-bad': 'a\r\nb' }, '{}')).rejects.toThrow();
    expect(seen).toHaveLength(0);
  });

  it('reuses the keep-alive socket, and closes it once it has been idle 3–4 s', async () => {
    const { port, seen } = await serve();
    const target = new UpstreamTarget(`http://127.0.0.1:${port}/mcp`);
    await send(target, {});
    await send(target, {});
    expect(seen[1].socket).toBe(seen[0].socket);
    const freed = performance.now();
    await closedWithin(seen[0].socket, 6_000);
    // The sweep runs each second and closes sockets idle for 3 s or more: under the 5 s a node server keeps one.
    expect(performance.now() - freed).toBeGreaterThanOrEqual(2_900);
  }, 10_000);

  it("an agent of its own (the cluster forward client's) sweeps its idle sockets the same way", async () => {
    const { port, seen } = await serve();
    const agent = sweptAgent(http);
    const get = () =>
      new Promise<void>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => res.resume().on('end', resolve)).on('error', reject);
      });
    await get();
    await get();
    expect(seen[1].socket).toBe(seen[0].socket);
    const freed = performance.now();
    await closedWithin(seen[0].socket, 6_000);
    expect(performance.now() - freed).toBeGreaterThanOrEqual(2_900);
    agent.destroy();
  }, 10_000);
});

/** Resolves once `socket` closes; rejects after `ms`. */
function closedWithin(socket: Socket, ms: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the idle socket was not closed within ${ms} ms`)), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
