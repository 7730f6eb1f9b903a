import { describe, expect, it } from 'vitest';
import { EventStore } from '../../src/faces/event-store.js';
import { SessionStreams } from '../../src/faces/session-streams.js';
import { formatEventId, parseEventId } from '../../src/wire/sse-event-id.js';

/** The per-session event store behind Last-Event-ID (2025-11-25 transports, Resumability and Redelivery). */

const frame = (tag: string) => (seq: number) => `id: ${tag}-${seq}\ndata: ${tag}\n\n`;

describe('EventStore', () => {
  it('numbers events from 1 across streams and finds each by its sequence number', () => {
    const store = new EventStore<string>(10, 1_000_000);
    store.add('a', frame('a'));
    store.add('b', frame('b'));
    store.add('a', frame('a'));
    expect(store.find(1)).toMatchObject({ seq: 1, stream: 'a' });
    expect(store.find(2)).toMatchObject({ seq: 2, stream: 'b' });
    expect(store.find(3)).toMatchObject({ seq: 3, stream: 'a' });
  });

  it.each([
    [0, 'unknown'],
    [-1, 'unknown'],
    [4, 'unknown'],
    [1.5, 'unknown'],
    [Number.NaN, 'unknown'],
  ])('find(%s) of a store that issued 3 is %s', (seq, expected) => {
    const store = new EventStore<string>(10, 1_000_000);
    for (let i = 0; i < 3; i++) store.add('a', frame('a'));
    expect(store.find(seq)).toBe(expected);
  });

  it('replays only the given stream, only after the given event, and never a priming event', () => {
    const store = new EventStore<string>(10, 1_000_000);
    store.add('a', () => 'priming', false);
    store.add('a', frame('a'));
    store.add('b', frame('b'));
    store.add('a', frame('a'));
    expect(store.after(1, 'a')).toEqual([frame('a')(2), frame('a')(4)]);
    expect(store.after(2, 'a')).toEqual([frame('a')(4)]);
    expect(store.after(3, 'b')).toEqual([]);
    expect(store.after(4, 'a')).toEqual([]);
  });

  it('keeps the newest maxEvents: older ones are evicted, in order, as the ring wraps and grows', () => {
    const store = new EventStore<string>(5, 1_000_000);
    for (let i = 0; i < 23; i++) store.add(i % 2 ? 'odd' : 'even', frame(i % 2 ? 'odd' : 'even'));
    expect(store.size).toBe(5);
    for (let seq = 1; seq <= 18; seq++) expect(store.find(seq)).toBe('evicted');
    for (let seq = 19; seq <= 23; seq++) expect(store.find(seq)).toMatchObject({ seq });
    expect(store.after(18, 'even')).toEqual([19, 21, 23].map((seq) => frame('even')(seq)));
  });

  it('keeps at most maxChars of frames, but always the newest event', () => {
    const store = new EventStore<string>(100, 100);
    const big = (seq: number) => `id: ${seq}\ndata: ${'x'.repeat(60)}\n\n`;
    store.add('a', big);
    store.add('a', big);
    expect(store.size).toBe(1);
    expect(store.find(1)).toBe('evicted');
    expect(store.chars).toBeLessThanOrEqual(100);
    const huge = (seq: number) => `id: ${seq}\ndata: ${'y'.repeat(500)}\n\n`;
    store.add('a', huge);
    expect(store.size).toBe(1);
    expect(store.find(3)).toMatchObject({ seq: 3 });
  });

  it('refuses a bound below one event', () => {
    expect(() => new EventStore<string>(0, 100)).toThrow(RangeError);
  });
});

describe('SSE event ids', () => {
  it('round-trips stream and sequence', () => {
    expect(parseEventId(formatEventId(3, 1234))).toEqual({ stream: 3, seq: 1234 });
  });

  it.each(['', '3', '3-', '-4', '3-4-5', 'a-1', '1-b', ' 1-2', '1-2 ', '1234567890123456-1', '1.2'])('%j is not an id of ours', (id) => {
    expect(parseEventId(id)).toBeUndefined();
  });
});

describe('SessionStreams', () => {
  const sse = { heartbeatMs: 0 };

  it('allocates no store before the first event, and primes only when asked and resumable', () => {
    const streams = new SessionStreams({ sse, maxEvents: 1000, priming: true, changed: () => {} });
    expect(streams.stored).toBe(0);
    expect(streams.getConnected).toBe(false);
    expect(streams.primeRetryMs).toBe(1000);
    expect(new SessionStreams({ sse, maxEvents: 1000, priming: false, changed: () => {} }).primeRetryMs).toBeUndefined();
    expect(new SessionStreams({ sse, maxEvents: 0, priming: true, changed: () => {} }).primeRetryMs).toBeUndefined();
  });

  it('has nowhere to send a standalone message before the client opened a GET stream', () => {
    const streams = new SessionStreams({ sse, maxEvents: 1000, priming: true, changed: () => {} });
    expect(streams.sendStandalone({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })).toBe(false);
    expect(streams.stored).toBe(0);
  });
});
