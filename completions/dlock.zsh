#compdef dlock
# zsh completion for dlock
#
# Install one of:
#   dlock completion zsh > "${fpath[1]}/_dlock"        (a directory in $fpath, then compinit)
#   echo 'source <(dlock completion zsh)' >> ~/.zshrc  (after compinit)
#
# Pure zsh: pressing Tab never starts dlock or node.

_dlock_connection_options() {
  _dlock_options=(
    '*--redis=[Redis URL; repeat for a Redlock quorum]:url:'
    '--prefix=[key namespace]:prefix:'
    '--connect-timeout=[per-instance connect/command timeout]:duration:'
    '--tls-ca=[PEM CA certificate(s) to trust for rediss://]:CA file:_files'
    '--tls-cert=[PEM client certificate for rediss://]:certificate file:_files'
    '--tls-key=[PEM private key of --tls-cert]:key file:_files'
    '(-q --quiet -v --verbose)'{-q,--quiet}'[print errors only]'
    '(-q --quiet -v --verbose)'{-v,--verbose}'[print one line per lock event]'
    '--log-format=[stderr format]:format:(text json)'
    '(- *)'{-h,--help}'[show help]'
  )
}

# The lock options run and acquire share (appended to _dlock_options).
_dlock_lock_options() {
  _dlock_options+=(
    '(-t --ttl)'{-t+,--ttl=}'[lease length, renewed every ttl/3]:duration:'
    '(-n --no-wait -w --wait)'{-n,--no-wait}'[fail at once if the lock is held]'
    '(-n --no-wait -w --wait)'{-w+,--wait=}'[give up after this long]:duration:'
    '(-E --conflict-exit-code)'{-E+,--conflict-exit-code=}'[exit code when not acquired]:exit code:'
    '--sync-replicas=[WAIT until n replicas have the lock]:replicas:'
    '(-s --shared)--slots=[up to n holders at once]:slots:'
    '(--slots -s --shared)'{-s,--shared}'[hold together with other shared holders]'
  )
}

_dlock_run() {
  # Options of dlock come before the key (or `-- <key>` for a key starting with "-"); after the
  # key an optional --, then the command, whose words are all its own: complete them as a
  # command line of their own.
  local -a value_options=(--redis --prefix --connect-timeout --tls-ca --tls-cert --tls-key --log-format
    -t --ttl -w --wait -E --conflict-exit-code --on-lost --kill-after --sync-replicas)
  local i key=0 child=0 dashdash=0 ret=1
  for (( i = 2; i < CURRENT; i++ )); do
    if (( key )); then
      (( i == key + 1 )) && [[ $words[i] == -- ]] && continue
      child=$i
      break
    elif (( dashdash )); then
      key=$i
    else
      case $words[i] in
        --) dashdash=1 ;;
        -*) (( $value_options[(Ie)$words[i]] )) && (( i++ )) ;;
        *) key=$i ;;
      esac
    fi
  done
  if (( dashdash && ! key )); then
    _message 'lock name'
    return
  elif (( key )); then
    if (( ! child )); then
      # Right after the key: -- or the command; after `<key> --`: the command.
      child=$CURRENT
      if (( CURRENT == key + 1 )) && [[ -z $PREFIX || $PREFIX == -* ]]; then
        local expl
        _wanted separators expl 'end of dlock options' compadd -- -- && ret=0
        [[ $PREFIX == -* ]] && return ret
      fi
    fi
    shift $(( child - 1 )) words
    (( CURRENT -= child - 1 ))
    _normal && ret=0
    return ret
  fi

  local -a _dlock_options
  _dlock_connection_options
  _dlock_lock_options
  _arguments -s : $_dlock_options \
    '--on-lost=[what to do to the command if the lock is lost]:action:(term kill ignore)' \
    '--kill-after=[grace between SIGTERM and SIGKILL]:duration:' \
    '--no-cmd-metadata[do not store the command line in the lock]' \
    '--once-per=[after an exit 0, the key is done until that run'"'"'s start + duration]:duration:' \
    '1:lock name:'
}

