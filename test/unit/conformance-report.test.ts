import { describe, expect, it } from 'vitest';
import { readmeTable } from '../conformance/runner/readme-table.mjs';
import { counts, unexplainedText, verdictText } from '../conformance/runner/report.mjs';

const row = (scenario: string, verdict: string, ok = true, extra: Record<string, unknown> = {}) => ({ scenario, verdict, ok, problems: [], stale: [], ...extra });

describe('conformance report: each verdict reads distinctly', () => {
  it.each([
    [row('s', 'pass'), 'pass'],
    [row('s', 'pass', false, { stale: ['fail:x'] }), 'pass (**stale baseline line**)'],
    [row('s', 'warning'), 'warning'],
    [row('s', 'warning', false, { unexplained: ['warning:w'] }), '**warning** (unexplained)'],
    [row('s', 'not-scored'), 'not scored'],
    [row('s', 'not-scored', false, { unexplained: ['not-scored'] }), '**not scored** (unexplained)'],
    [row('s', 'expected-fail'), 'expected fail'],
    [row('s', 'expected-fail', false, { unexplained: ['warning:w'] }), '**expected fail** (unexplained)'],
    [row('s', 'expected-fail', false, { stale: ['fail:y'] }), 'expected fail (**stale baseline line**)'],
    [row('s', 'fail', false), '**FAIL**'],
    [row('s', 'not-run'), 'not run'],
    [row('s', 'missing', false), '**MISSING**'],
  ])('%j', (r, text) => expect(verdictText(r)).toBe(text));

  it('says what is unexplained', () => {
    const r = row('s', 'warning', false, { problems: [{ key: 'warning:w', message: 'missed' }, { key: 'fail:b', message: 'x', reason: 'known' }], stale: ['timeout'] });
    expect(unexplainedText(r)).toBe('warning:w: missed; baseline line "timeout" excuses nothing here: remove it');
    expect(unexplainedText(row('s', 'missing', false))).toMatch(/neither run nor listed as skip/);
  });

  it('counts rows per verdict and the unexplained ones', () => {
    const c = counts([row('a', 'pass'), row('b', 'warning'), row('c', 'warning', false), row('d', 'fail', false), row('e', 'not-run')]);
    expect(c).toMatchObject({ pass: 1, warning: 2, fail: 1, 'not-run': 1, 'not-scored': 0, unexplained: 2 });
  });

  it('the README table has one column per bridged run and leaves out the direct runs', () => {
    const runs = [
      { id: 'x-direct', direction: 'd', transport: 't', spec: '2025-11-25', rows: [row('a', 'pass')], errors: [] },
      { id: 'l2m', direction: 'legacy → modern', transport: 'stdio', spec: '2025-11-25', rows: [row('a', 'pass'), row('b', 'not-scored'), row('c', 'not-run')], errors: [] },
      { id: 'm2l', direction: 'modern → legacy', transport: 'http', spec: '2026-07-28', rows: [row('a', 'warning', false, { unexplained: ['warning:w'] }), row('d', 'expected-fail')], errors: ['boom'] },
    ];
    expect(readmeTable(runs)).toEqual([
      '| run | direction | transport | spec | pass | warning | not scored | expected fail | not run | unexplained |',
      '|---|---|---|---|---|---|---|---|---|---|',
      '| l2m | legacy → modern | stdio | 2025-11-25 | 1 | 0 | 1 | 0 | 1 | 0 |',
      '| m2l | modern → legacy | http | 2026-07-28 | 0 | 1 | 0 | 1 | 0 | **2** |',
      '',
      '| scenario | l2m (stdio) | m2l (http) |',
      '|---|---|---|',
      '| a | pass | **warning** (unexplained) |',
      '| b | not scored |  |',
      '| d |  | expected fail |',
    ]);
  });
});
