#!/usr/bin/env bash
# scripts/bench.sh — lockbench's performance targets, measured as ratios within ONE run on
# this machine (issue 7). Nothing here is an absolute threshold: every target is derived from
# what the same run measured (the Redis server's ceiling for the token command mix, the
# loopback RTT, the hold time the run actually saw).
#
# What it does, in order:
#   1. builds the lockbench binary once into a temp dir;
#   2. runs the two hot-path rows with `go test -bench` (the only rows that use go test:
#      BenchmarkRecordCycle in ./workload, BenchmarkAcquireRelease/token in ./strategies,
#      which starts its own redis-server through the test helper);
#   3. starts ONE dedicated redis-server (--save '' --appendonly no, loopback, free port);
#   4. measures the loopback RTT: redis-benchmark -c 1 -P 1 PING_MBULK, RTT = 1/rps, the
#      median of 3 rounds (one round hit by other work on the box must not move it). Chosen
#      over `redis-cli --latency` because it times 10 000 back-to-back round trips, like the
#      busy hot-key handoff chain it is compared with, in the multibulk protocol real clients
#      use; redis-cli --latency sleeps 10 ms between ~100 samples, so it mostly measures
#      wake-up latency of an idle box. Its figure is printed too, for reference only;
#   5. measures the server ceiling for the `token` mix with redis-benchmark -c 50 -P 16 over
#      100 000 random keys: SET k v NX PX 10000 and EVALSHA of strategies/lua/unlock.lua
#      (lockbench's own compare-and-delete); cycle ceiling = 1 / (1/set_rps + 1/evalsha_rps).
#      One unmeasured warm-up pass, then per round four measured passes, best of each command
#      (a ceiling is the best the server did): two just before and two just after the spread
#      run the round's ceiling is compared with (the VM's speed drifts minute to minute). Bias, kept as the issue specifies: after the first pass
#      most SET NX find the key (cheaper than a successful SET) and the script's GET never
#      matches `tok` (no DEL), so the ceiling is, if anything, slightly optimistic;
#   6. runs the lockbench scenarios, each naming its wait (spread and open loop --wait backoff, the
#      hot-key rows --wait pubsub: they measure lockbench's scheduler; token and redisson-lock
#      --wait native on the hot key, for information), (spread, hot key notified, hot key fair, hot key as a fleet
#      of 4 processes, open loop: each
#      --rounds times, the best round of each kept; scale once)
#      with the binary, always against that server through --redis (never a spawned one),
#      --format json --quiet, each under /usr/bin/time -v (peak RSS, client CPU);
#      the scale row's redlock phase runs against 5 extra redis-servers started only for it;
#      each spread round ends with the client's floor on the same server: scripts/rueidisfloor,
#      the same SET NX PX + EVALSHA cycle from 1000 goroutines through rueidis with nothing of
#      lockbench around it (reported, no target: what part of the client's CPU is lockbench's);
#   7. prints a markdown report (scripts/bench_report.py): header, ceiling and RTT, the table
#      `| scenario | figure | value | target | ratio | met |`, per-run details, a summary. The
#      spread is judged on its median round as well as its best (steady, not lucky), and on
#      lockbench's CPU per acquire against the same round's Redis CPU per acquire; the report
#      names the rounds the VM's drift spoiled (Redis dearer per acquire than in the cheapest
#      round, or a ceiling that moved between the passes before and after the run). Every
#      hot-notified round is checked on issue 32's pair: lockbench's CPU within 25 % of one
#      core and the hold error's p99 within 50 µs (from the result's client and hold_error_us).
#
# A round whose window the hypervisor took --max-steal % of the machine from (the result's
# client.host_steal_percent: on a VM whose host runs other guests, its vCPUs wait, and Redis
# and lockbench both lose that time) is set aside and run again, at most --retakes times a
# row: the spread, hot-key, fleet and open-loop rows, not the scale row (its targets are
# memory and fairness). The set-aside runs keep their files (NAME.spoiled-K.*) and the
# report lists them; a row out of retakes keeps its last run, steal and all.
#
# The report goes to stdout, progress to stderr. Raw files (JSON per scenario, /usr/bin/time
# output, redis-benchmark CSV, go test output, report.md) are kept with --out DIR; otherwise
# they live in a temp dir that is removed.
#
# Exit status: 0 when the report was produced, whatever it says — this reports, it does not
# judge CI; with --strict, 1 when a target is not met. 2 when the bench itself failed (a
# missing tool, a build error, a server that would not start).
#
# Every process this starts is stopped by pid on exit, on error and on Ctrl-C; every load is
# bounded in time (lockbench by its duration plus a margin under `timeout`, redis-benchmark
# by its request count under `timeout`). Default wall time: about 8 minutes on a quiet host,
# up to about 14 when every retake is spent.
set -Eeuo pipefail
# Job control: each background load gets its own process group, so cleanup can stop a
# `timeout -> /usr/bin/time -> lockbench` chain as a whole by its leader's pid.
set -m

