#!/usr/bin/env bash
# The test command of the README: what CI runs (.ci/run) and what a new user runs.
# Tests need a real redis-server (they start their own on free loopback ports); when it is
# missing this installs it with apt-get, as root or through sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null 2>&1; then
  echo "redis-server not found: installing it with apt-get (tests start real servers)" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server redis-tools >/dev/null
  # The package may start a system service on 6379; tests never use it, and it is not ours
  # to stop. Nothing here depends on it.
fi

# The other lock services: the tests of services/ start their own etcd, ZooKeeper and
# PostgreSQL from the Debian packages (etcd-server, zookeeperd, postgresql). Like
# redis-server, a package may start a system service; the tests never use it.
missing=()
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
[ -f /usr/share/java/zookeeper.jar ] || missing+=(zookeeperd)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
# The completion tests drive the real shells.
command -v zsh >/dev/null 2>&1 || missing+=(zsh)
command -v fish >/dev/null 2>&1 || missing+=(fish)
# The reference drivers (drivers/, docs/drivers.md): redis-py's Lock is Debian's
# python3-redis, for the system's python3 (not a pyenv shim's).
/usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || missing+=(python3-redis)
# The HTML report's browser check loads the reports in a real headless Chromium.
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  echo "${missing[*]} not found: installing with apt-get (the services/ tests start real servers)" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The npm drivers install their pinned libraries (drivers/node/package-lock.json).
if [ ! -d drivers/node/node_modules ]; then
  command -v npm >/dev/null 2>&1 || { echo "npm not found: the node drivers' tests need node and npm (apt-get install nodejs npm)" >&2; exit 1; }
  echo "drivers/node/node_modules missing: npm ci (the npm drivers' pinned libraries)" >&2
  (cd drivers/node && npm ci --no-audit --no-fund --loglevel=error)
fi

# Compile without the checkout's directory in the objects (-trimpath), here and in the
# `go build`s the tests run: Go's build cache then keys our packages by their content, not
# by where the clone sits, so a fresh clone on a machine that built lockbench before
# recompiles only what changed. Without it a fresh clone recompiled and re-vetted every
# package of the module, some 140 of the suite's ~900 CPU-seconds. Nothing in the tests
# reads source paths from the binaries.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"

unformatted=$(gofmt -l . | grep -v '^vendor/' || true)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi
# vet, and the type check everywhere: lockbench must build for macOS and Windows too, where
# no test runs here. vet type-checks every package for the platform, test files included
# (a Linux-only call in a test fails too), after compiling what each imports with the
# compiler. A `go build ./...` per platform added only the compiler's pass over the packages
# nothing imports (package main), which vet type-checks anyway; it cost a fresh clone some
# 20 s each.
# Intel Macs get vet's check only when a file of the module depends on the architecture:
# darwin/amd64 and darwin/arm64 build the same files until one does (go list tells).
#
# These checks compile and type-check, they start no server: they run in the background
# beside the tests, their output kept and printed if one fails, and the script fails then
# too. Run alone before the tests, they were the first 2.5 minutes of a fresh clone's run.
checks_log=$(mktemp)
trap 'rm -f "$checks_log"' EXIT
files_of() { GOOS=$1 GOARCH=$2 go list -f '{{.ImportPath}} {{.GoFiles}} {{.IgnoredGoFiles}} {{.TestGoFiles}} {{.XTestGoFiles}}' ./...; }
checks() {
  set -e
  go vet ./...
  platforms=(darwin/arm64 windows/amd64)
  if [ "$(files_of darwin amd64)" != "$(files_of darwin arm64)" ]; then
    platforms+=(darwin/amd64)
  fi
  for platform in "${platforms[@]}"; do
    echo "vet for $platform"
    GOOS=${platform%/*} GOARCH=${platform#*/} go vet ./...
  done
}
checks >"$checks_log" 2>&1 &
checks_pid=$!

# CI=1: a missing redis-server (or etcd, ZooKeeper, PostgreSQL) fails the tests instead of
# skipping them.
status=0
# Three test binaries at a time (-p 3; go test's default is GOMAXPROCS, 2 here): many
# packages' tests mostly wait on the servers they start, and two at a time left a 2-core
# machine 153 % busy (383 s); three at a time, 174 % (310 s), quiet, in a fresh clone.
CI=1 go test -race -p 3 -timeout 20m ./... "$@" || status=$?
# A worker's stack is measured without -race, which doubles the stack guard and widens every
# frame (workload/stacks_test.go is built only without it).
CI=1 go test -timeout 5m -run '^TestCyclingWorkersKeepTheirStacks$' ./workload "$@" || status=$?
if ! wait "$checks_pid"; then
  echo "go vet, or the type check for macOS or Windows, failed:" >&2
  cat "$checks_log" >&2
  status=1
fi
exit "$status"
