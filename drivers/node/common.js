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

// lag is an opt-in diagnostic of how late the event loop runs: with LOCKBENCH_NODE_LAG_FILE
// set (and not a probe), the process appends one JSON line there when it exits: its event
// loop's delay (perf_hooks, 10 ms resolution) and how late its timers that asked for it
// (lag.timer(ms late), e.g. redlock-extend's extensions) fired, p50/p99/max in ms.
const lag = (() => {
  const file = process.env.LOCKBENCH_NODE_LAG_FILE;
  if (!file || probe) return { timer() {} };
  const { monitorEventLoopDelay } = require('perf_hooks');
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const late = [];
  process.on('exit', () => {
    loop.disable();
    late.sort((a, b) => a - b);
    const q = (p) => (late.length ? late[Math.min(late.length - 1, Math.floor(p * late.length))] : 0);
    require('fs').appendFileSync(file, JSON.stringify({
      argv: process.argv.slice(2).join(' '),
      loop_delay_ms: { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
      timers: { count: late.length, p50: q(0.5), p99: q(0.99), max: late.length ? late[late.length - 1] : 0 },
    }) + '\n');
  });
  return { timer(ms) { late.push(ms); } };
})();

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + '\n');
}

// serve says hello, then answers each request line with the lock's async handlers:
// acquire(req) -> {lease, valid_ms?} or null (timed out); release(lease) -> true (released)
// or false (not the owner); renew(lease, ttl_ms) -> true/false; abandon(lease).
// Events: lost(lease) and extended(lease, valid_ms) are sent through the emit functions.
//
// The hello says it supports chain (LOCKBENCH_NODE_NO_CHAIN=1 leaves it out, to measure what
// chaining changes): a release may carry the worker's next acquire (then), begun as soon as
// the release is answered, as a program that gives a lock back and takes it again does.
function serve(hello, makeLock) {
  const supports = Object.assign({}, hello.supports, { chain: process.env.LOCKBENCH_NODE_NO_CHAIN !== '1' });
  send(Object.assign({ type: 'hello', protocol: 1 }, hello, { supports }));
  const lock = probe ? null : makeLock({
    lost: (lease) => send({ type: 'lost', lease }),
    extended: (lease, validMS) => send({ type: 'extended', lease, valid_ms: Math.round(validMS) }),
  });
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on('line', (line) => run(lock, JSON.parse(line)));
  rl.on('close', () => process.exit(0));
}

// run answers req, then begins the acquire it carries, if any.
function run(lock, req) {
  handle(lock, req).then(
    (reply) => send(Object.assign({ id: req.id }, reply)),
    (err) => send({ type: 'error', id: req.id, message: String((err && err.message) || err) }))
    .then(() => { if (req.then) run(lock, Object.assign({}, req.then, { type: 'acquire' })); });
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

module.exports = { version, redisEnv, serve, probe, lag };
