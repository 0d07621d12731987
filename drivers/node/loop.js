'use strict';
// The same npm lock libraries driven directly, without lockbench: the figure a driver run
// is compared with (docs/drivers.md). Hot key: every worker takes one key, holds it, lets
// it go, until the time is up.
//   node drivers/node/loop.js VARIANT [WORKERS=100] [SECONDS=5] [HOLD_MS=1] [TTL_MS=10000]
// VARIANT as driver.js: redlock, redlock-extend, mutex, semaphore. Redis from
// LOCKBENCH_REDIS_ADDR (default 127.0.0.1:6379). Prints acquires/s and the acquire p50.
const { redisEnv, version } = require('./common');

const [variant, workers = 100, seconds = 5, holdMS = 1, ttlMS = 10000] =
  [process.argv[2], ...process.argv.slice(3).map(Number)];
const key = 'lockbench-loop:' + process.pid;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function redlockCycle(extend) {
  const Redlock = require('redlock');
  const e = redisEnv();
  const client = require('redis').createClient({ host: e.host, port: e.port, password: e.password, db: e.db });
  const redlock = new Redlock([client]);
  return {
    what: version('redlock') + ' on ' + version('redis'),
    async cycle() {
      let lock;
      try {
        lock = await redlock.lock(key, ttlMS);
      } catch (err) {
        if (err instanceof Redlock.LockError) return false;
        throw err;
      }
      // As driver.js: an extension a third of the ttl after the last one was sent.
      let t = null;
      let held = true;
      const every = Math.max(1, Math.floor(ttlMS / 3));
      const drift = Math.round(redlock.driftFactor * ttlMS) + 2;
      const next = () => {
        t = setTimeout(() => lock.extend(ttlMS).then((l) => { if (held) { lock = l; next(); } }, () => {}),
          Math.max(0, lock.expiration - ttlMS + drift + every - Date.now()));
      };
      if (extend) next();
      return async () => { held = false; clearTimeout(t); await lock.unlock().catch(() => {}); };
    },
    close: () => client.quit(),
  };
}

function semaphoreCycle(kind) {
  const Redis = require('ioredis');
  const { Mutex, Semaphore } = require('redis-semaphore');
  const e = redisEnv();
  const client = new Redis({ host: e.host, port: e.port, username: e.username, password: e.password, db: e.db });
  return {
    what: version('redis-semaphore') + ' on ' + version('ioredis'),
    async cycle() {
      const opts = { lockTimeout: ttlMS, acquireTimeout: 5000 };
      const m = kind === 'semaphore' ? new Semaphore(client, key, 1, opts) : new Mutex(client, key, opts);
      try { await m.acquire(); } catch (err) { return false; }
      return () => m.release();
    },
    close: () => client.quit(),
  };
}

const make = {
  redlock: () => redlockCycle(false),
  'redlock-extend': () => redlockCycle(true),
  mutex: () => semaphoreCycle('mutex'),
  semaphore: () => semaphoreCycle('semaphore'),
}[variant];
if (!make) {
  console.error('usage: node loop.js redlock|redlock-extend|mutex|semaphore [workers] [seconds] [hold_ms] [ttl_ms]');
  process.exit(2);
}

(async () => {
  const lock = make();
  const end = Date.now() + seconds * 1000;
  const lat = [];
  let timeouts = 0;
  await Promise.all(Array.from({ length: workers }, async () => {
    while (Date.now() < end) {
      const t0 = process.hrtime.bigint();
      const release = await lock.cycle();
      if (!release) { timeouts++; continue; }
      // Only what is acquired within the window counts, as lockbench counts it: a worker's
      // last acquire may end well after it (a library's retries).
      if (Date.now() <= end) lat.push(Number(process.hrtime.bigint() - t0) / 1000);
      await sleep(holdMS);
      await release();
    }
  }));
  lat.sort((a, b) => a - b);
  console.log(JSON.stringify({
    variant, library: lock.what, workers, seconds, hold_ms: holdMS,
    acquires_per_s: Math.round(lat.length / seconds), acquire_p50_us: Math.round(lat[Math.floor(lat.length / 2)] || 0), timeouts,
  }));
  await lock.close();
  process.exit(0);
})();