usage() {
  cat <<'EOF'
Usage: scripts/bench.sh [--out DIR] [--strict] [--rounds N] [--duration SEC] [--scale-duration SEC] [--warmup SEC]

Measures lockbench's performance targets as ratios within one run on this machine and prints
a markdown report on stdout (progress on stderr).

  --out DIR              keep every scenario's raw JSON, /usr/bin/time output, redis-benchmark
                         CSV, go test output and report.md in DIR (default: a removed temp dir)
  --strict               exit 1 when a target is not met (default: exit 0, report only)
  --rounds N             rounds of the spread, hot-key and open-loop rows; the report keeps
                         each row's best round (the spread's median round too) and lists
                         all (default 3)
  --duration SEC         measured seconds per scenario (default 10)
  --scale-duration SEC   measured seconds per strategy in the scale row (default 30)
  --warmup SEC           unrecorded seconds before each measurement (default 2)
  --max-steal PCT        a round whose window lost this share of the machine's CPU to the
                         hypervisor (steal) is set aside and run again (default 5; 100 never)
  --retakes N            runs set aside and taken again at most, per row (default 3)
EOF
}

out_dir=""
strict=0
duration=10
rounds=3
scale_duration=30
warmup=2
max_steal=5
retakes=3
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out_dir=$2; shift 2 ;;
    --out=*) out_dir=${1#--out=}; shift ;;
    --strict) strict=1; shift ;;
    --rounds) [ $# -ge 2 ] || { usage >&2; exit 2; }; rounds=$2; shift 2 ;;
    --duration) [ $# -ge 2 ] || { usage >&2; exit 2; }; duration=$2; shift 2 ;;
    --scale-duration) [ $# -ge 2 ] || { usage >&2; exit 2; }; scale_duration=$2; shift 2 ;;
    --warmup) [ $# -ge 2 ] || { usage >&2; exit 2; }; warmup=$2; shift 2 ;;
    --max-steal) [ $# -ge 2 ] || { usage >&2; exit 2; }; max_steal=$2; shift 2 ;;
    --retakes) [ $# -ge 2 ] || { usage >&2; exit 2; }; retakes=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done
for v in "$duration" "$scale_duration" "$warmup"; do
  case "$v" in
    ''|*[!0-9]*) echo "bench.sh: durations are whole seconds, got '$v'" >&2; exit 2 ;;
  esac
done
case "$rounds" in
  ''|*[!0-9]*|0) echo "bench.sh: --rounds is a whole number of at least 1, got '$rounds'" >&2; exit 2 ;;
esac
case "$retakes" in
  ''|*[!0-9]*) echo "bench.sh: --retakes is a whole number (0 for none), got '$retakes'" >&2; exit 2 ;;
esac
case "$max_steal" in
  ''|*[!0-9.]*|*.*.*|.) echo "bench.sh: --max-steal is a percentage from 0 to 100, got '$max_steal'" >&2; exit 2 ;;
esac
if [ "$duration" -lt 1 ] || [ "$scale_duration" -lt 1 ]; then
  echo "bench.sh: durations must be at least 1 second" >&2
  exit 2