_dlock_acquire() {
  local -a _dlock_options
  _dlock_connection_options
  _dlock_lock_options
  _arguments -s : $_dlock_options \
    '--on-lost=[what to do to the watched process if the lock is lost]:action:(term kill ignore)' \
    '(--no-keeper)--pid=[the process whose exit releases the lock]:pid:_pids' \
    '(--pid)--no-keeper[leave nothing running; the lock lasts --ttl unless renewed]' \
    '--format=[stdout format]:format:(sh json)' \
    '1:lock name:'
}

_dlock_renew() {
  local -a _dlock_options
  _dlock_connection_options
  _arguments -s : $_dlock_options \
    '--token=[the owner token (default DLOCK_TOKEN)]:token:' \
    '1:lock name:'
}

_dlock_status() {
  local -a _dlock_options
  _dlock_connection_options
  _arguments -s : $_dlock_options \
    '--json[print JSON]' \
    '1::lock name:'
}

_dlock_history() {
  local -a _dlock_options
  _dlock_connection_options
  _arguments -s : $_dlock_options \
    '(-n --count)'{-n+,--count=}'[how many entries, newest first]:entries:' \
    '--json[print JSON]' \
    '1:lock name:'
}

_dlock_release() {
  local -a _dlock_options
  _dlock_connection_options
  _arguments -s : $_dlock_options \
    '(-f --force)--token=[the owner token (default DLOCK_TOKEN)]:token:' \
    '(-f --force --token)'{-f,--force}'[take the lock from whoever holds it]' \
    '--now[with --force: open it to new holders at once]' \
    '--slot=[with --force: only the holder of this slot]:slot:' \
    '1:lock name:'
}

_dlock_doctor() {
  local -a _dlock_options
  _dlock_connection_options
  _arguments -s : $_dlock_options \
    '(-t --ttl)'{-t+,--ttl=}'[the lease length your jobs use]:duration:' \
    '--json[print JSON]'
}

_dlock() {
  local curcontext=$curcontext state line ret=1
  # A global -v or -q before the command (`dlock -v run ...`) is not the command.
  while (( CURRENT > 2 )) && [[ $words[2] == (-v|--verbose|-q|--quiet) ]]; do
    words[2]=()
    (( CURRENT-- ))
  done
  # Not `commands`: that name is zsh's hash of the commands on $PATH, which _normal needs
  # to complete the command after the key.
  local -a dlock_commands=(
    'run:run a command while holding a lock'
    'acquire:take a lock for the rest of a shell script or for later steps'
    'renew:extend a held lease by its TTL'
    'status:show who holds a lock'
    'release:release your own lock, or with --force anyone'"'"'s'
    'history:show a lock'"'"'s recent events'
    'doctor:check each Redis against what dlock needs'
    'completion:print a shell completion script'
    'help:show help for a command'
  )
  # -A: options only before the command word; after it, every word is the command's.
  _arguments -C -A '-*' \
    '(- *)'{-V,--version}'[print the version]' \
    '(- *)'{-h,--help}'[show help]' \
    '(-q --quiet -v --verbose)'{-q,--quiet}'[print errors only]' \
    '(-q --quiet -v --verbose)'{-v,--verbose}'[print one line per lock event]' \
    '1:command:->command' \
    '*::argument:->argument' && ret=0

  case $state in
    command)
      _describe -t commands 'dlock command' dlock_commands && ret=0
      ;;
    argument)
      curcontext=${curcontext%:*:*}:dlock-$words[1]:
      case $words[1] in
        run) _dlock_run && ret=0 ;;
        acquire) _dlock_acquire && ret=0 ;;
        renew) _dlock_renew && ret=0 ;;
        status) _dlock_status && ret=0 ;;
        release) _dlock_release && ret=0 ;;
        history) _dlock_history && ret=0 ;;
        doctor) _dlock_doctor && ret=0 ;;
        completion) _arguments '(- *)'{-h,--help}'[show help]' '1:shell:(bash zsh fish)' && ret=0 ;;
        help) _arguments '1:command:(run acquire renew status release history doctor completion)' && ret=0 ;;
      esac
      ;;
  esac
  return ret
}

if [[ $funcstack[1] == _dlock ]]; then
  # Autoloaded from $fpath as _dlock.
  _dlock "$@"
else
  # Sourced.
  compdef _dlock dlock
fi
