import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { heartbeatSweep } from '../../src/faces/heartbeat-sweep.js';
import { SseStream } from '../../src/faces/sse-stream.js';
import { waitFor } from '../helpers/wait-for.js';

/** SseStream on a real node:http server: shared heartbeats, and nothing left in the sweep once a stream ends. */

const HEARTBEAT_MS = 60;
const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server whose every GET is an SseStream; `streams` are those opened, `closed` counts their onClose calls. */
async function sseServer() {
  const streams: SseStream[] = [];
  const state = { closed: 0 };
  const server = http.createServer((_req, res) => {
    const stream = new SseStream(res, { heartbeatMs: HEARTBEAT_MS });
    stream.onClose(() => void state.closed++);
    streams.push(stream);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, streams, state };
}

async function readUntil(res: Response, done: (text: string) => boolean, ms = 3_000): Promise<string> {
  const reader = res.body!.getReader();
  const end = Date.now() + ms;
  let text = '';
  while (!done(text) && Date.now() < end) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    text += new TextDecoder().decode(value);
  }
  return text;
}

describe('SseStream', () => {
  it('a stream begun on a response whose client had already gone leaves the sweep at its first heartbeat', async () => {
    const state = { closed: 0, stream: undefined as SseStream | undefined };
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    const server = http.createServer((_req, res) => {
      res.once('close', () => {
        state.stream = new SseStream(res, { heartbeatMs: HEARTBEAT_MS });
        state.stream.onClose(() => void state.closed++);
      });
      arrived();
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const ac = new AbortController();
    const pending = fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { signal: ac.signal }).catch(() => undefined);
    // The client goes only once the server holds the request (a fixed pause lost the race on a loaded machine).
    await requestArrived;
    ac.abort();
    await pending;
    await waitFor(() => state.stream, 2_000);
    expect(heartbeatSweep(HEARTBEAT_MS).size).toBe(1);
    await waitFor(() => state.closed === 1 || undefined, 2_000);
    expect(heartbeatSweep(HEARTBEAT_MS).size).toBe(0);
  });

  it('several open streams each get a keepalive every period from the one shared sweep', async () => {
    const { url, streams } = await sseServer();
    const acs = [new AbortController(), new AbortController(), new AbortController()];
    const responses = await Promise.all(acs.map((ac) => fetch(url, { signal: ac.signal })));
    expect(heartbeatSweep(HEARTBEAT_MS).size).toBe(3);
    const texts = await Promise.all(responses.map((r) => readUntil(r, (t) => (t.match(/: keepalive\n\n/g) ?? []).length >= 2)));
    for (const t of texts) expect((t.match(/: keepalive\n\n/g) ?? []).length).toBeGreaterThanOrEqual(2);
    expect(streams.every((s) => s.open)).toBe(true);
    for (const ac of acs) ac.abort();
  });

  it('a client that goes away ends its stream: onClose runs once and the sweep forgets it', async () => {
    const { url, streams, state } = await sseServer();
    const ac = new AbortController();
    await fetch(url, { signal: ac.signal });
    await waitFor(() => streams.length === 1 || undefined);
    ac.abort();
    await waitFor(() => state.closed === 1 || undefined);
    expect(streams[0].open).toBe(false);
    await waitFor(() => heartbeatSweep(HEARTBEAT_MS).size === 0 || undefined, 2_000);
    expect(streams[0].send({ jsonrpc: '2.0', method: 'late' })).toBe(false);
  });

  it('end() ends the response, runs onClose once, and leaves no member behind', async () => {
    const { url, streams, state } = await sseServer();
    const res = await fetch(url);
    streams[0].send({ jsonrpc: '2.0', method: 'hello' });
    streams[0].end();
    streams[0].end();
    const text = await res.text();
    expect(text).toContain('"method":"hello"');
    expect(state.closed).toBe(1);
    expect(heartbeatSweep(HEARTBEAT_MS).size).toBe(0);
  });
});
