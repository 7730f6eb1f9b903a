import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeHeaderValue, encodeHeaderValue, hasInvalidHeaderChars, needsBase64 } from '../../src/wire/header-value.js';

describe('encodeHeaderValue', () => {
  const cases: { input: string | number | boolean; wire: string }[] = [
    { input: 'get_weather', wire: 'get_weather' },
    { input: 'file:///a b.txt', wire: 'file:///a b.txt' },
    { input: 'Hello, 世界', wire: '=?base64?SGVsbG8sIOS4lueVjA==?=' }, // digest §2.5 example
    { input: ' padded ', wire: '=?base64?IHBhZGRlZCA=?=' }, // digest §2.5 example
    { input: '', wire: '=?base64??=' }, // [SDK] encodes the empty string
    { input: '=?base64?abcd?=', wire: `=?base64?${Buffer.from('=?base64?abcd?=').toString('base64')}?=` },
    { input: 'a\tb', wire: 'a\tb' },
    { input: 'line\nbreak', wire: '=?base64?bGluZQpicmVhaw==?=' },
    { input: 42, wire: '42' },
    { input: -1.5, wire: '-1.5' },
    { input: true, wire: 'true' },
    { input: false, wire: 'false' },
  ];
  it.each(cases)('encodes $input as $wire', ({ input, wire }) => {
    expect(encodeHeaderValue(input)).toBe(wire);
  });
  it('refuses a non-finite number', () => {
    expect(() => encodeHeaderValue(Number.NaN)).toThrow(RangeError);
  });
});

describe('needsBase64', () => {
  it.each([
    ['', true],
    ['plain', false],
    ['trailing ', true],
    ['\tlead', true],
    ['é', true],
    ['\x7f', true],
    ['=?base64?x?=', true],
    ['=?base64?', false],
  ] as const)('%j → %s', (s, want) => {
    expect(needsBase64(s)).toBe(want);
  });
});

describe('decodeHeaderValue', () => {
  it.each([
    ['plain', { ok: true, value: 'plain' }],
    ['=?base64?SGVsbG8sIOS4lueVjA==?=', { ok: true, value: 'Hello, 世界' }],
    ['=?base64??=', { ok: true, value: '' }],
  ] as const)('decodes %j', (raw, want) => {
    expect(decodeHeaderValue(raw)).toEqual(want);
  });
  it.each([
    ['=?base64?SGVsbG8?=', 'unpadded base64'],
    ['=?base64?SGV$bG8=?=', 'a character outside the alphabet'],
    ['=?base64?/w==?=', 'bytes that are not UTF-8'],
    ['=?base64?=', 'a truncated sentinel'],
  ])('rejects %j (%s)', (raw) => {
    expect(decodeHeaderValue(raw).ok).toBe(false);
  });
  it('round-trips any string (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const wire = encodeHeaderValue(s);
        expect(hasInvalidHeaderChars(wire)).toBe(false);
        expect(decodeHeaderValue(wire)).toEqual({ ok: true, value: s });
      }),
      { numRuns: 500 },
    );
  });
});

describe('hasInvalidHeaderChars', () => {
  it.each([
    ['ok value', false],
    ['tab\tok', false],
    ['cr\r', true],
    ['lf\n', true],
    ['nul\0', true],
    ['bell\x07', true],
    ['del\x7f', true],
  ] as const)('%j → %s', (raw, want) => {
    expect(hasInvalidHeaderChars(raw)).toBe(want);
  });
});
