import type { UpstreamInit } from '../../src/contracts/upstream.js';
import type { Principal } from '../../src/identity/principal.js';

/**
 * The principal's part of an upstream session's init: its id (the pool key's
 * first part, so no two users share an upstream session or child) and, with
 * `--auth pass-through`, the headers its upstream requests carry.
 */
export function principalInit(principal: Principal | undefined): Pick<UpstreamInit, 'principal' | 'headers'> {
  if (principal === undefined) return {};
  return principal.upstreamHeaders === undefined ? { principal: principal.id } : { principal: principal.id, headers: principal.upstreamHeaders };
}
