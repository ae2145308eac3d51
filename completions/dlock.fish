# fish completion for dlock
#
# Install one of:
#   dlock completion fish > ~/.config/fish/completions/dlock.fish
#   dlock completion fish | source
#
# Pure fish: pressing Tab never starts dlock or node.

# The dlock command being completed (run, status, ...), or nothing yet.
function __dlock_command
    for token in (commandline -opc)[2..-1]
        switch $token
            case '-*'
                continue
            case '*'
                echo $token
                return 0
        end
    end
    return 1
end

# True when no command is given yet, or it is one of the arguments.
function __dlock_using
    set -l command (__dlock_command)
    if test -z "$command"
        test (count $argv) -eq 0
        return
    end
    contains -- $command $argv
    and not __dlock_child_line
end

# Where the child's command line starts in (commandline -opc), once `dlock run` has a key:
# options of dlock come before the key (or `-- <key>` for a key starting with "-"); after the
# key an optional --, then the command, whose words are all its own. (count + 1: the cursor's.)
function __dlock_child_start
    test "$(__dlock_command)" = run
    or return 1
    set -l tokens (commandline -opc)
    set -l value_options --redis --prefix --connect-timeout --tls-ca --tls-cert --tls-key --log-format \
        -t --ttl -w --wait -E --conflict-exit-code --on-lost --kill-after --sync-replicas --slots
    set -l i (math (contains -i -- run $tokens) + 1)
    set -l key 0
    set -l dashdash 0
    while test $i -le (count $tokens)
        if test $key -gt 0
            if test $i -ne (math $key + 1); or test $tokens[$i] != --
                echo $i
                return 0
            end
        else if test $dashdash -eq 1
            set key $i
        else
            switch $tokens[$i]
                case --
                    set dashdash 1
                case '-*'
                    contains -- $tokens[$i] $value_options
                    and set i (math $i + 1)
                case '*'
                    set key $i
            end
        end
        set i (math $i + 1)
    end
    test $key -gt 0
    and echo $i
end

# True once the cursor is on the child's command line.
function __dlock_child_line
    __dlock_child_start >/dev/null
end

# True right after the key, where -- may end dlock's options.
function __dlock_after_key
    set -l tokens (commandline -opc)
    set -l start (__dlock_child_start)
    and test $start -gt (count $tokens)
    and test $tokens[-1] != --
end

# Complete the child's command line as if it were typed on its own.
function __dlock_complete_child
    set -l start (__dlock_child_start)
    set -l tokens (commandline -opc)
    set -l line (string join ' ' -- (string escape -- $tokens[$start..-1]) (commandline -ct))
    complete --do-complete="$line"
end

complete -c dlock -f

# dlock [-V|--version] [-h|--help] <command>
complete -c dlock -n '__dlock_using' -s V -l version -d 'print the version'
complete -c dlock -n '__dlock_using' -s h -l help -d 'show help'
complete -c dlock -n '__dlock_using' -s q -l quiet -d 'print errors only'
complete -c dlock -n '__dlock_using' -s v -l verbose -d 'print one line per lock event'
complete -c dlock -n '__dlock_using' -a run -d 'run a command while holding a lock'
complete -c dlock -n '__dlock_using' -a acquire -d 'take a lock for the rest of a shell script or for later steps'
complete -c dlock -n '__dlock_using' -a renew -d 'extend a held lease by its TTL'
complete -c dlock -n '__dlock_using' -a status -d 'show who holds a lock'
complete -c dlock -n '__dlock_using' -a release -d "release your own lock, or with --force anyone's"
complete -c dlock -n '__dlock_using' -a history -d "show a lock's recent events"
complete -c dlock -n '__dlock_using' -a doctor -d 'check each Redis against what dlock needs'
complete -c dlock -n '__dlock_using' -a completion -d 'print a shell completion script'
complete -c dlock -n '__dlock_using' -a help -d 'show help for a command'