fi

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 2; }

# ---- required tools -------------------------------------------------------------------------
missing=0
need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "bench.sh: '$1' not found: $2" >&2
    missing=1
  fi
}
need go "install Go (go.mod asks for 1.26)"
need redis-server "apt-get install -y redis-server"
need redis-cli "apt-get install -y redis-tools"
need redis-benchmark "apt-get install -y redis-tools"
need python3 "apt-get install -y python3 (parses the JSON results)"
need timeout "coreutils' timeout bounds every load"
if [ ! -x /usr/bin/time ] || ! /usr/bin/time -v true >/dev/null 2>&1; then
  echo "bench.sh: GNU time (/usr/bin/time -v) not found: apt-get install -y time" >&2
  missing=1
fi
[ "$missing" -eq 0 ] || exit 2

# --out is relative to the caller's directory: resolve it before leaving it.
if [ -n "$out_dir" ]; then
  mkdir -p -- "$out_dir" || { echo "bench.sh: cannot create --out $out_dir" >&2; exit 2; }
  out_dir=$(cd -- "$out_dir" && pwd)
fi

# Work from the repository root whatever the current directory.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
if [ ! -f go.mod ] || [ ! -f strategies/lua/unlock.lua ]; then
  die "not a lockbench checkout: $root"
fi

