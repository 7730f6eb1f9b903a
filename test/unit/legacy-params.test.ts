import { describe, expect, it } from 'vitest';
import { legacyParamsProblem } from '../../src/faces/legacy-params.js';
import { paramsPath } from '../../src/faces/params-shape.js';

/** [method, params, expected field or undefined when the params fit] */
const rows: Array<[string, unknown, string | undefined]> = [
  ['tools/call', { name: 't', arguments: { a: 1 } }, undefined],
  ['tools/call', { name: 't', arguments: 'x' }, 'params.arguments'],
  ['tools/call', undefined, 'params.name'],
  ['tools/call', { name: null }, 'params.name'],
  ['prompts/get', { name: 'p', arguments: { a: 'b' } }, undefined],
  ['prompts/get', { name: 'p', arguments: { a: false } }, 'params.arguments.a'],
  ['resources/read', { uri: 'a://b' }, undefined],
  ['resources/read', { uri: 1 }, 'params.uri'],
  ['resources/subscribe', {}, 'params.uri'],
  ['resources/unsubscribe', { uri: {} }, 'params.uri'],
  ['logging/setLevel', { level: 'debug' }, undefined],
  ['logging/setLevel', { level: 3 }, 'params.level'],
  ['tools/list', undefined, undefined],
  ['tools/list', { cursor: 1 }, 'params.cursor'],
  ['completion/complete', { ref: { type: 'ref/resource', uri: 'r://x' }, argument: { name: 'a', value: 'b' } }, undefined],
  ['completion/complete', { ref: { type: 'ref/resource' }, argument: { name: 'a', value: 'b' } }, 'params.ref.uri'],
  ['ping', undefined, undefined],
  ['vendor/anything', 'whatever', undefined],
  // a 2025-11-25 task-augmented call carries `task`: extra keys are not looked at
  ['tools/call', { name: 't', arguments: {}, task: { ttl: 1000 } }, undefined],
];

describe('legacyParamsProblem (2025-11-25 and earlier params shapes)', () => {
  it.each(rows)('%s %j → %s', (method, params, field) => {
    const found = legacyParamsProblem(method, params);
    expect(found && paramsPath(found)).toBe(field);
  });
});
