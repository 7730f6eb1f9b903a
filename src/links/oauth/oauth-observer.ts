/**
 * What the OAuth client reports to whoever counts it (src/ops turns it into
 * metrics); this folder knows nothing of prom-client. Every value is from a
 * fixed set, so a label built from it stays bounded.
 */

/** How one refresh_token grant at the token endpoint ended (RFC 6749 §6). */
export type RefreshOutcome =
  /** New tokens. */
  | 'ok'
  /** The authorization server answered an error (the refresh token was revoked, expired or reused). */
  | 'rejected'
  /** No answer: the connection failed. */
  | 'error';

export const REFRESH_OUTCOMES: readonly RefreshOutcome[] = ['ok', 'rejected', 'error'];

/**
 * The OAuth error codes a failure is named by (RFC 6749 §4.1.2.1 and §5.2,
 * RFC 7591 §3.2.2, RFC 6750 §3.1); any other code counts as `other`.
 */
const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'unsupported_response_type',
  'invalid_scope',
  'access_denied',
  'server_error',
  'temporarily_unavailable',
  'invalid_client_metadata',
  'invalid_redirect_uri',
  'invalid_token',
] as const;

/** Why an OAuth flow toward the upstream, or a request it was run for, failed. */
export type OAuthFailureReason =
  | (typeof OAUTH_ERROR_CODES)[number]
  /** No browser came back to the loopback callback in time. */
  | 'callback_timeout'
  /** Another bridge held the flow lock for too long, or it could not be taken. */
  | 'flow_lock'
  /** The stored tokens could not be refreshed and no interactive flow may run here. */
  | 'reauthorization_needed'
  /** The upstream still answered 401 with the tokens just obtained. */
  | 'still_unauthorized'
  /** The upstream still answered 403 insufficient_scope after the step-ups allowed. */
  | 'insufficient_scope'
  /** An authorization or metadata server could not be reached. */
  | 'network'
  | 'other';

/** Receives OAuth events; each method is called once per event and must not throw. */
export interface OAuthObserver {
  refreshed(outcome: RefreshOutcome): void;
  failed(reason: OAuthFailureReason): void;
}

const REASON: unique symbol = Symbol('mcp-bridge.oauthFailureReason');

/** Marks `err` with the reason it stands for (where the thrower knows better than the code does). */
export function withReason<E extends Error>(err: E, reason: OAuthFailureReason): E {
  Object.defineProperty(err, REASON, { value: reason });
  return err;
}

/** The bounded reason of a failed flow: a mark set by `withReason`, an OAuth error code, a network failure, else `other`. */
export function failureReason(err: unknown): OAuthFailureReason {
  if (typeof err !== 'object' || err === null) return 'other';
  const marked = (err as { [REASON]?: OAuthFailureReason })[REASON];
  if (marked) return marked;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (OAUTH_ERROR_CODES as readonly string[]).includes(code)) return code as OAuthFailureReason;
  // fetch() rejects with a TypeError when the connection fails (its cause names ECONNREFUSED and the like).
  if (err instanceof TypeError) return 'network';
  const cause = (err as { cause?: unknown }).cause;
  return cause !== undefined && cause !== err ? failureReason(cause) : 'other';
}

/** The bounded form of an `error` parameter an authorization server sent to the callback. */
export function errorCodeReason(code: string): OAuthFailureReason {
  return (OAUTH_ERROR_CODES as readonly string[]).includes(code) ? (code as OAuthFailureReason) : 'other';
}
