# bash completion for dlock                                    -*- shell-script -*-
#
# Install one of:
#   dlock completion bash > ~/.local/share/bash-completion/completions/dlock
#   echo 'source <(dlock completion bash)' >> ~/.bashrc
#
# Pure bash: pressing Tab never starts dlock or node. Uses bash-completion when it is
# loaded (to complete the command's own arguments), works without it.

_dlock_commands='run acquire renew status release history doctor completion help'
_dlock_connection_opts='--redis --prefix --connect-timeout --tls-ca --tls-cert --tls-key -q --quiet -v --verbose --log-format -h --help'
_dlock_lock_opts='-t --ttl -n --no-wait -w --wait -E --conflict-exit-code --on-lost --sync-replicas --slots -s --shared'
_dlock_run_opts="$_dlock_lock_opts --kill-after --no-cmd-metadata --once-per"
_dlock_acquire_opts="$_dlock_lock_opts --pid --no-keeper --format"
# Options that take a value as the next word.
_dlock_value_opts='--redis --prefix --connect-timeout --tls-ca --tls-cert --tls-key --log-format -t --ttl -w --wait -E --conflict-exit-code --on-lost --kill-after --sync-replicas --slots --slot --pid --format --token --once-per --count'

# bash also splits the line at COMP_WORDBREAKS: `--ttl=5s` arrives as `--ttl` `=` `5s`, and a
# URL is cut at each `:`. Glue the words back as they were typed (up to the cursor) into
# `words`; _dlock_at[n] is the index in COMP_WORDS where word n starts.
_dlock_words() {
    local line=${COMP_LINE:0:COMP_POINT} word i glued
    words=() _dlock_at=()
    for ((i = 0; i <= COMP_CWORD; i++)); do
        glued=true
        if [[ $line =~ ^[[:space:]]+ ]]; then
            line=${line:${#BASH_REMATCH[0]}}
            glued=false
        fi
        word=${COMP_WORDS[i]}
        ((i == COMP_CWORD)) && word=$line # up to the cursor
        if $glued && ((i > 0)); then
            words[${#words[@]} - 1]+=$word
        else
            words+=("$word") _dlock_at+=("$i")
        fi
        line=${line#"$word"}
    done
    cword=$((${#words[@]} - 1))
}

_dlock() {
    local cur prev words cword split=false _dlock_at
    _dlock_words
    cur=${words[cword]} prev=${words[cword - 1]}
    if [[ $cur == --*=* ]]; then
        prev=${cur%%=*} cur=${cur#*=} split=true
    fi

    # The command is the first word after dlock that is not an option (global -v, -q, ...).
    local i cmd='' cmd_at=0
    for ((i = 1; i < cword; i++)); do
        if [[ ${words[i]} != -* ]]; then
            cmd=${words[i]} cmd_at=$i
            break
        fi
    done
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '-V --version -q --quiet -v --verbose -h --help' -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$_dlock_commands" -- "$cur"))
        fi
        return
    fi

    # Count operands before the cursor. For run, options come before the key (or `-- <key>` for a
    # key starting with "-"); after the key an optional --, then the command, whose words are all
    # its own.
    local operands=0 key_at=0 child_at=0 dashdash=false
    for ((i = cmd_at + 1; i < cword; i++)); do
        if ((key_at)); then
            ((i == key_at + 1)) && [[ ${words[i]} == -- ]] && continue
            child_at=$i
            break
        elif [[ $cmd == run ]] && $dashdash; then
            key_at=$i
        elif [[ $cmd == run && ${words[i]} == -- ]]; then
            dashdash=true
        elif [[ ${words[i]} == -* ]]; then
            [[ " $_dlock_value_opts " == *" ${words[i]} "* ]] && ((i++))
        else
            ((operands++))
            [[ $cmd == run ]] && key_at=$i
        fi
    done
    if [[ $cmd == run ]] && ((key_at || dashdash)); then
        ((key_at)) || return # the key
        if ((!child_at)); then
            # Right after the key: -- or the command; after `<key> --`: the command.
            child_at=$cword
            if ((cword == key_at + 1)) && [[ $cur == -* || -z $cur ]]; then
                COMPREPLY=($(compgen -W '--' -- "$cur"))
                [[ $cur == -* ]] && return
            fi
        fi
        if declare -F _command_offset >/dev/null 2>&1; then
            local reply=("${COMPREPLY[@]}")
            _command_offset "${_dlock_at[child_at]}"
            COMPREPLY+=("${reply[@]}")
        elif ((cword == child_at)); then
            COMPREPLY+=($(compgen -c -- "$cur"))
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
        --format)
            COMPREPLY=($(compgen -W 'sh json' -- "$cur"))
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
        history) opts="$_dlock_connection_opts -n --count --json" ;;
        acquire) opts="$_dlock_connection_opts $_dlock_acquire_opts" ;;
        renew) opts="$_dlock_connection_opts --token" ;;
        release) opts="$_dlock_connection_opts --token -f --force --now --slot" ;;
        doctor) opts="$_dlock_connection_opts -t --ttl --json" ;;
        completion) opts='-h --help' ;;
        *) opts='' ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi

    # Operands: lock names cannot be guessed without asking Redis.
    case $cmd in
        completion) ((operands == 0)) && COMPREPLY=($(compgen -W 'bash zsh fish' -- "$cur")) ;;
        help) ((operands == 0)) && COMPREPLY=($(compgen -W "$_dlock_commands" -- "$cur")) ;;
    esac
} &&
    complete -F _dlock dlock
