'use strict';
// lockbench driver for npm lock libraries as shipped (docs/drivers.md). One argument picks
// the lock:
//   redlock          redlock 4.2.0 on one node-redis 3 client, its defaults (10 retries
//                    200ms +-100ms apart); the lease is never extended
//   redlock-extend   the same, extending the lock by its ttl while held, as the README's
//                    "Locking and Extending" does in a long critical section: an extension
//                    a third of the ttl after the last one was sent, one at a time
//   mutex            redis-semaphore 5.8.0 Mutex on ioredis 6, its defaults (retry every
//                    10ms, its own refresh every 0.8 x ttl, onLockLost reported as lost)
//   semaphore        redis-semaphore Semaphore of LOCKBENCH_PERMITS permits, likewise
const { version, redisEnv, serve, lag } = require('./common');

const variant = process.argv[2];
let n = 0;
const nextLease = () => String(++n);

function redlockLock(extend) {
  return (events) => {
    const Redlock = require('redlock');
    const e = redisEnv();
    const client = require('redis').createClient({ host: e.host, port: e.port, password: e.password, db: e.db });
    client.on('error', (err) => console.error('redis:', err.message));
    const redlock = new Redlock([client]);
    const held = new Map(); // lease -> {lock, timer}
    return {
      async acquire(req) {
        let lock;
        try {
          lock = await redlock.lock(req.key, req.ttl_ms);
        } catch (err) {
          if (err instanceof Redlock.LockError) return null; // its retries ran out
          throw err;
        }
        const lease = nextLease();
        const h = { lock, timer: null };
        held.set(lease, h);
        if (extend) {
          // Extend a third of the ttl after the last grant or extension was sent, one
          // extension at a time, as Redisson's watchdog renews (and lockbench's --watchdog
          // auto): each extension is sent while two thirds of the last one's validity are
          // left, the margin a late timer has before the lock expires. The start of the last
          // one is read from the expiration redlock gave it (start + ttl - drift), so a grant
          // that took long to reach the event loop starts the count from when it was sent.
          // The next is scheduled when the last one has answered: one that answers later
          // than its interval is followed at once.
          const every = Math.max(1, Math.floor(req.ttl_ms / 3));
          const drift = Math.round(redlock.driftFactor * req.ttl_ms) + 2;
          const next = () => {
            const due = h.lock.expiration - req.ttl_ms + drift + every;
            h.timer = setTimeout(() => {
              lag.timer(Date.now() - due);
              h.lock.extend(req.ttl_ms).then(
                (l) => {
                  if (!held.has(lease)) return; // released or abandoned meanwhile
                  h.lock = l;
                  events.extended(lease, l.expiration - Date.now());
                  next();
                },
                () => { if (held.has(lease)) events.lost(lease); });
            }, Math.max(0, due - Date.now()));
          };
          next();
        }
        return { lease, valid_ms: Math.max(0, lock.expiration - Date.now()) };
      },
      async release(lease) {
        const h = held.get(lease);
        if (!h) return false;
        held.delete(lease);
        clearTimeout(h.timer);
        try {
          await h.lock.unlock();
          return true;
        } catch (err) {
          if (err instanceof Redlock.LockError) return false; // it found the lock gone
          throw err;
        }
      },
      async abandon(lease) {
        const h = held.get(lease);
        held.delete(lease); // first: an extension under way sees it gone and stops
        if (h) clearTimeout(h.timer);
      },
    };
  };
}

function semaphoreLock(kind) {
  return (events) => {
    const Redis = require('ioredis');
    const { Mutex, Semaphore } = require('redis-semaphore');
    const { delIfEqualLua } = require('redis-semaphore/lib/mutex/release');
    const e = redisEnv();
    const client = new Redis({ host: e.host, port: e.port, username: e.username, password: e.password, db: e.db });
    client.on('error', (err) => console.error('redis:', err.message));
    const permits = Number(process.env.LOCKBENCH_PERMITS || 1);
    const held = new Map();
    return {
      async acquire(req) {
        const lease = nextLease();
        const opts = {
          lockTimeout: req.ttl_ms,
          acquireTimeout: Math.max(1, req.timeout_ms),
          onLockLost: () => { if (held.delete(lease)) events.lost(lease); },
        };
        const m = kind === 'semaphore' ? new Semaphore(client, req.key, permits, opts) : new Mutex(client, req.key, opts);
        const started = Date.now();
        try {
          await m.acquire();
        } catch (err) {
          if (err && err.constructor && err.constructor.name === 'TimeoutError') return null;
          throw err;
        }
        held.set(lease, m);
        return { lease, valid_ms: Math.max(0, req.ttl_ms - (Date.now() - started)) };
      },
      async release(lease) {
        const m = held.get(lease);
        if (!m) return false;
        held.delete(lease);
        // The library's release sends exactly this (its compare-and-delete script for a
        // Mutex, ZREM of its identifier for a Semaphore) but drops the result; read it, so
        // that a release that found the lock gone says not_owner.
        m.stopRefresh();
        const n = kind === 'semaphore'
          ? await client.zrem(m._key, m.identifier)
          : await delIfEqualLua(client, [m._key, m.identifier]);
        return Number(n) === 1;
      },
      async abandon(lease) {
        const m = held.get(lease);
        held.delete(lease);
        if (m) m.stopRefresh(); // forgotten: nothing renews it, nothing releases it
      },
    };
  };
}

const variants = {
  redlock: {
    hello: { name: 'npm redlock', version: version('redlock') + ' on ' + version('redis'), summary: 'npm redlock on one Redis, its defaults, no extension' },
    make: redlockLock(false),
  },
  'redlock-extend': {
    hello: { name: 'npm redlock + extend', version: version('redlock') + ' on ' + version('redis'), summary: 'npm redlock on one Redis, extended by its ttl every ttl/3 while held (README)' },
    make: redlockLock(true),
  },
  mutex: {
    hello: { name: 'redis-semaphore Mutex', version: version('redis-semaphore') + ' on ' + version('ioredis'), summary: 'redis-semaphore Mutex, its defaults: retry 10ms, refresh every 0.8 ttl' },
    make: semaphoreLock('mutex'),
  },
  semaphore: {
    hello: { name: 'redis-semaphore Semaphore', version: version('redis-semaphore') + ' on ' + version('ioredis'), summary: 'redis-semaphore Semaphore of LOCKBENCH_PERMITS, its defaults', supports: { semaphore: true } },
    make: semaphoreLock('semaphore'),
  },
};

const v = variants[variant];
if (!v) {
  console.error('usage: node driver.js ' + Object.keys(variants).join('|'));
  process.exit(2);
}
serve(v.hello, v.make);