# ---- cleanup: every process we started, by pid ----------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lockbench-bench.XXXXXX")
redis_pids=()   # redis-servers we started
load_pid=""     # the running load's process-group leader (timeout), if any
# shellcheck disable=SC2317  # reached through the EXIT trap, which shellcheck 0.9 cannot see
cleanup() {
  local rc=$?
  trap - EXIT INT TERM ERR
  if [ -n "$load_pid" ]; then
    kill -TERM -- "-$load_pid" 2>/dev/null || true
    wait "$load_pid" 2>/dev/null || true
  fi
  local p
  for p in "${redis_pids[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
  done
  for p in "${redis_pids[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM
trap 'log "error: line $LINENO: $BASH_COMMAND failed"; exit 2' ERR

if [ -n "$out_dir" ]; then
  out=$out_dir
else
  out="$tmp/out"
  mkdir -p "$out"
fi
report="$out/report.md"
: >"$report"
say() { printf '%s\n' "$*" | tee -a "$report"; }

# run_bounded SECS OUT ERR CMD...: run a load in the background (own process group) under
# `timeout`, wait for it, return its status. Waiting with `wait` keeps Ctrl-C responsive.
run_bounded() {
  local secs=$1 o=$2 e=$3 rc=0
  shift 3
  timeout -k 5 "$secs" "$@" >"$o" 2>"$e" &
  load_pid=$!
  wait "$load_pid" || rc=$?
  load_pid=""
  return "$rc"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# start_redis NAME: start a dedicated redis-server on a free loopback port; sets
# started_port and started_pid.
started_port=""
started_pid=""
start_redis() {
  local name=$1 attempt port pid i
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --daemonize no --logfile "$out/redis-$name.log" >/dev/null 2>&1 &
    pid=$!
    redis_pids+=("$pid")
    for i in $(seq 1 50); do
      if ! kill -0 "$pid" 2>/dev/null; then break; fi
      if [ "$(redis-cli -p "$port" PING 2>/dev/null)" = "PONG" ]; then
        started_port=$port
        started_pid=$pid
        return 0
      fi
      sleep 0.1
    done
    stop_redis "$pid"
    log "redis-server $name did not start on port $port (attempt $attempt)"
  done
  die "redis-server $name would not start; see $out/redis-$name.log"
}

stop_redis() { # stop_redis PID: stop one server we started and forget it
  local p keep=()
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  for p in "${redis_pids[@]}"; do
    if [ "$p" != "$1" ]; then keep+=("$p"); fi
  done
  redis_pids=("${keep[@]}")
}

# csv_rps FILE: requests/s from redis-benchmark --csv output (last line, second field).
csv_rps() {
  awk -F'","' 'END { v = $2; gsub(/"/, "", v); print v }' "$1"
}

# lockbench NAME SECS ARGS...: one lockbench run under /usr/bin/time -v; NAME.json, NAME.err,
# NAME.time in $out. A failed run is recorded (the report shows "error"), not fatal.
lockbench() {
  local name=$1 secs=$2 rc=0
  shift 2
  log "run $name: lockbench run $*"
  run_bounded "$secs" "$out/$name.json" "$out/$name.err" \
    /usr/bin/time -v -o "$out/$name.time" "$lb" run --format json --quiet "$@" || rc=$?
  if [ "$rc" -ne 0 ]; then
    log "run $name failed (exit $rc); see $out/$name.err"
    echo "exit $rc" >>"$out/$name.err"
  fi
  return 0
}

flush() { redis-cli -p "$port" FLUSHALL >/dev/null; }

# steal NAME: the hypervisor's share of the machine's CPU over NAME.json's window, in %
# (client.host_steal_percent); nothing when the run left no such figure.
steal() {
  python3 - "$out/$1.json" <<'EOF' 2>/dev/null || true
import json, sys
st = json.load(open(sys.argv[1]))["results"][0]["client"].get("host_steal_percent")
if st is not None:
    print(f"{st:.1f}")
EOF
}

# retake NAME: whether NAME, just run, is set aside to be run again: its window's steal
# reached --max-steal and its row ($left, reset before each row) has retakes left. The files
# move to NAME.spoiled-K.* and the run goes on record in retaken.txt for the report.
retake() {
  local name=$1 st k f
  st=$(steal "$name")
  [ -n "$st" ] && [ "$left" -gt 0 ] || return 1
  python3 -c "import sys; sys.exit(0 if $st >= $max_steal else 1)" || return 1
  left=$((left - 1))
  k=1
  while [ -e "$out/$name.spoiled-$k.json" ]; do k=$((k + 1)); done
  for f in json err time; do
    if [ -e "$out/$name.$f" ]; then mv "$out/$name.$f" "$out/$name.spoiled-$k.$f"; fi
  done
  echo "$name $st" >>"$out/retaken.txt"
  log "$name: the hypervisor took $st % of the machine (--max-steal $max_steal): set aside, run again ($left retakes left in this row)"
  return 0
}

# take NAME SECS ARGS...: one round of a row, run again while retake sets it aside.
take() {
  local name=$1
  while :; do
    flush
    lockbench "$@"
    retake "$name" || return 0
  done
}

start_epoch=$(date +%s)

# ---- build ----------------------------------------------------------------------------------
log "building lockbench"
lb="$tmp/lockbench"
go build -o "$lb" . || die "go build failed"
floor="$tmp/rueidisfloor"
go build -o "$floor" ./scripts/rueidisfloor || die "go build ./scripts/rueidisfloor failed"

# ---- header ---------------------------------------------------------------------------------
rev="unknown"
if command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; then
  rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  dirty=$(git status --porcelain 2>/dev/null | wc -l)
  if [ "$dirty" -gt 0 ]; then rev="$rev+dirty ($dirty paths changed)"; fi
fi
say "# lockbench bench ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
say ""
say "- machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, kernel $(uname -r)"
say "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the box skews every figure)"
say "- redis: $(redis-server --version | sed 's/^Redis server //')"
say "- go: $(go version | sed 's/^go version //')"
say "- lockbench: $rev"
say "- durations: warmup ${warmup}s, measured ${duration}s per scenario round (${rounds} rounds of spread, hot key, fleet and open loop), ${scale_duration}s per strategy in the scale row"
say "- steal: a round that lost ${max_steal} % of the machine or more to the hypervisor is set aside and run again, at most ${retakes} times a row (--max-steal, --retakes)"
say ""

# ---- hot path (go test) ---------------------------------------------------------------------
log "hot path: go test -bench BenchmarkRecordCycle"
rc=0
run_bounded 300 "$out/gotest-recordcycle.txt" "$out/gotest-recordcycle.err" \
  go test ./workload -run XXX -bench BenchmarkRecordCycle -benchmem -count 1 || rc=$?
[ "$rc" -eq 0 ] || log "go test ./workload failed (exit $rc); see $out/gotest-recordcycle.*"
log "hot path: go test -bench BenchmarkAcquireRelease/token"
rc=0
run_bounded 300 "$out/gotest-acquirerelease.txt" "$out/gotest-acquirerelease.err" \
  go test ./strategies -run XXX -bench 'BenchmarkAcquireRelease/token$' -benchmem -count 1 || rc=$?
[ "$rc" -eq 0 ] || log "go test ./strategies failed (exit $rc); see $out/gotest-acquirerelease.*"

# ---- the dedicated server, RTT and ceiling --------------------------------------------------
start_redis main
port=$started_port
addr="127.0.0.1:$port"
log "redis-server on $addr (pid $started_pid)"

log "loopback RTT: redis-benchmark -c 1 -P 1 -n 10000 PING_MBULK, 3 rounds"
ping_all=()
for round in 1 2 3; do
  run_bounded 60 "$out/rtt-$round.csv" "$out/rtt-$round.err" \
    redis-benchmark -p "$port" -c 1 -P 1 -n 10000 --csv -t ping_mbulk
  ping_all+=("$(csv_rps "$out/rtt-$round.csv")")
done
# The median round: one round disturbed by other work on the box moves nothing.
ping_rps=$(printf '%s\n' "${ping_all[@]}" | sort -g | sed -n 2p)
rtt_us=$(python3 -c "print(f'{1e6 / float(\"$ping_rps\"):.1f}')")
run_bounded 10 "$out/rtt-cli.txt" "$out/rtt-cli.err" redis-cli -p "$port" --latency --raw \
  || true
# redis-cli --latency --raw prints "min max avg samples" in ms after about one second.
cli_avg_ms=$(awk 'END { print $3 }' "$out/rtt-cli.txt")

log "server ceiling: redis-benchmark -c 50 -P 16 SET NX PX / EVALSHA unlock.lua"
sha=$(redis-cli -p "$port" SCRIPT LOAD "$(cat strategies/lua/unlock.lua)")
case "$sha" in
  [0-9a-f]*) ;;
  *) die "SCRIPT LOAD failed: $sha" ;;
