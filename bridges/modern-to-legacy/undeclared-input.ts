import type { JSONRPCRequest } from '@modelcontextprotocol/server';
import { RpcError } from '../../src/errors.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import type { RpcOutcome } from '../../src/jsonrpc/messages.js';
import { requiredCapability } from '../shared/capabilities-to-legacy.js';

type Obj = Record<string, unknown>;

/**
 * digest §1.7 "Servers MUST NOT embed a request type the client did not
 * declare", §1.10: what a server request for an undeclared input turns into.
 * The modern request ends with -32021 naming just the missing capability; the
 * server's request gets -32601, and then the call is cancelled upstream.
 */
export function undeclaredInput(req: JSONRPCRequest, callMethod: string): { outcome: RpcOutcome; serverError: RpcError; requiredCapabilities: Obj } {
  const requiredCapabilities = requiredCapability(req) ?? {};
  const name = Object.keys(requiredCapabilities).join(', ');
  return {
    requiredCapabilities,
    outcome: {
      error: {
        code: RpcCode.MissingRequiredClientCapability,
        message: `the server needs the client capability ${name} (${req.method}) for ${callMethod}, and this request did not declare it`,
        data: { requiredCapabilities },
      },
    },
    serverError: new RpcError(RpcCode.MethodNotFound, `the modern client did not declare ${name} on this request`),
  };
}
