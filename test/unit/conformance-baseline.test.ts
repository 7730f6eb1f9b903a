import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BaselineError, excusesFor, parseBaseline, parseExcuse, readBaseline, skipped } from '../conformance/runner/baseline.mjs';

describe('conformance baseline: excuse tokens', () => {
  it.each([
    ['fail:sep-2322-elicitation-incomplete', 'fail:sep-2322-elicitation-incomplete'],
    ['warning:sep-2164-data-uri', 'warning:sep-2164-data-uri'],
    ['fail:a:b', 'fail:a:b'],
    ['not-scored', 'not-scored'],
    ['client-error', 'client-error'],
    ['timeout', 'timeout'],
    ['crash', 'crash'],
    ['skip', 'skip'],
    ['fail', undefined],
    ['fail:', undefined],
    ['warn:x', undefined],
    [':x', undefined],
    ['harness', undefined],
    ['expected', undefined],
  ])('%s', (token, expected) => expect(parseExcuse(token)).toBe(expected));
});

describe('conformance baseline: parsing', () => {
  it('reads scenario, excuse, reason and line, skipping comments and blank lines', () => {
    const text = ['# a comment', '', 'tools-list  fail:tools-list-shape  because  of   spacing', '  auth/basic-cimd skip no OAuth client   ', 'x warning:w a SHOULD'].join('\n');
    expect(parseBaseline(text)).toEqual([
      { scenario: 'tools-list', excuse: 'fail:tools-list-shape', reason: 'because  of   spacing', line: 3 },
      { scenario: 'auth/basic-cimd', excuse: 'skip', reason: 'no OAuth client', line: 4 },
      { scenario: 'x', excuse: 'warning:w', reason: 'a SHOULD', line: 5 },
    ]);
  });

  it('allows several excuses for one scenario', () => {
    const entries = parseBaseline('s fail:a r1\ns fail:b r2\ns timeout r3\nt not-scored r4');
    expect([...excusesFor(entries, 's')]).toEqual([
      ['fail:a', { reason: 'r1', intermittent: false }],
      ['fail:b', { reason: 'r2', intermittent: false }],
      ['timeout', { reason: 'r3', intermittent: false }],
    ]);
    expect(excusesFor(entries, 'nope').size).toBe(0);
    expect([...skipped(entries)]).toEqual([]);
  });

  it('marks an excuse ending in ? as intermittent', () => {
    const entries = parseBaseline('s fail:a? slow under load\ns warning:w? r');
    expect(entries.map((e) => [e.excuse, e.intermittent])).toEqual([
      ['fail:a', true],
      ['warning:w', true],
    ]);
    expect(excusesFor(entries, 's').get('fail:a')).toEqual({ reason: 'slow under load', intermittent: true });
  });

  it.each([
    ['skip?', 's skip? r', /s: skip\? makes no sense/],
    ['a bare scenario (the old whole-scenario form)', 'tools-list', /f\.txt:1: expected "<scenario> <excuse> <reason>"/],
    ['the old scenario:check form', 'tools-list:check-id  some reason here', /f\.txt:1: unknown excuse "some"/],
    ['an excuse without a reason', '\ntools-list fail:x', /f\.txt:2: expected/],
    ['an unknown excuse', 'tools-list expected it fails', /unknown excuse "expected"/],
    ['a check excuse without a check', 'tools-list fail: reason', /unknown excuse "fail:"/],
    ['the same excuse twice', 's fail:a r\ns fail:a r again', /f\.txt:2: s fail:a is listed twice/],
    ['skip after another excuse', 's fail:a r\ns skip r', /f\.txt:2: s: skip cannot be combined/],
    ['another excuse after skip', 's skip r\ns timeout r', /f\.txt:2: s: skip cannot be combined/],
  ])('rejects %s', (_name, text, message) => {
    expect(() => parseBaseline(text, 'f.txt')).toThrow(BaselineError);
    expect(() => parseBaseline(text, 'f.txt')).toThrow(message);
  });

  it('lists skipped scenarios with their reasons', () => {
    expect([...skipped(parseBaseline('a skip r1\nb fail:c r2\nd skip r3'))]).toEqual([
      ['a', 'r1'],
      ['d', 'r3'],
    ]);
  });
});

describe('conformance baseline: the committed files', () => {
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'conformance', 'baseline');
  it.each(readdirSync(dir).filter((f) => f.endsWith('.txt')))('%s parses and gives every line a reason', (file) => {
    const entries = readBaseline(path.join(dir, file));
    for (const e of entries) expect(e.reason.length).toBeGreaterThan(10);
  });
});
