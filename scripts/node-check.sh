# Sourced by scripts/try.sh and .ci/run: is there a Node.js new enough for dlock (>= 20.19, package.json's
# engines), or a nodejs in apt that is? Checked before anything is installed, so that Debian 12 and
# Ubuntu 24.04 (apt's nodejs is 18) get one line of advice instead of an install that cannot work.

# node_new_enough VERSION: v20.19.0, or an apt version such as 20.19.2+dfsg-1 or 1:22.1.0-1.
node_new_enough() {
  local v="${1#v}"
  v="${v#*:}"
  [[ "$v" =~ ^([0-9]+)\.([0-9]+) ]] || return 1
  local major="${BASH_REMATCH[1]}" minor="${BASH_REMATCH[2]}"
  [ "$major" -gt 20 ] || { [ "$major" -eq 20 ] && [ "$minor" -ge 19 ]; }
}

# node_advice: the one line for a machine whose node is missing or too old, and whose apt has no newer.
node_advice() {
  local have="none"
  command -v node >/dev/null && have="$(node --version 2>/dev/null || echo unknown)"
  printf '%s\n' "dlock needs Node.js >= 20.19 (this has $have): Debian 13 and Ubuntu 25.04+ have it in apt" \
    "(apt-get install nodejs npm); on older releases install Node.js 20.19+ another way (nvm or NodeSource)," \
    "or use the standalone binary, which needs no Node.js (docs/install.md)" | paste -sd' '
}

# node_check: 0 when node is new enough; 2 when apt should install nodejs; else 1 (print node_advice).
node_check() {
  command -v node >/dev/null && node_new_enough "$(node --version 2>/dev/null)" && return 0
  local candidate=""
  command -v apt-cache >/dev/null && candidate="$(apt-cache policy nodejs 2>/dev/null | sed -n 's/^ *Candidate: *//p')"
  if [ -n "$candidate" ] && node_new_enough "$candidate"; then return 2; fi
  return 1
}
