import { describe, expect, it } from 'vitest';
import { parseBaseline } from '../conformance/runner/baseline.mjs';
import { completeness } from '../conformance/runner/completeness.mjs';
import { parseRequirements, scenariosOf } from '../conformance/runner/requirements.mjs';

// The shape of the suite's requirements/<revision>.yaml, comments and all.
const YAML = `# Conformance requirements for a revision.
#
# server and client list what conformance requires.

server:
  - server-initialize
  - tools-list # trailing comment

client:
  - initialize
  - auth/metadata-default

not_scored:
  - scenario: auth/dpop
    leg: client
    reason: extension
  - scenario: server-sse-polling
    leg: server
    reason: pending
    note: >-
      on hold pending server-side SSE improvements
  - scenario: tasks-lifecycle
    leg: server
    reason: extension
`;

describe('conformance requirements: reading a requirement set', () => {
  const req = parseRequirements(YAML);

  it('reads both legs and the not-scored entries', () => {
    expect([...req.server]).toEqual(['server-initialize', 'tools-list']);
    expect([...req.client]).toEqual(['initialize', 'auth/metadata-default']);
    expect([...req.notScored]).toEqual([
      ['auth/dpop', { leg: 'client', reason: 'extension' }],
      ['server-sse-polling', { leg: 'server', reason: 'pending' }],
      ['tasks-lifecycle', { leg: 'server', reason: 'extension' }],
    ]);
  });

  it.each([
    ['server', ['server-initialize:required', 'tools-list:required', 'server-sse-polling:not_scored: pending', 'tasks-lifecycle:not_scored: extension']],
    ['client', ['initialize:required', 'auth/metadata-default:required', 'auth/dpop:not_scored: extension']],
  ])('lists every %s scenario, scored first', (leg, expected) => {
    expect(scenariosOf(req, leg).map((e: { scenario: string; requirement: string }) => `${e.scenario}:${e.requirement}`)).toEqual(expected);
  });

  it.each([
    ['a list item that is not a scenario name', 'server:\n  - scenario: x\n', /requirements:2: expected "- <scenario>" under server:/],
    ['a not-scored entry without a leg', 'not_scored:\n  - scenario: x\n    reason: pending\n', /not_scored x has no leg/],
  ])('rejects %s', (_name, text, message) => expect(() => parseRequirements(text)).toThrow(message));
});

describe('conformance completeness: every required scenario is run or skipped', () => {
  const required = ['a', 'b', 'c', 'auth/x'];
  it.each([
    ['all ran', ['a', 'b', 'c', 'auth/x'], '', [], []],
    ['one skipped with a reason', ['a', 'b', 'c'], 'auth/x skip no OAuth client', [], []],
    ['one neither run nor skipped', ['a', 'b'], 'auth/x skip no OAuth client', ['c'], []],
    ['a check excuse does not make a scenario that did not run complete', ['a', 'b', 'auth/x'], 'c fail:k known', ['c'], []],
    ['nothing ran', [], '', ['a', 'b', 'c', 'auth/x'], []],
    ['an extra scenario that ran is fine', ['a', 'b', 'c', 'auth/x', 'later-added'], 'later-added warning:w known', [], []],
    ['a baseline line about an unknown scenario', ['a', 'b', 'c', 'auth/x'], 'typo-scenario skip x', [], ['typo-scenario']],
  ])('%s', (_name, ran, baseline, missing, unknown) => {
    const out = completeness({ required, ran, entries: parseBaseline(baseline) });
    expect({ missing: out.missing, unknown: out.unknown.map((e: { scenario: string }) => e.scenario) }).toEqual({ missing, unknown });
  });
});
