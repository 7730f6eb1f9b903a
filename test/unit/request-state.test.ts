import { describe, expect, it } from 'vitest';
import { canonicalJson, paramsDigest, RequestStateCodec } from '../../bridges/shared/request-state.js';

const params = { name: 'trigger-elicitation-request', arguments: { a: 1, b: [1, 2] } };

function codec(overrides: Partial<ConstructorParameters<typeof RequestStateCodec>[0]> = {}) {
  return new RequestStateCodec({ key: 'k'.repeat(32), ttlMs: 1_000, instanceId: 'inst-a', ...overrides });
}

/** Replaces one character of the segment `index` (0 prefix, 1 body, 2 mac). */
function flip(state: string, index: number): string {
  const parts = state.split('.');
  const s = parts[index];
  const i = Math.floor(s.length / 2);
  parts[index] = s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  return parts.join('.');
}

describe('RequestStateCodec', () => {
  it('opens what it sealed and returns the reference and extra claims', () => {
    const c = codec();
    const state = c.seal('ref-1', 'tools/call', params, { elicitationIds: ['e1'] });
    expect(c.open(state, 'tools/call', params)).toEqual({ ok: true, ref: 'ref-1', extra: { elicitationIds: ['e1'] } });
  });

  it('binds to the params, not to their key order, _meta, inputResponses or requestState', () => {
    const c = codec();
    const state = c.seal('r', 'tools/call', params);
    const retry = { arguments: { b: [1, 2], a: 1 }, name: params.name, _meta: { progressToken: 7 }, inputResponses: { k: {} }, requestState: state };
    expect(c.open(state, 'tools/call', retry)).toEqual({ ok: true, ref: 'r' });
  });

  const refusals: Array<{ name: string; state: (c: RequestStateCodec) => unknown; opener?: () => RequestStateCodec; method?: string; params?: Record<string, unknown>; reason: string; message: RegExp }> = [
    { name: 'a non-string', state: () => 42, reason: 'tampered', message: /tampered: it is not a string/ },
    { name: 'another format', state: () => 'v1.abc.def', reason: 'tampered', message: /tampered: it is not a state this bridge issued/ },
    { name: 'a body that is not JSON', state: () => 'mb1.%%%.abc', reason: 'tampered', message: /tampered: its body does not decode/ },
    { name: 'a changed body', state: (c) => flip(c.seal('r', 'tools/call', params), 1), reason: 'tampered', message: /tampered/ },
    { name: 'a changed seal', state: (c) => flip(c.seal('r', 'tools/call', params), 2), reason: 'tampered', message: /tampered: its seal does not verify/ },
    { name: 'a state of another instance with another key', state: () => codec({ instanceId: 'inst-b', key: 'z'.repeat(32) }).seal('r', 'tools/call', params), reason: 'foreign', message: /foreign: it was issued by bridge instance "inst-b", not "inst-a"/ },
    { name: 'a state of another instance with the same key', state: () => codec({ instanceId: 'inst-b' }).seal('r', 'tools/call', params), reason: 'foreign', message: /foreign/ },
    { name: 'a state past its TTL', state: () => codec({ now: () => 0 }).seal('r', 'tools/call', params), opener: () => codec({ now: () => 1_001 }), reason: 'expired', message: /expired 1 ms ago/ },
    { name: 'a state for another method', state: (c) => c.seal('r', 'prompts/get', params), reason: 'method', message: /issued for prompts\/get, not tools\/call/ },
    { name: 'a state for other params', state: (c) => c.seal('r', 'tools/call', params), params: { ...params, arguments: { a: 2 } }, reason: 'params', message: /different params/ },
  ];

  it.each(refusals)('refuses $name as $reason', (row) => {
    const c = codec();
    const opener = row.opener?.() ?? c;
    const verdict = opener.open(row.state(c), row.method ?? 'tools/call', row.params ?? params);
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.reason).toBe(row.reason);
    expect(verdict.message).toMatch(row.message);
  });

  it('a state is still valid at exactly its expiry instant', () => {
    const sealer = codec({ now: () => 0 });
    const state = sealer.seal('r', 'tools/call', params);
    expect(codec({ now: () => 1_000 }).open(state, 'tools/call', params).ok).toBe(true);
  });

  it('two codecs with random keys cannot open each other’s states', () => {
    const a = new RequestStateCodec({ ttlMs: 1_000, instanceId: 'same' });
    const b = new RequestStateCodec({ ttlMs: 1_000, instanceId: 'same' });
    const verdict = b.open(a.seal('r', 'tools/call', params), 'tools/call', params);
    expect(verdict).toMatchObject({ ok: false, reason: 'tampered' });
  });

  it('refuses an empty key at construction', () => {
    expect(() => codec({ key: '' })).toThrow(RangeError);
  });
});

describe('canonicalJson and paramsDigest', () => {
  it.each([
    [{ b: 1, a: { d: 2, c: [3, { f: 4, e: 5 }] } }, '{"a":{"c":[3,{"e":5,"f":4}],"d":2},"b":1}'],
    [{ a: undefined, b: null }, '{"b":null}'],
    [[undefined, 1], '[null,1]'],
    ['x', '"x"'],
  ])('canonicalJson(%j) is %s', (value, text) => {
    expect(canonicalJson(value)).toBe(text);
  });

  it('digests differ when a bound param differs and match when only unbound ones do', () => {
    expect(paramsDigest({ a: 1 })).not.toBe(paramsDigest({ a: 2 }));
    expect(paramsDigest({ a: 1, _meta: { x: 1 } })).toBe(paramsDigest({ a: 1 }));
    expect(paramsDigest(undefined)).toBe(paramsDigest({}));
  });
});
