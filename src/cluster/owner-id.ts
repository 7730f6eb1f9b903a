import { randomBytes } from 'node:crypto';

/**
 * Session ids that name their owner: `<owner tag>.<64 hex digits>`. The tag
 * says which replica holds the session; the 256 random bits keep the id as
 * unguessable as a standalone bridge's. Only visible ASCII (digest §4.3).
 */
export function mintOwnedId(ownerTag: string): string {
  return `${ownerTag}.${randomBytes(32).toString('hex')}`;
}

/** The owner tag of an id from mintOwnedId, or undefined for any other shape. */
export function ownerOfId(id: string): string | undefined {
  const m = /^([0-9a-f]{12})\.[0-9a-f]{64}$/.exec(id);
  return m?.[1];
}
