// Loaded with `node --require` into reference servers that listen on all
// interfaces by default: forces them onto 127.0.0.1 and reports the port.
const net = require('node:net');
const original = net.Server.prototype.listen;
net.Server.prototype.listen = function patchedListen(...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    const port = Number(args[0]);
    const rest = args.slice(1);
    const host = typeof rest[0] === 'string' ? rest.shift() : undefined;
    args = [port, host && host !== '0.0.0.0' && host !== '::' ? host : '127.0.0.1', ...rest];
  } else if (args[0] && typeof args[0] === 'object' && !('fd' in args[0]) && !('path' in args[0])) {
    args[0] = { ...args[0], host: '127.0.0.1' };
  }
  this.once('listening', () => {
    const addr = this.address();
    if (addr && typeof addr === 'object') process.stderr.write(`LOOPBACK_LISTENING ${addr.address}:${addr.port}\n`);
  });
  return original.apply(this, args);
};