# Options of run, acquire, renew, status, release, history and doctor.
set -l connection run acquire renew status release history doctor
complete -c dlock -n "__dlock_using $connection" -l redis -x -d 'Redis URL; repeat for a Redlock quorum'
complete -c dlock -n "__dlock_using $connection" -l prefix -x -d 'key namespace'
complete -c dlock -n "__dlock_using $connection" -l connect-timeout -x -d 'per-instance connect/command timeout'
complete -c dlock -n "__dlock_using $connection" -l tls-ca -r -F -d 'PEM CA certificate(s) to trust for rediss://'
complete -c dlock -n "__dlock_using $connection" -l tls-cert -r -F -d 'PEM client certificate for rediss://'
complete -c dlock -n "__dlock_using $connection" -l tls-key -r -F -d 'PEM private key of --tls-cert'
complete -c dlock -n "__dlock_using $connection" -s q -l quiet -d 'print errors only'
complete -c dlock -n "__dlock_using $connection" -s v -l verbose -d 'print one line per lock event'
complete -c dlock -n "__dlock_using $connection" -l log-format -x -a 'text json' -d 'stderr format'
complete -c dlock -n "__dlock_using $connection completion" -s h -l help -d 'show help'

# run and acquire
complete -c dlock -n '__dlock_using run acquire' -s t -l ttl -x -d 'lease length, renewed every ttl/3'
complete -c dlock -n '__dlock_using doctor' -s t -l ttl -x -d 'the lease length your jobs use'
complete -c dlock -n '__dlock_using run acquire' -s n -l no-wait -d 'fail at once if the lock is held'
complete -c dlock -n '__dlock_using run acquire' -s w -l wait -x -d 'give up after this long'
complete -c dlock -n '__dlock_using run acquire' -s E -l conflict-exit-code -x -d 'exit code when not acquired'
complete -c dlock -n '__dlock_using run' -l on-lost -x -a 'term kill ignore' -d 'what to do to the command if the lock is lost'
complete -c dlock -n '__dlock_using acquire' -l on-lost -x -a 'term kill ignore' -d 'what to do to the watched process if the lock is lost'
complete -c dlock -n '__dlock_using run acquire' -l sync-replicas -x -d 'WAIT until n replicas have the lock'
complete -c dlock -n '__dlock_using run' -l kill-after -x -d 'grace between SIGTERM and SIGKILL'
complete -c dlock -n '__dlock_using run acquire' -l slots -x -d 'up to n holders at once'
complete -c dlock -n '__dlock_using run acquire' -s s -l shared -d 'hold together with other shared holders'
complete -c dlock -n '__dlock_using run' -l no-cmd-metadata -d 'do not store the command line in the lock'
complete -c dlock -n '__dlock_using run' -l once-per -x -d "after an exit 0, the key is done until that run's start + duration"
complete -c dlock -n '__dlock_after_key' --arguments=-- -d 'end of dlock options'
complete -c dlock -n '__dlock_child_line' -a '(__dlock_complete_child)'

complete -c dlock -n '__dlock_using acquire' -l pid -x -a '(__fish_complete_pids)' -d 'the process whose exit releases the lock'
complete -c dlock -n '__dlock_using acquire' -l no-keeper -d 'leave nothing running; the lock lasts --ttl unless renewed'
complete -c dlock -n '__dlock_using acquire' -l format -x -a 'sh json' -d 'stdout format'

# status, renew, release, history, doctor
complete -c dlock -n '__dlock_using status history doctor' -l json -d 'print JSON'
complete -c dlock -n '__dlock_using history' -s n -l count -x -d 'how many entries, newest first'
complete -c dlock -n '__dlock_using renew release' -l token -x -d 'the owner token (default DLOCK_TOKEN)'
complete -c dlock -n '__dlock_using release' -s f -l force -d 'take the lock from whoever holds it'
complete -c dlock -n '__dlock_using release' -l now -d 'with --force: open it to new holders at once'
complete -c dlock -n '__dlock_using release' -l slot -x -d 'with --force: only the holder of this slot'
complete -c dlock -n '__dlock_using release' -l slot -x -d 'with --force: only the holder of this slot'

# completion <shell>, help <command>
complete -c dlock -n '__dlock_using completion' -a 'bash zsh fish'
complete -c dlock -n '__dlock_using help' -a 'run acquire renew status release history doctor completion'
