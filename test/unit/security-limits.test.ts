import type { InitializeResult } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { LegacyLink, LegacyUpstreamSession, UpstreamInit } from '../../src/contracts/upstream.js';
import { BridgeError } from '../../src/errors.js';
import { SessionBudget } from '../../src/faces/session-budget.js';
import { lineLimit, lineLimitedFetch } from '../../src/links/line-limited-fetch.js';
import { SessionPool } from '../../src/links/session-pool.js';
import { silentLogger } from '../../src/log.js';
import { decodeHeaderValue, encodeHeaderValue, hasInvalidHeaderChars } from '../../src/wire/header-value.js';
import { LineBuffer, LineTooLongError } from '../../src/wire/line-buffer.js';
import { SseParser } from '../../src/wire/sse-parser.js';

describe('SessionBudget (--max-sessions)', () => {
  it('grants up to max, refuses beyond, and a release (idempotent) frees one slot', () => {
    const b = new SessionBudget(2);
    const r1 = b.tryAcquire();
    const r2 = b.tryAcquire();
    expect(r1 && r2).toBeTruthy();
    expect(b.tryAcquire()).toBeUndefined();
    r1!();
    r1!();
    expect(b.used).toBe(1);
    expect(b.tryAcquire()).toBeTruthy();
    expect(b.tryAcquire()).toBeUndefined();
    expect(b.refusal()).toMatch(/already serves 2 sessions \(--max-sessions\)/);
  });
});

/** A legacy session in memory: the pool's queue bound is under test, not a transport. */
function memorySession(init: UpstreamInit): LegacyUpstreamSession {
  let closed = false;
  const listeners: Array<(r: string) => void> = [];
  return {
    id: `mem-${Math.random()}`,
    initializeResult: { protocolVersion: init.protocolVersion, capabilities: {}, serverInfo: { name: 'mem', version: '0' } } as InitializeResult,
    init,
    correlates: false,
    get closed() {
      return closed;
    },
    call: async () => ({ result: {} }),
    notify: async () => {},
    setUnsolicitedHandlers: () => {},
    onClose: (l) => void listeners.push(l),
    close: async () => {
      closed = true;
      for (const l of listeners.splice(0)) l('closed');
    },
  };
}
const memoryLink: LegacyLink = { kind: 'stdio', openSession: async (init) => memorySession(init), close: async () => {} };
const init: UpstreamInit = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } };

describe('SessionPool maxQueued (--max-queued)', () => {
  const pools: SessionPool[] = [];
  afterEach(async () => Promise.all(pools.splice(0).map((p) => p.close())));

  it('queues up to maxQueued behind a full pool and refuses the next at once with POOL_EXHAUSTED', async () => {
    const pool = new SessionPool(memoryLink, { max: 1, idleMs: 60_000, logger: silentLogger, maxQueued: 2 });
    pools.push(pool);
    const held = await pool.acquire(init, { exclusive: true });
    const q1 = pool.acquire(init, { exclusive: true });
    const q2 = pool.acquire(init, { exclusive: true });
    const refused = await pool.acquire(init, { exclusive: true }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(BridgeError);
    expect((refused as BridgeError).code).toBe('BRIDGE_ERR_POOL_EXHAUSTED');
    expect((refused as Error).message).toMatch(/2 calls are already waiting.*--max-queued/);
    expect(pool.stats().queued).toBe(2);
    held.release();
    (await q1).release();
    (await q2).release();
    expect(pool.stats().queued).toBe(0);
  });

  it('maxQueued 0 still lets calls wait for the sessions being opened for them', async () => {
    const pool = new SessionPool(memoryLink, { max: 3, idleMs: 60_000, logger: silentLogger, maxQueued: 0 });
    pools.push(pool);
    const leases = await Promise.all([0, 1, 2].map(() => pool.acquire(init, { exclusive: true })));
    expect(new Set(leases.map((l) => l.session)).size).toBe(3);
    await expect(pool.acquire(init, { exclusive: true })).rejects.toMatchObject({ code: 'BRIDGE_ERR_POOL_EXHAUSTED' });
    for (const l of leases) l.release();
  });
});

/** Runs bytes through lineLimit in the given chunks; resolves with what came out or the error. */
async function throughLimit(chunks: Uint8Array[], max: number): Promise<{ out: number; error?: unknown }> {
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  }).pipeThrough(lineLimit(max));
  const reader = stream.getReader();
  let out = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { out };
      out += value.length;
    }
  } catch (error) {
    return { out, error };
  }
}

function cut(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let prev = 0;
  for (const p of points) {
    chunks.push(bytes.subarray(prev, p));
    prev = p;
  }
  chunks.push(bytes.subarray(prev));
  return chunks;
}

