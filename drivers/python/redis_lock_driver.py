#!/usr/bin/python3
"""lockbench driver for redis-py's Lock (redis.lock.Lock), as Debian's python3-redis ships it.

Run by lockbench as `--strategy "driver:/usr/bin/python3 drivers/python/redis_lock_driver.py"`
(docs/drivers.md). The lock is the library's own: SET NX PX to take it, retried every
`sleep` seconds (0.1, its default) until `blocking_timeout` (the acquire's timeout_ms);
release and extend by its Lua scripts. One deviation, which the library documents for this
case: thread_local=False, because a lock taken in one thread is released from another here.
The library has no renewal of its own; lockbench's --watchdog renews through Lock.extend.
"""
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import redis
from redis.exceptions import LockError, LockNotOwnedError

out_lock = threading.Lock()
now = time.monotonic_ns


def send(msg):
    """Writes one reply line to stdout in one write(2), past Python's text and buffered
    layers: the two replies of every cycle (granted, released) are formatted directly."""
    t = msg["type"]
    if t == "granted" and len(msg) == 3:
        line = b'{"type":"granted","lease":"%s","id":%d}\n' % (msg["lease"].encode(), msg["id"])
    elif t == "released" and len(msg) == 2:
        line = b'{"type":"released","id":%d}\n' % msg["id"]
    else:
        line = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
    with out_lock:  # a line longer than PIPE_BUF may take several writes
        while line:
            line = line[os.write(1, line):]


class Lag:
    """An opt-in diagnostic of where a request's time goes in this process: with
    LOCKBENCH_PY_LAG_FILE set (and not a probe), the driver appends one JSON line there when
    its stdin closes: its CPU per grant since it started serving (user + system), and each
    stage's count, mean, p50, p90 and p99 in µs:

    - acquire_handoff, release_handoff: the reading thread read the request, until a pool
      thread began it (a thread wake-up and the GIL);
    - acquire_call, release_call: the library's call (acquire: its SET NX PX retries and
      sleeps; release: its Lua release);
    - grant_write, release_write: the library returned, until the reply was written;
    - lockbench_hold: the grant written, until the release request was read: lockbench's
      hold, its turnaround and both pipes;
    - lockbench_turnaround: a release reply written, until the same worker's next acquire
      was read: lockbench's side between two cycles and both pipes;
    - key_idle: on a single hot key, a release's call returned until the next grant's call
      returned (the key free, and the SET that takes it).
    """

    def __init__(self):
        self.cpu = os.times()
        self.stages = {}
        self.granted = {}   # lease -> (worker, grant written at)
        self.released = {}  # worker -> release reply written at
        self.freed = 0      # when the last release call returned

    def add(self, stage, ns):
        self.stages.setdefault(stage, []).append(ns / 1000.0)

    def dump(self, path):
        def q(v, p):
            return round(v[min(len(v) - 1, int(p * len(v)))], 1)
        t = os.times()
        cpu = (t.user + t.system - self.cpu.user - self.cpu.system) * 1e6
        grants = len(self.stages.get("acquire_call", ()))
        out = {"switch_interval_ms": sys.getswitchinterval() * 1000, "threads": threading.active_count(),
               "grants": grants, "cpu_us_per_grant": round(cpu / grants) if grants else 0}
        for stage, v in sorted(self.stages.items()):
            v.sort()
            out[stage] = {"n": len(v), "mean": round(sum(v) / len(v), 1), "p50": q(v, 0.5), "p90": q(v, 0.9), "p99": q(v, 0.99)}
        with open(path, "a") as f:
            f.write(json.dumps(out) + "\n")


lag = None


def client():
    addr = os.environ.get("LOCKBENCH_REDIS_ADDR", "127.0.0.1:6379")
    host, _, port = addr.rpartition(":")
    return redis.Redis(
        host=host.strip("[]"),
        port=int(port),
        db=int(os.environ.get("LOCKBENCH_REDIS_DB", "0")),
        username=os.environ.get("LOCKBENCH_REDIS_USERNAME") or None,
        password=os.environ.get("LOCKBENCH_REDIS_PASSWORD") or None,
        max_connections=512,
    )


class Locks:
    def __init__(self, r):
        self.r = r
        self.held = {}
        self.mu = threading.Lock()
        self.n = 0

    def acquire(self, req):
        ttl = req["ttl_ms"] / 1000.0
        lock = self.r.lock(req["key"], timeout=ttl, thread_local=False)
        t = lag and now()
        if not lock.acquire(blocking=True, blocking_timeout=req["timeout_ms"] / 1000.0):
            return {"type": "timeout"}
        if lag:
            req["done"] = done = now()
            lag.add("acquire_call", done - t)
            if lag.freed:
                lag.add("key_idle", done - lag.freed)
        with self.mu:
            self.n += 1
            lease = str(self.n)
            self.held[lease] = lock
        return {"type": "granted", "lease": lease}

    def take(self, lease, keep=False):
        with self.mu:
            return self.held.get(lease) if keep else self.held.pop(lease, None)

    def release(self, req):
        lock = self.take(req["lease"])
        if lock is None:
            return {"type": "not_owner"}
        t = lag and now()
        try:
            lock.release()
        except LockNotOwnedError:
            return {"type": "not_owner"}
        finally:
            if lag:
                req["done"] = lag.freed = now()
                lag.add("release_call", lag.freed - t)
        return {"type": "released"}

    def renew(self, req):
        lock = self.take(req["lease"], keep=True)
        if lock is None:
            return {"type": "not_owner"}
        try:
            lock.extend(req["ttl_ms"] / 1000.0, replace_ttl=True)
        except LockNotOwnedError:
            return {"type": "not_owner"}
        except LockError as e:
            return {"type": "error", "message": str(e)}
        return {"type": "renewed"}

    def abandon(self, req):
        self.take(req["lease"])  # forgotten, never released; nothing renews it
        return {"type": "abandoned"}


