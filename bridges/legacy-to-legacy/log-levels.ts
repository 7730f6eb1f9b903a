/**
 * MCP logging levels (RFC 5424 severities, digest §1.9) and the two questions the
 * bridge asks of them: does a session's level admit a message, and which level
 * must a shared upstream run at so that every session sharing it still hears
 * what it asked for.
 */

/** Most verbose first (digest §1.9). */
export const MCP_LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type McpLogLevel = (typeof MCP_LOG_LEVELS)[number];

const RANK: ReadonlyMap<string, number> = new Map(MCP_LOG_LEVELS.map((l, i) => [l, i]));

export function isMcpLogLevel(v: unknown): v is McpLogLevel {
  return typeof v === 'string' && RANK.has(v);
}

/**
 * Whether a session at `sessionLevel` wants a message at `messageLevel`. A session
 * that never called `logging/setLevel` hears everything (what a legacy server does
 * before setLevel); a message with an unknown level is delivered rather than dropped.
 */
export function admitsLevel(sessionLevel: McpLogLevel | undefined, messageLevel: unknown): boolean {
  if (sessionLevel === undefined || !isMcpLogLevel(messageLevel)) return true;
  return RANK.get(messageLevel)! >= RANK.get(sessionLevel)!;
}

/**
 * The level a shared upstream session must be set to: the most verbose one in use.
 * A session without a level counts as `debug` (it hears everything). Undefined when
 * no session has set a level, so the upstream keeps its own default.
 */
export function upstreamLevelFor(levels: Iterable<McpLogLevel | undefined>): McpLogLevel | undefined {
  let anySet = false;
  let best = MCP_LOG_LEVELS.length - 1;
  for (const l of levels) {
    if (l === undefined) {
      best = 0;
      continue;
    }
    anySet = true;
    best = Math.min(best, RANK.get(l)!);
  }
  return anySet ? MCP_LOG_LEVELS[best] : undefined;
}
