import { describe, expect, it } from 'vitest';
import { parseBaseline, excusesFor } from '../conformance/runner/baseline.mjs';
import { cliProblem, clientOutcome } from '../conformance/runner/suite.mjs';
import { judge, problemsOf } from '../conformance/runner/verdict.mjs';

type Check = { id: string; status: string; description?: string; errorMessage?: string };
const ok = (id: string): Check => ({ id, status: 'SUCCESS' });
const info = (id: string): Check => ({ id, status: 'INFO' });
const failure = (id: string): Check => ({ id, status: 'FAILURE', errorMessage: `${id} broke` });
const warning = (id: string): Check => ({ id, status: 'WARNING', errorMessage: `${id} missed a SHOULD` });
const result = (checks: Check[], extra: Record<string, unknown> = {}) => ({ scenario: 's', checks, ...extra });
const excuses = (text: string) => excusesFor(parseBaseline(text), 's');

describe('conformance verdict: problems the suite would fail a scenario on', () => {
  it.each([
    ['only SUCCESS', result([ok('a'), info('b')]), []],
    ['a FAILURE check', result([ok('a'), failure('b')]), ['fail:b']],
    ['two FAILURE checks', result([failure('a'), failure('b')]), ['fail:a', 'fail:b']],
    ['the same check failing twice is one problem', result([failure('a'), failure('a')]), ['fail:a']],
    ['a WARNING check', result([ok('a'), warning('w')]), ['warning:w']],
    ['only INFO checks: nothing scored', result([info('x'), info('y')]), ['not-scored']],
    ['no checks at all', result([]), ['not-scored']],
    ['INFO plus the generic wire-schema check', result([info('x'), ok('wire-schema-valid')]), ['not-scored']],
    ['a FAILURE of the generic wire-schema check', result([ok('a'), failure('wire-schema-valid')]), ['fail:wire-schema-valid']],
    ['a WARNING alone is judged, not "not scored"', result([info('x'), warning('w')]), ['warning:w']],
    ['SKIPPED checks score nothing', result([{ id: 'k', status: 'SKIPPED' }]), ['not-scored']],
    ['the suite timing the scenario out', result([info('x'), failure('scenario-timeout')]), ['timeout']],
    ['the suite failing to run the scenario', result([{ id: 's', status: 'FAILURE', description: 'Failed to run scenario', errorMessage: 'boom' }]), ['crash']],
    ['a check that happens to share the scenario name is a plain failure', result([{ id: 's', status: 'FAILURE', description: 'something else' }]), ['fail:s']],
    ['no result saved', result([], { crash: 'no result' }), ['crash']],
    ['client exited 0', result([ok('a')], { client: { exitCode: 0, timedOut: false } }), []],
    ['client exited 1', result([ok('a')], { client: { exitCode: 1, timedOut: false } }), ['client-error']],
    ['client exited 1 where client errors are allowed', result([ok('a')], { client: { exitCode: 1, timedOut: false }, allowsClientError: true }), []],
    ['client timed out (even where client errors are allowed)', result([ok('a')], { client: { exitCode: 0, timedOut: true }, allowsClientError: true }), ['timeout']],
    ['client error with only INFO checks is not also "not scored"', result([info('x')], { client: { exitCode: 1, timedOut: false } }), ['client-error']],
    ['the CLI disagreeing with its checks', result([ok('a')], { harness: ['exit 1'] }), ['harness']],
  ])('%s', (_name, r, keys) => {
    expect(problemsOf(r).map((p: { key: string }) => p.key)).toEqual(keys);
  });
});

