import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.js';
import { errorCodeReason, failureReason, withReason } from '../../src/links/oauth/oauth-observer.js';

describe('failureReason: a bounded label for a failed OAuth flow', () => {
  const oauthError = (code: string) => Object.assign(new Error(`OAuth ${code}`), { code });
  const cases: Array<[string, unknown, string]> = [
    ['a mark set where the error was thrown', withReason(new BridgeError('BRIDGE_ERR_AUTH', 'no callback'), 'callback_timeout'), 'callback_timeout'],
    ['an OAuth error code (the SDK OAuthError carries it in code)', oauthError('invalid_client'), 'invalid_client'],
    ['a code outside RFC 6749/7591/6750', oauthError('made_up_by_a_server'), 'other'],
    ['a connection failure (fetch rejects with a TypeError)', new TypeError('fetch failed'), 'network'],
    ['the bridge error wrapping an OAuth error, through its cause', new BridgeError('BRIDGE_ERR_AUTH', 'OAuth failed', { cause: oauthError('invalid_scope') }), 'invalid_scope'],
    ['a bridge error without cause', new BridgeError('BRIDGE_ERR_AUTH', 'the authorization did not complete'), 'other'],
    ['not an object', 'boom', 'other'],
  ];
  it.each(cases)('%s', (_name, err, reason) => {
    expect(failureReason(err)).toBe(reason);
  });

  it('the error parameter of a callback is kept only when it is a known code', () => {
    expect(errorCodeReason('access_denied')).toBe('access_denied');
    expect(errorCodeReason('<script>')).toBe('other');
  });
});
