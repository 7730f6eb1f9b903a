import type { IncomingMessage } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { Principal } from '../identity/principal.js';
import { oauthChallenge } from './auth-verdict.js';
import { resourceMetadataUrl } from './request-gate.js';

/** The HTTP status and challenge a reply carries instead of 200. */
export interface UpstreamRefusal {
  status: 401 | 403;
  headers: Record<string, string>;
}

/**
 * `--auth pass-through`: when the upstream refused the client's own token
 * (HTTP 401/403, carried as `data.status` of the call's -32603), the client
 * gets that status and a challenge naming the bridge's protected-resource
 * metadata, so its OAuth client can refresh or re-run the flow through the
 * bridge (MCP authorization: the client reacts to 401 on any request).
 * Undefined for other principals and other errors.
 */
export function upstreamRefusal(principal: Principal | undefined, answer: JSONRPCMessage | undefined, req: IncomingMessage): UpstreamRefusal | undefined {
  if (principal?.upstreamHeaders === undefined || answer === undefined || !('error' in answer)) return undefined;
  const data = (answer.error as { data?: unknown }).data;
  const status = typeof data === 'object' && data !== null ? (data as { status?: unknown }).status : undefined;
  if (status !== 401 && status !== 403) return undefined;
  const error = status === 401 ? 'invalid_token' : 'insufficient_scope';
  return { status, headers: { 'www-authenticate': oauthChallenge({ metadataUrl: resourceMetadataUrl(req) }, [], error) } };
}
