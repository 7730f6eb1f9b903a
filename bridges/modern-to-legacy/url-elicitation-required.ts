import { RpcCode } from '../../src/jsonrpc/codes.js';
import type { RpcErrorBody } from '../../src/jsonrpc/messages.js';
import { declaresInputCapability } from '../shared/capabilities-to-legacy.js';
import type { Parkable } from '../shared/parked-calls.js';
import type { InputRequestEntry } from './mrtr-call.js';

/**
 * The 2025-11-25 `-32042` URLElicitationRequiredError, which 2026 retired
 * (digest §1.10), as MRTR (digest §5.2): one url-mode `elicitation/create`
 * per `data.elicitations[i]`, `elicitationId` stripped. The upstream call is
 * over, so the retry re-issues the original request upstream.
 */

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What a `-32042` becomes for one modern request. */
export type UrlElicitationVerdict =
  | { kind: 'round'; inputRequests: Record<string, InputRequestEntry> }
  | { kind: 'error'; error: RpcErrorBody }
  | undefined;

/**
 * A round of url elicitations when the request declared `elicitation.url`;
 * otherwise `-32021` naming the missing capability (digest §1.4); undefined
 * when `err` is not a well-formed `-32042`.
 */
export function urlElicitationRound(err: RpcErrorBody, clientCapabilities: Obj): UrlElicitationVerdict {
  if (err.code !== RpcCode.UrlElicitationRequired || !isObj(err.data) || !Array.isArray(err.data.elicitations)) return undefined;
  const inputRequests: Record<string, InputRequestEntry> = {};
  err.data.elicitations.forEach((e: unknown, i: number) => {
    if (!isObj(e)) return;
    const { elicitationId: _stripped, ...params } = e;
    inputRequests[`url-${i + 1}`] = { method: 'elicitation/create', params: { ...params, mode: 'url' } };
  });
  const entries = Object.values(inputRequests);
  if (entries.length === 0) return undefined;
  if (!entries.every((entry) => declaresInputCapability(clientCapabilities, entry))) {
    return {
      kind: 'error',
      error: {
        code: RpcCode.MissingRequiredClientCapability,
        message: `the server requires URL elicitation first (${err.message}); declare elicitation.url to receive it`,
        data: { requiredCapabilities: { elicitation: { url: {} } } },
      },
    };
  }
  return { kind: 'round', inputRequests };
}

/** A parked url-elicitation round: nothing runs upstream, so nothing needs cancelling. */
export class UrlElicitationPending implements Parkable {
  constructor(readonly inputRequests: Record<string, InputRequestEntry>) {}

  /** The keys the retry left unanswered, and whether any answer was not an accept. */
  review(inputResponses: unknown): { missing: Record<string, InputRequestEntry>; refused: string[] } {
    const given = isObj(inputResponses) ? inputResponses : {};
    const missing: Record<string, InputRequestEntry> = {};
    const refused: string[] = [];
    for (const [key, entry] of Object.entries(this.inputRequests)) {
      const answer = given[key];
      if (!isObj(answer)) missing[key] = entry;
      else if (answer.action !== 'accept') refused.push(key);
    }
    return { missing, refused };
  }

  cancel(): void {}
}
