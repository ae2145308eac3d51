# Print the candidates bash's completion offers for dlock, driving a real interactive bash
# through zsh/zpty, so that readline splits the line into COMP_WORDS itself (at spaces and at
# COMP_WORDBREAKS: `--ttl=5s` arrives as `--ttl` `=` `5s`, a URL is cut at each `:`).
#
#   zsh -f bash-capture.zsh <with-bash-completion|plain|installed> <script> <command line>...
#
# For each command line, the COMPREPLY of one Tab press is printed one per line, then a line
# `--end--`.

zmodload zsh/zpty || exit 2
local mode=$1 script=$2 line
shift 2
zpty capture bash --norc --noprofile -i
zpty -w capture 'PS1= PS2= PROMPT_COMMAND=; bind "set bell-style none"; bind "set enable-bracketed-paste off"'
if [[ $mode == installed ]]; then
  # As installed by the user: bash-completion loads it from ~/.local/share/... with the function
  # its default completion calls on the first Tab after `dlock`.
  zpty -w capture 'source /usr/share/bash-completion/bash_completion; __load_completion dlock'
else
  [[ $mode == with-bash-completion ]] && zpty -w capture 'source /usr/share/bash-completion/bash_completion'
  zpty -w capture "source ${(q)script}"
fi
# Report what _dlock offers after it ran, as the completion registered for dlock (only the
# outer call: `dlock run k -- dlock run ...` completes dlock inside dlock).
zpty -w capture '_dlock_capture() { local depth=$((${_dlock_depth:-0} + 1)); _dlock_depth=$depth _dlock "$@"; ((depth > 1)) && return; printf "<<match>>%s\n" "${COMPREPLY[@]}"; printf "<<done>>\n"; }'
zpty -w capture "complete -p dlock >/dev/null && complete -F _dlock_capture dlock && echo '<<ready'\">>\""
while zpty -r capture line; do [[ $line == *'<<ready>>'* ]] && break; done

# Ctrl-E Ctrl-U: clear the line for the next one.
source ${0:A:h}/capture-loop.zsh
capture_each $'\C-e\C-u' "$@"
