#!/usr/bin/env bash
# Replays every input of issue 30 ("A day of abuse, round two") and prints one line per case:
#
#   exit=N  <case>  <first line of its output>
#
# N is lockbench's exit code (124: the case's time bound cut it short, 137: killed 10s
# after the bound's signal). The first line is stderr's when the case failed and said
# something there, else stdout's; cases that check something a first line cannot show
# (a password in ps, keys without a ttl, a left directory) print what they found instead.
#
# It builds lockbench once, starts the servers the cases need on free loopback ports
# (redis-server, etcd with authentication, ZooKeeper, PostgreSQL with a password, a port
# that accepts and never answers), points lockbench's temporary directories at its own
# work directory, and at the end stops every process it started, by pid, and removes that
# directory. Every case is bounded with timeout. Run from anywhere: bash scripts/abuse.sh
set -u
cd "$(dirname "$0")/.."

WORK=$(mktemp -d /tmp/lockbench-abuse.XXXXXX)
chmod 711 "$WORK" # PostgreSQL runs as postgres below it
mkdir -p "$WORK/tmp" "$WORK/files"
export TMPDIR=$WORK/tmp # lockbench's spawn and fleet directories, kill -9 cases' included
PIDS=()                 # servers this script started
PG_DATA=""
STATES=()               # `target up` state files to take down

cleanup() {
  for st in "${STATES[@]}"; do
    timeout 20 "$LB" target down --state "$st" >/dev/null 2>&1
  done
  if [ -n "$PG_DATA" ] && [ -f "$PG_DATA/postmaster.pid" ]; then
    kill -TERM "$(head -1 "$PG_DATA/postmaster.pid")" 2>/dev/null
  fi
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
  done
  if [ -n "$PG_DATA" ] && [ -f "$PG_DATA/postmaster.pid" ]; then
    kill -KILL "$(head -1 "$PG_DATA/postmaster.pid")" 2>/dev/null
  fi
  wait 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

LB=$WORK/lockbench
echo "building lockbench ..." >&2
go build -o "$LB" . || exit 1
START=$(date +%s)

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
freeport() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
waitfor() { # seconds, command...: until the command succeeds
  local n=$(( $1 * 10 )); shift
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}

# --- servers ---------------------------------------------------------------------------
RP=$(freeport)
redis-server --port "$RP" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  --dir "$WORK" >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
R=(--redis "127.0.0.1:$RP")

SILENT=$(freeport) # accepts connections and never answers
"$PY" -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(128)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
' "$SILENT" &
PIDS+=($!)

EP=$(freeport); EPP=$(freeport)
ETCD_PW=etcd-Secret-42
etcd --name abuse --data-dir "$WORK/etcd" --listen-client-urls "http://127.0.0.1:$EP" \
  --advertise-client-urls "http://127.0.0.1:$EP" --listen-peer-urls "http://127.0.0.1:$EPP" \
  --initial-advertise-peer-urls "http://127.0.0.1:$EPP" --initial-cluster "abuse=http://127.0.0.1:$EPP" \
  >"$WORK/etcd.log" 2>&1 &
PIDS+=($!)

ZP=$(freeport)
mkdir -p "$WORK/zk"
printf 'tickTime=200\nminSessionTimeout=400\nmaxSessionTimeout=120000\ndataDir=%s\nclientPortAddress=127.0.0.1\nclientPort=%s\nmaxClientCnxns=0\nadmin.enableServer=false\n4lw.commands.whitelist=ruok\nforceSync=no\n' \
  "$WORK/zk/data" "$ZP" >"$WORK/zk/zoo.cfg"
java -Xmx256m -XX:+UseSerialGC -Dzookeeper.log.dir="$WORK/zk" -Dzookeeper.root.logger=WARN,CONSOLE \
  -cp /usr/share/java/zookeeper.jar org.apache.zookeeper.server.ZooKeeperServerMain "$WORK/zk/zoo.cfg" \
  >"$WORK/zk.log" 2>&1 &
PIDS+=($!)

PP=$(freeport)
PG_PW=pg-Secret-42
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ -n "$PGBIN" ]; then
  mkdir -p "$WORK/pg"
  [ "$(id -u)" = 0 ] && chown postgres "$WORK/pg"
  echo "$PG_PW" >"$WORK/pg/pw" && chmod 644 "$WORK/pg/pw"
  PG_DATA=$WORK/pg/data
  as_pg "$PGBIN/initdb" -D "$PG_DATA" -U lockbench --auth=scram-sha-256 --pwfile="$WORK/pg/pw" \
    --no-sync -E UTF8 --locale=C >"$WORK/pg.log" 2>&1
  as_pg "$PGBIN/postgres" -D "$PG_DATA" -k "$WORK/pg" -h 127.0.0.1 -p "$PP" -c fsync=off \
    -c max_connections=200 >>"$WORK/pg.log" 2>&1 &
  PIDS+=($!)
