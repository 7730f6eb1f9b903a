import { describe, expect, it } from 'vitest';
import { stringifyJsonRpc } from '../../src/jsonrpc/id-codec.js';
import { inboundText, keepVerbatim, requestText, verbatimText, withInboundText, withVerbatim } from '../../src/jsonrpc/verbatim.js';
import { responseFor, type RpcOutcome } from '../../src/jsonrpc/messages.js';

/**
 * The verbatim bytes of a parsed message ride on the parse itself (issue 17:
 * no WeakMap). Only that very object carries them: no copy of it does, so a
 * relay that changed anything serializes its change instead of stale bytes.
 */
describe('verbatim bytes', () => {
  const text = '{"jsonrpc":"2.0","id":7,"result":{"content":[],"x-unknown":1}}';
  const parsed = (): RpcOutcome => withVerbatim({ result: { content: [], 'x-unknown': 1 } } as RpcOutcome, text, 7);

  it('an outcome marked with its text gives it back, and so does the response built from it under the same id', () => {
    const outcome = parsed();
    expect(verbatimText(outcome)).toBe(text);
    expect(verbatimText(keepVerbatim(outcome, responseFor(7, outcome)))).toBe(text);
  });

  it('a response under another id does not get the bytes (they carry the upstream id)', () => {
    const outcome = parsed();
    expect(verbatimText(keepVerbatim(outcome, responseFor(8, outcome)))).toBeUndefined();
  });

  it('no copy carries the bytes: spread, Object.assign, structuredClone, a JSON round trip', () => {
    const outcome = parsed();
    expect(verbatimText({ ...outcome })).toBeUndefined();
    expect(verbatimText(Object.assign({}, outcome))).toBeUndefined();
    expect(verbatimText(structuredClone(outcome))).toBeUndefined();
    expect(verbatimText(JSON.parse(JSON.stringify(outcome)) as object)).toBeUndefined();
  });

  it('the marker is invisible to serialization and to key iteration', () => {
    const body = withInboundText({ jsonrpc: '2.0', id: 1, method: 'ping' }, '{"jsonrpc":"2.0","id":1,"method":"ping"}');
    expect(Object.keys(body)).toEqual(['jsonrpc', 'id', 'method']);
    expect(stringifyJsonRpc(body)).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}');
    expect(JSON.stringify(body)).not.toContain('mcp-bridge');
  });

  it("a client body's text is its request text only while it holds nothing but the four request members", () => {
    const wire = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}';
    const body = withInboundText({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo' } } as Record<string, unknown>, wire);
    expect(requestText(body)).toBe(wire);
    expect(inboundText(body)).toBe(wire);
    body.extra = true;
    expect(requestText(body)).toBeUndefined();
    expect(inboundText(body)).toBe(wire);
  });

  it('a non-object body is returned as it is, with no text', () => {
    expect(withInboundText(3, '3')).toBe(3);
    expect(withInboundText(null, 'null')).toBeNull();
  });
});
