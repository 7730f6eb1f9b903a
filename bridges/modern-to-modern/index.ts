/** modern-to-modern: 2026-07-28 clients in front of a 2026-07-28 server. */
export { ModernToModernBridge, type ModernToModernOptions } from './modern-to-modern-bridge.js';
export { ToolHeaderRegistry, type InvalidTool } from './tool-header-registry.js';
