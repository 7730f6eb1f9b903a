import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdLiteralError, idText, parseJsonRpc, stringifyJsonRpc } from '../../src/jsonrpc/id-codec.js';
import { idTokens } from '../../src/jsonrpc/id-tokens.js';
import { isRequest, isRequestId } from '../../src/jsonrpc/messages.js';

type Obj = Record<string, unknown>;
const idOf = (text: string, strict = false) => (parseJsonRpc(text, strict) as Obj).id;

describe('parseJsonRpc: the id a message carries, exactly', () => {
  it.each([
    ['a safe integer at the start', '{"jsonrpc":"2.0","id":7,"method":"ping"}', 7],
    ['a safe integer at the end (SDK v1 order)', '{"method":"ping","jsonrpc":"2.0","id":7}', 7],
    ['a safe integer in the middle', '{"jsonrpc":"2.0","method":"ping","id":7,"params":{}}', 7],
    ['2^53−1 stays a number', '{"id":9007199254740991}', Number.MAX_SAFE_INTEGER],
    ['−(2^53−1) stays a number', '{"id":-9007199254740991}', -Number.MAX_SAFE_INTEGER],
    ['2^53 becomes a bigint', '{"id":9007199254740992}', 9007199254740992n],
    ['2^53+1', '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}', 9007199254740993n],
    ['−(2^53+1)', '{"jsonrpc":"2.0","id":-9007199254740993,"method":"ping"}', -9007199254740993n],
    ['23 digits', '{"jsonrpc":"2.0","id":12345678901234567890123,"method":"ping"}', 12345678901234567890123n],
    ['a big id last, after nested ids', '{"jsonrpc":"2.0","method":"x","params":{"id":1,"a":[{"id":2}]},"id":9007199254740993}', 9007199254740993n],
    ['whitespace around', ' {\n  "jsonrpc" : "2.0",\n  "id" :\t9007199254740993 \n}\n', 9007199254740993n],
    ['an escaped key', '{"jsonrpc":"2.0","\\u0069d":9007199254740993}', 9007199254740993n],
    ['a duplicate id: the last wins, as in JSON.parse', '{"id":1,"id":9007199254740993}', 9007199254740993n],
    ['strings that look like members', '{"a":"\\",\\"id\\":5","b":"\\\\","id":9007199254740995}', 9007199254740995n],
    ['a string id that looks big stays a string', '{"id":"9007199254740993"}', '9007199254740993'],
    ['a huge string id', '{"id":"123456789012345678901234567890"}', '123456789012345678901234567890'],
    ['null', '{"id":null}', null],
  ] as const)('%s', (_name, text, want) => {
    expect(idOf(text)).toBe(want);
    expect(idOf(text, true)).toBe(want);
  });

  it('keeps params.requestId exact too (the id a notifications/cancelled names)', () => {
    const m = parseJsonRpc('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993,"reason":"x"}}') as Obj;
    expect((m.params as Obj).requestId).toBe(9007199254740993n);
  });

  it('leaves a requestId in the params of any other method as JSON.parse makes it', () => {
    const m = parseJsonRpc('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"requestId":9007199254740993}}') as Obj;
    expect((m.params as Obj).requestId).toBe(9007199254740992);
  });

  it('a batch: each element on its own', () => {
    const batch = parseJsonRpc('[{"jsonrpc":"2.0","id":9007199254740993,"method":"a"},5,{"jsonrpc":"2.0","id":"9007199254740993","method":"b"},{"jsonrpc":"2.0","id":3,"method":"c"}]', true) as Obj[];
    expect(batch.map((m) => (typeof m === 'object' ? m.id : m))).toEqual([9007199254740993n, 5, '9007199254740993', 3]);
  });

  it('a bigint id is a request id and never equals the same digits as a string or a number', () => {
    const big = idOf('{"id":9007199254740993}');
    expect(isRequestId(big)).toBe(true);
    expect(isRequest(parseJsonRpc('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}'))).toBe(true);
    const keys = new Map<unknown, string>([[big, 'big'], ['9007199254740993', 'string'], [9007199254740992, 'number']]);
    expect(keys.size).toBe(3);
    expect(keys.get(idOf('{"id":9007199254740993}'))).toBe('big');
  });

  it('not JSON is a SyntaxError, as from JSON.parse', () => {
    expect(() => parseJsonRpc('{"id":')).toThrow(SyntaxError);
  });
});

