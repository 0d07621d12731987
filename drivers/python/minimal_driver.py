#!/usr/bin/python3
"""A minimal lockbench driver: the token lock (SET NX PX, compare-and-delete) on redis-py."""
import json, os, sys, threading, time, uuid

import redis

host, _, port = os.environ.get("LOCKBENCH_REDIS_ADDR", "127.0.0.1:6379").rpartition(":")
r = redis.Redis(host=host, port=int(port), db=int(os.environ.get("LOCKBENCH_REDIS_DB", "0")),
                password=os.environ.get("LOCKBENCH_REDIS_PASSWORD") or None, max_connections=512)
unlock = r.register_script(
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0")
leases, out = {}, threading.Lock()


def send(msg):
    with out:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def acquire(req):
    token, deadline = uuid.uuid4().hex, time.monotonic() + req["timeout_ms"] / 1000
    while not r.set(req["key"], token, nx=True, px=req["ttl_ms"]):
        if time.monotonic() >= deadline:
            return {"type": "timeout"}
        time.sleep(0.001)
    leases[token] = req["key"]
    return {"type": "granted", "lease": token}


def release(req):
    key = leases.pop(req["lease"], None)
    if key is not None and unlock(keys=[key], args=[req["lease"]]) == 1:
        return {"type": "released"}
    return {"type": "not_owner"}


def abandon(req):
    leases.pop(req["lease"], None)
    return {"type": "abandoned"}


def handle(req):
    try:
        reply = {"acquire": acquire, "release": release, "abandon": abandon}[req["type"]](req)
    except Exception as e:
        reply = {"type": "error", "message": repr(e)}
    send(dict(reply, id=req["id"]))


send({"type": "hello", "protocol": 1, "name": "minimal token lock",
      "version": "redis-py " + redis.__version__, "supports": {}})
for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "ping":
        send({"type": "pong", "id": req["id"]})
    else:
        threading.Thread(target=handle, args=(req,), daemon=True).start()
