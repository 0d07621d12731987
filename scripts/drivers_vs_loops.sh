#!/usr/bin/env bash
# scripts/drivers_vs_loops.sh — each reference driver (drivers/) against the same library
# driven directly in its own language (drivers/*/loop.*), on the hot key: 100 workers, one
# key, hold 1 ms (issue 33: "each reference driver at >= 0.8 x its direct loop").
#
# A fair comparison on a shared machine, whose speed moves minute to minute:
#   - one dedicated redis-server (loopback, free port, --save '' --appendonly no) for every run;
#   - the same duration, workers, hold, ttl (10s) and acquire timeout (5s) on both sides; no
#     warm-up on either (lockbench --warmup 0; the loops measure from their start);
#   - driver and loop runs alternate, the order flipping each round (driver first in odd
#     rounds, loop first in even ones), so that a drift of the machine hits both alike;
#   - each round gives one ratio (driver acquires/s / loop acquires/s); the table prints each
#     round's pair and the median ratio, with the load average before and after and the
#     hypervisor's steal over each run (/proc/stat; on a VM whose host runs other guests),
#     and the median of the rounds where neither run saw 5 % of steal or more;
#   - a round where either run saw 5 % of steal or more is run again, both runs, at most
#     --retakes times a library; the table counts the rounds set aside.
#
# Usage: scripts/drivers_vs_loops.sh [--bin LOCKBENCH] [--rounds N] [--duration SEC] [--only NAMES] [--lag] [--retakes N]
#   --bin       a lockbench binary (default: built from this checkout into a temp dir)
#   --rounds    rounds per library (default 3)
#   --duration  seconds per run (default 2)
#   --only      comma-separated subset of: redlock,redlock-extend,mutex,semaphore,redis-py
#   --lag       run the drivers with their lag diagnostics (LOCKBENCH_PY_LAG_FILE,
#               LOCKBENCH_NODE_LAG_FILE; docs/drivers.md) and print each driver run's
#               figures after the table: where a cycle's time goes (they cost the driver a
#               little: leave them off for the ratios that count)
#   --retakes   rounds run again for steal at most, per library (default: --rounds)
# With the defaults it takes 2 to 3 minutes (5 libraries x 3 rounds x 2 runs of 2 s, plus
# each process's start and lockbench's end of phase, 3 to 5 s a run on a busy machine);
# --rounds 5 --duration 3 is steadier when there is time. It needs node with drivers/node/node_modules (npm ci) and
# /usr/bin/python3 with redis (python3-redis), as scripts/test.sh installs them.
#
# The table goes to stdout, progress to stderr. Every process it starts is stopped by pid on
# exit; every run is bounded by `timeout`. Exit 2 when something it needs is missing.
set -Eeuo pipefail
me=drivers_vs_loops
. "$(dirname "$0")/lib.sh"

rounds=3
duration=2
bin=""
only="redlock,redlock-extend,mutex,semaphore,redis-py"
lag=""
retakes=""
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --lag) lag=1; shift ;;
    --retakes) retakes=$2; shift 2 ;;
    -h|--help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "drivers_vs_loops.sh: unknown argument $1; valid: --bin, --rounds, --duration, --only, --lag, --retakes" >&2; exit 2 ;;
  esac
done
lib_count rounds "$rounds" "an integer >= 1"
lib_count duration "$duration" "whole seconds >= 1"
retakes=${retakes:-$rounds}
case $retakes in ''|*[!0-9]*) echo "drivers_vs_loops.sh: invalid --retakes $retakes; valid: a whole number, 0 for none" >&2; exit 2 ;; esac

IFS=, read -r -a libs <<<"$only"
for lib in "${libs[@]}"; do
  case $lib in redlock|redlock-extend|mutex|semaphore|redis-py) ;; *) echo "drivers_vs_loops.sh: unknown library $lib in --only; valid: redlock,redlock-extend,mutex,semaphore,redis-py" >&2; exit 2 ;; esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v node >/dev/null || die "node not found"
[ -d drivers/node/node_modules/redlock ] || die "drivers/node/node_modules missing: (cd drivers/node && npm ci)"
/usr/bin/python3 -c 'import redis' 2>/dev/null || die "/usr/bin/python3 cannot import redis (apt-get install -y python3-redis)"