describe('parseJsonRpc strict: a numeric id must be written as an integer', () => {
  it.each([
    ['1.5', '{"jsonrpc":"2.0","id":1.5,"method":"ping"}'],
    ['1.0 (integer value, fractional form)', '{"jsonrpc":"2.0","id":1.0,"method":"ping"}'],
    ['1e3', '{"jsonrpc":"2.0","id":1e3,"method":"ping"}'],
    ['1E+2 at the end', '{"method":"ping","jsonrpc":"2.0","id":1E+2}'],
    ['-0', '{"jsonrpc":"2.0","id":-0,"method":"ping"}'],
    ['1e30 (beyond the safe range)', '{"jsonrpc":"2.0","id":1e30,"method":"ping"}'],
    ['9007199254740993.0', '{"jsonrpc":"2.0","id":9007199254740993.0,"method":"ping"}'],
    ['1.00000000000000001 (parses to 1)', '{"jsonrpc":"2.0","id":1.00000000000000001,"method":"ping"}'],
    ['in the middle, with a plain nested id', '{"params":{"id":1},"id":1.0,"method":"ping"}'],
    ['an element of a batch', '[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2.0,"method":"b"}]'],
  ])('refuses %s', (_name, text) => {
    expect(() => parseJsonRpc(text, true)).toThrow(IdLiteralError);
  });

  it('names the token as written', () => {
    expect(() => parseJsonRpc('{"id":1e3}', true)).toThrow(/got 1e3\)/);
  });

  it('without strict (upstream messages) such ids keep their double value', () => {
    expect(idOf('{"id":1.0}')).toBe(1);
    expect(idOf('{"id":1e30}')).toBe(1e30);
    expect(idOf('{"id":-0}')).toBe(-0);
  });

  it('plain integer ids pass, wherever they stand', () => {
    for (const text of ['{"jsonrpc":"2.0","id":0,"method":"a"}', '{"id":-5}', '{"method":"a","id":12}', '{ "id": 3, "params": {"x": 1.5} }', '{"params":{"id":1.5},"id":1}']) {
      expect(() => parseJsonRpc(text, true)).not.toThrow();
    }
  });
});

describe('stringifyJsonRpc', () => {
  it.each([
    ['a bigint id', { jsonrpc: '2.0', id: 9007199254740993n, result: {} }, '{"jsonrpc":"2.0","id":9007199254740993,"result":{}}'],
    ['a negative bigint id', { jsonrpc: '2.0', id: -12345678901234567890123n, result: {} }, '{"jsonrpc":"2.0","id":-12345678901234567890123,"result":{}}'],
    ['a nested bigint (a listen subscription id)', { jsonrpc: '2.0', method: 'n', params: { _meta: { s: 9007199254740993n } } }, '{"jsonrpc":"2.0","method":"n","params":{"_meta":{"s":9007199254740993}}}'],
    ['a batch', [{ id: 9007199254740993n }, { id: '9007199254740993' }], '[{"id":9007199254740993},{"id":"9007199254740993"}]'],
    ['no bigint: as JSON.stringify', { jsonrpc: '2.0', id: 1, result: { a: [1, 'x'] } }, '{"jsonrpc":"2.0","id":1,"result":{"a":[1,"x"]}}'],
  ] as const)('%s', (_name, message, want) => {
    expect(stringifyJsonRpc(message)).toBe(want);
  });

  it('strings that hold NULs and digits are left alone', () => {
    const m = { id: 9007199254740993n, result: { text: '\u0000id-0123456789abcdef:42"', key: '"\\u0000' } };
    expect(JSON.parse(stringifyJsonRpc(m).replace('9007199254740993', '0'))).toEqual({ ...m, id: 0 });
  });

  it('other serialization errors still throw', () => {
    const loop: Obj = { id: 1n };
    loop.self = loop;
    expect(() => stringifyJsonRpc(loop)).toThrow(TypeError);
  });

  it('idText writes an id as the message does', () => {
    expect([idText('a"b'), idText(7), idText(9007199254740993n), idText(null)]).toEqual(['"a\\"b"', '7', '9007199254740993', 'null']);
  });
});

