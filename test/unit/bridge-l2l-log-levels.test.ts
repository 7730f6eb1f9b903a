import { describe, expect, it } from 'vitest';
import { admitsLevel, isMcpLogLevel, upstreamLevelFor, type McpLogLevel } from '../../bridges/legacy-to-legacy/log-levels.js';

describe('admitsLevel: a session level admits messages at or above it (digest §1.9 order)', () => {
  const cases: Array<[McpLogLevel | undefined, unknown, boolean]> = [
    [undefined, 'debug', true],
    [undefined, 'emergency', true],
    ['debug', 'debug', true],
    ['debug', 'info', true],
    ['info', 'debug', false],
    ['notice', 'info', false],
    ['notice', 'notice', true],
    ['warning', 'notice', false],
    ['warning', 'error', true],
    ['error', 'warning', false],
    ['critical', 'error', false],
    ['critical', 'alert', true],
    ['alert', 'critical', false],
    ['emergency', 'alert', false],
    ['emergency', 'emergency', true],
    ['error', 'verbose', true],
    ['error', undefined, true],
  ];
  it.each(cases)('session %s, message %s → %s', (session, message, expected) => {
    expect(admitsLevel(session, message)).toBe(expected);
  });
});

describe('upstreamLevelFor: the most verbose level in use on a key', () => {
  const cases: Array<[string, Array<McpLogLevel | undefined>, McpLogLevel | undefined]> = [
    ['no sessions', [], undefined],
    ['nobody set a level', [undefined, undefined], undefined],
    ['one session', ['warning'], 'warning'],
    ['the most verbose wins', ['error', 'info', 'critical'], 'info'],
    ['a session without a level hears everything', ['error', undefined], 'debug'],
    ['equal levels', ['notice', 'notice'], 'notice'],
    ['emergency only', ['emergency'], 'emergency'],
  ];
  it.each(cases)('%s', (_name, levels, expected) => {
    expect(upstreamLevelFor(levels)).toBe(expected);
  });
});

describe('isMcpLogLevel', () => {
  it.each([
    ['debug', true],
    ['warning', true],
    ['warn', false],
    ['', false],
    [3, false],
    [undefined, false],
  ])('%s → %s', (v, expected) => {
    expect(isMcpLogLevel(v)).toBe(expected);
  });
});
