#!/usr/bin/python3
"""redis-py's Lock driven directly, without lockbench: the figure a driver run is compared
with (docs/drivers.md). Hot key: every worker thread takes one key, holds it, lets it go,
until the time is up.

    /usr/bin/python3 drivers/python/loop.py [WORKERS=100] [SECONDS=5] [HOLD_MS=1] [TTL_MS=10000]

Redis from LOCKBENCH_REDIS_ADDR (default 127.0.0.1:6379). Prints acquires/s and the p50.
"""
import json
import os
import sys
import threading
import time

import redis

workers, seconds, hold_ms, ttl_ms = ([int(a) for a in sys.argv[1:]] + [100, 5, 1, 10000][len(sys.argv) - 1:])[:4]
addr = os.environ.get("LOCKBENCH_REDIS_ADDR", "127.0.0.1:6379")
host, _, port = addr.rpartition(":")
r = redis.Redis(host=host, port=int(port), password=os.environ.get("LOCKBENCH_REDIS_PASSWORD") or None,
                max_connections=workers + 8)
if os.environ.get("LOCKBENCH_PY_SWITCH_INTERVAL"):  # as the driver's (docs/drivers.md)
    sys.setswitchinterval(float(os.environ["LOCKBENCH_PY_SWITCH_INTERVAL"]))
key = "lockbench-loop:%d" % os.getpid()
end = time.monotonic() + seconds
lat = []
timeouts = [0]
mu = threading.Lock()


def work():
    while time.monotonic() < end:
        t0 = time.perf_counter()
        lock = r.lock(key, timeout=ttl_ms / 1000.0)
        if not lock.acquire(blocking=True, blocking_timeout=5):
            with mu:
                timeouts[0] += 1
            continue
        d = time.perf_counter() - t0
        # Only what is acquired within the window counts, as lockbench counts it: a thread's
        # last acquire may end well after it (the library's retries).
        inside = time.monotonic() <= end
        time.sleep(hold_ms / 1000.0)
        lock.release()
        if inside:
            with mu:
                lat.append(d)


cpu0 = os.times()
threads = [threading.Thread(target=work) for _ in range(workers)]
for t in threads:
    t.start()
for t in threads:
    t.join()
cpu1 = os.times()
cpu = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) * 1e6
lat.sort()
print(json.dumps({
    "library": "redis-py %s" % redis.__version__, "workers": workers, "seconds": seconds, "hold_ms": hold_ms,
    "acquires_per_s": round(len(lat) / seconds), "acquire_p50_us": round(lat[len(lat) // 2] * 1e6) if lat else 0,
    "timeouts": timeouts[0], "cpu_us_per_acquire": round(cpu / len(lat)) if lat else 0,
}))