fi

waitfor 20 redis-cli -p "$RP" ping || { echo "redis-server did not start" >&2; exit 1; }
if waitfor 30 curl -fsS "http://127.0.0.1:$EP/health"; then
  for call in 'role/add {"name":"root"}' "user/add {\"name\":\"root\",\"password\":\"$ETCD_PW\"}" \
    'user/grant {"user":"root","role":"root"}' 'enable {}'; do
    curl -fsS -X POST "http://127.0.0.1:$EP/v3/auth/${call%% *}" -d "${call#* }" >/dev/null 2>&1
  done
else
  echo "etcd did not start: its cases will fail" >&2
fi
waitfor 60 bash -c "exec 3<>/dev/tcp/127.0.0.1/$ZP && echo ruok >&3 && grep -q imok <&3" ||
  echo "ZooKeeper did not start: its cases will fail" >&2
[ -n "$PGBIN" ] && { waitfor 30 "$PGBIN/pg_isready" -h 127.0.0.1 -p "$PP" || echo "PostgreSQL did not start" >&2; }
ETCD_URL="http://root:$ETCD_PW@127.0.0.1:$EP"
PG_URL="postgres://lockbench:$PG_PW@127.0.0.1:$PP/postgres"
ZK_URL="zk://lockbench:zk-Secret-42@127.0.0.1:$ZP"
echo "servers up after $(( $(date +%s) - START ))s: redis $RP, etcd $EP, zookeeper $ZP, postgres $PP, silent $SILENT" >&2
# The shell's own notices of the runs the cases kill ("Killed ...") would litter stderr.
exec 3>&2 2>/dev/null

