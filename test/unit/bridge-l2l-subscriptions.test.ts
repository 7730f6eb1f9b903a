import { describe, expect, it } from 'vitest';
import { SubscriptionTable } from '../../bridges/legacy-to-legacy/subscription-table.js';

type Step =
  | { op: 'add'; key: string; session: string; uri: string; expect: { added: boolean; first: boolean } }
  | { op: 'remove'; session: string; uri: string; expect: { removed: boolean; last: boolean } };

const K1 = 'v1\n{}';
const K2 = 'v1\n{"roots":{}}';

describe('SubscriptionTable: per-session subscriptions, reference-counted per key and uri', () => {
  const scenarios: Array<[string, Step[], Record<string, number>]> = [
    [
      'the first subscriber is first, the second is not',
      [
        { op: 'add', key: K1, session: 'a', uri: 'u1', expect: { added: true, first: true } },
        { op: 'add', key: K1, session: 'b', uri: 'u1', expect: { added: true, first: false } },
      ],
      { [`${K1}|u1`]: 2 },
    ],
    [
      'a repeated subscribe by one session counts once',
      [
        { op: 'add', key: K1, session: 'a', uri: 'u1', expect: { added: true, first: true } },
        { op: 'add', key: K1, session: 'a', uri: 'u1', expect: { added: false, first: false } },
        { op: 'remove', session: 'a', uri: 'u1', expect: { removed: true, last: true } },
      ],
      { [`${K1}|u1`]: 0 },
    ],
    [
      'only the last unsubscribe is last',
      [
        { op: 'add', key: K1, session: 'a', uri: 'u1', expect: { added: true, first: true } },
        { op: 'add', key: K1, session: 'b', uri: 'u1', expect: { added: true, first: false } },
        { op: 'remove', session: 'a', uri: 'u1', expect: { removed: true, last: false } },
        { op: 'remove', session: 'b', uri: 'u1', expect: { removed: true, last: true } },
      ],
      { [`${K1}|u1`]: 0 },
    ],
    [
      'unsubscribing what was never subscribed changes nothing',
      [
        { op: 'add', key: K1, session: 'a', uri: 'u1', expect: { added: true, first: true } },
        { op: 'remove', session: 'b', uri: 'u1', expect: { removed: false, last: false } },
        { op: 'remove', session: 'a', uri: 'u2', expect: { removed: false, last: false } },
      ],
      { [`${K1}|u1`]: 1 },
    ],
    [
      'keys are counted apart',
      [
        { op: 'add', key: K1, session: 'a', uri: 'u1', expect: { added: true, first: true } },
        { op: 'add', key: K2, session: 'c', uri: 'u1', expect: { added: true, first: true } },
        { op: 'remove', session: 'a', uri: 'u1', expect: { removed: true, last: true } },
      ],
      { [`${K1}|u1`]: 0, [`${K2}|u1`]: 1 },
    ],
    [
      'uris are counted apart',
      [
        { op: 'add', key: K1, session: 'a', uri: 'u1', expect: { added: true, first: true } },
        { op: 'add', key: K1, session: 'b', uri: 'u2', expect: { added: true, first: true } },
        { op: 'add', key: K1, session: 'a', uri: 'u2', expect: { added: true, first: false } },
      ],
      { [`${K1}|u1`]: 1, [`${K1}|u2`]: 2 },
    ],
  ];

  it.each(scenarios)('%s', (_name, steps, counts) => {
    const table = new SubscriptionTable();
    for (const step of steps) {
      const got = step.op === 'add' ? table.add(step.key, step.session, step.uri) : table.remove(step.session, step.uri);
      expect(got).toEqual(step.expect);
    }
    for (const [slot, n] of Object.entries(counts)) {
      const [key, uri] = slot.split('|');
      expect(table.count(key, uri)).toBe(n);
    }
  });

  it('reports what each session and each key holds', () => {
    const table = new SubscriptionTable();
    table.add(K1, 'a', 'u1');
    table.add(K1, 'a', 'u2');
    table.add(K1, 'b', 'u2');
    expect(table.urisOf('a').sort()).toEqual(['u1', 'u2']);
    expect(table.urisOf('b')).toEqual(['u2']);
    expect(table.urisOn(K1).sort()).toEqual(['u1', 'u2']);
    expect(table.has('b', 'u1')).toBe(false);
    table.remove('a', 'u1');
    table.remove('a', 'u2');
    expect(table.urisOf('a')).toEqual([]);
    expect(table.urisOn(K1)).toEqual(['u2']);
  });

  it('refuses one session on two keys', () => {
    const table = new SubscriptionTable();
    table.add(K1, 'a', 'u1');
    expect(() => table.add(K2, 'a', 'u1')).toThrow(/is on key/);
  });
});
