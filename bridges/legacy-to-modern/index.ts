/** legacy-to-modern: initialize-era and http+sse clients in front of a 2026-07-28 server. */
export { LegacyToModernBridge, type LegacyToModernOptions } from './legacy-to-modern-bridge.js';
export { initializeFromDiscover, SYNTHESIZED_SERVER_INFO } from './initialize-from-discover.js';
export { legacyFailure, toLegacyOutcome } from './legacy-results.js';
