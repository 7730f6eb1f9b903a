/** 2026-07-28 clients in front of legacy (initialize-era and http+sse) servers. */
export { ModernToLegacyBridge, type ModernToLegacyOptions } from './modern-to-legacy-bridge.js';
export { discoverFromInitialize } from './discover-from-initialize.js';
