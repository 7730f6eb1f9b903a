import { describe, expect, it } from 'vitest';
import { clientCapabilitiesToModern, serverCapabilitiesToLegacy } from '../../bridges/shared/capabilities-to-modern.js';

describe('clientCapabilitiesToModern', () => {
  const cases: { name: string; version: string; legacy: unknown; modern: Record<string, unknown> }[] = [
    { name: 'no capabilities stay none', version: '2025-11-25', legacy: {}, modern: {} },
    { name: 'a non-object is no capabilities', version: '2025-11-25', legacy: null, modern: {} },
    { name: 'roots.listChanged is dropped (2026 has no roots signal)', version: '2025-06-18', legacy: { roots: { listChanged: true } }, modern: { roots: {} } },
    { name: 'sampling before 2025-11-25 is plain sampling', version: '2025-06-18', legacy: { sampling: { tools: {} } }, modern: { sampling: {} } },
    { name: 'sampling context and tools kept on 2025-11-25', version: '2025-11-25', legacy: { sampling: { context: {}, tools: {}, other: 1 } }, modern: { sampling: { context: {}, tools: {} } } },
    { name: '2025-06-18 elicitation {} is form', version: '2025-06-18', legacy: { elicitation: {} }, modern: { elicitation: {} } },
    { name: '2025-06-18 cannot declare url mode', version: '2025-06-18', legacy: { elicitation: { url: {} } }, modern: { elicitation: {} } },
    { name: '2025-11-25 form and url kept', version: '2025-11-25', legacy: { elicitation: { form: {}, url: {} } }, modern: { elicitation: { form: {}, url: {} } } },
    { name: '2025-11-25 url only stays url only', version: '2025-11-25', legacy: { elicitation: { url: {} } }, modern: { elicitation: { url: {} } } },
    { name: 'elicitation declared by a 2025-03-26 client is not served', version: '2025-03-26', legacy: { elicitation: {} }, modern: {} },
    { name: 'elicitation declared by a 2024-11-05 client is not served', version: '2024-11-05', legacy: { elicitation: {}, roots: {} }, modern: { roots: {} } },
    { name: 'tasks dropped, experimental kept', version: '2025-11-25', legacy: { tasks: { list: {} }, experimental: { x: {} } }, modern: { experimental: { x: {} } } },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(clientCapabilitiesToModern(c.legacy, c.version)).toEqual(c.modern);
    });
  }

  it('does not alias the input objects it keeps', () => {
    const legacy = { elicitation: { form: {} } };
    const modern = clientCapabilitiesToModern(legacy, '2025-11-25');
    expect(modern.elicitation).not.toBe(legacy.elicitation);
  });
});

describe('serverCapabilitiesToLegacy', () => {
  const cases: { name: string; modern: unknown; legacy: Record<string, unknown> }[] = [
    { name: 'extensions are dropped', modern: { tools: { listChanged: true }, extensions: { 'io.modelcontextprotocol/ui': {} } }, legacy: { tools: { listChanged: true } } },
    { name: 'tasks are dropped', modern: { tasks: {}, logging: {} }, legacy: { logging: {} } },
    {
      name: 'logging, completions, prompts, resources (subscribe, listChanged) and experimental pass',
      modern: { logging: {}, completions: {}, prompts: { listChanged: true }, resources: { subscribe: true, listChanged: true }, experimental: { a: {} } },
      legacy: { logging: {}, completions: {}, prompts: { listChanged: true }, resources: { subscribe: true, listChanged: true }, experimental: { a: {} } },
    },
    { name: 'a non-object is no capabilities', modern: undefined, legacy: {} },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(serverCapabilitiesToLegacy(c.modern)).toEqual(c.legacy);
    });
  }
});