esac
bench_set() {
  run_bounded 120 "$1" "$1.err" redis-benchmark -p "$port" -c 50 -P 16 -n "$2" -r 100000 \
    --csv SET 'key:__rand_int__' v NX PX 10000
}
bench_evalsha() {
  run_bounded 120 "$1" "$1.err" redis-benchmark -p "$port" -c 50 -P 16 -n "$2" -r 100000 \
    --csv EVALSHA "$sha" 1 'key:__rand_int__' tok
}
margin=60
common=(--redis "$addr" --warmup "${warmup}s")
t_run=$((warmup + duration + margin))
t_scale=$((warmup + scale_duration + margin))

# Each round brackets one spread run with the ceiling measured just before and just after
# it: on this shared VM the speed of the box moves from one minute to the next (a ceiling
# measured in a fast minute and a spread run in a slow one made the ratio say more about the
# minute than about lockbench), so the two sides of a ratio are measured seconds apart. The
# round's ceiling is the best of its four passes per command, before and after: a dip in the
# server's speed on one side of the spread run cannot lower it. The report checks the spread
# targets on the round with the best ratio to its own ceiling and on the median round, and
# says which rounds the VM's drift spoiled.
bench_set "$out/ceiling-warmup.csv" 300000
ceilings=()
ceiling_passes() { # ceiling_passes ROUND FIRST: two passes of each command, raising best_set and best_evalsha
  local round=$1 pass
  for pass in "$2" $(($2 + 1)); do
    bench_set "$out/ceiling-set-$round-$pass.csv" 300000
    bench_evalsha "$out/ceiling-evalsha-$round-$pass.csv" 300000
    best_set=$(python3 -c "print(max(float('$best_set'), float('$(csv_rps "$out/ceiling-set-$round-$pass.csv")')))")
    best_evalsha=$(python3 -c "print(max(float('$best_evalsha'), float('$(csv_rps "$out/ceiling-evalsha-$round-$pass.csv")')))")
  done
}
left=$retakes
for round in $(seq 1 "$rounds"); do
  while :; do
    best_set=0
    best_evalsha=0
    ceiling_passes "$round" 1
    flush
    lockbench "spread-$round" "$t_run" "${common[@]}" --duration "${duration}s" --strategy token \
      --wait backoff --workers 1000 --keys 100000 --key-dist uniform --hold 0s
    retake "spread-$round" || break # a retaken round measures its ceiling's first passes again
  done
  ceiling_passes "$round" 3
  flush
  # The client's floor in the same minute: a bare rueidis loop of the same cycle (no oracle,
  # no histograms, no wait policy), so that the report can say how much of lockbench's CPU
  # per acquire is rueidis and the goroutines', and how much lockbench's own.
  log "run floor-$round: scripts/rueidisfloor, 1000 workers, 100 000 keys"
  rc=0
  run_bounded "$t_run" "$out/floor-$round.json" "$out/floor-$round.err" \
    "$floor" -json -addr "$addr" -workers 1000 -keys 100000 -warmup "${warmup}s" -d "${duration}s" || rc=$?
  [ "$rc" -eq 0 ] || log "floor-$round failed (exit $rc); see $out/floor-$round.err"
  flush
  c=$(python3 -c "print(f'{1 / (1 / $best_set + 1 / $best_evalsha):.0f}')")
  ceilings+=("$c")
  log "round $round: SET NX PX $best_set/s, EVALSHA $best_evalsha/s: ceiling $c cycles/s"
  echo "$best_set $best_evalsha $c" >"$out/ceiling-$round.txt"
