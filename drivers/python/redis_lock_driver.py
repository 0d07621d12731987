#!/usr/bin/python3
"""lockbench driver for redis-py's Lock (redis.lock.Lock), as Debian's python3-redis ships it.

Run by lockbench as `--strategy "driver:/usr/bin/python3 drivers/python/redis_lock_driver.py"`
(docs/drivers.md). The lock is the library's own: SET NX PX to take it, retried every
`sleep` seconds (0.1, its default) until `blocking_timeout` (the acquire's timeout_ms);
release and extend by its Lua scripts. One deviation, which the library documents for this
case: thread_local=False, because a lock taken in one thread is released from another here.
The library has no renewal of its own; lockbench's --watchdog renews through Lock.extend.
"""
import _thread
import fcntl
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
    """One reply line, in one write(2) to stdout (fd 1, not sys.stdout's text and buffer
    layers: lockbench reads the bytes), so that replies of several threads never mix."""
    line = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
    with out_lock:
        while line:
            line = line[os.write(1, line):]


class Lag:
    """An opt-in diagnostic of where a request's time goes in this process: with
    LOCKBENCH_PY_LAG_FILE set (and not a probe), the driver appends one JSON line there when
    its stdin closes: its CPU per grant since it started serving (user + system), and each
    stage's count, mean, p50, p90 and p99 in µs:

    - acquire_handoff, release_handoff: the request read, until a thread began it (the
      thread that read it, or for a request read in a burst with others a pool thread);
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

    def dump(self, path, threads):
        def q(v, p):
            return round(v[min(len(v) - 1, int(p * len(v)))], 1)
        t = os.times()
        cpu = (t.user + t.system - self.cpu.user - self.cpu.system) * 1e6
        grants = len(self.stages.get("acquire_call", ()))
        out = {"switch_interval_ms": sys.getswitchinterval() * 1000, "threads": threads,
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
            if w is not None:
                lag.released[w] = t


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
        "supports": {"renewal": True},
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
    """Every idle thread waits in a read(2) of its own on stdin, and runs the requests its
    read returns. A pipe wakes one waiting reader per write (an exclusive wait since Linux
    5.5; an older kernel wakes them all, and all but one go back to sleep inside the
    kernel), and lockbench writes each request line in one write(2) of at most PIPE_BUF
    bytes, which a pipe delivers whole: a read of the pipe's size returns whole lines. So
    the thread the kernel wakes runs the request and goes back to its read, and a request
    costs one thread's wake-up: no thread hands a request, or the reading, to another. A
    thread that leaves nobody reading behind it starts a new reader first (the number of
    threads follows the number of acquires that wait at once). A read that returns several
    lines runs the first and gives the others to a pool at once, so that a burst is not
    run one request after another.

    Before (session 5), one thread at a time read (leader/follower): the reader ran the
    request it read and woke an idle thread to read next, a second wake-up per request,
    whose thread took the GIL from the request's own on its way to its read; and until it
    ran, nobody read. When stdin is not a pipe (a terminal, a file) the threads read in
    turn, keeping a line a read cut in two."""

    maxThreads = 1024

    def __init__(self, locks, lag_file):
        self.locks, self.lag_file = locks, lag_file
        self.mu = threading.Lock()
        self.threads, self.reading = 1, 0   # the calling thread; threads in (or at) a read
        self.pool = ThreadPoolExecutor(max_workers=self.maxThreads)
        self.size, self.turns = 1 << 16, None
        try:
            self.size = max(self.size, fcntl.fcntl(0, fcntl.F_GETPIPE_SZ))
        except OSError:
            self.turns, self.partial = threading.Lock(), b""  # not a pipe: one read at a time

    def lines(self):
        """The next read's request lines."""
        if self.turns:
            with self.turns:
                while b"\n" not in self.partial:
                    chunk = os.read(0, self.size)
                    if not chunk:
                        self.end()
                    self.partial += chunk
                *lines, self.partial = self.partial.split(b"\n")
        else:
            chunk = os.read(0, self.size)
            if not chunk:
                self.end()
            if not chunk.endswith(b"\n"):
                sys.stderr.write("redis_lock_driver: a read of stdin ended inside a line (%d bytes): a request "
                                 "longer than PIPE_BUF, or written in more than one write(2)\n" % len(chunk))
                os._exit(3)
            lines = chunk.split(b"\n")
        reqs = [json.loads(line) for line in lines if line.strip()]
        if lag:
            for req in reqs:
                if req["type"] != "ping":
                    read(req)
        return reqs

    def loop(self):
        while True:
            with self.mu:
                self.reading += 1
            reqs = self.lines()
            with self.mu:
                self.reading -= 1
                grow = self.reading == 0 and self.threads < self.maxThreads
                if grow:
                    self.threads += 1
            if grow:  # _thread's start does not wait for the thread to run, as Thread.start does
                _thread.start_new_thread(self.loop, ())
            for req in reqs[1:]:
                self.pool.submit(self.run, req)
            if reqs:
                self.run(reqs[0])

    def run(self, req):
        if req["type"] == "ping":
            send({"type": "pong", "id": req["id"]})
        else:
            handle(self.locks, req)

    def end(self):
        """stdin closed: lockbench is done with us."""
        if self.lag_file:
            lag.dump(self.lag_file, self.threads + len(self.pool._threads))
        os._exit(0)


if __name__ == "__main__":
    main()
