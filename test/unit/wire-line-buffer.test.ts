import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineBuffer, LineTooLongError } from '../../src/wire/line-buffer.js';

/** Splits `bytes` at the given cut points (sorted, deduplicated). */
function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  out.push(bytes.subarray(prev));
  return out;
}

describe('LineBuffer', () => {
  const cases: { name: string; chunks: (string | Buffer)[]; lines: string[]; rest?: string }[] = [
    { name: 'splits on LF', chunks: ['{"a":1}\n{"b":2}\n'], lines: ['{"a":1}', '{"b":2}'] },
    { name: 'strips CR of CRLF', chunks: ['{"a":1}\r\n'], lines: ['{"a":1}'] },
    { name: 'skips blank and whitespace-only lines', chunks: ['\n\r\n  \n{"a":1}\n'], lines: ['{"a":1}'] },
    { name: 'joins a line split across chunks', chunks: ['{"a":', '1}\n'], lines: ['{"a":1}'] },
    { name: 'keeps a partial line for flush', chunks: ['{"a":1}\n{"b"'], lines: ['{"a":1}'], rest: '{"b"' },
    { name: 'decodes a UTF-8 sequence split across chunks', chunks: [Buffer.from([0x22, 0xe4, 0xb8]), Buffer.from([0x96, 0x22, 0x0a])], lines: ['"世"'] },
  ];
  it.each(cases)('$name', ({ chunks, lines, rest }) => {
    const lb = new LineBuffer();
    expect(chunks.flatMap((c) => lb.push(c))).toEqual(lines);
    expect(lb.flush()).toBe(rest);
    expect(lb.flush()).toBeUndefined();
  });

  it('throws LineTooLongError past maxLineBytes and then starts afresh', () => {
    const lb = new LineBuffer({ maxLineBytes: 8 });
    expect(() => lb.push('123456789')).toThrow(LineTooLongError);
    expect(lb.push('ok\n')).toEqual(['ok']);
  });

  it('reports the lines completed before an oversized one', () => {
    const lb = new LineBuffer({ maxLineBytes: 4 });
    let err: unknown;
    try {
      lb.push('ab\ncdefgh\n');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LineTooLongError);
    expect((err as LineTooLongError).completed).toEqual(['ab']);
  });

  it('gives the same lines whatever the chunking (property)', () => {
    const line = fc.string({ unit: 'binary' }).map((s) => s.replace(/[\r\n]/g, ''));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 10 }), fc.boolean(), (lines, cuts, crlf) => {
        const input = Buffer.from(lines.map((l) => l + (crlf ? '\r\n' : '\n')).join(''), 'utf8');
        const whole = new LineBuffer().push(input);
        const lb = new LineBuffer();
        const pieces = chunked(input, cuts).flatMap((c) => lb.push(c));
        expect(pieces).toEqual(whole);
        expect(whole).toEqual(lines.filter((l) => l.trim() !== ''));
        expect(lb.flush()).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });
});
