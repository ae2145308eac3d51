#!/usr/bin/env bash
# Try dlock from a fresh clone on Debian or Ubuntu, in one command (README.md, first screen):
#   bash scripts/try.sh
# 1. apt-get installs what is missing (redis-server; Node.js and npm if there is no node), as root
#    or through sudo;
# 2. npm ci (skipped when node_modules is as new as package-lock.json), then npm run build;
# 3. a Redis on dlock's default URL, redis://127.0.0.1:6379 (or DLOCK_REDIS_URL's, as dlock reads
#    it): when none answers there and the URL is on this machine, it starts a redis-server on that
#    port with no persistence, and leaves it running for your own tries (it says how to stop it);
# 4. bin/dlock run demo -- …: one command run under the lock `demo`.
# Running it again redoes only what is needed. test/slow/fresh-clone.test.ts runs it in a fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'try.sh: %s\n' "$*"; }
fail() {
  printf 'try.sh: %s\n' "$*" >&2
  exit 1
}

# 1. System packages.
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-cli >/dev/null || need+=(redis-tools)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || fail "missing: ${need[*]}; this is not Debian or Ubuntu (no apt-get): install them, then run this again"
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null; then
    as_root=(sudo)
  else
    fail "missing: ${need[*]}; installing needs root, and this is not root and sudo is not installed: run as root: apt-get install -y ${need[*]}"
  fi
  say "installing ${need[*]} (apt-get)"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' ||
  fail "dlock needs Node.js >= 20.19 and this is $(node --version): install a newer one (https://nodejs.org/en/download), then run this again"

# 2. Dependencies from the lockfile, and the build.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
say "npm run build"
npm run build --silent >/dev/null

# 3. A Redis where dlock looks for one.
url="${DLOCK_REDIS_URL:-redis://127.0.0.1:6379}"
where="${DLOCK_REDIS_URL:+DLOCK_REDIS_URL}"
where="${where:-redis://127.0.0.1:6379}"
if [ "$(redis-cli -u "$url" ping 2>/dev/null)" != PONG ]; then
  # Only a plain redis:// URL on this machine: host 127.0.0.1 or localhost, a port, a database at most.
  if [[ ! "$url" =~ ^redis://(127\.0\.0\.1|localhost)(:([0-9]+))?(/[0-9]*)?$ ]]; then
    fail "no Redis answers at $where, and it is not a local redis:// URL this script could start one on"
  fi
  port="${BASH_REMATCH[3]:-6379}"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --logfile '' ||
    fail "could not start redis-server on 127.0.0.1:$port"
  for _ in $(seq 50); do
    [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break
    sleep 0.1
  done
  pid="$(redis-cli -p "$port" info server 2>/dev/null | sed -n 's/^process_id:\([0-9]*\).*/\1/p' || true)"
  [ -n "$pid" ] || fail "redis-server on 127.0.0.1:$port did not answer"
  say "started redis-server on 127.0.0.1:$port (pid $pid); it keeps running for your own tries (stop it: redis-cli -p $port shutdown nosave)"
fi

# 4. The main job: a command run under a lock.
say "bin/dlock run demo -- …"
# shellcheck disable=SC2016 # $DLOCK_FENCING_TOKEN is expanded by the command dlock runs
bin/dlock run demo -- sh -c 'echo "dlock works: ran under the lock demo with fencing token $DLOCK_FENCING_TOKEN"'
say "next: bin/dlock --help, and the Quick start in README.md (dlock is bin/dlock here)"
