import type { LegacyHandler, ModernHandler } from '../contracts/downstream.js';
import { RpcError } from '../errors.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { errorResponse } from '../jsonrpc/messages.js';

/**
 * Handlers for a client epoch the bridge cannot serve in front of this
 * upstream: every request gets one clear JSON-RPC error instead of a hang.
 */
export function refusingModernHandler(reason: string): ModernHandler {
  return {
    handle: async (req) => errorResponse(req.id, { code: RpcCode.InternalError, message: reason }),
    close: async () => {},
  };
}

export function refusingLegacyHandler(reason: string): LegacyHandler {
  return {
    openSession: async () => {
      throw new RpcError(RpcCode.InternalError, reason);
    },
    close: async () => {},
  };
}
