# bash completion for dlock                                    -*- shell-script -*-
#
# Install one of:
#   dlock completion bash > ~/.local/share/bash-completion/completions/dlock
#   echo 'source <(dlock completion bash)' >> ~/.bashrc
#
# Pure bash: pressing Tab never starts dlock or node. Uses bash-completion when it is
# loaded (for --opt=value and for completing the command after --), works without it.

_dlock_commands='run status release completion help'
_dlock_connection_opts='--redis --prefix --connect-timeout --tls-ca --tls-cert --tls-key -q --quiet -v --verbose --log-format -h --help'
_dlock_run_opts='-t --ttl -n --no-wait -w --wait -E --conflict-exit-code --on-lost --kill-after --sync-replicas --no-cmd-metadata'
# Options that take a value as the next word.
_dlock_value_opts='--redis --prefix --connect-timeout --tls-ca --tls-cert --tls-key --log-format -t --ttl -w --wait -E --conflict-exit-code --on-lost --kill-after --sync-replicas'

_dlock() {
    local cur prev words cword split=false
    if declare -F _init_completion >/dev/null 2>&1; then
        _init_completion -s || return
    else
        words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
        cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    fi

    # The command is the first word after dlock that is not an option.
    local i cmd='' cmd_at=0
    for ((i = 1; i < cword; i++)); do
        if [[ ${words[i]} != -* ]]; then
            cmd=${words[i]} cmd_at=$i
            break
        fi
    done
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '-V --version -h --help' -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$_dlock_commands" -- "$cur"))
        fi
        return
    fi

    # Count operands before the cursor; for run, find where the child's command line starts:
    # after `<key> --`, or for `-- <key> [--] <command>` (a key starting with "-") after the key.
    local operands=0 child_at=0
    for ((i = cmd_at + 1; i < cword; i++)); do
        if [[ $cmd == run && ${words[i]} == -- ]]; then
            if ((operands)); then
                child_at=$((i + 1))
            else
                child_at=$((i + 2))
                ((child_at < cword)) && [[ ${words[child_at]} == -- ]] && ((child_at++))
            fi
            break
        elif [[ ${words[i]} == -* ]]; then
            [[ " $_dlock_value_opts " == *" ${words[i]} "* ]] && ((i++))
        else
            ((operands++))
        fi
    done
    if ((child_at)); then
        ((cword < child_at)) && return # the key
        if declare -F _command_offset >/dev/null 2>&1; then
            _command_offset $child_at
        elif ((cword == child_at)); then
            COMPREPLY=($(compgen -c -- "$cur"))
        else
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
        return
    fi

    case $prev in
        --log-format)
            COMPREPLY=($(compgen -W 'text json' -- "$cur"))
            return
            ;;
        --on-lost)
            COMPREPLY=($(compgen -W 'term kill ignore' -- "$cur"))
            return
            ;;
        --tls-ca | --tls-cert | --tls-key)
            if declare -F _filedir >/dev/null 2>&1; then
                _filedir
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            return
            ;;
    esac
    # Free-form values (URLs, durations, numbers): nothing to offer.
    if [[ " $_dlock_value_opts " == *" $prev "* ]] || $split; then
        return
    fi

    local opts
    case $cmd in
        run) opts="$_dlock_connection_opts $_dlock_run_opts" ;;
        status) opts="$_dlock_connection_opts --json" ;;
        release) opts="$_dlock_connection_opts --force --now" ;;
        completion) opts='-h --help' ;;
        *) opts='' ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi

    # Operands: lock names cannot be guessed without asking Redis; after run's key comes --.
    case $cmd in
        run) ((operands == 1)) && COMPREPLY=($(compgen -W '--' -- "$cur")) ;;
        completion) ((operands == 0)) && COMPREPLY=($(compgen -W 'bash zsh fish' -- "$cur")) ;;
        help) ((operands == 0)) && COMPREPLY=($(compgen -W "$_dlock_commands" -- "$cur")) ;;
    esac
} &&
    complete -F _dlock dlock
