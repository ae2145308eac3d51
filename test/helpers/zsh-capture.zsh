# Print the candidates zsh's completion system offers, driving a real interactive zsh
# through zsh/zpty (compinit only runs inside zle, so a plain script cannot call it).
#
#   zsh -f zsh-capture.zsh <script or fpath dir or "zshrc"> <command line>...
#
# A file is sourced after compinit (`source <(dlock completion zsh)`); a directory is put on
# $fpath before compinit (the `_dlock` install); "zshrc" sources ~/.zshenv then ~/.zshrc, as installed. For each command line, the matches for its
# last word are printed one per line, then a line `--end--`.

zmodload zsh/zpty || exit 2
local target=$1 line
shift
zpty capture zsh -f -i
zpty -w capture 'PS1= RPS1=; unsetopt zle_bracketed_paste 2>/dev/null'
if [[ $target == zshrc ]]; then
  zpty -w capture '[[ -r ~/.zshenv ]] && source ~/.zshenv; source ~/.zshrc'
elif [[ -d $target ]]; then
  zpty -w capture "fpath=(${(q)target} \$fpath); autoload -U compinit && compinit -u -D"
else
  zpty -w capture "autoload -U compinit && compinit -u -D; source ${(q)target}"
fi
zpty -w capture 'zstyle ":completion:*" list-grouped false; zstyle ":completion:*" insert-tab false'
# Report each match instead of inserting it; calls that collect into arrays are left alone.
zpty -w capture 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a hits; builtin compadd -A hits "$@"; local hit; for hit in $hits; do print -r -- "<<match>>$hit"; done; }'
zpty -w capture 'capture-complete() { _main_complete; print -r -- "<<done>>"; }; zle -C capture-complete complete-word capture-complete; bindkey "^I" capture-complete'
zpty -w capture 'print -r -- "<<ready>>"'
while zpty -r capture line; do [[ $line == *'<<ready>>'* && $line != *print* ]] && break; done

# Ctrl-U: clear the line for the next one.
source ${0:A:h}/capture-loop.zsh
capture_each $'\C-u' "$@"
