import type { Implementation, JSONRPCRequest } from '@modelcontextprotocol/server';
import { request } from '../jsonrpc/messages.js';
import { LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION } from './versions.js';
import { BRIDGE_IMPLEMENTATION } from '../version.js';

/** How the bridge names itself to upstream servers. */
export const BRIDGE_CLIENT_INFO: Implementation = BRIDGE_IMPLEMENTATION;

/** `server/discover` with the full per-request envelope (digest §1.2, §2.7 step 1). */
export function discoverProbe(id: string, version: string = LATEST_MODERN_VERSION): JSONRPCRequest {
  return request(id, 'server/discover', {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': version,
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': BRIDGE_CLIENT_INFO,
    },
  });
}

/** The legacy handshake's first message, with the newest legacy version (digest §4.1). */
export function initializeProbe(id: string | number): JSONRPCRequest {
  return request(id, 'initialize', { protocolVersion: LATEST_LEGACY_VERSION, capabilities: {}, clientInfo: BRIDGE_CLIENT_INFO });
}
