import type { IncomingMessage } from 'node:http';
import type { Logger } from '../log.js';
import { principalId, principalOf, type Principal } from './principal.js';

/**
 * Whether `req` acts for the principal that owns a piece of state (a session
 * named by its id). A mismatch is answered as if the state did not exist, so
 * an id learnt from another user reveals nothing; it is logged, with both
 * principals' ids (digests, never credentials), as the attempt it is.
 */
export function ownedBy(owner: Principal | undefined, req: IncomingMessage, logger: Logger, what: string): boolean {
  return isSamePrincipal(owner, principalOf(req), logger, what);
}

/** `ownedBy` for state reached without an HTTP request (a parked call's requestState). */
export function isSamePrincipal(owner: Principal | undefined, caller: Principal | undefined, logger: Logger, what: string): boolean {
  if (principalId(owner) === principalId(caller)) return true;
  logger.warn('identity.foreign_state', { what: redactId(what), owner: principalId(owner), caller: principalId(caller) });
  return false;
}

/** Enough of a session id to find it in other lines, not enough to use it. */
function redactId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}
