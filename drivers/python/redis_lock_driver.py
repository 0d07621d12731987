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
from concurrent.futures import ThreadPoolExecutor

import redis
from redis.exceptions import LockError, LockNotOwnedError

out_lock = threading.Lock()


def send(msg):
    line = json.dumps(msg, separators=(",", ":")) + "\n"
    with out_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


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
        if not lock.acquire(blocking=True, blocking_timeout=req["timeout_ms"] / 1000.0):
            return {"type": "timeout"}
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
        try:
            lock.release()
        except LockNotOwnedError:
            return {"type": "not_owner"}
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
    try:
        reply = getattr(locks, req["type"])(req)
    except Exception as e:  # a Redis or network error: the request's error, not the driver's
        reply = {"type": "error", "message": "%s: %s" % (type(e).__name__, e)}
    reply["id"] = req["id"]
    send(reply)


def main():
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
    pool = ThreadPoolExecutor(max_workers=1024)
    for line in sys.stdin:
        req = json.loads(line)
        if req["type"] == "ping":
            send({"type": "pong", "id": req["id"]})
        else:
            pool.submit(handle, locks, req)
    os._exit(0)  # stdin closed: lockbench is done with us


if __name__ == "__main__":
    main()