def handle(locks, req):
    if lag:
        lag.add(req["type"] + "_handoff", now() - req["read"])
    try:
        reply = getattr(locks, req["type"])(req)
    except Exception as e:  # a Redis or network error: the request's error, not the driver's
        reply = {"type": "error", "message": "%s: %s" % (type(e).__name__, e)}
    reply["id"] = req["id"]
    send(reply)
    if lag and "done" in req:
        t = now()
        if reply["type"] == "granted":
            lag.add("grant_write", t - req["done"])
            lag.granted[reply["lease"]] = (req["worker"], t)
        elif req["type"] == "release":
            lag.add("release_write", t - req["done"])
            w = req.get("worker")
            if w is not None and "then" not in req:  # a chained acquire is not read
                lag.released[w] = t
    then = req.get("then")
    if then is not None:
        # The worker's next acquire, carried by its release (supports chain): begun on this
        # thread as soon as the release is answered, as a program that gives the lock back
        # and takes it again does, with no round trip to lockbench in between.
        then["type"] = "acquire"
        if lag:
            then["read"] = now()
        handle(locks, then)


def read(req):
    """What the reading thread notes of a request when the lag diagnostic is on."""
    req["read"] = t = now()
    if req["type"] == "acquire":
        t0 = lag.released.pop(req["worker"], None)
        if t0:
            lag.add("lockbench_turnaround", t - t0)
    elif req["type"] == "release":
        g = lag.granted.pop(req["lease"], None)
        if g:
            req["worker"] = g[0]
            lag.add("lockbench_hold", t - g[1])


def main():
    global lag
    send({
        "type": "hello",
        "protocol": 1,
        "name": "redis-py Lock",
        "version": "redis-py %s (python3-redis), Python %s" % (redis.__version__, sys.version.split()[0]),
        "summary": "redis-py Lock: SET NX PX retried every 0.1s (its sleep), Lua release",
        # chain: a release may carry the worker's next acquire. LOCKBENCH_PY_NO_CHAIN=1 leaves
        # it out, to measure what chaining changes.
        "supports": {"renewal": True, "chain": os.environ.get("LOCKBENCH_PY_NO_CHAIN") != "1"},
    })
    probe = os.environ.get("LOCKBENCH_DRIVER_PROBE") == "1"
    locks = None if probe else Locks(client())
    lag_file = None if probe else os.environ.get("LOCKBENCH_PY_LAG_FILE")
    if lag_file:
        lag = Lag()
    if os.environ.get("LOCKBENCH_PY_SWITCH_INTERVAL"):  # a diagnostic: seconds, as sys.setswitchinterval takes
        sys.setswitchinterval(float(os.environ["LOCKBENCH_PY_SWITCH_INTERVAL"]))
    Serve(locks, lag_file).loop()


class Serve:
    """Leader/follower: the thread that reads a request runs it, and the reading passes to
    an idle thread (a new one when none is idle). A lone request thus starts on the thread
    that read it, with no hand-off to another thread on its way: on a hot key each cycle
    has two requests (the release, the next acquire), and a hand-off costs a thread's
    wake-up and a turn of the GIL, which on a busy machine is most of a request's time in
    this process. The next reader wakes meanwhile, not in the way. A read returns every
    line the pipe holds: the first is the reader's, the others go to a pool at once, so
    that a burst is not read one wake-up after another."""

    maxThreads = 1024

    def __init__(self, locks, lag_file):
        self.locks, self.lag_file = locks, lag_file
        self.reading = threading.Lock()  # held by the thread reading stdin
        self.partial = b""               # the start of a line not yet complete
        self.mu = threading.Lock()
        self.threads, self.idle = 1, 1   # the calling thread
        self.pool = ThreadPoolExecutor(max_workers=self.maxThreads)

    def lines(self):
        """The complete request lines read so far, waiting for one; called holding reading."""
        while b"\n" not in self.partial:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                self.end()
            self.partial += chunk
        *lines, self.partial = self.partial.split(b"\n")
        reqs = [json.loads(line) for line in lines if line.strip()]
        if lag:
            for req in reqs:
                if req["type"] != "ping":
                    read(req)
        return reqs

    def loop(self):
        while True:
            with self.reading:
                reqs = self.lines()
            with self.mu:
                # This thread runs the first request unless it is the last one free to read
                # and no other may start: then the pool queues them all, and it reads on.
                lead = self.idle > 1 or self.threads < self.maxThreads
                grow = lead and self.idle == 1
                if lead:
                    self.idle -= 1
                if grow:
                    self.threads += 1
                    self.idle += 1
            if grow:
                threading.Thread(target=self.loop, daemon=True).start()
            for req in reqs[1:] if lead else reqs:
                self.pool.submit(self.run, req)
            if lead:
                if reqs:
                    self.run(reqs[0])
                with self.mu:
                    self.idle += 1

    def run(self, req):
        if req["type"] == "ping":
            send({"type": "pong", "id": req["id"]})
        else:
            handle(self.locks, req)

    def end(self):
        """stdin closed: lockbench is done with us."""
        if self.lag_file:
            lag.dump(self.lag_file)
        os._exit(0)


if __name__ == "__main__":
    main()
