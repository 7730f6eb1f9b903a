// The bench's embedding host (bench/embed-express.mjs): the bridge in front of
// `upstream`, mounted three ways in one process of its own on 127.0.0.1:0:
//   node embed-host.mjs node-http|express|express-json <upstream URL>
// node-http: createBridgeHandler as a bare node:http server's listener (served at /tools/…);
// express: express 5 with createBridgeRouter at /tools; express-json: the same behind express.json().
import http from 'node:http';
import express from 'express';
import { createBridgeHandler } from '../../dist/src/embed/create-bridge-handler.js';
import { createBridgeRouter } from '../../dist/src/express.js';
import { createLogger } from '../../dist/src/log.js';

const [mode, upstream] = process.argv.slice(2);
const options = { logger: createLogger('warn') };
let listener;
let ready;
if (mode === 'node-http') {
  const bridge = createBridgeHandler({ upstream, options });
  ready = bridge.ready;
  // The same /tools prefix as the express targets, stripped by hand as a framework-less app would.
  listener = (req, res) => {
    if (!req.url.startsWith('/tools/')) return void res.writeHead(404).end();
    req.url = req.url.slice('/tools'.length);
    bridge(req, res);
  };
} else if (mode === 'express' || mode === 'express-json') {
  const app = express();
  if (mode === 'express-json') app.use(express.json({ limit: '4mb' }));
  const router = createBridgeRouter({ upstream, options });
  ready = router.bridge.ready;
  app.use('/tools', router);
  listener = app;
} else {
  process.stderr.write(`embed-host: unknown mode ${mode}\n`);
  process.exit(2);
}
await ready;
http.createServer(listener).listen(0, '127.0.0.1');
