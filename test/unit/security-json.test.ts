import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_JSON_DEPTH, parseInboundJson } from '../../src/faces/inbound-json.js';
import { exceedsJsonDepth } from '../../src/faces/json-depth.js';

const nest = (n: number, open = '[', close = ']') => open.repeat(n) + close.repeat(n);

/** Reference depth by recursion over the parsed value (fine for the small values fast-check makes). */
function depthOf(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  if (typeof v === 'object' && v !== null) return 1 + Math.max(0, ...Object.values(v).map(depthOf));
  return 0;
}

describe('exceedsJsonDepth', () => {
  it.each([
    ['a scalar', '42', 0, false],
    ['{} at 1', '{}', 1, false],
    ['{} at 0', '{}', 0, true],
    ['64 arrays at 64', nest(64), 64, false],
    ['65 arrays at 64', nest(65), 64, true],
    ['mixed objects and arrays', '{"a":[{"b":[1]}]}', 3, true],
    ['mixed, exactly at the bound', '{"a":[{"b":[1]}]}', 4, false],
    ['brackets inside strings do not count', JSON.stringify({ s: '[[[[[[[[[[{{{{{{' }), 1, false],
    ['escaped quotes stay inside the string', JSON.stringify({ s: 'a\\"[[[[' }), 1, false],
    ['siblings do not add up', '[[],[],[],[]]', 2, false],
    ['unbalanced garbage still counts', '[[[[[', 4, true],
  ] as const)('%s', (_name, text, max, want) => {
    expect(exceedsJsonDepth(text, max)).toBe(want);
  });

  it('a million levels is refused without a stack overflow', () => {
    expect(exceedsJsonDepth(nest(1_000_000), DEFAULT_MAX_JSON_DEPTH)).toBe(true);
  });

  it('agrees with the depth of the parsed value (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, max) => {
        expect(exceedsJsonDepth(JSON.stringify(value), max)).toBe(depthOf(value) > max);
      }),
      { numRuns: 300 },
    );
  });
});

describe('parseInboundJson', () => {
  it.each([
    ['valid', '{"jsonrpc":"2.0","id":1,"method":"ping"}', 'ok'],
    ['not JSON', '{"jsonrpc":', -32700],
    ['empty', '', -32700],
    ['too deep (before parsing)', `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":${nest(80)}}}`, -32600],
    ['too deep and not JSON: depth wins', nest(100).slice(0, 150), -32600],
    ['an integer id past 2^53 (kept exact)', '{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}', 'ok'],
    ['a fractional id', '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600],
    ['an integer written 1.0', '{"jsonrpc":"2.0","id":1.0,"method":"ping"}', -32600],
    ['an integer written 1e3', '{"jsonrpc":"2.0","id":1e3,"method":"ping"}', -32600],
    ['minus zero', '{"jsonrpc":"2.0","id":-0,"method":"ping"}', -32600],
    ['a fractional id inside a batch', '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":0.5,"method":"ping"}]', -32600],
  ] as const)('%s', (_name, text, want) => {
    const r = parseInboundJson(text);
    if (want === 'ok') expect(r.ok).toBe(true);
    else expect(r.ok ? undefined : r.error.code).toBe(want);
  });

  it('string "1" and number 1 come out as different ids', () => {
    const a = parseInboundJson('{"jsonrpc":"2.0","id":"1","method":"ping"}');
    const b = parseInboundJson('{"jsonrpc":"2.0","id":1,"method":"ping"}');
    expect(a.ok && (a.body as { id: unknown }).id).toBe('1');
    expect(b.ok && (b.body as { id: unknown }).id).toBe(1);
  });

  it('an id past 2^53 comes out exact, as a bigint, never equal to its string form', () => {
    const r = parseInboundJson('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}');
    expect(r.ok && (r.body as { id: unknown }).id).toBe(9007199254740993n);
    const s = parseInboundJson('{"jsonrpc":"2.0","id":"9007199254740993","method":"ping"}');
    expect(s.ok && (s.body as { id: unknown }).id).toBe('9007199254740993');
  });

  it('the refusal of a non-integer id says what to send instead', () => {
    const r = parseInboundJson('{"jsonrpc":"2.0","id":1e3,"method":"ping"}');
    expect(r.ok ? '' : r.error.message).toMatch(/got 1e3.*integer or a string/);
  });

  it('the depth message names the flag; each face keeps its own parse-error wording', () => {
    const deep = parseInboundJson(nest(10), 5);
    expect(deep.ok ? '' : deep.error.message).toMatch(/deeper than 5 levels.*--max-json-depth/);
    const bad = parseInboundJson('nope', 5, 'Parse error');
    expect(bad.ok ? '' : bad.error.message).toBe('Parse error');
  });
});
