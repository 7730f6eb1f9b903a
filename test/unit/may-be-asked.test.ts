import { describe, expect, it } from 'vitest';
import { mayBeAsked } from '../../bridges/shared/may-be-asked.js';

describe('mayBeAsked: can a server ask this client something during a call', () => {
  it.each([
    ['no capabilities object', undefined, false],
    ['an empty capabilities object', {}, false],
    ['only absent members', { roots: undefined, sampling: null }, false],
    ['roots', { roots: { listChanged: true } }, true],
    ['sampling', { sampling: {} }, true],
    ['elicitation', { elicitation: { form: {} } }, true],
    ['an experimental capability it cannot judge', { experimental: { 'x-thing': {} } }, true],
    ['a capability it does not know', { somethingNew: {} }, true],
  ])('%s → %s', (_name, capabilities, expected) => {
    expect(mayBeAsked(capabilities as Record<string, unknown> | undefined)).toBe(expected);
  });
});
