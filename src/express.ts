import { Router, type Request, type Response, type NextFunction } from 'express';
import { createBridgeHandler, type BridgeHandler, type BridgeHandlerOptions } from './embed/create-bridge-handler.js';

export type { BridgeHandler, BridgeHandlerOptions } from './embed/create-bridge-handler.js';

/** An express router serving a bridge, and the bridge itself (for `upgrade`, `ready`, `close`). */
export type BridgeRouter = Router & { bridge: BridgeHandler };

/** The paths the bridge answers under its mount; every other request goes on to the app's next route. */
const BRIDGE_PATH = /^\/(?:mcp|sse|messages|ws|healthz|debug\/stats|servers(?:\/[^/]+(?:\/[^/]+)?)?)\/?$/i;

/**
 * `mcp-bridge/express`: mounts a bridge (one upstream or a config file) at
 * any path of an express 5 app: `app.use('/tools', createBridgeRouter({ upstream }))`
 * serves `/tools/mcp`, `/tools/sse`, `/tools/messages` (and `/tools/servers/<name>/…`
 * with a config). It works whether or not the app ran `express.json()` first.
 * express stays out of the daemon, which serves node:http directly.
 */
export function createBridgeRouter(opts: BridgeHandlerOptions): BridgeRouter {
  const bridge = createBridgeHandler(opts);
  const router = Router() as BridgeRouter;
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (!BRIDGE_PATH.test(req.path)) return next();
    bridge(req, res);
  });
  router.bridge = bridge;
  return router;
}

export { createBridgeHandler };
