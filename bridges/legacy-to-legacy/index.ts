/** legacy-to-legacy: initialize-era and http+sse clients in front of a legacy server. */
export { LegacyToLegacyBridge, type LegacyToLegacyOptions } from './legacy-to-legacy-bridge.js';
export { MCP_LOG_LEVELS, admitsLevel, upstreamLevelFor, type McpLogLevel } from './log-levels.js';
