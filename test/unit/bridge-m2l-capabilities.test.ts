import { describe, expect, it } from 'vitest';
import { clientCapabilitiesToLegacy, declaresInputCapability, serverCapabilitiesToModern } from '../../bridges/shared/capabilities-to-legacy.js';

describe('clientCapabilitiesToLegacy (modern per-request caps → legacy initialize caps)', () => {
  const rows: Array<[string, unknown, string, Record<string, unknown>]> = [
    ['nothing declared', {}, '2025-11-25', {}],
    ['not an object', undefined, '2025-11-25', {}],
    ['roots gains listChanged false', { roots: {} }, '2025-11-25', { roots: { listChanged: false } }],
    ['sampling with context and tools on 2025-11-25', { sampling: { context: {}, tools: {} } }, '2025-11-25', { sampling: { context: {}, tools: {} } }],
    ['sampling loses context and tools before 2025-11-25', { sampling: { context: {}, tools: {} } }, '2025-06-18', { sampling: {} }],
    ['sampling on 2024-11-05', { sampling: {} }, '2024-11-05', { sampling: {} }],
    ['empty elicitation on 2025-11-25 stays empty (form)', { elicitation: {} }, '2025-11-25', { elicitation: {} }],
    ['form and url on 2025-11-25', { elicitation: { form: {}, url: {} } }, '2025-11-25', { elicitation: { form: {}, url: {} } }],
    ['url only on 2025-11-25', { elicitation: { url: {} } }, '2025-11-25', { elicitation: { url: {} } }],
    ['form and url on 2025-06-18 become form-only {}', { elicitation: { form: {}, url: {} } }, '2025-06-18', { elicitation: {} }],
    ['url only on 2025-06-18 is not declared', { elicitation: { url: {} } }, '2025-06-18', {}],
    ['elicitation before 2025-06-18 is not declared', { elicitation: {} }, '2025-03-26', {}],
    ['experimental passes through', { experimental: { x: { y: 1 } } }, '2024-11-05', { experimental: { x: { y: 1 } } }],
    ['extensions and tasks are dropped', { extensions: { 'io.modelcontextprotocol/tasks': {} }, tasks: {} }, '2025-11-25', {}],
    [
      'everything at once on 2025-11-25',
      { roots: {}, sampling: {}, elicitation: { form: {} }, experimental: {} },
      '2025-11-25',
      { roots: { listChanged: false }, sampling: {}, elicitation: { form: {} }, experimental: {} },
    ],
  ];
  it.each(rows)('%s', (_name, modern, version, legacy) => {
    expect(clientCapabilitiesToLegacy(modern, version)).toEqual(legacy);
  });
});

describe('serverCapabilitiesToModern (legacy InitializeResult caps → discover caps)', () => {
  it.each([
    ['drops tasks, keeps the rest', { tools: { listChanged: true }, tasks: { list: {} }, logging: {} }, { tools: { listChanged: true }, logging: {} }],
    ['keeps sub-flags and unknown keys', { resources: { subscribe: true, listChanged: true }, completions: {}, x: 1 }, { resources: { subscribe: true, listChanged: true }, completions: {}, x: 1 }],
    ['tolerates a missing object', undefined, {}],
  ])('%s', (_name, legacy, modern) => {
    expect(serverCapabilitiesToModern(legacy)).toEqual(modern);
  });
});

describe('declaresInputCapability (never embed what the request did not declare)', () => {
  const form = { method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'object', properties: {} } } };
  const formExplicit = { method: 'elicitation/create', params: { ...form.params, mode: 'form' } };
  const url = { method: 'elicitation/create', params: { mode: 'url', message: 'm', url: 'https://x', elicitationId: 'e' } };
  const sampling = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } };
  const samplingTools = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5, tools: [] } };
  const roots = { method: 'roots/list' };
  const rows: Array<[string, unknown, { method: string; params?: unknown }, boolean]> = [
    ['form elicitation with elicitation {}', { elicitation: {} }, form, true],
    ['form elicitation with elicitation.form', { elicitation: { form: {} } }, formExplicit, true],
    ['form elicitation with url only', { elicitation: { url: {} } }, form, false],
    ['url elicitation with url', { elicitation: { url: {} } }, url, true],
    ['url elicitation with elicitation {} (form only)', { elicitation: {} }, url, false],
    ['elicitation without the capability', {}, form, false],
    ['sampling with sampling', { sampling: {} }, sampling, true],
    ['sampling with tools without sampling.tools', { sampling: {} }, samplingTools, false],
    ['sampling with tools and sampling.tools', { sampling: { tools: {} } }, samplingTools, true],
    ['sampling without the capability', { roots: {} }, sampling, false],
    ['roots with roots', { roots: {} }, roots, true],
    ['roots without roots', { sampling: {} }, roots, false],
    ['an unknown server request', { roots: {}, sampling: {}, elicitation: {} }, { method: 'tasks/get' }, false],
  ];
  it.each(rows)('%s → %s', (_name, caps, req, expected) => {
    expect(declaresInputCapability(caps, req)).toBe(expected);
  });
});
