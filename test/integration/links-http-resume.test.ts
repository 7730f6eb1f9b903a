import type { JSONRPCNotification } from '@modelcontextprotocol/server';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LegacyUpstreamSession, UpstreamInit } from '../../src/contracts/upstream.js';
import { LegacyHttpLink } from '../../src/links/legacy-http-link.js';
import { silentLogger } from '../../src/log.js';
import { startV1SessionServer, type V1Session, type V1SessionServer } from '../helpers/v1-session-server.js';
import { waitFor } from '../helpers/wait-for.js';

/** An event store that replays one stream's events after a given id (priming events carry no message). */
class MemoryEventStore implements EventStore {
  private readonly events: Array<{ id: string; streamId: string; message: JSONRPCMessage }> = [];
  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}#${this.events.length}`;
    this.events.push({ id, streamId, message });
    return id;
  }
  async replayEventsAfter(lastEventId: string, { send }: { send: (id: string, m: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const at = this.events.findIndex((e) => e.id === lastEventId);
    if (at < 0) throw new Error(`unknown event id ${lastEventId}`);
    const { streamId } = this.events[at];
    for (const e of this.events.slice(at + 1)) {
      if (e.streamId === streamId && Object.keys(e.message).length > 0) await send(e.id, e.message);
    }
    return streamId;
  }
}

/**
 * A stateful SDK v1 Streamable HTTP server that answers 404 for unknown
 * sessions (as the spec says; server-everything answers 400) and lets the test
 * forget sessions, drop streams and send notifications.
 */
/** `slow` calls the server has begun, so a test can act once its call is being handled. */
let slowStarted = 0;

function startResumableServer(): Promise<V1SessionServer> {
  return startV1SessionServer({
    name: 'resumable',
    serverOptions: { capabilities: { prompts: { listChanged: true } } },
    transport: { eventStore: new MemoryEventStore(), retryInterval: 50 },
    register(mcp) {
      mcp.registerTool('slow', { description: 'answers after 5 s' }, async () => {
        slowStarted++;
        await new Promise((r) => setTimeout(r, 5_000));
        return { content: [{ type: 'text', text: 'slow done' }] };
      });
      mcp.registerTool('poll', { description: 'closes its stream, answers 200 ms later' }, async (extra) => {
        if (!extra.closeSSEStream) return { content: [{ type: 'text', text: 'no-close' }] };
        extra.closeSSEStream();
        await new Promise((r) => setTimeout(r, 200));
        return { content: [{ type: 'text', text: 'polled' }] };
      });
      mcp.registerTool('poll-replayed', { description: 'closes its stream and answers at once: the answer waits in the event store' }, async (extra) => {
        extra.closeSSEStream?.();
        return { content: [{ type: 'text', text: 'replayed' }] };
      });
    },
  });
}

const INIT: UpstreamInit = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'links-http-resume-test', version: '1.0.0' } };