describe('conformance verdict: judged against the baseline', () => {
  it.each([
    ['pass', result([ok('a')]), '', 'pass', true, [], []],
    ['an unexcused failure', result([ok('a'), failure('b')]), '', 'fail', false, ['fail:b'], []],
    ['an excused failure', result([ok('a'), failure('b')]), 's fail:b known', 'expected-fail', true, [], []],
    ['one excused failure does not cover a second one', result([failure('a'), failure('b')]), 's fail:a known', 'fail', false, ['fail:b'], []],
    ['a check excuse does not cover a timeout', result([failure('b'), failure('scenario-timeout')]), 's fail:b known', 'fail', false, ['timeout'], []],
    ['a check excuse does not cover a crash', result([], { crash: 'x' }), 's fail:b known', 'fail', false, ['crash'], ['fail:b']],
    ['a check excuse does not cover a client error', result([failure('b')], { client: { exitCode: 1, timedOut: false } }), 's fail:b known', 'fail', false, ['client-error'], []],
    ['an explicit client-error excuse does', result([failure('b')], { client: { exitCode: 1, timedOut: false } }), 's fail:b known\ns client-error known too', 'expected-fail', true, [], []],
    ['an explicit timeout excuse', result([failure('scenario-timeout')]), 's timeout slow', 'expected-fail', true, [], []],
    ['an explicit crash excuse', result([], { crash: 'x' }), 's crash broken', 'expected-fail', true, [], []],
    ['harness problems are never excused', result([ok('a')], { harness: ['exit 1'] }), '', 'fail', false, ['harness'], []],
    ['an unexcused warning', result([ok('a'), warning('w')]), '', 'warning', false, ['warning:w'], []],
    ['an excused warning', result([ok('a'), warning('w')]), 's warning:w a SHOULD', 'warning', true, [], []],
    ['a fail excuse does not cover a warning of that check', result([ok('a'), warning('w')]), 's fail:w x', 'warning', false, ['warning:w'], ['fail:w']],
    ['an unexcused not-scored', result([info('a')]), '', 'not-scored', false, ['not-scored'], []],
    ['an excused not-scored', result([info('a')]), 's not-scored gap', 'not-scored', true, [], []],
    ['an excused failure next to an unexcused warning', result([failure('b'), warning('w')]), 's fail:b known', 'expected-fail', false, ['warning:w'], []],
    ['a stale excuse on a passing scenario', result([ok('a')]), 's fail:b fixed now', 'pass', false, [], ['fail:b']],
    ['a stale not-scored once it scores', result([ok('a')]), 's not-scored gap', 'pass', false, [], ['not-scored']],
    ['an intermittent excuse that did not happen', result([ok('a')]), 's fail:b? load', 'pass', true, [], []],
    ['an intermittent excuse that happened', result([failure('b')]), 's fail:b? load', 'expected-fail', true, [], []],
    ['a skip line for a scenario that ran is stale', result([ok('a')]), 's skip not wanted', 'pass', false, [], ['skip']],
  ])('%s', (_name, r, baseline, verdict, okFlag, unexplained, stale) => {
    const j = judge(r, excuses(baseline));
    expect({ verdict: j.verdict, ok: j.ok, unexplained: j.unexplained, stale: j.stale }).toEqual({ verdict, ok: okFlag, unexplained, stale });
  });

  it('carries the reason of the line that excuses each problem', () => {
    const j = judge(result([failure('b'), warning('w')]), excuses('s fail:b known limit\ns warning:w a SHOULD'));
    expect(j.problems.map((p: { key: string; reason?: string }) => [p.key, p.reason])).toEqual([
      ['fail:b', 'known limit'],
      ['warning:w', 'a SHOULD'],
    ]);
  });
});

describe('conformance suite CLI: how it ended', () => {
  it.each([
    ['a clean exit', 'Passed: 3/3', { exitCode: 0, timedOut: false, flagged: false }],
    ['a client error', '\nClient exited with code 1\n⚠️  CLIENT EXITED WITH ERROR (code 1)', { exitCode: 1, timedOut: false, flagged: true }],
    ['an allowed client error', '\nClient exited with code 1\n✅ OVERALL: PASSED', { exitCode: 1, timedOut: false, flagged: false }],
    ['a timeout', '\nClient timed out after 20000ms\n⚠️  CLIENT TIMED OUT - Test incomplete', { exitCode: 0, timedOut: true, flagged: false }],
  ])('client outcome: %s', (_name, stderr, expected) => expect(clientOutcome(stderr)).toEqual(expected));

  const run = (over: Record<string, unknown>) => ({ code: 0, signal: null, killed: false, stderr: '', stdout: '', ...over });
  it.each([
    ['exit 0 as expected', run({}), 0, undefined],
    ['exit 1 as expected', run({ code: 1 }), 1, undefined],
    ['exit 1 where the checks say 0', run({ code: 1, stderr: 'Error: boom' }), 0, /exited 1 where its saved checks imply 0: Error: boom/],
    ['exit 0 where the checks say 1', run({ code: 0 }), 1, /exited 0 where its saved checks imply 1/],
    ['killed at the runner timeout', run({ code: null, signal: 'SIGKILL', killed: true }), 0, /did not finish within 1000 ms and was killed/],
    ['ended by a signal', run({ code: null, signal: 'SIGSEGV' }), 0, /ended by SIGSEGV/],
  ])('CLI exit: %s', (_name, r, expected, message) => {
    const problem = cliProblem(r, expected, 1000);
    if (message === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(message);
  });
});
