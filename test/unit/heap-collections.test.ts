import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IdTable } from '../../src/heap/id-table.js';
import { LIVE_SLOT, LiveSet, type LiveMember } from '../../src/heap/live-set.js';

const member = (name: string): LiveMember & { name: string } => ({ [LIVE_SLOT]: -1, name });

describe('LiveSet', () => {
  it('adds, finds and removes members, whatever the order they leave in', () => {
    const s = new LiveSet<ReturnType<typeof member>>();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(member);
    for (const m of [a, b, c, d]) s.add(m);
    expect(s.size).toBe(4);
    expect(s.delete(b)).toBe(true);
    expect(s.delete(b)).toBe(false);
    expect(s.has(b)).toBe(false);
    expect([...s].map((m) => m.name).sort()).toEqual(['a', 'c', 'd']);
    expect(s.delete(d)).toBe(true);
    expect(s.delete(a)).toBe(true);
    expect([...s].map((m) => m.name)).toEqual(['c']);
    expect(s.has(c)).toBe(true);
    expect(b[LIVE_SLOT]).toBe(-1);
  });

  it('adding a member twice keeps one', () => {
    const s = new LiveSet<ReturnType<typeof member>>();
    const a = member('a');
    s.add(a).add(a);
    expect(s.size).toBe(1);
  });

  it('one object sits in two sets under two slot keys', () => {
    const OTHER: unique symbol = Symbol('other');
    const m = { [LIVE_SLOT]: -1, [OTHER]: -1 };
    const first = new LiveSet<typeof m>();
    const second = new LiveSet<typeof m, typeof OTHER>(OTHER);
    first.add({ [LIVE_SLOT]: -1, [OTHER]: -1 });
    first.add(m);
    second.add(m);
    expect(first.has(m) && second.has(m)).toBe(true);
    first.delete(m);
    expect(first.has(m)).toBe(false);
    expect(second.has(m)).toBe(true);
  });

  it('a snapshot can be walked while each member leaves; clear() empties it', () => {
    const s = new LiveSet<ReturnType<typeof member>>();
    const all = ['a', 'b', 'c'].map(member);
    for (const m of all) s.add(m);
    const seen: string[] = [];
    for (const m of s.snapshot()) {
      seen.push(m.name);
      s.delete(m);
    }
    expect(seen.sort()).toEqual(['a', 'b', 'c']);
    expect(s.size).toBe(0);
    for (const m of all) s.add(m);
    s.clear();
    expect(s.size).toBe(0);
    expect(all.every((m) => m[LIVE_SLOT] === -1)).toBe(true);
  });
});

describe('IdTable', () => {
  it('keeps the number 1 and the string "1" apart, as JSON-RPC ids are', () => {
    const t = new IdTable<string | number, string>();
    t.set(1, 'number').set('1', 'string');
    expect(t.size).toBe(2);
    expect(t.get(1)).toBe('number');
    expect(t.get('1')).toBe('string');
    expect(t.delete(1)).toBe(true);
    expect(t.has(1)).toBe(false);
    expect(t.get('1')).toBe('string');
  });

  it.each([
    ['__proto__'],
    ['constructor'],
    ['toString'],
    ['0'],
    [''],
  ])('a key such as %j is an ordinary entry', (key) => {
    const t = new IdTable<string, number>();
    expect(t.get(key)).toBeUndefined();
    expect(t.has(key)).toBe(false);
    t.set(key, 7);
    expect(t.get(key)).toBe(7);
    expect(t.keys()).toEqual([key]);
    expect(t.delete(key)).toBe(true);
    expect(t.size).toBe(0);
  });

  it('ids past 2^53 (bigint) round-trip through keys()', () => {
    const t = new IdTable<bigint | number, string>();
    t.set(9007199254740993n, 'big').set(9007199254740992, 'double');
    expect(t.get(9007199254740993n)).toBe('big');
    expect(t.keys()).toEqual([9007199254740993n, 9007199254740992]);
  });

  it('iterates in insertion order, a re-added key last, like a Map; values() is a copy', () => {
    const t = new IdTable<string, number>();
    t.set('a', 1).set('b', 2).set('c', 3);
    t.delete('a');
    t.set('a', 4);
    t.set('b', 5);
    expect([...t]).toEqual([['b', 5], ['c', 3], ['a', 4]]);
    const values = t.values();
    t.clear();
    expect(values).toEqual([5, 3, 4]);
    expect(t.size).toBe(0);
    expect(t.entries()).toEqual([]);
  });
});

/**
 * What the two are for (issue 17): on this V8 a churning Set or Map, once its
 * storage reached the old generation, makes every later entry outlive each
 * scavenge. Measured in a child process with `--expose-gc`, scavenges forced
 * between calls that never live through two of them.
 */
describe('promotion of dead entries (node --expose-gc)', () => {
  const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/churn-promotion.mjs');
  const promotedPerCall = (kind: string): number => JSON.parse(execFileSync(process.execPath, ['--expose-gc', fixture, kind], { encoding: 'utf8' })).promotedPerCall;

  it('a Set and a Map promote each dead call (the effect this guards against, seen by the same measure)', () => {
    expect(promotedPerCall('set')).toBeGreaterThan(1_000);
    expect(promotedPerCall('map')).toBeGreaterThan(1_000);
  });

  it('LiveSet and IdTable promote next to nothing of them', () => {
    expect(promotedPerCall('live-set')).toBeLessThan(100);
    expect(promotedPerCall('id-table')).toBeLessThan(100);
  });
});
