import { describe, expect, it } from 'vitest';
import { ParkedCalls, type Parkable } from '../../bridges/shared/parked-calls.js';

class Probe implements Parkable {
  reasons: string[] = [];
  cancel(reason: string): void {
    this.reasons.push(reason);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ParkedCalls', () => {
  it('take returns the parked entry once, stops its clock, and forgets it', async () => {
    const table = new ParkedCalls<Probe>({ ttlMs: 30 });
    const p = new Probe();
    const ref = table.park(p);
    expect(table.has(ref)).toBe(true);
    expect(table.take(ref)).toBe(p);
    expect(table.take(ref)).toBeUndefined();
    await sleep(60);
    expect(p.reasons).toEqual([]);
    expect(table.size).toBe(0);
  });

  it('an entry not taken within its TTL is cancelled with a reason naming the TTL and forgotten', async () => {
    const expired: string[] = [];
    const table = new ParkedCalls<Probe>({ ttlMs: 20, onExpire: (ref) => expired.push(ref) });
    const p = new Probe();
    const ref = table.park(p);
    await sleep(60);
    expect(p.reasons).toEqual(['not resumed within 20 ms (requestState time-to-live)']);
    expect(expired).toEqual([ref]);
    expect(table.take(ref)).toBeUndefined();
  });

  it('a per-entry TTL overrides the default', async () => {
    const table = new ParkedCalls<Probe>({ ttlMs: 10_000 });
    const p = new Probe();
    table.park(p, 10);
    await sleep(50);
    expect(p.reasons).toEqual(['not resumed within 10 ms (requestState time-to-live)']);
  });

  it('references are unique and unguessable (UUIDs)', () => {
    const table = new ParkedCalls<Probe>({ ttlMs: 1_000 });
    const refs = Array.from({ length: 50 }, () => table.park(new Probe()));
    expect(new Set(refs).size).toBe(50);
    for (const r of refs) expect(r).toMatch(/^[0-9a-f-]{36}$/);
    table.cancelAll('done');
  });

  it('cancelAll cancels every entry with the given reason and empties the table', () => {
    const table = new ParkedCalls<Probe>({ ttlMs: 1_000 });
    const probes = [new Probe(), new Probe()];
    for (const p of probes) table.park(p);
    table.cancelAll('shutting down');
    expect(probes.map((p) => p.reasons)).toEqual([['shutting down'], ['shutting down']]);
    expect(table.size).toBe(0);
  });

  it('entries with different TTLs each expire at their own time; taking the earliest leaves the next on time', async () => {
    const table = new ParkedCalls<Probe>({ ttlMs: 10_000 });
    const [early, mid, late] = [new Probe(), new Probe(), new Probe()];
    table.park(late, 120);
    const midRef = table.park(mid, 20);
    table.park(early, 40);
    expect(table.take(midRef)).toBe(mid);
    await sleep(70);
    expect([early.reasons.length, mid.reasons.length, late.reasons.length]).toEqual([1, 0, 0]);
    expect(table.size).toBe(1);
    await sleep(100);
    expect(late.reasons).toEqual(['not resumed within 120 ms (requestState time-to-live)']);
    expect(table.size).toBe(0);
  });

  it('a TTL past setTimeout’s maximum does not expire early', async () => {
    const table = new ParkedCalls<Probe>({ ttlMs: 2 ** 32 });
    const p = new Probe();
    table.park(p);
    await sleep(30);
    expect(p.reasons).toEqual([]);
    table.cancelAll('done');
  });
});
