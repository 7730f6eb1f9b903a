import { describe, expect, it } from 'vitest';
import { checkParamHeaders, paramHeaderSpecs, paramHeadersFor, type ParamHeaderSpec } from '../../src/wire/param-headers.js';

const prop = (type: string, header?: string) => (header === undefined ? { type } : { type, 'x-mcp-header': header });

describe('paramHeaderSpecs', () => {
  it('collects annotations on nested properties with their paths and types', () => {
    const schema = {
      type: 'object',
      properties: {
        region: prop('string', 'Region'),
        opts: { type: 'object', properties: { count: prop('integer', 'Count'), dry: prop('boolean', 'Dry') } },
        plain: prop('string'),
      },
    };
    expect(paramHeaderSpecs(schema)).toEqual({
      ok: true,
      specs: [
        { name: 'Region', path: ['region'], type: 'string' },
        { name: 'Count', path: ['opts', 'count'], type: 'integer' },
        { name: 'Dry', path: ['opts', 'dry'], type: 'boolean' },
      ],
    });
  });
  it('accepts a schema without annotations, or no schema', () => {
    expect(paramHeaderSpecs({ type: 'object', properties: { a: prop('string') } })).toEqual({ ok: true, specs: [] });
    expect(paramHeaderSpecs(undefined)).toEqual({ ok: true, specs: [] });
  });
  const invalid: [string, unknown][] = [
    ['a number-typed property', { properties: { n: prop('number', 'N') } }],
    ['an object-typed property', { properties: { o: prop('object', 'O') } }],
    ['an empty name', { properties: { a: prop('string', '') } }],
    ['a name with a space', { properties: { a: prop('string', 'My Name') } }],
    ['a name with a delimiter', { properties: { a: prop('string', 'a:b') } }],
    ['names equal ignoring case', { properties: { a: prop('string', 'Name'), b: prop('string', 'name') } }],
    ['an annotation under items', { properties: { a: { type: 'array', items: prop('string', 'X') } } }],
    ['an annotation under anyOf', { properties: { a: { anyOf: [prop('string', 'X')] } } }],
    ['an annotation under $defs', { $defs: { d: prop('string', 'X') }, properties: {} }],
    ['an annotation under additionalProperties', { additionalProperties: prop('string', 'X') }],
    ['an annotation on the root', { type: 'object', 'x-mcp-header': 'Root' }],
  ];
  it.each(invalid)('rejects %s', (_name, schema) => {
    const r = paramHeaderSpecs(schema);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain('x-mcp-header');
  });
});

const specs: ParamHeaderSpec[] = [
  { name: 'Region', path: ['region'], type: 'string' },
  { name: 'Count', path: ['opts', 'count'], type: 'integer' },
  { name: 'Dry', path: ['dry'], type: 'boolean' },
];

describe('paramHeadersFor', () => {
  it('encodes present values and skips null or absent ones', () => {
    expect(paramHeadersFor(specs, { region: 'Zürich', opts: { count: 3 }, dry: null })).toEqual({
      'Mcp-Param-Region': '=?base64?WsO8cmljaA==?=',
      'Mcp-Param-Count': '3',
    });
    expect(paramHeadersFor(specs, undefined)).toEqual({});
  });
  it('skips integers beyond ±(2^53−1)', () => {
    expect(paramHeadersFor(specs, { opts: { count: 2 ** 60 } })).toEqual({});
  });
});

describe('checkParamHeaders', () => {
  const args = { region: 'us-west1', opts: { count: 42 }, dry: true };
  const ok = { 'mcp-param-region': 'us-west1', 'mcp-param-count': '42', 'mcp-param-dry': 'true' };
  const cases: { name: string; args: unknown; headers: Record<string, string | undefined>; problem?: string }[] = [
    { name: 'matching headers pass', args, headers: ok },
    { name: 'integers compare numerically (42.0 = 42)', args, headers: { ...ok, 'mcp-param-count': '42.0' } },
    { name: 'base64 values are decoded first', args, headers: { ...ok, 'mcp-param-region': '=?base64?dXMtd2VzdDE=?=' } },
    { name: 'no header expected for a null body value', args: { ...args, region: null }, headers: { ...ok, 'mcp-param-region': undefined } },
    { name: 'a missing header is a problem', args, headers: { ...ok, 'mcp-param-dry': undefined }, problem: 'Header mismatch: required header Mcp-Param-Dry is missing' },
    { name: 'a disagreeing header is a problem', args, headers: { ...ok, 'mcp-param-region': 'eu' }, problem: "Header mismatch: Mcp-Param-Region header value 'eu' does not match body value 'us-west1'" },
    { name: 'a non-numeric integer header is a problem', args, headers: { ...ok, 'mcp-param-count': 'forty-two' }, problem: "Header mismatch: Mcp-Param-Count header value 'forty-two' does not match body value '42'" },
    { name: 'bad base64 is malformed', args, headers: { ...ok, 'mcp-param-region': '=?base64?%%?=' }, problem: 'Header mismatch: Mcp-Param-Region header is malformed (invalid base64 in header value)' },
    { name: 'control characters are invalid', args, headers: { ...ok, 'mcp-param-region': 'us\u0001' }, problem: 'Header mismatch: Mcp-Param-Region header contains invalid characters' },
  ];
  it.each(cases)('$name', ({ args: a, headers, problem }) => {
    expect(checkParamHeaders(specs, a, headers)?.message).toBe(problem);
  });
});
