/** The public API of mcp-bridge, by name. */
export { startBridge, type RunningBridge } from './daemon/start-bridge.js';
export { DEFAULT_OPTIONS, type BridgeOptions, type UpstreamTarget } from './daemon/options.js';
export { probeUpstream } from './epochs/probe-upstream.js';
export type { UpstreamFacts } from './contracts/upstream.js';
export { RpcError, BridgeError, TransportError, type BridgeErrorCode } from './errors.js';
export { createLogger, type Logger, type LogLevel } from './log.js';
export { EPOCHS, type Epoch, MODERN_VERSIONS, LEGACY_VERSIONS } from './epochs/versions.js';
export { startServers, type RunningServers, type ReloadReport } from './daemon/start-servers.js';
export type { ServerStatus, ServerState } from './daemon/server-unit.js';
export { loadServersConfig } from './config/load-servers-config.js';
export { parseServersConfig, type ServersConfig, type ServerEntry } from './config/servers-config.js';
export { createBridgeHandler, type BridgeHandler, type BridgeHandlerOptions } from './embed/create-bridge-handler.js';