lib_start
lib_redis

# bounded RUN OUT CMD...: run CMD with its stdout to OUT, under timeout.
bounded() {
  local out=$1 rc=0
  shift
  timeout -k 5 $((duration + 60)) "$@" >"$out" 2>"$out.err" &
  run_pid=$!
  wait "$run_pid" || rc=$?
  run_pid=""
  return "$rc"
}

# ticks: the machine's steal and total CPU ticks so far (/proc/stat's first line), "0 0" where
# there is none; before and after each run, for the steal over it.
ticks() {
  awk '/^cpu / { t = 0; for (i = 2; i <= 9 && i <= NF; i++) t += $i; print (NF >= 9 ? $9 : 0), t; exit }' /proc/stat 2>/dev/null || echo "0 0"
}

# driver LIB OUT: the reference driver of LIB through lockbench; acquires/s to OUT.
driver() {
  local strategy
  case $1 in
    redis-py) strategy="driver:/usr/bin/python3 drivers/python/redis_lock_driver.py" ;;
    *) strategy="driver:node drivers/node/driver.js $1" ;;
  esac
  local diag=()
  [ -n "$lag" ] && diag=(env LOCKBENCH_PY_LAG_FILE="$2.lag" LOCKBENCH_NODE_LAG_FILE="$2.lag")
  ticks >"$2.t0"
  bounded "$2.json" "${diag[@]}" "$bin" run --redis "$addr" --strategy "$strategy" -w 100 --keys 1 --hold 1ms \
    --ttl 10s --acquire-timeout 5s -d "${duration}s" --warmup 0 --format json --quiet ||
    { log "$1: lockbench failed: $(tail -n 3 "$2.json.err")"; echo 0 >"$2"; ticks >"$2.t1"; return; }
  ticks >"$2.t1"
  /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["acquire_rate_per_s"], r["latency_us"]["acquire"]["p50"], r["verdict"])' "$2.json" >"$2"
}

# loop LIB OUT: the same library in its own language's loop; acquires/s to OUT.
loop() {
  local cmd
  case $1 in
    redis-py) cmd=(/usr/bin/python3 drivers/python/loop.py 100 "$duration" 1 10000) ;;
    *) cmd=(node drivers/node/loop.js "$1" 100 "$duration" 1 10000) ;;
  esac
  ticks >"$2.t0"
  bounded "$2.json" env LOCKBENCH_REDIS_ADDR="$addr" "${cmd[@]}" ||
    { log "$1: loop failed: $(tail -n 3 "$2.json.err")"; echo 0 >"$2"; ticks >"$2.t1"; return; }
  ticks >"$2.t1"
  /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["acquires_per_s"], r["acquire_p50_us"], "-")' "$2.json" >"$2"
}


# stolen RUN: the steal over RUN (its .t0 and .t1 ticks), in %.
stolen() {
  awk 'NR == FNR { s0 = $1; t0 = $2; next } { printf "%.2f", ($2 > t0) ? 100 * ($1 - s0) / ($2 - t0) : 0 }' "$1.t0" "$1.t1"
}

start=$(date +%s)
for lib in "${libs[@]}"; do
  left=$retakes
  echo 0 >"$tmp/$lib.retaken"
  for r in $(seq 1 "$rounds"); do
    while :; do
      load >"$tmp/$lib.$r.load0"
      if [ $((r % 2)) -eq 1 ]; then
        driver "$lib" "$tmp/$lib.$r.driver"; loop "$lib" "$tmp/$lib.$r.loop"
      else
        loop "$lib" "$tmp/$lib.$r.loop"; driver "$lib" "$tmp/$lib.$r.driver"
      fi
      load >"$tmp/$lib.$r.load1"
      sd=$(stolen "$tmp/$lib.$r.driver")
      sl=$(stolen "$tmp/$lib.$r.loop")
      if [ "$left" -gt 0 ] && awk -v a="$sd" -v b="$sl" -v lim="$lib_steal" 'BEGIN { exit !(a >= lim || b >= lim) }'; then
        left=$((left - 1))
        echo $(($(cat "$tmp/$lib.retaken") + 1)) >"$tmp/$lib.retaken"
        log "$lib round $r: steal $sd/$sl % (driver/loop): run again ($left retakes left)"
        continue
      fi
      break
    done
    log "$lib round $r: driver $(cut -d' ' -f1 "$tmp/$lib.$r.driver")/s, loop $(cut -d' ' -f1 "$tmp/$lib.$r.loop")/s (load $(cat "$tmp/$lib.$r.load0") -> $(cat "$tmp/$lib.$r.load1"))"
  done