done

say "## Server ceiling and RTT (measured in this run)"
say ""
say "- loopback RTT: ${rtt_us} µs = 1 / ${ping_rps} PING/s, the median of 3 rounds (${ping_all[*]} PING/s) of redis-benchmark -c 1 -P 1 -n 10000 PING_MBULK, back-to-back; redis-cli --latency (idle, 10 ms apart, reference only): avg ${cli_avg_ms:-?} ms"
for round in $(seq 1 "$rounds"); do
  read -r s e c <"$out/ceiling-$round.txt"
  say "- round $round, around spread-$round: SET k v NX PX 10000 ${s} req/s, EVALSHA unlock.lua ${e} req/s (redis-benchmark -c 50 -P 16 -r 100000, the best of 4 passes of 300 000 each, 2 before and 2 after the spread run) -> token cycle ceiling 1 / (1/set + 1/evalsha) = ${c} cycles/s"
done
say ""

# ---- scenarios ------------------------------------------------------------------------------
# The other rows compared against the run's figures run --rounds times each too, and the
# report keeps each row's best round by its main figure (the highest acquire rate, the lowest
# p99): a round that other work on the shared box slowed down says nothing about lockbench.
# Every round is listed in the report.
left=$retakes
for round in $(seq 1 "$rounds"); do
  take "hot-notified-$round" "$t_run" "${common[@]}" --duration "${duration}s" \
    --strategy token --wait pubsub --workers 100 --keys 1 --hold 1ms
done
left=$retakes
for round in $(seq 1 "$rounds"); do
  take "hot-fair-$round" "$t_run" "${common[@]}" --duration "${duration}s" \
    --strategy fair --wait pubsub --workers 100 --keys 1 --hold 1ms
done
# The same hot key as a fleet, the shape services deploy: 4 processes of 25 workers (--procs
# starts them, merges their results and reports fairness across processes).
left=$retakes
for round in $(seq 1 "$rounds"); do
  take "hot-fleet-$round" "$t_run" "${common[@]}" --duration "${duration}s" \
    --strategy token --wait pubsub --procs 4 --workers 100 --keys 1 --hold 1ms
