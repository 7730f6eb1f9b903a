import type { JSONRPCNotification } from '@modelcontextprotocol/server';
import { admitsLevel, type McpLogLevel } from './log-levels.js';

/** What fan-out needs to know about one downstream session sharing an upstream key. */
export interface FanoutCandidate {
  readonly level: McpLogLevel | undefined;
  subscribed(uri: string): boolean;
}

type Params = Record<string, unknown> | undefined;
type Rule = (params: Params, candidate: FanoutCandidate) => boolean;

const everyone: Rule = () => true;

/**
 * Who gets an unsolicited upstream notification, by method (digest §4.5). Methods
 * not listed are tied to one client we cannot identify, so they are delivered
 * only when a single session uses the key.
 */
const RULES: Readonly<Partial<Record<string, Rule | 'never'>>> = {
  'notifications/tools/list_changed': everyone,
  'notifications/prompts/list_changed': everyone,
  'notifications/resources/list_changed': everyone,
  'notifications/resources/updated': (p, c) => typeof p?.uri === 'string' && c.subscribed(p.uri),
  'notifications/message': (p, c) => admitsLevel(c.level, p?.level),
  // The server cancels its own request by its wire id; the client saw a face-minted id (digest §5.5).
  'notifications/cancelled': 'never',
};

/**
 * Selects the downstream sessions an unsolicited notification from a shared
 * upstream session goes to. Pure: the caller delivers.
 */
export function fanoutTargets<T extends FanoutCandidate>(n: JSONRPCNotification, candidates: readonly T[]): T[] {
  const rule = RULES[n.method];
  if (rule === 'never') return [];
  if (rule === undefined) return candidates.length === 1 ? [...candidates] : [];
  const params = n.params as Params;
  return candidates.filter((c) => rule(params, c));
}