# --- how a case is run and reported ------------------------------------------------------
line() { # the case's line: exit, name, text (one line, at most 220 characters)
  local text=${3//$'\r'/}
  printf 'exit=%-3s  %s  %s\n' "$1" "$2" "${text:0:220}"
}
first() { grep -m1 -v '^[[:space:]]*$' "$1" 2>/dev/null; }
shown() { # the first line worth showing: stderr's on failure, else stdout's, else stderr's
  local rc=$1
  if [ "$rc" != 0 ] && [ -s "$WORK/err" ]; then first "$WORK/err"
  elif [ -s "$WORK/out" ]; then first "$WORK/out"
  else first "$WORK/err"; fi
}
c() { # c NAME SECONDS COMMAND...: one case
  local name=$1 t=$2; shift 2
  timeout -k 10 "$t" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null
  local rc=$?
  line "$rc" "$name" "$(shown "$rc")"
}
cg() { # cg NAME SECONDS PATTERN COMMAND...: a case shown by its first line matching PATTERN
  local name=$1 t=$2 pat=$3; shift 3
  timeout -k 10 "$t" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null
  local rc=$?
  local m
  m=$(grep -h -m1 -E -- "$pat" "$WORK/out" "$WORK/err" 2>/dev/null | head -1)
  [ -n "$m" ] || m=$(shown "$rc")
  line "$rc" "$name" "$m"
}
S=(--duration 300ms --warmup 0s)

# start_bg FILE ARGS...: lockbench in a process group of its own (setsid), --live to FILE;
# BG is its pid. live_up waits (bounded) for its first live line: the run is under way.
start_bg() {
  local live=$1; shift
  rm -f "$live"
  setsid "$LB" "$@" --live "$live" >"$WORK/out" 2>"$WORK/err" </dev/null &
  BG=$!
}
live_up() { waitfor 60 test -s "$1"; }
wait_bg() { # wait up to $1 seconds for BG; KILL it after; sets RC
  local n=$(( $1 * 10 ))
  for _ in $(seq "$n"); do kill -0 "$BG" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$BG" 2>/dev/null && kill -KILL -- "-$BG" 2>/dev/null
  { wait "$BG"; } 2>/dev/null; RC=$?
}
json() { jq -r "$1" "$2" 2>/dev/null | head -1; }

# Result files the report cases read.
"$LB" run "${R[@]}" "${S[@]}" -q -f json -o "$WORK/files/run.json" >/dev/null 2>&1
"$LB" sweep "${R[@]}" --param ttl=1s,2s "${S[@]}" -q -f json -o "$WORK/files/sweep.json" >/dev/null 2>&1
RUN=$WORK/files/run.json

echo "== 1. hangs: zk-lock on a port that is not ZooKeeper"
for port in "$RP" "$SILENT"; do
  what="a Redis"; [ "$port" = "$SILENT" ] && what="a silent port"
  c "1 zk-lock --zookeeper $what" 10 "$LB" run --strategy zk-lock --zookeeper "127.0.0.1:$port" "${S[@]}" --connect-timeout 1s
  c "1 zk-lock --zookeeper $what, SIGINT at 2s" 10 timeout --preserve-status -s INT -k 5 2 \
    "$LB" run --strategy zk-lock --zookeeper "127.0.0.1:$port" "${S[@]}" --connect-timeout 1s
done

echo "== 2. sweep values skip the count check"
c "2 sweep --param keys=1,10000000000" 15 "$LB" sweep "${R[@]}" --param keys=1,10000000000 "${S[@]}"
c "2 sweep --param workers=10,2000000000" 15 "$LB" sweep "${R[@]}" --param workers=10,2000000000 "${S[@]}"

echo "== 3. inputs read without a size bound (ulimit -v 4000000)"
c "3 report merge /dev/zero run.json" 15 bash -c 'ulimit -v 4000000; exec "$@"' _ "$LB" report merge /dev/zero "$RUN"
c "3 report plot /dev/zero" 15 bash -c 'ulimit -v 4000000; exec "$@"' _ "$LB" report plot /dev/zero -o "$WORK/files/z.png"
c "3 run --tls-ca-cert /dev/zero" 15 bash -c 'ulimit -v 4000000; exec "$@"' _ "$LB" run "${R[@]}" --tls-ca-cert /dev/zero "${S[@]}"

echo "== 4. a latency fault that never ends"
c "4 --fault latency:node=0,ms=1000000000" 10 "$LB" run --fault latency:node=0,ms=1000000000 "${S[@]}"

echo "== 5. many workers"
# A million workers start in about 30s on 2 cores (said before the run) and the whole run
# takes about 2 minutes and 12 GiB: the case shows the estimate's line, cut at 20s.
cg "5 --workers 1000000 --duration 1s (cut at 20s)" 20 'takes about|invalid' "$LB" run "${R[@]}" --workers 1000000 --duration 1s --warmup 0s
cg "5 --workers 100000 --duration 1s" 20 'token|invalid|no data' "$LB" run "${R[@]}" --workers 100000 --duration 1s --warmup 0s

echo "== 6. a report written over its input"
cp "$RUN" "$WORK/files/in.json"
c "6 report html run.json -o run.json" 20 "$LB" report html "$WORK/files/in.json" -o "$WORK/files/in.json"
ln -sf "$WORK/files/in.json" "$WORK/files/link.json"
c "6 report html run.json -o link-to-run.json" 20 "$LB" report html "$WORK/files/in.json" -o "$WORK/files/link.json"
c "6 report plot run.json -o run.json" 20 "$LB" report plot "$WORK/files/in.json" -o "$WORK/files/in.json"
c "6 report merge run.json -o run.json" 20 "$LB" report merge "$WORK/files/in.json" -o "$WORK/files/in.json"
line "$(jq -e .tool "$WORK/files/in.json" >/dev/null 2>&1; echo $?)" "6 run.json still a result afterwards" "$(json .tool "$WORK/files/in.json")"

echo "== 7. Ctrl-C of a --procs run"
for target in parent group; do
  start_bg "$WORK/live7" run --procs 2 --workers 4 --duration 1m --warmup 0s -q -f json -o "$WORK/files/p7.json"
  if live_up "$WORK/live7"; then
    if [ $target = parent ]; then kill -INT "$BG"; else kill -INT -- "-$BG"; fi
  fi
  wait_bg 60
  line "$RC" "7 --procs 2, kill -INT of the $target" "interrupted: $(json .interrupted "$WORK/files/p7.json"); $(first "$WORK/err")"
done

echo "== 8. signals together, and SIGHUP"
for i in 1 2 3 4; do
  c "8 timeout -s INT 1.5 run --duration 20s (try $i)" 30 timeout --preserve-status -s INT 1.5 "$LB" run "${R[@]}" --duration 20s --warmup 0s
done
start_bg "$WORK/live8" run "${R[@]}" --workers 4 --duration 1m --warmup 0s -q
live_up "$WORK/live8" && kill -HUP "$BG"
wait_bg 60
line "$RC" "8 SIGHUP mid-run" "$(first "$WORK/out")"

echo "== 9. a final write that fails"
c "9 run -o /dev/full" 30 "$LB" run "${R[@]}" "${S[@]}" -o /dev/full
c "9 run -o /proc/version" 30 "$LB" run "${R[@]}" "${S[@]}" -o /proc/version
c "9 report merge run.json -o /dev/full" 20 "$LB" report merge "$RUN" -o /dev/full

echo "== 10. capacity"
cg "10 capacity --slo p99=5ms --step-duration 500ms --warmup 200ms" 40 'no step passed|max .* within|FAIL: achieved' \
  "$LB" capacity "${R[@]}" --slo p99=5ms --step-duration 500ms --warmup 200ms
c "10 capacity --start 1e12" 20 "$LB" capacity "${R[@]}" --slo p99=5ms --start 1e12 --step-duration 200ms --warmup 0s
c "10 capacity --factor 1e308" 20 "$LB" capacity "${R[@]}" --slo p99=5ms --factor 1e308 --step-duration 200ms --warmup 0s
c "10 capacity --rate 100" 20 "$LB" capacity "${R[@]}" --slo p99=5ms --rate 100 --step-duration 200ms --warmup 0s
c "10 capacity --duration 5s" 20 "$LB" capacity "${R[@]}" --slo p99=5ms --duration 5s --step-duration 200ms --warmup 0s

echo "== 11. probabilistic fault events stamped at the window's end"
timeout 30 "$LB" run "${R[@]}" --fault holder-pause:p=0.05,d=50ms --hold 1ms --workers 8 --duration 2s --warmup 0s \
  -q -f json -o "$WORK/files/f11.json" >"$WORK/out" 2>"$WORK/err"
rc=$?
line "$rc" "11 holder-pause events: how many stamped at the window's end (2s)" \
  "$(jq -r '[.results[0].events[]? | .t_s] | "\(length) events, \(map(select(. >= 1.99)) | length) at the end, first at \(.[0] // "-")s"' "$WORK/files/f11.json" 2>/dev/null)"

echo "== 12. the sweep's recommendation for fenced"
cg "12 sweep fenced ttl=50ms,500ms, hold 100ms" 40 'unsafe below|recommend|fenced:' \
  "$LB" sweep "${R[@]}" --strategy fenced --param ttl=50ms,500ms --hold 100ms --workers 4 --duration 1s --warmup 0s

echo "== 13. secrets in the children's command lines (ps)"
secret_case() { # NAME SECRET ARGS...
  local name=$1 secret=$2; shift 2
  start_bg "$WORK/live13" run --procs 2 --workers 4 --duration 1m --warmup 0s -q -f json -o "$WORK/files/p13.json" "$@"
  local seen="no live line", kids=0 leaked=0
  if live_up "$WORK/live13"; then
    for k in $(pgrep -P "$BG"); do
      tr '\0' ' ' <"/proc/$k/cmdline" 2>/dev/null | grep -q -- --procs-child || continue
      kids=$((kids + 1))
      tr '\0' ' ' <"/proc/$k/cmdline" 2>/dev/null | grep -qF -- "$secret" && leaked=$((leaked + 1))
    done
    seen="$kids children, $leaked with the password on their command line"
    kill -INT "$BG"
  fi
  wait_bg 60
  [ "$seen" = "no live line" ] && seen="$seen; $(first "$WORK/err")"
  line "$RC" "13 --procs 2 $name" "$seen; acquired $(json '.results[0].acquired' "$WORK/files/p13.json")"
}
secret_case "--etcd http://root:PW@..." "$ETCD_PW" --strategy etcd-mutex --etcd "$ETCD_URL"
secret_case "--postgres postgres://lockbench:PW@..." "$PG_PW" --strategy pg-advisory --postgres "$PG_URL"
secret_case "--zookeeper zk://lockbench:PW@..." "zk-Secret-42" --strategy zk-lock --zookeeper "$ZK_URL"
secret_case "--password PW (spawned Redis)" "redis-Secret-42" --password redis-Secret-42

echo "== 14. target down of a file that is not a state file"
cp /etc/passwd "$WORK/files/passwd"
c "14 target down --state (a copy of /etc/passwd)" 20 "$LB" target down --state "$WORK/files/passwd"

echo "== 15. keys left without a ttl after kill -9 on an external Redis"
for s in redisson-fair semaphore expirable-semaphore getset fenced; do
  redis-cli -p "$RP" flushall >/dev/null
  start_bg "$WORK/live15" run "${R[@]}" --strategy "$s" --workers 8 --hold 5ms --duration 1m --warmup 0s -q
  live_up "$WORK/live15" && kill -KILL "$BG"
  wait_bg 10
  timeout 30 "$LB" run "${R[@]}" --strategy "$s" "${S[@]}" -q >/dev/null 2>&1
  RC=$? # the next run's
  total=0 nottl=0
  for k in $(redis-cli -p "$RP" --scan --pattern '*'); do
    total=$((total + 1))
    [ "$(redis-cli -p "$RP" ttl "$k")" = "-1" ] && nottl=$((nottl + 1))
  done
  line "$RC" "15 kill -9 of $s, then the next run" "$nottl of $total keys without a ttl"
done

echo "== 16. kill -9 of a --procs parent; --node on a spawned Redis"
mkdir -p "$WORK/t16"
TMPDIR=$WORK/t16 start_bg "$WORK/live16" run --procs 2 --workers 4 --duration 1m --warmup 0s -q
live_up "$WORK/live16" && kill -KILL "$BG"
wait_bg 10
before=$(ls -d "$WORK"/t16/lockbench-procs-* 2>/dev/null | wc -l)
waitfor 20 bash -c "! pgrep -f -- '--procs-child.*$WORK/t16' >/dev/null" # pdeathsig takes the children
TMPDIR=$WORK/t16 timeout 30 "$LB" run "${S[@]}" -q >/dev/null 2>&1
RC=$? # the next run's
after=$(ls -d "$WORK"/t16/lockbench-procs-* 2>/dev/null | wc -l)
line "$RC" "16 kill -9 of a --procs parent, then a run" "lockbench-procs-* dirs: $before after the kill, $after after the next run"
c "16 --node 1/2 --barrier b without --redis" 20 "$LB" run --node 1/2 --barrier b "${S[@]}" --state "$WORK/files/no-target.json"

echo "== 17. accepted without a word, or unclear"
printf 'phases:\n  - strategy: token\n    label: a\n  - strategy: token\n    label: a\n' >"$WORK/files/dup.yaml"
printf 'workers: abc\n' >"$WORK/files/bad.yaml"
c "17 --fault holder-pause:p=NaN,d=1ms" 10 "$LB" run "${R[@]}" --fault holder-pause:p=NaN,d=1ms "${S[@]}"
c "17 --fault holder-pause:p=0.1,,d=1ms" 10 "$LB" run "${R[@]}" --fault holder-pause:p=0.1,,d=1ms "${S[@]}"
c "17 --fault partition:node=0,at=100ms,d=0s" 10 "$LB" run --fault partition:node=0,at=100ms,d=0s "${S[@]}"
c "17 --fault clock-skew:fraction=0.5,offset=-1000000h" 10 "$LB" run "${R[@]}" --fault clock-skew:fraction=0.5,offset=-1000000h "${S[@]}"
c "17 --on-lost ''" 10 "$LB" run "${R[@]}" --on-lost "" "${S[@]}"
c "17 --rate 100 --max-inflight 0" 10 "$LB" run "${R[@]}" --rate 100 --max-inflight 0 "${S[@]}"
c "17 --acquire-timeout 1ns" 10 "$LB" run "${R[@]}" --acquire-timeout 1ns "${S[@]}"
c "17 --hold 1000h in a 300ms window" 10 "$LB" run "${R[@]}" --hold 1000h "${S[@]}"
c "17 --reentry 1000000" 10 "$LB" run "${R[@]}" --reentry 1000000 "${S[@]}"
c "17 --etcd ADDR with only Redis strategies" 10 "$LB" run "${R[@]}" --etcd "127.0.0.1:$EP" "${S[@]}"
c "17 --etcd-members 3 with only Redis strategies" 10 "$LB" run "${R[@]}" --etcd-members 3 "${S[@]}"
c "17 --live - -o -" 10 "$LB" run "${R[@]}" --live - -o - "${S[@]}"
c "17 two profile phases with the same label" 10 "$LB" run "${R[@]}" --profile "$WORK/files/dup.yaml" "${S[@]}"
c "17 profiles show (an invalid profile)" 20 "$LB" profiles show "$WORK/files/bad.yaml"
c "17 sweep --param twice" 20 "$LB" sweep "${R[@]}" --param ttl=1s,2s --param ttl=3s,4s "${S[@]}"
c "17 sweep --param ttl=1s,1000ms" 20 "$LB" sweep "${R[@]}" --param ttl=1s,1000ms "${S[@]}"
c "17 sweep --ttl in a ttl sweep" 20 "$LB" sweep "${R[@]}" --param ttl=1s,2s --ttl 5s "${S[@]}"
c "17 sweep --max-blocked in a keys sweep" 20 "$LB" sweep "${R[@]}" --param keys=1,10 --max-blocked 5s "${S[@]}"
c "17 report compare sweep.json run.json" 20 "$LB" report compare "$WORK/files/sweep.json" "$RUN"

echo "== 18. Go's words where a user's are due"
for v in abc 1.5 "" 99999999999999999999; do
  c "18 --workers '$v'" 20 "$LB" run "${R[@]}" --workers "$v" "${S[@]}"
done
c "18 --rate 0x10" 20 "$LB" run "${R[@]}" --rate 0x10 "${S[@]}"
c "18 --duration 10" 20 "$LB" run "${R[@]}" --duration 10
c "18 --postgres with a wrong password" 20 "$LB" run --strategy pg-advisory --postgres "postgres://lockbench:wrong@127.0.0.1:$PP/postgres" "${S[@]}"
c "18 --postgres on a closed port" 20 "$LB" run --strategy pg-advisory --postgres "postgres://lockbench:x@127.0.0.1:1/postgres" "${S[@]}"
c "18 --postgres notaurl" 20 "$LB" run --strategy pg-advisory --postgres notaurl "${S[@]}"
c "18 --redis (silent port) --connect-timeout 1h" 30 "$LB" run --redis "127.0.0.1:$SILENT" --connect-timeout 1h "${S[@]}"
mkdir -p "$WORK/files/plotdir"
c "18 --plot DIR" 20 "$LB" run "${R[@]}" --plot "$WORK/files/plotdir" "${S[@]}"
printf 'garbage\x7f\n' >"$WORK/files/garbage.json"
c "18 target status --state garbage" 20 "$LB" target status --state "$WORK/files/garbage.json"
c "18 report plot -o /nonexistent/x.png" 20 "$LB" report plot "$RUN" -o /nonexistent/x.png
c "18 report html -o /nonexistent/x.html" 20 "$LB" report html "$RUN" -o /nonexistent/x.html
c "18 report merge -o /nonexistent/x.json" 20 "$LB" report merge "$RUN" -o /nonexistent/x.json
c "18 run --plot /nonexistent/x.png" 20 "$LB" run "${R[@]}" --plot /nonexistent/x.png "${S[@]}"
ST=$WORK/files/target.json
STATES+=("$ST")
cg "18 target up --state F (its hint)" 60 'runs without --redis' "$LB" target up --state "$ST"
cg "18 target status --state F (its hint)" 20 'state|down' "$LB" target status --state "$ST"
c "18 target down --state F" 30 "$LB" target down --state "$ST"
cg "18 service-only run's header (etcd-mutex)" 30 '^lock:' "$LB" run --strategy etcd-mutex --etcd "$ETCD_URL" "${S[@]}"

echo "== 19. the first run shows its header at once"
t0=$(date +%s.%N)
timeout 60 script -qfc "$LB run --profile quickstart --duration 300ms --warmup 0s" /dev/null >"$WORK/out" 2>&1 </dev/null
rc=$?
line "$rc" "19 run --profile quickstart on a terminal: its first line" "$(first "$WORK/out")"
line "$rc" "19 run --profile quickstart (300ms phases): whole run" "$(echo "$(date +%s.%N) - $t0" | bc 2>/dev/null | cut -c1-5)s"

exec 2>&3
echo "== done in $(( $(date +%s) - START ))s (servers included)"
