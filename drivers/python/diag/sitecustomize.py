"""A diagnostic, for the driver and loop.py alike: with this directory on PYTHONPATH and
LOCKBENCH_PY_REDIS_STAMPS=PATH set, every redis-py command is timed in four parts, and one
JSON line is appended to PATH when the process ends (os._exit included, which the driver
ends with):

    PYTHONPATH=drivers/python/diag LOCKBENCH_PY_REDIS_STAMPS=/tmp/stamps ...

- pre:  the call began, until the command went to the socket (the pool's connection, its
        can_read check, packing);
- send: the socket's send;
- wait: the send returned, until the reply was parsed (Redis, the thread's wake-up, the GIL);
- post: the reply parsed, until the call returned.

Per command (SET split into SET_ok, the grant, and SET_fail, a waiter's poll): count, mean,
p50 and p90 in µs. It wraps redis-py's Redis.execute_command, Connection.send_packed_command
and Connection.read_response, so it costs a little: leave it off for rates that count.
docs/drivers.md reads its figures."""
import json
import os
import threading
import time

if os.environ.get("LOCKBENCH_PY_REDIS_STAMPS"):
    import redis.client
    import redis.connection

    _now = time.perf_counter_ns
    _stages = {}
    _tl = threading.local()
    _conn = redis.connection.Connection
    _send, _read = _conn.send_packed_command, _conn.read_response
    _execute = redis.client.Redis.execute_command

    def _add(k, ns):
        _stages.setdefault(k, []).append(ns / 1000.0)

    def send_packed_command(self, command, check_health=True):
        _tl.presend = _now()
        r = _send(self, command, check_health)
        _tl.sent = _now()
        return r

    def read_response(self, disable_decoding=False):
        r = _read(self, disable_decoding)
        _tl.recvd = _now()
        return r

    def execute_command(self, *args, **options):
        t0 = _now()
        r = _execute(self, *args, **options)
        t1 = _now()
        name = str(args[0])
        if name == "SET":
            name = "SET_ok" if r else "SET_fail"
        _add(name + ".pre", _tl.presend - t0)
        _add(name + ".send", _tl.sent - _tl.presend)
        _add(name + ".wait", _tl.recvd - _tl.sent)
        _add(name + ".post", t1 - _tl.recvd)
        return r

    def _dump():
        if not _stages:
            return
        out = {}
        for k, v in sorted(_stages.items()):
            v.sort()
            out[k] = {"n": len(v), "mean": round(sum(v) / len(v)), "p50": round(v[len(v) // 2]),
                      "p90": round(v[int(len(v) * 0.9)])}
        with open(os.environ["LOCKBENCH_PY_REDIS_STAMPS"], "a") as f:
            f.write(json.dumps(out) + "\n")
        _stages.clear()

    _exit = os._exit

    def _exit_dumping(code):
        _dump()
        _exit(code)

    _conn.send_packed_command, _conn.read_response = send_packed_command, read_response
    redis.client.Redis.execute_command = execute_command
    os._exit = _exit_dumping
    import atexit
    atexit.register(_dump)