const longestLine = (bytes: Uint8Array) => Math.max(0, ...Buffer.from(bytes).toString('latin1').split(/\r|\n/).map((l) => l.length));

describe('lineLimit (--max-line on upstream SSE bodies)', () => {
  it.each([
    ['short lines pass', 'data: a\n\ndata: b\r\n\r\n', 8, false],
    ['exactly at the limit passes', 'data: 12\n', 8, false],
    ['one byte over fails', 'data: 123\n', 8, true],
    ['an unterminated long tail fails', 'ok\n' + 'x'.repeat(9), 8, true],
    ['CR alone ends a line', 'data: 1\rdata: 2\r', 8, false],
  ] as const)('%s', async (_name, text, max, fails) => {
    const r = await throughLimit([new TextEncoder().encode(text)], max);
    expect(r.error !== undefined).toBe(fails);
    if (fails) expect(r.error).toBeInstanceOf(LineTooLongError);
    else expect(r.out).toBe(Buffer.byteLength(text));
  });

  it('fails exactly when some line is longer than the limit, whatever the chunking (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 200 }).map((a) => a.map((b) => (b % 7 === 0 ? 0x0a : b % 11 === 0 ? 0x0d : b))),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.integer({ min: 1, max: 40 }),
        async (bytes, cuts, max) => {
          const r = await throughLimit(cut(bytes, cuts), max);
          expect(r.error !== undefined).toBe(longestLine(bytes) > max);
          if (!r.error) expect(r.out).toBe(bytes.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('lineLimitedFetch bounds event streams and leaves JSON bodies alone', async () => {
    const long = 'data: ' + 'x'.repeat(100) + '\n\n';
    const base = (async (input: string | URL | Request) =>
      new Response(long, { headers: { 'content-type': String(input).endsWith('sse') ? 'text/event-stream' : 'application/json' } })) as typeof fetch;
    const limited = lineLimitedFetch(50, base);
    await expect((await limited('http://x/sse')).text()).rejects.toBeInstanceOf(LineTooLongError);
    expect(await (await limited('http://x/json')).text()).toBe(long);
  });
});

describe('parsers under hostile input (property)', () => {
  it('SseParser: any bytes either parse or throw LineTooLongError, and only when a line is too long', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.array(fc.nat(), { maxLength: 6 }), fc.integer({ min: 4, max: 64 }), (bytes, cuts, max) => {
        const p = new SseParser(() => {}, { maxLineBytes: max });
        let threw: unknown;
        try {
          for (const c of cut(bytes, cuts)) p.push(c);
          p.end();
        } catch (err) {
          threw = err;
        }
        if (threw !== undefined) {
          expect(threw).toBeInstanceOf(LineTooLongError);
          // The parser counts UTF-8 bytes of decoded text; a replacement character can weigh 3 for 1 byte in.
          expect(longestLine(bytes) * 3).toBeGreaterThan(max);
        } else {
          expect(longestLine(bytes)).toBeLessThanOrEqual(max * 3);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('LineBuffer: throws exactly when a line outgrows the limit, and recovers for the next push', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, '')), { maxLength: 6 }), fc.integer({ min: 1, max: 20 }), (lines, max) => {
        const lb = new LineBuffer({ maxLineBytes: max });
        const input = lines.map((l) => l + '\n').join('');
        const longest = Math.max(0, ...lines.map((l) => Buffer.byteLength(l)));
        let threw = false;
        try {
          lb.push(input);
        } catch (err) {
          expect(err).toBeInstanceOf(LineTooLongError);
          threw = true;
        }
        expect(threw).toBe(longest > max);
        expect(lb.push('k\n')).toEqual(['k']);
      }),
      { numRuns: 300 },
    );
  });

  it('decodeHeaderValue: any header text decodes or is refused, never throws; what decodes re-encodes to a value that decodes the same', () => {
    const sentinelish = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }).map((s) => `=?base64?${s}?=`), fc.base64String().map((s) => `=?base64?${s}?=`));
    fc.assert(
      fc.property(sentinelish, (raw) => {
        const r = decodeHeaderValue(raw);
        if (!r.ok) return;
        const again = encodeHeaderValue(r.value);
        expect(hasInvalidHeaderChars(again)).toBe(false);
        expect(decodeHeaderValue(again)).toEqual({ ok: true, value: r.value });
      }),
      { numRuns: 500 },
    );
  });

  it('hasInvalidHeaderChars: true exactly when a control character other than TAB is present', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => {
        expect(hasInvalidHeaderChars(s)).toBe(/[\x00-\x08\x0a-\x1f\x7f]/.test(s));
      }),
      { numRuns: 500 },
    );
  });
});
