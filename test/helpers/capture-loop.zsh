# The loop both completion captures share (sourced by bash-capture.zsh and zsh-capture.zsh):
# for each command line, press Tab in the zpty `capture`, print every "<<match>>" line the shell
# reports until "<<done>>", then "--end--", and clear the line with `$clear` for the next one.
#
#   capture_each <clear keys> <command line>...

capture_each() {
  local clear=$1 cmdline line
  shift
  for cmdline in "$@"; do
    zpty -w -n capture "$cmdline"$'\t'
    while zpty -r capture line; do
      line=${line//$'\r'/}
      line=${line//$'\n'/}
      [[ $line == *'<<match>>'* ]] && print -r -- "${line#*<<match>>}"
      [[ $line == *'<<done>>'* ]] && break
    done
    print -r -- --end--
    zpty -w -n capture "$clear"
  done
  zpty -d capture
}