describe('LegacyHttpLink: expiry and resumption against an SDK v1 server', () => {
  let server: Awaited<ReturnType<typeof startResumableServer>>;
  const links: LegacyHttpLink[] = [];
  const gets: Headers[] = [];
  const getReplies = new Map<Headers, Response>();

  beforeAll(async () => {
    server = await startResumableServer();
  });
  afterEach(async () => {
    await Promise.all(links.splice(0).map((l) => l.close()));
    gets.length = 0;
    getReplies.clear();
  });
  afterAll(async () => server?.close());

  async function open(): Promise<{ session: LegacyUpstreamSession; entry: V1Session }> {
    const fetchAndRecord: typeof fetch = (input, init) => {
      if (init?.method !== 'GET') return fetch(input, init);
      const headers = new Headers(init.headers);
      gets.push(headers);
      return fetch(input, init).then((res) => (getReplies.set(headers, res), res));
    };
    const link = new LegacyHttpLink({ url: server.url, headers: {}, logger: silentLogger, fetch: fetchAndRecord });
    links.push(link);
    const before = new Set(server.sessions.keys());
    const session = await link.openSession(INIT);
    const id = [...server.sessions.keys()].find((k) => !before.has(k))!;
    return { session, entry: server.sessions.get(id)! };
  }

  function forget(entry: V1Session): void {
    for (const [k, v] of server.sessions) if (v === entry) server.sessions.delete(k);
  }

  // Issue 6: a session the server forgot is initialized again under a new id (digest §4.3 Sessions), transparently.
  it('a 404 on a call re-initializes the session under a new id: the call is answered and the session stays open', async () => {
    const { session, entry } = await open();
    const reasons: string[] = [];
    session.onClose((r) => reasons.push(r));
    forget(entry);
    const outcome = await session.call({ method: 'tools/list' });
    expect(outcome).toMatchObject({ result: { tools: expect.arrayContaining([expect.objectContaining({ name: 'slow' })]) } });
    expect(session.closed).toBe(false);
    expect(reasons).toEqual([]);
    expect(server.sessions.size).toBeGreaterThanOrEqual(1);
    await entry.mcp.close();
  });

  it('a GET re-open answered 404 re-initializes the session; the call in flight on the old one fails, the next works', async () => {
    const { session, entry } = await open();
    const reasons: string[] = [];
    session.onClose((r) => reasons.push(r));
    const started = slowStarted;
    const call = session.call({ method: 'tools/call', params: { name: 'slow', arguments: {} } });
    // Both streams open: the GET one answered, the call's one held by the server.
    await waitFor(() => (getReplies.size > 0 && slowStarted > started ? true : undefined), 5_000, 'the GET stream open and the slow call reaching the server');
    forget(entry);
    await entry.mcp.close(); // ends the GET stream and the call's stream; re-opening them meets 404
    expect(await call).toMatchObject({ error: { code: -32603 } });
    expect(await session.call({ method: 'tools/list' })).toMatchObject({ result: { tools: expect.any(Array) } });
    expect(session.closed).toBe(false);
    expect(reasons).toEqual([]);
  });

  it('re-opens a dropped GET stream with Last-Event-ID and receives what was sent meanwhile', async () => {
    const { session, entry } = await open();
    const seen: JSONRPCNotification[] = [];
    let wake: () => void = () => undefined;
    session.setUnsolicitedHandlers({
      notification: (n) => {
        seen.push(n);
        wake();
      },
      request: async () => ({}),
    });
    const until = (count: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${seen.length} notifications`)), 5_000);
        wake = () => {
          if (seen.length >= count) {
            clearTimeout(timer);
            resolve();
          }
        };
        wake();
      });
    await entry.mcp.server.sendToolListChanged();
    await until(1);
    entry.transport.closeStandaloneSSEStream();
    await entry.mcp.server.sendPromptListChanged(); // stored while no GET stream is open
    await until(2);
    expect(seen.map((n) => n.method)).toEqual(['notifications/tools/list_changed', 'notifications/prompts/list_changed']);
    expect(gets.at(-1)!.get('last-event-id')).toMatch(/^_GET_stream#\d+$/);
  });

  it('resumes a POST stream the server closed before answering (2025-11-25 polling)', async () => {
    const { session } = await open();
    const outcome = await session.call({ method: 'tools/call', params: { name: 'poll', arguments: {} } });
    expect(outcome).toMatchObject({ result: { content: [{ type: 'text', text: 'polled' }] } });
    expect(gets.some((h) => h.get('last-event-id') !== null && !h.get('last-event-id')!.startsWith('_GET_stream'))).toBe(true);
  });

  it('an answer replayed on a resumed stream ends the read: the stream the server keeps open is let go', async () => {
    const { session } = await open();
    const outcome = await session.call({ method: 'tools/call', params: { name: 'poll-replayed', arguments: {} } });
    expect(outcome).toMatchObject({ result: { content: [{ type: 'text', text: 'replayed' }] } });
    const resumed = gets.find((h) => h.get('last-event-id') !== null && !h.get('last-event-id')!.startsWith('_GET_stream'));
    expect(resumed).toBeDefined();
    // The server keeps the resumed stream open (with keep-alives); answered, the link lets it go instead of holding it.
    const body = getReplies.get(resumed!)!.body!;
    for (let i = 0; i < 50 && body.locked; i++) await new Promise((r) => setTimeout(r, 20));
    const rest = await Promise.race([body.getReader().read(), new Promise((r) => setTimeout(() => r('still open'), 1_000))]);
    expect(rest).toEqual({ done: true, value: undefined });
  });
});
