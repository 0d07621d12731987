'use strict';
// What the node drivers share: the run's Redis from lockbench's environment, the versions
// of the libraries as installed, and the driver protocol's loop (docs/drivers.md).
const readline = require('readline');

function version(pkg) {
  return pkg + ' ' + require(pkg + '/package.json').version;
}

// redisEnv is where the run's Redis is: LOCKBENCH_REDIS_ADDR (host:port), _PASSWORD,
// _USERNAME, _DB. Never on the command line.
function redisEnv() {
  const addr = process.env.LOCKBENCH_REDIS_ADDR || '127.0.0.1:6379';
  const i = addr.lastIndexOf(':');
  return {
    host: addr.slice(0, i).replace(/^\[|\]$/g, ''),
    port: Number(addr.slice(i + 1)),
    username: process.env.LOCKBENCH_REDIS_USERNAME || undefined,
    password: process.env.LOCKBENCH_REDIS_PASSWORD || undefined,
    db: Number(process.env.LOCKBENCH_REDIS_DB || 0),
  };
}

const probe = process.env.LOCKBENCH_DRIVER_PROBE === '1';

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + '\n');
}

// serve says hello, then answers each request line with the lock's async handlers:
// acquire(req) -> {lease, valid_ms?} or null (timed out); release(lease) -> true (released)
// or false (not the owner); renew(lease, ttl_ms) -> true/false; abandon(lease).
// Events: lost(lease) and extended(lease, valid_ms) are sent through the emit functions.
function serve(hello, makeLock) {
  send(Object.assign({ type: 'hello', protocol: 1 }, hello));
  const lock = probe ? null : makeLock({
    lost: (lease) => send({ type: 'lost', lease }),
    extended: (lease, validMS) => send({ type: 'extended', lease, valid_ms: Math.round(validMS) }),
  });
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on('line', (line) => {
    const req = JSON.parse(line);
    handle(lock, req).then(
      (reply) => send(Object.assign({ id: req.id }, reply)),
      (err) => send({ type: 'error', id: req.id, message: String((err && err.message) || err) }));
  });
  rl.on('close', () => process.exit(0));
}

async function handle(lock, req) {
  switch (req.type) {
    case 'ping':
      return { type: 'pong' };
    case 'acquire': {
      const g = await lock.acquire(req);
      if (!g) return { type: 'timeout' };
      return Object.assign({ type: 'granted' }, g);
    }
    case 'release':
      return { type: (await lock.release(req.lease)) ? 'released' : 'not_owner' };
    case 'renew':
      if (!lock.renew) return { type: 'error', message: 'this driver does not renew on request' };
      return { type: (await lock.renew(req.lease, req.ttl_ms)) ? 'renewed' : 'not_owner' };
    case 'abandon':
      await lock.abandon(req.lease);
      return { type: 'abandoned' };
  }
  return { type: 'error', message: 'unknown request ' + req.type };
}

module.exports = { version, redisEnv, serve, probe };