// ─── properties ───────────────────────────────────────────────────────────────

/** An id token as a client may write it, with the value the bridge must keep. */
const idToken = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map((n) => ({ token: String(n), value: n as unknown })),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n })
    .filter((b) => b > BigInt(Number.MAX_SAFE_INTEGER) || b < -BigInt(Number.MAX_SAFE_INTEGER))
    .map((b) => ({ token: b.toString(), value: b as unknown })),
  fc.constantFrom(9007199254740992n, 9007199254740993n, -9007199254740993n, 12345678901234567890123n).map((b) => ({ token: b.toString(), value: b as unknown })),
  fc.string().map((s) => ({ token: JSON.stringify(s), value: s as unknown })),
);

/** Other members, some holding ids of their own, big numbers and tricky strings. */
const member = fc.tuple(
  fc.oneof(fc.constantFrom('jsonrpc', 'method', 'params', 'result', 'x', 'ids', 'i"d'), fc.string()).filter((k) => k !== 'id'),
  fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom({ id: 9007199254740993 }, [{ id: 1.5 }], '"id":1', '\\', { requestId: 1 }),
  ),
);

const space = fc.constantFrom('', ' ', '\n', '\t ', '\r\n');

/** The message text, with the id at `at` among the members, spaced with `ws`. */
function messageText(id: string, members: Array<[string, unknown]>, at: number, ws: string): string {
  const parts = members.map(([k, v]) => `${ws}${JSON.stringify(k)}${ws}:${ws}${JSON.stringify(v)}${ws}`);
  parts.splice(Math.min(at, parts.length), 0, `${ws}"id"${ws}:${ws}${id}${ws}`);
  return `${ws}{${parts.join(',')}}${ws}`;
}

describe('properties', () => {
  it('the parsed id is the written one, exactly, wherever it stands and whatever surrounds it', () => {
    fc.assert(
      fc.property(idToken, fc.uniqueArray(member, { selector: ([k]) => k, maxLength: 6 }), fc.nat(8), space, ({ token, value }, members, at, ws) => {
        const text = messageText(token, members, at, ws);
        expect(idTokens(text)).toMatchObject({ id: token });
        const parsed = parseJsonRpc(text, true) as Obj;
        expect(parsed.id).toBe(value);
        // Everything else is what JSON.parse makes of it.
        const plain = JSON.parse(text) as Obj;
        delete plain.id;
        const { id: _id, ...rest } = parsed;
        expect(rest).toEqual(plain);
      }),
      { numRuns: 500 },
    );
  });

  it('text → message → text keeps the id token byte-identical', () => {
    fc.assert(
      fc.property(idToken, fc.uniqueArray(member, { selector: ([k]) => k, maxLength: 6 }), fc.nat(8), ({ token }, members, at) => {
        const text = stringifyJsonRpc(parseJsonRpc(messageText(token, members, at, ''), true));
        expect(idTokens(text)).toMatchObject({ id: token });
        expect((parseJsonRpc(text) as Obj).id).toEqual((parseJsonRpc(messageText(token, members, at, '')) as Obj).id);
      }),
      { numRuns: 500 },
    );
  });

  it('a fractional or exponent id is refused wherever it stands', () => {
    const inexact = fc.oneof(
      fc.tuple(fc.integer(), fc.nat(99)).map(([i, f]) => `${i}.${f}`),
      fc.tuple(fc.integer({ min: -999, max: 999 }), fc.constantFrom('e', 'E', 'e+', 'e-'), fc.nat(40)).map(([i, e, x]) => `${i}${e}${x}`),
    );
    fc.assert(
      fc.property(inexact, fc.uniqueArray(member, { selector: ([k]) => k, maxLength: 5 }), fc.nat(6), space, (token, members, at, ws) => {
        expect(() => parseJsonRpc(messageText(token, members, at, ws), true)).toThrow(IdLiteralError);
      }),
      { numRuns: 300 },
    );
  });

  it('stringify of any JSON value without bigints is JSON.stringify', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(stringifyJsonRpc(v)).toBe(JSON.stringify(v));
      }),
      { numRuns: 300 },
    );
  });
});
