import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineTooLongError } from '../../src/wire/line-buffer.js';
import { SseParser, type SseEvent } from '../../src/wire/sse-parser.js';
import { SSE_HEARTBEAT, SSE_RESPONSE_HEADERS, sseEvent, sseMessage } from '../../src/wire/sse-writer.js';

function parse(chunks: (string | Uint8Array)[], end = true): SseEvent[] {
  const events: SseEvent[] = [];
  const p = new SseParser((e) => events.push(e));
  for (const c of chunks) p.push(c);
  if (end) p.end();
  return events;
}

describe('SseParser', () => {
  const cases: { name: string; chunks: (string | Uint8Array)[]; events: SseEvent[] }[] = [
    { name: 'defaults the event type to message', chunks: ['data: {"a":1}\n\n'], events: [{ event: 'message', data: '{"a":1}' }] },
    { name: 'reads a named event (2024 endpoint event)', chunks: ['event: endpoint\ndata: /messages?sessionId=x\n\n'], events: [{ event: 'endpoint', data: '/messages?sessionId=x' }] },
    { name: 'joins multi-line data with LF', chunks: ['data: a\ndata: b\n\n'], events: [{ event: 'message', data: 'a\nb' }] },
    { name: 'accepts CRLF line ends', chunks: ['data: x\r\n\r\n'], events: [{ event: 'message', data: 'x' }] },
    { name: 'accepts bare CR line ends', chunks: ['data: x\r\r'], events: [{ event: 'message', data: 'x' }] },
    { name: 'treats CR then LF split across chunks as one line break', chunks: ['data: x\r', '\ndata: y\r', '\n\r', '\n'], events: [{ event: 'message', data: 'x\ny' }] },
    { name: 'ignores comments (heartbeats)', chunks: [': keepalive\n\n:\r\ndata: x\n\n'], events: [{ event: 'message', data: 'x' }] },
    { name: 'does not dispatch an event without data', chunks: ['event: foo\n\ndata: x\n\n'], events: [{ event: 'message', data: 'x' }] },
    { name: 'dispatches an empty data line as an empty string', chunks: ['data\n\n'], events: [{ event: 'message', data: '' }] },
    { name: 'strips one leading space only', chunks: ['data:  two\n\n'], events: [{ event: 'message', data: ' two' }] },
    { name: 'strips a leading BOM', chunks: ['\ufeffdata: x\n\n'], events: [{ event: 'message', data: 'x' }] },
    { name: 'keeps the last event id and reads retry', chunks: ['id: 7\nretry: 150\ndata: a\n\ndata: b\n\n'], events: [{ event: 'message', data: 'a', id: '7', retry: 150 }, { event: 'message', data: 'b', id: '7' }] },
    { name: 'ignores a non-numeric retry and unknown fields', chunks: ['retry: 1s\nfoo: bar\ndata: a\n\n'], events: [{ event: 'message', data: 'a' }] },
    { name: 'decodes UTF-8 split inside a sequence', chunks: [new Uint8Array([0x64, 0x61, 0x74, 0x61, 0x3a, 0xe4, 0xb8]), new Uint8Array([0x96, 0x0a, 0x0a])], events: [{ event: 'message', data: '世' }] },
    { name: 'strips a leading BOM sent as bytes, split from the rest', chunks: [new Uint8Array([0xef, 0xbb]), new Uint8Array([0xbf, 0x64, 0x61, 0x74, 0x61, 0x3a, 0x78, 0x0a, 0x0a])], events: [{ event: 'message', data: 'x' }] },
    { name: 'keeps a second BOM (only one leading BOM is ignored)', chunks: [new Uint8Array([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x64, 0x61, 0x74, 0x61, 0x3a, 0x78, 0x0a, 0x0a])], events: [] },
    { name: 'replaces invalid UTF-8 with U+FFFD, as a TextDecoder does', chunks: [new Uint8Array([0x64, 0x61, 0x74, 0x61, 0x3a, 0xff, 0xc3]), new Uint8Array([0x0a, 0x0a])], events: [{ event: 'message', data: new TextDecoder().decode(new Uint8Array([0xff, 0xc3])) }] },
    { name: 'carries a line across many chunks without a break', chunks: ['da', new Uint8Array([0x74]), new Uint8Array([0x61, 0x3a]), new Uint8Array([0x20, 0x7a]), new Uint8Array([0x0a]), '\n'], events: [{ event: 'message', data: 'z' }] },
    { name: 'discards an unterminated event at end', chunks: ['data: a\n\ndata: b\n'], events: [{ event: 'message', data: 'a' }] },
  ];
  it.each(cases)('$name', ({ chunks, events }) => {
    expect(parse(chunks)).toEqual(events);
  });

  it('throws LineTooLongError past maxLineBytes', () => {
    const p = new SseParser(() => {}, { maxLineBytes: 10 });
    expect(() => p.push('data: 0123456789')).toThrow(LineTooLongError);
  });

  it('throws LineTooLongError when a line grows past the limit over byte chunks with no break, then parses on', () => {
    const events: SseEvent[] = [];
    const p = new SseParser((e) => events.push(e), { maxLineBytes: 10 });
    p.push(new TextEncoder().encode('data: 0123'));
    expect(() => p.push(new TextEncoder().encode('456789'))).toThrow(LineTooLongError);
    p.push(new TextEncoder().encode('\ndata: ok\n\n'));
    expect(events).toEqual([{ event: 'message', data: 'ok' }]);
  });

  it('gives the same events whatever the chunking (property)', () => {
    const text = fc.string({ unit: 'binary' });
    const block = fc.record({ event: fc.option(fc.stringMatching(/^[a-z]{1,8}$/), { nil: undefined }), data: text });
    fc.assert(
      fc.property(fc.array(block, { maxLength: 5 }), fc.array(fc.nat(), { maxLength: 12 }), fc.constantFrom('\n', '\r\n', '\r'), (blocks, cuts, eol) => {
        const input = blocks.map((b) => sseEvent(b.event ?? 'message', b.data).replace(/\n/g, eol)).join(`:hb${eol}`);
        const bytes = new TextEncoder().encode(input);
        const whole = parse([bytes]);
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let prev = 0;
        for (const p of points) {
          chunks.push(bytes.subarray(prev, p));
          prev = p;
        }
        chunks.push(bytes.subarray(prev));
        expect(parse(chunks)).toEqual(whole);
        expect(whole).toEqual(blocks.map((b) => ({ event: b.event ?? 'message', data: b.data.replace(/\r\n|\r/g, '\n') })));
      }),
      { numRuns: 200 },
    );
  });
});

describe('sse-writer', () => {
  it('frames a JSON-RPC message as event: message', () => {
    expect(sseMessage({ jsonrpc: '2.0', id: 1, result: {} })).toBe('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
  });
  it('writes an id line after the event line', () => {
    expect(sseMessage(1, 'message', '9')).toBe('event: message\nid: 9\ndata: 1\n\n');
  });
  it('splits multi-line data into several data lines', () => {
    expect(sseEvent('endpoint', 'a\r\nb\nc')).toBe('event: endpoint\ndata: a\ndata: b\ndata: c\n\n');
  });
  it('refuses an event name with a line break', () => {
    expect(() => sseEvent('a\nb', 'x')).toThrow(TypeError);
  });
  it('has the SDK response headers and heartbeat', () => {
    expect(SSE_RESPONSE_HEADERS).toEqual({
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    expect(SSE_HEARTBEAT).toBe(': keepalive\n\n');
    expect(parse([SSE_HEARTBEAT])).toEqual([]);
  });
});