done

# For information (no target): each lock waiting its own way, as it ships (--wait native), on
# the same hot key as the pubsub rows above, which measure lockbench's scheduler.
for s in token redisson-lock; do
  flush
  lockbench "hot-native-$s" "$t_run" "${common[@]}" --duration "${duration}s" \
    --strategy "$s" --wait native --workers 100 --keys 1 --hold 1ms
done

# The open loop runs at half the fastest spread round's rate (the most demanding choice), and
# is compared with that round's p99.
read -r open_rate spread_round < <(python3 - "$out" "$rounds" <<'EOF'
import json, sys
best = (0.0, "")
for i in range(1, int(sys.argv[2]) + 1):
    try:
        r = json.load(open(f"{sys.argv[1]}/spread-{i}.json"))["results"][0]
    except Exception:
        continue
    best = max(best, (r.get("acquire_rate_per_s", r.get("acquire_rate", 0.0)), str(i)))
print(f"{0.5 * best[0]:.0f} {best[1] or '-'}")
EOF
)
if [ "$spread_round" != "-" ] && [ "$open_rate" != "0" ]; then
  log "open loop at $open_rate/s: half of spread round $spread_round"
  left=$retakes
  for round in $(seq 1 "$rounds"); do
    take "open-loop-$round" "$t_run" "${common[@]}" --duration "${duration}s" \
      --strategy token --wait backoff --workers 1000 --keys 100000 --key-dist uniform --hold 0s \
      --rate "$open_rate"
  done
else
  open_rate=""
  log "open loop skipped: no spread result"
  for round in $(seq 1 "$rounds"); do
    echo "skipped: no spread result to take 50 % of" >"$out/open-loop-$round.err"
  done
fi

# The scale row measures lockbench itself at 10 000 workers: its memory, and whether its own
# scheduling starves anyone. It waits with pubsub, whose per-process FIFO queue cannot let a
# newcomer barge past a waiter; with backoff, a few workers of 10 000 can lose every race for
# 30 s (newcomers try at once while losers sleep) — the policy's unfairness, which the hot-key
# rows already show, not lockbench's.
for s in token reentrant-local reentrant-hash fenced fair; do
  flush
  lockbench "scale-$s" "$t_scale" "${common[@]}" --duration "${scale_duration}s" \
    --strategy "$s" --workers 10000 --keys 1000 --wait pubsub
done

# redlock needs independent masters: 5 extra servers, for this phase only.
masters=()
master_pids=()
for i in 1 2 3 4 5; do
  start_redis "redlock-$i"
  masters+=("127.0.0.1:$started_port")
  master_pids+=("$started_pid")
done
redlock_addrs=$(IFS=,; echo "${masters[*]}")
lockbench scale-redlock "$t_scale" --redis "$redlock_addrs" --warmup "${warmup}s" \
  --duration "${scale_duration}s" --strategy redlock --workers 10000 --keys 1000 --wait pubsub
for p in "${master_pids[@]}"; do stop_redis "$p"; done

# ---- report ---------------------------------------------------------------------------------
end_epoch=$(date +%s)
{
  echo "ceilings=${ceilings[*]}"
  echo "set_rps=$best_set"
  echo "evalsha_rps=$best_evalsha"
  echo "rtt_us=$rtt_us"
  echo "open_rate=$open_rate"
  echo "open_from=${open_rate:+spread-$spread_round}"
  echo "rounds=$rounds"
  echo "max_steal=$max_steal"
  echo "retakes=$retakes"
  echo "scale_strategies=token reentrant-local reentrant-hash fenced fair redlock"
} >"$out/meta.txt"

python3 "$root/scripts/bench_report.py" "$out" | tee -a "$report"
say ""
say "wall time: $((end_epoch - start_epoch)) s; load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$out_dir" ]; then
  say "raw results: $out"
fi

read -r met total <"$out/summary.txt"
if [ "$strict" -eq 1 ] && [ "$met" -lt "$total" ]; then
  exit 1
fi
exit 0
