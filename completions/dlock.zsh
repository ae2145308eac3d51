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

_dlock_run() {
  # Where the child's command line starts: after `<key> --`, or for `-- <key> [--] <command>`
  # (a key starting with "-") after the key. From there on, complete it as a command of its own.
  local -a value_options=(--redis --prefix --connect-timeout --tls-ca --tls-cert --tls-key --log-format
    -t --ttl -w --wait -E --conflict-exit-code --on-lost --kill-after --sync-replicas)
  local i operands=0 child=0
  for (( i = 2; i < CURRENT; i++ )); do
    case $words[i] in
      --)
        if (( operands )); then
          child=$(( i + 1 ))
        else
          child=$(( i + 2 ))
          (( child < CURRENT )) && [[ $words[child] == -- ]] && (( child++ ))
        fi
        break
        ;;
      -*) (( $value_options[(Ie)$words[i]] )) && (( i++ )) ;;
      *) (( operands++ )) ;;
    esac
  done
  if (( child > CURRENT )); then
    _message 'lock name'
    return
  elif (( child )); then
    shift $(( child - 1 )) words
    (( CURRENT -= child - 1 ))
    _normal
    return
  fi

  local -a _dlock_options
  _dlock_connection_options
  _arguments -s : $_dlock_options \
    '(-t --ttl)'{-t+,--ttl=}'[lease length, renewed every ttl/3]:duration:' \
    '(-n --no-wait -w --wait)'{-n,--no-wait}'[fail at once if the lock is held]' \
    '(-n --no-wait -w --wait)'{-w+,--wait=}'[give up after this long]:duration:' \
    '(-E --conflict-exit-code)'{-E+,--conflict-exit-code=}'[exit code when not acquired]:exit code:' \
    '--on-lost=[what to do to the command if the lock is lost]:action:(term kill ignore)' \
    '--kill-after=[grace between SIGTERM and SIGKILL]:duration:' \
    '--sync-replicas=[WAIT until n replicas have the lock]:replicas:' \
    '--no-cmd-metadata[do not store the command line in the lock]' \
    '1:lock name:' \
    '2:end of dlock options:(--)'
}

_dlock_status() {
  local -a _dlock_options
  _dlock_connection_options
  _arguments -s : $_dlock_options \
    '--json[print JSON]' \
    '1::lock name:'
}

_dlock_release() {
  local -a _dlock_options
  _dlock_connection_options
  _arguments -s : $_dlock_options \
    '--force[take the lock from whoever holds it]' \
      '--now[with --force: open it to new holders at once]' \
    '1:lock name:'
}

_dlock() {
  local curcontext=$curcontext state line ret=1
  local -a commands=(
    'run:run a command while holding a lock'
    'status:show who holds a lock'
    'release:break a lock held by someone else'
    'completion:print a shell completion script'
    'help:show help for a command'
  )
  _arguments -C \
    '(- *)'{-V,--version}'[print the version]' \
    '(- *)'{-h,--help}'[show help]' \
    '1:command:->command' \
    '*::argument:->argument' && ret=0

  case $state in
    command)
      _describe -t commands 'dlock command' commands && ret=0
      ;;
    argument)
      curcontext=${curcontext%:*:*}:dlock-$words[1]:
      case $words[1] in
        run) _dlock_run && ret=0 ;;
        status) _dlock_status && ret=0 ;;
        release) _dlock_release && ret=0 ;;
        completion) _arguments '(- *)'{-h,--help}'[show help]' '1:shell:(bash zsh fish)' && ret=0 ;;
        help) _arguments '1:command:(run status release completion)' && ret=0 ;;
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
