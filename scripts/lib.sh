# scripts/lib.sh — what the comparison scripts (lua_vs_token.sh, drivers_vs_loops.sh) share:
# their messages, the checks of their counts, one dedicated redis-server, the lockbench
# binary, and the cleanup that stops by pid whatever they started. Source it after setting
# `me` (the script's name in messages); it sets `tmp`, and lib_redis sets `addr`.

log() { echo "$me: $*" >&2; }

# lib_steal: a run that lost this share of the machine's CPU (%) or more to the hypervisor
# (steal) ran on the neighbours' time; its round is set aside, in the loop and in the table.
lib_steal=5
die() { log "$*"; exit 2; }

# lib_count FLAG VALUE WHAT: VALUE must be an integer >= 1, else a one-line usage error, exit 2.
lib_count() {
  case $2 in ''|*[!0-9]*|0) echo "$me.sh: invalid --$1 $2; valid: $3" >&2; exit 2 ;; esac
}

redis_pid=""
run_pid=""
lib_cleanup() {
  if [ -n "$run_pid" ]; then kill -TERM "$run_pid" 2>/dev/null || true; wait "$run_pid" 2>/dev/null || true; fi
  if [ -n "$redis_pid" ]; then kill -TERM "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}

# lib_start: the temp dir, the cleanup on every exit, and the lockbench binary in $bin
# (built from this checkout when --bin gave none).
lib_start() {
  command -v redis-server >/dev/null || die "redis-server not found (apt-get install -y redis-server)"
  tmp=$(mktemp -d "/tmp/$me.XXXXXX")
  trap lib_cleanup EXIT
  trap 'exit 130' INT TERM
  if [ -z "$bin" ]; then
    log "building lockbench"
    go build -o "$tmp/lockbench" . || die "go build failed"
    bin=$tmp/lockbench
  fi
}

# lib_redis: one redis-server on a free loopback port, no persistence; its address in $addr.
lib_redis() {
  local port
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
    --logfile "$tmp/redis.log" >/dev/null 2>&1 &
  redis_pid=$!
  for _ in $(seq 1 50); do
    [ "$(redis-cli -p "$port" PING 2>/dev/null)" = "PONG" ] && break
    kill -0 "$redis_pid" 2>/dev/null || die "redis-server did not start; see $tmp/redis.log"
    sleep 0.1
  done
  addr=127.0.0.1:$port
}

load() { cut -d' ' -f1 /proc/loadavg; }
