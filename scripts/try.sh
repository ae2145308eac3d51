#!/usr/bin/env bash
# Try dlock from a fresh clone on Debian or Ubuntu, in one command (README.md, first screen):
#   bash scripts/try.sh
# 1. Node.js >= 20.19 checked first: when node is missing or older and apt's nodejs is no newer
#    (Debian 12, Ubuntu 24.04: 18), one line of advice and exit 1, nothing installed; then apt-get
#    installs what is missing (redis-server; nodejs and npm from apt when its nodejs is new enough),
#    as root or through sudo;
# 2. npm ci (skipped when node_modules is as new as package-lock.json), then npm run build;
# 3. a Redis on dlock's default URL, redis://127.0.0.1:6379 (or DLOCK_REDIS_URL's, as dlock reads
#    it): when none answers there and the URL is on this machine, it starts a redis-server on that
#    port with no persistence, and leaves it running for your own tries (it says how to stop it);
#    when the port is taken by something else (a Redis with a password, another server), it says
#    so and exits 1;
# 4. bin/dlock run demo -- …: one command run under the lock `demo`.
# Running it again redoes only what is needed. test/slow/fresh-clone.test.ts runs it in a fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'try.sh: %s\n' "$*"; }
fail() {
  printf 'try.sh: %s\n' "$*" >&2
  exit 1
}

# 1. System packages: Node.js first, before anything is installed.
# shellcheck source=scripts/node-check.sh
. scripts/node-check.sh
need=()
node_status=0
node_check || node_status=$?
[ "$node_status" -ne 1 ] || fail "$(node_advice)"
[ "$node_status" -ne 2 ] || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-cli >/dev/null || need+=(redis-tools)
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
node_new_enough "$(node --version)" || fail "$(node_advice)"

# 2. Dependencies from the lockfile, and the build.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
say "npm run build"
npm run build --silent >/dev/null

# 3. A Redis where dlock looks for one.
url="${DLOCK_REDIS_URL:-redis://127.0.0.1:6379}"
# The URL as said back: its password masked.
shown="$(printf '%s' "$url" | sed -E 's#^(rediss?://[^:/@]*:)[^@]*@#\1***@#')"
# redis-cli's answer, or its error's last line; a timeout for a listener that never answers.
answer="$(timeout 5 redis-cli --no-auth-warning -u "$url" ping 2>&1 | sed '/^$/d' | tail -n 1 || true)"
if [ "$answer" != PONG ]; then
  # Only a plain redis:// URL on this machine: host 127.0.0.1 or localhost, a port, a database at most.
  if [[ ! "$url" =~ ^redis://(127\.0\.0\.1|localhost)(:([0-9]+))?(/[0-9]*)?$ ]]; then
    fail "no Redis answers at $shown (${answer:-no answer}), and it is not a local redis:// URL this script could start one on"
  fi
  port="${BASH_REMATCH[3]:-6379}"
  # The port taken by something that is not a Redis answering PING: say so, start nothing.
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    case "$answer" in
    NOAUTH*) fail "a Redis on 127.0.0.1:$port wants a password: set DLOCK_REDIS_URL=redis://:PASSWORD@127.0.0.1:$port" ;;
    *) fail "something on 127.0.0.1:$port is not a Redis that answers PING (${answer:-no answer}): set DLOCK_REDIS_URL to a Redis" ;;
    esac
  fi
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
