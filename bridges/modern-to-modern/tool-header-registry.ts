// Shared with modern-to-legacy since both serve modern HTTP clients: the mechanism lives in bridges/shared.
export { ToolHeaderRegistry, type InvalidTool } from '../shared/tool-header-registry.js';