done

LIB_STEAL=$lib_steal /usr/bin/python3 - "$tmp" "$rounds" "$duration" "$(($(date +%s) - start))" "$lag" "${libs[@]}" <<'EOF'
import statistics, sys
import json, os
tmp, rounds, duration, took, lag, libs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:]
STEAL = float(os.environ["LIB_STEAL"])  # lib.sh's lib_steal: a round with as much on either side is the neighbours'
def read(p):
    f = open(p).read().split()
    return float(f[0]), f[1], f[2]
def steal(p):
    """The hypervisor's steal over one run, in % of the machine's CPU (0 without the column)."""
    try:
        s0, t0 = map(int, open(p + ".t0").read().split())
        s1, t1 = map(int, open(p + ".t1").read().split())
    except (OSError, ValueError):
        return 0.0
    return 100.0 * (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0
print("hot key: 100 workers, 1 key, hold 1ms, ttl 10s, %ss per run, %d rounds alternating driver and loop (%ss in all)" % (duration, rounds, took))
print()
print("| library | round: driver / loop acquires/s (ratio) [load before-after; steal driver/loop] | median ratio | >= 0.8 | median of rounds under %.0f %% steal |" % STEAL)
print("|---|---|---|---|---|")
for lib in libs:
    cells, ratios, clean = [], [], []
    for r in range(1, rounds + 1):
        base = "%s/%s.%d" % (tmp, lib, r)
        d, dp50, verdict = read(base + ".driver")
        l, lp50, _ = read(base + ".loop")
        ratio = d / l if l else float("nan")
        ratios.append(ratio)
        sd, sl = steal(base + ".driver"), steal(base + ".loop")
        if max(sd, sl) < STEAL:
            clean.append(ratio)
        note = "" if verdict in ("safe", "-") else " " + verdict
        cells.append("%d: %.0f / %.0f (%.2f)%s [%s-%s; %.0f/%.0f %%]" % (r, d, l, ratio, note,
                     open(base + ".load0").read().strip(), open(base + ".load1").read().strip(), sd, sl))
    m = statistics.median(ratios)
    c = "%.3f (%d of %d)" % (statistics.median(clean), len(clean), rounds) if clean else "none (0 of %d)" % rounds
    retaken = int(open("%s/%s.retaken" % (tmp, lib)).read())
    if retaken:
        c += "; %d round%s run again for steal" % (retaken, "" if retaken == 1 else "s")
    print("| %s | %s | %.3f | %s | %s |" % (lib, "; ".join(cells), m, "yes" if m >= 0.8 else "no", c))
if lag:
    print()
    print("The drivers' lag diagnostics, per driver run (the last line its driver wrote; Python: stage mean / p50 µs):")
    print()
    for lib in libs:
        for r in range(1, rounds + 1):
            p = "%s/%s.%d.driver.lag" % (tmp, lib, r)
            lines = open(p).read().split("\n") if os.path.exists(p) else []
            lines = [json.loads(l) for l in lines if l.strip()]
            if not lines:
                continue
            d = lines[-1]
            if "cpu_us_per_grant" in d:
                stages = ["grant_write", "lockbench_hold", "release_handoff", "release_call", "release_write",
                          "lockbench_turnaround", "acquire_handoff", "key_idle"]
                text = "CPU/grant %s µs; " % d["cpu_us_per_grant"] + ", ".join(
                    "%s %.0f / %.0f" % (k, d[k]["mean"], d[k]["p50"]) for k in stages if k in d)
            else:
                text = json.dumps(d)
            print("- %s round %d: %s" % (lib, r, text))
EOF
